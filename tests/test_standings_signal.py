"""A signal while a tournament computes its standings (issue 20: a traceback and exit 1, no
standings.json and no message, or death by the signal): exit 130, every game kept, the
standings written whole or not at all, and the command to rerun printed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import ROOT

from meldref.tournament.run import PAUSE_ENV, write_whole


def _tournament(out: Path, env: dict[str, str] | None = None, games: int = 2,
                launch: tuple[str, ...] = ("-m", "meldref")) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *launch, "tournament", "--bot", "builtin:greedy", "--bot",
         "builtin:random", "--games", str(games), "--seed", "1", "--rules", "phases-to-win=1",
         "--out", str(out), "--no-progress"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    for _ in range(1200):  # the state, not the time, is what is waited for
        if path.exists() or process.poll() is not None:
            break
        time.sleep(0.1)
    assert path.exists(), process.communicate()


def _a_game_recorded(out: Path, process: subprocess.Popen[str]) -> None:
    results = out / "results.jsonl"
    for _ in range(1200):  # the state, not the time: a game recorded
        if (results.exists() and results.read_text().count("\n") >= 1) or process.poll():
            break
        time.sleep(0.1)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_the_standings_exits_130_and_writes_them_whole_or_not_at_all(
        tmp_path: Path, signum: int) -> None:
    out, marker = tmp_path / "t", tmp_path / "standings-phase"
    process = _tournament(out, {PAUSE_ENV: str(marker)})
    _wait_for(marker, process)  # every game played, the standings begun
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, (process.returncode, stderr[-800:])
    assert "Traceback" not in stderr
    said = " ".join(stderr.split())
    assert "interrupted while computing the standings" in said
    assert "rerun the same command" in said and "meldref tournament --bot builtin:greedy" in said
    assert not (out / "standings.json").exists()
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []
    assert len((out / "results.jsonl").read_text().splitlines()) == 2  # the games are kept
    again = _tournament(out)  # the rerun the message names
    _, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr[-800:]
    standings = json.loads((out / "standings.json").read_text())
    assert {row["bot"] for row in standings["standings"]} == {"greedy", "random"}


def test_a_second_signal_after_one_that_stopped_the_games_exits_130_all_the_same(
        tmp_path: Path) -> None:
    """The issue's case: a first signal stops the games, a second comes while the standings
    of the games played are computed."""
    out, marker = tmp_path / "t", tmp_path / "standings-phase"
    process = _tournament(out, {PAUSE_ENV: str(marker)}, games=2000)
    results = out / "results.jsonl"
    _a_game_recorded(out, process)
    process.send_signal(signal.SIGINT)
    _wait_for(marker, process)  # the games stopped, their standings begun
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, (process.returncode, stderr[-800:])
    assert "Traceback" not in stderr
    assert "interrupted while computing the standings" in " ".join(stderr.split())
    assert not (out / "standings.json").exists()
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []
    assert 1 <= len(results.read_text().splitlines()) < 2000  # the games played are kept


def test_write_whole_leaves_the_old_file_if_interrupted(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "standings.json"
    write_whole(path, "old\n")

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_whole(path, "new\n")
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == [path.name]


# The tournament command, with choix's solver (`scipy.linalg.solve_triangular`, which choix's
# `statdist` calls inside a bare `except:` that raises ValueError) waiting for a signal there:
# argv[1] is the file it touches once it waits.
SOLVER_WAITS = """import sys, time
import scipy.linalg
solve, mark = scipy.linalg.solve_triangular, sys.argv.pop(1)
def waiting(*args, **kwargs):
    open(mark, "w").close()
    time.sleep(60)
    return solve(*args, **kwargs)
scipy.linalg.solve_triangular = waiting
from meldref.cli.app import main
sys.argv[0] = "meldref"
main()
"""


@pytest.mark.parametrize("signals", [1, 2])
def test_a_signal_in_the_rating_solver_is_an_interruption_not_a_valueerror(
        tmp_path: Path, signals: int) -> None:
    # Was: the interrupt, caught by choix and raised again as "ValueError: stationary
    # distribution could not be computed", a traceback and exit code 1. With two signals the
    # first stops the games (SIGINT) and the second (SIGTERM) lands in the solver.
    out, marker = tmp_path / "t", tmp_path / "solving"
    process = _tournament(out, games=2000 if signals == 2 else 2,
                          launch=("-c", SOLVER_WAITS, str(marker)))
    if signals == 2:
        _a_game_recorded(out, process)
        process.send_signal(signal.SIGINT)
    _wait_for(marker, process)  # the standings' ratings being solved
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, (process.returncode, stderr[-2000:])
    assert "Traceback" not in stderr and "ValueError" not in stderr, stderr[-2000:]
    assert "interrupted while computing the standings" in " ".join(stderr.split())
    assert not (out / "standings.json").exists()
