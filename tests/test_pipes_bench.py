"""bench/bench_pipes.py: its C floor replays the bytes meldref writes, and the script runs (no
timing is asserted)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[1]
BENCH = ROOT / "bench"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is missing: the bench builds its C programs with it")


def load() -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # bench_pipes imports its neighbours (run, report)
    import bench_pipes

    return bench_pipes


def test_the_floor_writes_what_meldref_writes_to_its_bots(tmp_path: Path) -> None:
    """The recording the floor replays holds, seat by seat, the very bytes a referee writes
    to instant_bot.c programs on pipes in the same games (after the handshake, before the
    goodbye), and as many lines read back as the bots answer."""
    bench = load()
    programs = bench.build_c(tmp_path)
    seeds = [1, 2]
    recording, recorded_actions = bench.record("solitaire", seeds)
    written: dict[int, list[str]] = {0: []}
    seats = bench.pipe_seats(programs["instant_bot"], 1)(seeds[0])
    seats[0].on_line = lambda way, text: written[0].append(text) if way == ">" else None
    seats[0].connect(10.0)
    written[0].clear()  # the handshake: the floor's own
    game, policy = bench.CURRENT.find_game("solitaire"), bench.CURRENT.policy()
    actions: list[str] = []
    try:
        for seed in seeds:
            record, _, _ = bench.play_one(game, seats, seed, bench.CURRENT, policy, None)
            actions += record.actions
    finally:
        seats[0].channel.on_line = None  # the goodbye is not part of the comparison
        bench.CURRENT.close_all(seats)
    assert actions == recorded_actions
    replayed = b"".join(v for kind, _, v in recording.entries if kind == "W")
    assert replayed == "".join(line + "\n" for line in written[0]).encode()
    answers = sum(v for kind, _, v in recording.entries if kind == "R")
    assert answers == recording.decisions + len(seeds) - 1  # and a pong before each next game
    assert recording.decisions == len(actions)


def test_bench_pipes_runs(tmp_path: Path) -> None:
    out = tmp_path / "pipes.jsonl"
    run = subprocess.run(
        [sys.executable, str(BENCH / "bench_pipes.py"), "--quick", "--rounds", "1", "--seeds",
         "1", "--games", "solitaire", "--json", str(out)],
        capture_output=True, text=True, env=os.environ.copy(), timeout=600)
    assert run.returncode == 0, run.stderr
    about, row = (json.loads(line) for line in out.read_text().splitlines())
    assert about["command"].startswith("python bench/bench_pipes.py")
    assert row["game"] == "solitaire" and row["decisions"] == 28
    assert row["floor_us"] > 0 and row["floor_all_cpu_us"] > 0 and row["pipes_us"] > 0
    assert row["request_bytes"] > 1000  # a Solitaire request: its view and ~100 legal lines
    assert "| solitaire |" in run.stdout
