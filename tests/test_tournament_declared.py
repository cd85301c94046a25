"""What a seat and a game declare, read as declared members rather than probed by name: the
ids a bot program announced (`Seat.ids`) as a resumed game records them, and the rules a game
settles for its number of seats (`GameInfo.check_rules`) as a match reports them."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import viewer_games as games
from support import RANDOM_BOT, ROOT

from meldref.engine.game import GameInfo, find_game
from meldref.protocol.seats import BotSpec
from meldref.settings import LimitSettings
from meldref.tournament import match as match_module
from meldref.tournament.match import MatchSpec, played_rules
from meldref.tournament.schedule import bot_entries


def meldref(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meldref", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_a_match_reports_the_rules_its_game_settles_for_its_seats() -> None:
    done = meldref("match", "fivecrowns", "--players", "8", "--seed", "1", "--rules",
                   "turn-cap=2", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["rules"]["party"] == "on"  # auto, settled at 8 seats


def test_the_settled_rules_come_from_the_games_check_rules(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    # Was: the rules were settled only if their class had a method named `for_players`; a
    # game whose check_rules settles them (as GameInfo declares) was reported unsettled.
    phase10 = find_game("phase10")
    settled = phase10.rules(phases_to_win=3)

    def settle(rules: Any, players: int) -> Any:
        return settled if players == 2 else rules

    game: GameInfo = dataclasses.replace(phase10, check_rules=settle)
    monkeypatch.setattr(match_module, "find_game", lambda name: game)
    bots = tuple(bot_entries([BotSpec.parse("builtin:greedy")] * 2))
    spec = MatchSpec("phase10", phase10.rules(), bots, 1, 1, LimitSettings())
    assert played_rules(spec) == settled
    unsettled = dataclasses.replace(spec, bots=bots + bots[:1])
    assert played_rules(unsettled) == phase10.rules()


def test_a_resumed_game_records_the_ids_its_programs_announced(tmp_path: Path) -> None:
    replay = games.play(tmp_path, "g", "phase10", ["builtin:greedy", "builtin:random"],
                        {"phases-to-win": "1"}, 3)
    out = tmp_path / "resumed.jsonl"
    done = meldref("replay", "resume", str(replay), "--at", "4", "--bot", RANDOM_BOT, "--bot",
                   "builtin:greedy", "-o", str(out))
    assert done.returncode == 0, done.stderr
    seats = json.loads(out.read_text().splitlines()[0])["seats"]
    assert seats[0]["id"].get("version") == "1" and seats[0]["id"].get("name")
    assert seats[1]["id"] == {}  # a built-in bot announces nothing
