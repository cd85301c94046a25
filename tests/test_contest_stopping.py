"""`contest run` against hostile authors (issue 43): a run bounded by --games or --hours stops,
saying why, once too few versions are left in play to seat a table (it waited for ever); and a
version that crashes its games is charged alone, and alone suspended, at a table of three with
two programs that play well (sandbox on, the contest's default).

A table of three in Phase 10 to one phase; each run is a few games."""

from __future__ import annotations

import functools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from support import RANDOM_BOT_PATH, TESTS
from test_contest_e2e import bots_seated
from test_contest_e2e import meldref as run_meldref
from typer.testing import CliRunner

from meldref.cli import app
from meldref.cli.app import STOPS
from meldref.contest import final
from meldref.contest.ladder import run as ladder
from meldref.protocol.sandbox import sandbox_problem

meldref = functools.partial(run_meldref, check=False)  # its exit code read here

THREE = ["phase10", "-n", "3", "-r", "phases-to-win=1", "--placement", "1"]
if sandbox_problem() is not None:  # as tests/test_contest_e2e.py: the same story unsandboxed
    THREE.insert(1, "--no-sandbox")
# Plays well while `submit` checks it (in bots/.staging/...), then crashes in every ladder
# game after three decisions (tests/bots/bad_bot.py's `crash`), its pipes still in use.
CRASHER = """import os, sys
here = os.path.dirname(os.path.abspath(__file__))
mode = "good" if ".staging" in os.getcwd() else "crash"
os.execv(sys.executable, [sys.executable, os.path.join(here, "bad_bot.py"), mode])
"""


def contest(folder: Path, crasher: Path | None = None) -> None:
    """A contest of three seats, with alpha and bravo (bots/random_bot.py), and as the third
    charlie (the same) or the crasher."""
    assert meldref("contest", "init", str(folder), *THREE).returncode == 0
    for name in ("alpha", "bravo"):
        done = meldref("contest", "submit", str(folder), str(RANDOM_BOT_PATH), "--name", name)
        assert done.returncode == 0, done.stderr
    third = ([str(crasher), "--name", "crasher", "--cmd", "python3 crasher.py"] if crasher
             else [str(RANDOM_BOT_PATH), "--name", "charlie"])
    done = meldref("contest", "submit", str(folder), *third)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def retired(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three-seat contest with charlie retired: two versions in play."""
    folder = tmp_path_factory.mktemp("contest") / "c"
    contest(folder)
    assert meldref("contest", "retire", str(folder), "charlie").returncode == 0
    return folder


@pytest.mark.parametrize("bound", [["--games", "90"], ["--hours", "1"]])
def test_a_bounded_run_with_too_few_versions_in_play_stops_and_says_why(
        bound: list[str], retired: Path) -> None:
    # It waited for ever: the helper's bound on a broken run (240 s) ended it.
    done = meldref("contest", "run", str(retired), *bound)
    assert done.returncode == 0, done.stderr
    assert "stopping: 2 versions in play, a table needs 3; submit more, or run with --wait" \
        in done.stderr
    assert "0 games played, 0 deal sets finished" in done.stdout
    assert "(too few versions in play)" in done.stdout


@pytest.fixture(scope="module")
def crashed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A run of the three-seat ladder with the crasher: until suspensions leave two."""
    source = tmp_path_factory.mktemp("crasher")
    (source / "crasher.py").write_text(CRASHER)
    shutil.copy(TESTS / "bots" / "bad_bot.py", source)
    folder = tmp_path_factory.mktemp("contest") / "c"
    contest(folder, source)
    run = meldref("contest", "run", str(folder), "--games", "90")
    status = meldref("contest", "status", str(folder), "--json")
    return {"folder": folder, "run": run, "status": json.loads(status.stdout)}


def test_suspensions_that_leave_too_few_stop_the_run(crashed: dict[str, Any]) -> None:
    run = crashed["run"]
    assert run.returncode == 0, run.stderr
    assert "stopping: 2 versions in play, a table needs 3" in run.stderr
    assert "(too few versions in play)" in run.stdout


def test_a_crashing_version_is_charged_and_suspended_alone(crashed: dict[str, Any]) -> None:
    board = crashed["status"]
    playing = {row["label"]: row for row in board["leaderboard"]}
    out = {row["label"]: row for row in board["out_of_play"]}
    assert set(playing) == {"alpha v1", "bravo v1"}
    assert all(row["faults"] == 0 and row["games"] > 0 for row in playing.values()), playing
    assert set(out) == {"crasher v1"} and out["crasher v1"]["state"] == "suspended"
    assert "crashed" in out["crasher v1"]["reason"] and out["crasher v1"]["faults"] >= 3
    # Every game was the referee's to finish (none `failed`), and each line that counts
    # faults says whose: the crasher's alone.
    stderr = crashed["run"].stderr
    games = re.findall(r"(?m)^game \d+ ds\d+-s\d+: (.*)$", stderr)
    assert games and not [g for g in games if g.startswith("failed")], stderr
    whose = {m for g in games for m in re.findall(r"faults \((.*)\)$", g)}
    assert whose == {"crasher v1: crashed"}, stderr
    assert bots_seated(crashed["folder"], "s.failed") == {"crasher"}  # charged a fault


@pytest.mark.parametrize("command", ["run", "final"])
def test_a_signal_that_lands_in_the_ratings_fit_is_an_interruption(
        command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """choix turns the KeyboardInterrupt of a SIGTERM inside its solver into `ValueError:
    stationary distribution could not be computed`: `contest run` exited 2 with that line
    (1 run of 12 signalled at random moments), not 130 and the interrupted line."""
    def signalled(*args: object, **kwargs: object) -> None:
        STOPS.received += 1  # what the handler counts as the signal comes
        raise ValueError("stationary distribution could not be computed")

    monkeypatch.setattr(ladder, "play_ladder", signalled)
    monkeypatch.setattr(final, "play_final", signalled)
    folder = tmp_path / "c"
    made = CliRunner().invoke(app, ["contest", "init", str(folder), "phase10", "--players", "2",
                                    "--no-sandbox"])
    assert made.exit_code == 0, made.output
    args = ["contest", command, str(folder), *(["--top", "2"] if command == "final" else [])]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 130, done.output
    assert "interrupted" in done.output and "stationary" not in done.output
    monkeypatch.setattr(ladder, "play_ladder", lambda *a, **k: (_ for _ in ()).throw(
        ValueError("a value the run refuses")))
    monkeypatch.setattr(final, "play_final", lambda *a, **k: (_ for _ in ()).throw(
        ValueError("a value the run refuses")))
    STOPS.take()  # no signal this time: the error is the run's own, exit 2
    plain = CliRunner().invoke(app, args)
    assert plain.exit_code == 2 and "a value the run refuses" in plain.output
