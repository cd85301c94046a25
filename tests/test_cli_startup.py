"""Start-up: each command imports what it uses. `meldref --help` imports no module of meldref
but the command line's own, and `meldref match` none of the statistics (scipy, choix) that
only tournaments' standings need. Checked in the modules a real run imported (`python -X
importtime`), not by the clock (the ratios are bench/bench_startup.py's)."""

from __future__ import annotations

import os
import subprocess

from support import PYTHON, ROOT


def imported(*args: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([PYTHON, "-X", "importtime", "-m", "meldref", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def test_the_top_help_imports_only_the_command_line() -> None:
    # meldref.build: a pure start (MELDREF_PURE=1) or a stale compiled build runs the sources
    # (meldref/__init__.py); it imports nothing more of meldref.
    ours = {m for m in imported("--help") if m.startswith("meldref")}
    assert ours <= {"meldref", "meldref.__main__", "meldref.build", "meldref.cli",
                    "meldref.cli.app"}, ours


def test_the_compiled_builds_record_is_not_tracked() -> None:
    # setup.py writes meldref/_hot_sources.txt beside the compiled library, as it writes *.so.
    done = subprocess.run(["git", "check-ignore", "-q", "meldref/_hot_sources.txt"], cwd=ROOT,
                          check=False, timeout=60)
    assert done.returncode == 0


def test_a_match_does_not_import_the_statistics_of_standings() -> None:
    modules = imported("match", "solitaire", "--seed", "1")
    assert "meldref.engine.solitaire" in modules  # the run was a real one
    heavy = {m.split(".")[0] for m in modules} & {"scipy", "choix"}
    assert not heavy, heavy
    assert not {m for m in modules if m.startswith("meldref.verdicts.ratings")}


def test_a_mistyped_command_is_still_told_the_near_ones() -> None:
    from typer.testing import CliRunner

    from meldref.cli import app

    result = CliRunner().invoke(app, ["mach"])
    assert result.exit_code == 2 and "Did you mean 'match'?" in result.output
