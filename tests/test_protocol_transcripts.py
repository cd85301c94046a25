"""The example transcripts in spec/ are what the referee really sends today (golden files)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_transcripts_are_up_to_date() -> None:
    run = subprocess.run([sys.executable, "bench/make_transcripts.py", "--check"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, (
        f"{run.stdout}{run.stderr}\nthe protocol or a game changed what bots are sent: "
        "run `python bench/make_transcripts.py` and review the diff of spec/")
