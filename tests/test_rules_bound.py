"""Rules are typed by a bound (`engine.game.Rules`, issue 45): each game's options satisfy it,
and a game narrows them to its own class with `rules_of`, refusing another game's. The records
at the protocol's edge typed as TypedDicts hold the keys they declare."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from meldref.engine.game import GAME_NAMES, RuleOptionError, find_game, rules_of, rules_to_json
from meldref.engine.phase10 import Phase10Rules
from meldref.engine.solitaire.rules import SolitaireRules
from meldref.tournament.runner import SeatLine, play_one


def test_every_game_starts_from_its_own_rules() -> None:
    for name in GAME_NAMES:
        info = find_game(name)
        rules = info.rules()
        assert isinstance(rules, info.rules_type)
        assert rules_to_json(rules)
        state = info.new_game(rules, info.min_players, 1)
        assert state.rules == rules or name == "fivecrowns"  # party=auto is settled


def test_another_games_rules_are_refused_with_a_message() -> None:
    with pytest.raises(RuleOptionError, match="SolitaireRules are not Phase10Rules"):
        rules_of(Phase10Rules, SolitaireRules())
    with pytest.raises(RuleOptionError, match="another game's"):
        find_game("phase10").new_game(SolitaireRules(), 2, 1)


def test_setup_checked_under_the_defaults_when_no_rules_are_given() -> None:
    find_game("fivecrowns").check_setup(None, 7)
    with pytest.raises(RuleOptionError):
        find_game("fivecrowns").check_setup(find_game("fivecrowns").rules(party="off"), 8)


def test_a_replays_seats_are_the_typed_seat_lines(tmp_path: Path) -> None:
    """The header's `seats` (runner.SeatLine, a TypedDict) hold exactly its keys, as written by
    a real game between two built-in bots (`dir` only for a bot given a folder)."""
    replay = tmp_path / "game.jsonl"
    play_one("phase10", ["random", "random"], 3, replay=replay)
    header = json.loads(replay.read_text(encoding="utf-8").splitlines()[0])
    keys = set(typing.get_type_hints(SeatLine)) - {"dir"}
    assert [set(seat) for seat in header["seats"]] == [keys, keys]
    assert [seat["seat"] for seat in header["seats"]] == [0, 1]
