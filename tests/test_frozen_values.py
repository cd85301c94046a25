"""The values made per decision (rulings, events, actions, melds, views, the conversation's
requests, replies and lines) have hand-written `__init__`s, which mypyc compiles (a dataclass's
generated one stays interpreted). They keep a frozen dataclass's manners: equal by value,
hashed by value, shown by fields, never assigned to; and copies and pickles rebuild them
through the constructor (`engine.game.by_init`). Was, on the compiled build: copy.copy,
copy.deepcopy and pickle of every compiled frozen dataclass failed with FrozenInstanceError
(their state is restored field by field, through the frozen `__setattr__`)."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from meldref.engine.cards import Card
from meldref.engine.common import DRAW_PILE
from meldref.engine.fivecrowns.actions import Discard as FiveCrownsDiscard
from meldref.engine.fivecrowns.solver import Solver
from meldref.engine.game import Event, EventKind, Ruling, find_game
from meldref.engine.meld_check import parse_meld
from meldref.engine.meld_search import Need
from meldref.engine.melds import GroupKind
from meldref.engine.phase10.actions import Discard, Hit, LayDown
from meldref.engine.phase10.rules import PHASE10_MELDS
from meldref.engine.position import Position
from meldref.engine.solitaire.actions import Place
from meldref.protocol.channel import Incoming
from meldref.protocol.conversation import Reply, Request, Setup
from meldref.protocol.seats import BotSpec
from meldref.protocol.wire import BotLine, parse_bot_line


def views() -> list[Any]:
    out = []
    for name in ("phase10", "fivecrowns", "solitaire"):
        game = find_game(name)
        state = game.new_game(game.rules(), game.min_players, 7)
        out.append(state.observation(0))
    return out


def ruling() -> Ruling:
    game = find_game("phase10")
    state = game.new_game(game.rules(), 2, 3)
    return state.judge(state.legal_actions()[0])


def values() -> list[Any]:
    meld = parse_meld("set:R7,B7,G7", PHASE10_MELDS)
    split = Solver([Card.parse(t) for t in ("3S", "4S", "5S", "QH")], 13).whole
    line = parse_bot_line(b"action 3 draw pile")
    assert line is not None
    return [
        ruling(),
        Ruling(Place(3, Card.parse("QH")), "no such pile", position=4),
        Event(EventKind.DRAW, 1, {"source": "pile"}, {"card": "R7"}),
        Event(EventKind.GAME_OVER),
        Place(5, Card.parse("QH")),
        DRAW_PILE,
        Discard(Card.parse("R7"), 1),
        Hit(2, Card.parse("W"), 5),
        LayDown.from_melds([meld], 1, PHASE10_MELDS),
        FiveCrownsDiscard(Card.parse("QH"), ("book:3S,3H,3D",)),
        meld,
        PHASE10_MELDS,
        Need(GroupKind.RUN, 4),
        split,
        Setup("phase10", {"phases-to-win": 1}, 0, ("a", "b")),
        Request("draw", None, 1.5, 10.0),
        Reply("draw pile", 0.25, 3),
        Incoming(b"action 3 draw pile", 12.5),
        line,
        BotLine("malformed", text="no such message"),
        # Not made per decision, but compiled with the seats (issue 28) and sent to the
        # workers of every tournament: pickled, it failed the same way.
        BotSpec.parse("builtin:greedy"),
        BotSpec.parse("python3 bots/random_bot.py --seed 2"),
        # Sent to the workers of a tournament with --positions: compiled, it failed so.
        Position("phase10", "{}", ("draw pile",)),
        *views(),
    ]


def fields(value: Any) -> tuple[Any, ...]:
    return tuple(getattr(value, f.name) for f in dataclasses.fields(value))


@pytest.mark.parametrize("value", values(), ids=lambda v: type(v).__name__)
def test_a_value_copies_and_pickles_through_its_constructor(value: Any) -> None:
    for twin in (copy.copy(value), copy.deepcopy(value), pickle.loads(pickle.dumps(value))):
        assert type(twin) is type(value)
        assert fields(twin) == fields(value) and repr(twin) == repr(value)
        if type(value).__eq__ is not object.__eq__:  # a Phase 10 view is equal to itself only
            assert twin == value


@pytest.mark.parametrize("value", values(), ids=lambda v: type(v).__name__)
def test_a_frozen_value_takes_no_assignment(value: Any) -> None:
    params = type(value).__dataclass_params__  # type: ignore[attr-defined]
    first = dataclasses.fields(value)[0].name
    if params.frozen:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(value, first, getattr(value, first))


def test_values_are_equal_and_hashed_by_their_fields() -> None:
    assert Place(5, Card.parse("QH")) == Place(5, Card.parse("QH")) != Place(6, Card.parse("QH"))
    assert hash(Hit(2, Card.parse("W"), 5)) == hash(Hit(2, Card.parse("W"), 5))
    assert Event(EventKind.GAME_OVER) == Event(EventKind.GAME_OVER, None, {}, {})
    assert repr(BotLine("ping", 3)) == "BotLine(kind='ping', request_id=3, text='', key='')"
    # A Place's text is written by its constructor, not a field of its value.
    assert str(Place(5, Card.parse("QH"))) == "place 5 QH"
    assert "text" not in repr(Place(5, Card.parse("QH")))
