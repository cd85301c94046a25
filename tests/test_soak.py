"""The soak run (bench/soak.py): thousands of games at -j 2 mixing normal and hostile bots,
with no bot process, file descriptor or memory left growing. Slow: not in the default run;
`pytest -m slow` runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import ROOT


@pytest.mark.slow
def test_a_long_mixed_run_leaks_nothing() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--games", "2000",
                           "--json"], capture_output=True, text=True, timeout=3600, check=False)
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 0 and summary["ok"], summary
