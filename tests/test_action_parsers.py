"""Action parsers on any text: an action whose text round-trips, or `InvalidActionError` with a
message; never another exception (a bot's line must not crash the referee)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meldref.engine import solitaire
from meldref.engine.fivecrowns import actions as fivecrowns_actions
from meldref.engine.game import InvalidActionError
from meldref.engine.phase10 import actions as phase10_actions

PARSERS: dict[str, Callable[[str], Any]] = {
    "phase10": phase10_actions.parse_action,
    "fivecrowns": fivecrowns_actions.parse_action,
    "solitaire": solitaire.parse_action,
}
WORDS = ["draw", "pile", "discard", "lay", "hit", "place", "phase=", "W=", "S", "R7", "W", "X",
         "QH", "5", "13", "set:R7,B7,W", "run:R3,R4,W=5", "book:QH,QS,X", "²", "٣", "１",
         "9" * 5000, "-1", "+3", " ", "\t", "\u2003", "=", ":", ","]
TEXTS = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
    st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=6)), max_size=5).map("".join),
)


@pytest.mark.parametrize("game", sorted(PARSERS))
@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_parse_raises_only_invalid_action_or_round_trips(game: str, text: str) -> None:
    parse = PARSERS[game]
    try:
        action = parse(text)
    except InvalidActionError as exc:
        assert str(exc)
        return
    assert parse(str(action)) == action


@pytest.mark.parametrize(("game", "text", "message"), [
    ("phase10", "discard S ²", "not a whole number"),
    ("phase10", "discard S ٣", "not a whole number"),
    ("phase10", "discard S " + "9" * 5000, "not a whole number"),
    ("phase10", "hit " + "1" * 5000 + " R7", "not a whole number"),
    ("phase10", "hit ² R7", "group id"),
    ("phase10", "hit 1 W=²", "neither a number"),
    ("phase10", "hit 1 W=" + "5" * 5000, "neither a number"),
    ("phase10", "lay phase=² set:R7,B7,W", "phase=N"),
    ("phase10", "lay phase=" + "3" * 5000 + " set:R7,B7,W", "phase=N"),
    ("solitaire", "place ² QH", "place <pile"),
    ("solitaire", "place " + "5" * 5000 + " QH", "place <pile"),
    ("fivecrowns", "discard 5H run:4C,5C,X=²", "neither a number"),
], ids=lambda v: v[:24] if isinstance(v, str) else v)
def test_bad_numbers_are_invalid_actions(game: str, text: str, message: str) -> None:
    with pytest.raises(InvalidActionError, match=message) as caught:
        PARSERS[game](text)
    assert len(str(caught.value)) < 300  # a long line is not echoed back whole


def test_good_numbers_still_parse() -> None:
    assert str(phase10_actions.parse_action("discard S 2")) == "discard S 2"
    assert str(phase10_actions.parse_action("hit 3 W=8")) == "hit 3 W=8"
    assert str(solitaire.parse_action("place 5 QH")) == "place 5 QH"
