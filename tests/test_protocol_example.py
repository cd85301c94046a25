"""The bot printed in spec/PROTOCOL.md section 15 runs as printed: it plays every decision of
the three games from the `legal` hints, and from the view alone in a match without hints."""

from __future__ import annotations

import re

import pytest
from support import ROOT, command

from meldref.engine.game import find_game
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import seat_from_spec
from meldref.settings import parse_rules

SPEC = (ROOT / "spec" / "PROTOCOL.md").read_text()
SHORT = {"phase10": {"turn-cap": "40", "hand-cap": "2"}, "fivecrowns": {"turn-cap": "4"},
         "solitaire": {}}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    section = SPEC[SPEC.index("## 15. "):SPEC.index("## 16. ")]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    path = tmp_path_factory.mktemp("tiny") / "tiny.py"
    path.write_text(code)
    return command(path)


@pytest.mark.parametrize("hints", [True, False], ids=["hints", "no-hints"])
@pytest.mark.parametrize("name", ["phase10", "fivecrowns", "solitaire"])
def test_the_printed_bot_plays_every_game(tiny: str, name: str, hints: bool) -> None:
    game = find_game(name)
    players = 1 if name == "solitaire" else 3
    policy = MatchPolicy(move_time=5.0, first_move_time=10.0, startup_time=10.0,
                         illegal_retries=0, legal_hints=hints)
    seats = [seat_from_spec(tiny, game) for _ in range(players)]
    try:
        record = play_game(game, parse_rules(game.rules_type, SHORT[name]), seats, 7, policy)
    finally:
        close_all(seats)
    assert record.faults == [[]] * players and record.status == ["ok"] * players
    assert record.outcome.termination in ("normal", "turn-cap")
