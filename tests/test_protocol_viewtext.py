"""The referee's fast writers send the very bytes of the protocol's definition.

`viewtext` writes the three games' views straight from their fields and `wire.encode_value`
takes shortcuts for plain types; both must agree with the definitions they replace, for every
position of many games and for any value.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meldref.engine.game import find_game
from meldref.protocol import wire
from meldref.protocol.viewtext import WRITTEN, legal_lines, observation_lines, request_lines
from meldref.settings import parse_rules

GAMES = [
    ("phase10", 3, {}),
    ("phase10", 4, {"any-order": "yes", "skip-victim": "next", "tiebreak": "first-to-lay"}),
    ("phase10", 2, {"phases": "even", "run-wrap": "yes", "turn-cap": "20"}),
    ("fivecrowns", 2, {"tiebreak": "round", "turn-cap": "3"}),
    ("fivecrowns", 9, {"natural": "group"}),
    ("solitaire", 1, {}),
    ("solitaire", 1, {"natural": "group"}),
]


def reference(value: Any) -> str:
    """`wire.encode_value` as it was written before its shortcuts: the definition."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return "_".join(value.split()) or "-"
    scalars = (str, int, float, bool)
    if isinstance(value, list | tuple) and all(v is None or isinstance(v, scalars)
                                               for v in value):
        parts = [reference(v) for v in value]
        if not parts:
            return "-"
        grouped = any("," in p or ":" in p for p in parts)
        return (";" if grouped else ",").join(parts)
    return "_".join(json.dumps(value, separators=(",", ":"), sort_keys=True).split())


def positions(game_name: str, players: int, options: dict[str, str], seed: int) -> Any:
    """Every seat's observation at every decision of one game of random legal play."""
    game = find_game(game_name)
    state = game.new_game(parse_rules(game.rules_type, options), players, seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        for seat in range(players):
            yield state.observation(seat), state
        state.apply(rng.choice(state.legal_actions()))
    for seat in range(players):
        yield state.observation(seat), state


@pytest.mark.parametrize(("game_name", "players", "options"), GAMES)
def test_view_writers_match_the_generic_encoding(game_name: str, players: int,
                                                 options: dict[str, str]) -> None:
    seen = 0
    for seed in (1,) if game_name == "phase10" else (1, 2):  # Phase 10 games are long
        for view, state in positions(game_name, players, options, seed):
            assert type(view) in WRITTEN
            assert observation_lines(view) == wire.view_lines(view.to_json())
            if view.seat == state.to_move:  # a request's legal lines: the game's actions
                hints = [str(a) for a in state.legal_actions()]
                assert legal_lines(view, lambda hints=hints: hints) == [
                    wire.legal_line(text) for text in hints]
                assert request_lines(view, lambda hints=hints: hints) == [
                    *wire.view_lines(view.to_json()), *map(wire.legal_line, hints)]
            seen += 1
    assert seen > 50


def test_other_views_take_the_generic_way() -> None:
    class Plain:
        def to_json(self) -> dict[str, Any]:
            return {"seat": 0, "hand": ["A", "B"], "rows": [{"x": 1}], "note": "a b"}

    assert observation_lines(Plain()) == ["view seat 0 hand A,B note a_b", "item rows x 1"]


JSONS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12,
)


@given(JSONS)
def test_encode_value_is_the_definition(value: Any) -> None:
    assert wire.encode_value(value) == reference(value)
    assert wire.encode_value(value) == reference(value)  # again: texts' tokens are kept
    if isinstance(value, list):
        assert wire.encode_value(tuple(value)) == reference(tuple(value))


@given(st.text())
def test_legal_lines_join_words_by_single_spaces(text: str) -> None:
    assert wire.legal_line(text) == f"legal {' '.join(text.split())}"


def test_solitaire_writers_follow_each_pile_not_the_last_one_shown() -> None:
    """The Solitaire writers keep each pile's lines by the pile's tuple: the same tuple shown
    closed then open, two copies of a card in one pile, and the drawn card already on a pile
    must each still give the generic text."""
    from meldref.engine.cards import Card
    from meldref.engine.solitaire import SolitaireView

    state = find_game("solitaire").new_game(parse_rules(find_game("solitaire").rules_type, {}),
                                            1, 7)
    view = state.observation(0)
    twin = Card.parse("7H")
    piles = list(view.piles)
    piles[2] = (twin, twin, Card.parse("X"), Card.parse("KS"), Card.parse("3D"))
    piles[5] = (*piles[5][:-1], twin)
    for closed in ((False,) * 11, (True, False) * 5 + (True,), (False,) * 11):
        for top in (twin, Card.parse("X"), piles[0][0]):
            shown = SolitaireView(view.natural, tuple(piles), closed, top, 9, 3, 4, 0, "place",
                                  discarded=(twin, Card.parse("QC")))
            assert observation_lines(shown) == wire.view_lines(shown.to_json())
            assert legal_lines(shown, lambda: []) == [
                wire.legal_line(str(a)) for a in shown.legal_actions()]
            again = SolitaireView.from_json(shown.to_json())  # the same cards, new tuples
            assert observation_lines(again) == observation_lines(shown)
            assert legal_lines(again, lambda: []) == legal_lines(shown, lambda: [])


@given(st.text(alphabet=st.sampled_from(["a", "7", " ", "\t", "\xa0", "é", "\x01", "0", "-",
                                         ":", ",", "\r"]), max_size=24))
def test_plain_action_lines_parse_as_the_general_parse_does(rest: str) -> None:
    """An `action` line read from the pipe (bytes) takes a shortcut when written plainly; it
    parses to what the general parse of the same text gives, whatever follows `action `."""
    line = "action " + rest
    assert wire.parse_bot_line(line.encode()) == wire.parse_bot_line(line)


@pytest.mark.parametrize("game_name", ["phase10", "fivecrowns"])
def test_view_writers_keep_interleaved_games_apart(game_name: str) -> None:
    """The writers keep a seat's lines as last written, by the values they were written from:
    two games of other rules and seats, their views asked in turn (as games played side by
    side in one process), still get their own bytes."""
    one, two = (positions(name, players, options, seed) for name, players, options in
                [g for g in GAMES if g[0] == game_name][:2] for seed in (3,))
    seen = 0
    for (view, _), (other, _) in zip(one, two, strict=False):
        assert observation_lines(view) == wire.view_lines(view.to_json())
        assert observation_lines(other) == wire.view_lines(other.to_json())
        seen += 1
    assert seen > 50
