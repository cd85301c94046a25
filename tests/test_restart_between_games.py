"""Issue 26: a bot that exits after `gameover` is restarted, with a new handshake, for the next
game (spec/PROTOCOL.md section 3), never forfeited for it: in a match, in a tournament played
here (-j 1) and in a tournament's worker pool (kept bots), at all three games.

The bot is tests/bots/pid_bot.py with PID_BOT_QUIT_ON_GAMEOVER set: it exits with code 0 on
every `gameover` and appends its pid to a file at every start, so the restarts are counted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app

PID_BOT = ROOT / "tests" / "bots" / "pid_bot.py"
runner = CliRunner()
# Short games: these tests are about what happens between them.
SHORT = {"phase10": ["--rules", "phases-to-win=1"], "fivecrowns": [],
         "solitaire": []}
PLAYERS = {"phase10": 2, "fivecrowns": 2, "solitaire": 1}


@pytest.fixture(autouse=True)
def quitter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PID_BOT_QUIT_ON_GAMEOVER", "1")


def bot(pids: Path) -> str:
    return f"{sys.executable} {PID_BOT} {pids}"


def started(pids: Path) -> list[int]:
    return [int(x) for x in pids.read_text().split()]


def seats(game: str, pids: Path) -> list[str]:
    others = ["--bot", "builtin:greedy"] if PLAYERS[game] > 1 else []
    return ["--bot", bot(pids), *others]


@pytest.mark.parametrize("game", ["phase10", "fivecrowns", "solitaire"])
def test_a_bot_that_exits_on_gameover_plays_every_game_of_a_match(game: str,
                                                                   tmp_path: Path) -> None:
    pids = tmp_path / "p.pids"
    result = runner.invoke(app, ["match", game, *seats(game, pids), "--games", "4",
                                 "--seed", "9", *SHORT[game], "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [g["seat_status"] for g in data["games"]] == [["ok"] * PLAYERS[game]] * 4
    assert [f for g in data["games"] for fs in g["faults"] for f in fs] == []
    assert len(started(pids)) == 4  # one process a game, each with its own handshake


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("game", ["phase10", "fivecrowns", "solitaire"])
def test_a_bot_that_exits_on_gameover_plays_every_game_of_a_tournament(
        game: str, jobs: str, tmp_path: Path) -> None:
    pids, out = tmp_path / "p.pids", tmp_path / "t"
    result = runner.invoke(app, [
        "tournament", "--game", game, *seats(game, pids), "--players", str(PLAYERS[game]),
        "--games", "4", "-j", jobs, *SHORT[game], "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    played = [x for x in lines if str(pids) in " ".join(x["specs"])]
    assert played and all(x["status"] == "ok" for x in lines)
    assert all(set(x["seat_status"]) == {"ok"} for x in played), played
    # The start-up check's process, then one process per game.
    assert len(started(pids)) == 1 + len(played)
