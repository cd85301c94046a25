"""The example transcripts in spec/ are what the referee really sends today (golden files)."""

from __future__ import annotations

import subprocess
import sys

from support import PYTHON, ROOT


def test_transcripts_are_up_to_date() -> None:
    run = subprocess.run([PYTHON, "bench/make_transcripts.py", "--check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (
        f"{run.stdout}{run.stderr}\nthe protocol or a game changed what bots are sent: "
        "run `python bench/make_transcripts.py` and review the diff of spec/")


def test_section_13_states_the_generators_clocks() -> None:
    # The transcripts' `go` lines show the generator's clocks, not section 6's defaults.
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_transcripts",
                                                  ROOT / "bench" / "make_transcripts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_transcripts", module)  # its dataclasses look themselves up
    spec.loader.exec_module(module)
    policy = module.POLICY
    text = (ROOT / "spec" / "PROTOCOL.md").read_text()
    section = " ".join(text[text.index("## 13. "):text.index("## 14. ")].split())
    assert f"`move_time` {policy.move_time:g} s" in section
    assert f"`first_move_time` {policy.first_move_time:g} s" in section
    assert f"`time {int(policy.first_move_time * 1000)}`" in section
    assert f"`time {int(policy.move_time * 1000)}`" in section
    assert f"`bank {int(policy.time_bank * 1000)}`" in section
