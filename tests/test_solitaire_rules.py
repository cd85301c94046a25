"""Five Crowns Solitaire: the deal, a move, closing piles, winning and losing (digest 2.6)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from meldref.engine.cards import Card, fivecrowns_deck, parse_cards, rng_for, shuffled
from meldref.engine.game import (
    IllegalActionError,
    InvalidActionError,
    RuleOptionError,
    Termination,
    rules_to_json,
)
from meldref.engine.solitaire import GAME, PILE_SIZES, Place, SolitaireRules, SolitaireState
from meldref.engine.solitaire.view import pile_places
from meldref.settings import parse_rules

# A pile of each size that no card can close in one move (its own wild rank aside), from which
# positions are built by replacing some piles.
STUCK = {size: " ".join(["3H", "5S", "7C", "9D", "JH", "KS", "4*", "6D", "8H", "10C", "QS",
                         "3D", "5*"][:size]) for size in PILE_SIZES}


def position(piles: dict[int, str] | None = None, *, draw: str = "KD 9S QH",
             closed: Sequence[int] = (), rules: SolitaireRules | None = None,
             **fields: Any) -> SolitaireState:
    """A game whose pile `size` holds `piles[size]` (else a stuck pile); top of draw: last."""
    snap = GAME.new_game(rules or SolitaireRules(), 1, 1).snapshot()
    chosen = {**STUCK, **(piles or {})}
    snap.update(
        piles=[chosen[size].split() for size in PILE_SIZES],
        closed=[size in closed for size in PILE_SIZES],
        draw_pile=draw.split(),
        out_of_play=[],
        moves=0,
        outcome=None,
    )
    snap.update(fields)
    return SolitaireState.from_snapshot(snap)


def test_the_deal() -> None:
    state = GAME.new_game(GAME.rules(), 1, 42)
    deck = shuffled(fivecrowns_deck(2), rng_for(42, "deal", 1))
    for size, pile in zip(PILE_SIZES, state.piles, strict=True):
        assert pile == [deck.pop() for _ in range(size)]
    assert state.draw_pile == deck and len(deck) == 28
    assert sum(map(len, state.piles)) == 88
    view = state.observation(0).to_json()
    assert view["draw_top"] == deck[-1].text and view["draw_pile_size"] == 28
    assert [p["size"] for p in view["piles"]] == list(PILE_SIZES)
    assert [p["wild_rank"] for p in view["piles"]][-3:] == ["J", "Q", "K"]


def test_piles_are_checked_after_the_deal() -> None:
    state = GAME.new_game(GAME.rules(), 1, 1)  # this deal closes pile 10 (10s wild)
    closes = [e for e in state.opening_events() if e.kind == "close"]
    assert [e.public["pile"] for e in closes] == [10]
    assert closes[0].public["groups"] == ["run:5C,6C,X=7,8C", "run:6*,X=7,8*", "run:JD,QD,X=K"]
    assert state.closed[PILE_SIZES.index(10)]
    assert "closed" in str(state.why_illegal(Place(10, state.draw_pile[-1])))


def test_a_move_adds_the_top_card_and_discards_one_out_of_play() -> None:
    state = position({5: "5H 6H 7H 9S JD"}, draw="KD 9S QH")
    events = state.apply(state.parse_action("place 5 JD"))
    assert Counter(state.piles[2]) == Counter(parse_cards("5H 6H 7H 9S QH"))
    assert state.out_of_play == [Card.parse("JD")] and state.draw_pile == parse_cards("KD 9S")
    assert events[0].public == {"pile": 5, "card": "QH", "discarded": "JD", "draw_top": "9S",
                                "draw_pile_size": 2}
    state.apply(Place(5, Card.parse("9S")))  # the card just drawn may go straight out
    assert len(state.piles[2]) == 5 and state.out_of_play[-1] is Card.parse("9S")


def test_a_pile_closes_when_all_its_cards_make_books_and_runs() -> None:
    # Pile 5 (5s wild): 5H stands in for the missing 8 of hearts.
    state = position({5: "6H 7H 5H 9H QD"}, draw="KD 9S 10H")
    events = state.apply(state.parse_action("place 5 6H"))
    assert [e.kind for e in events] == ["place"] and not state.closed[2]
    state = position({5: "6H 7H 5H 9H QD"}, draw="KD 9S 10H")
    events = state.apply(state.parse_action("place 5 QD"))
    assert [e.kind for e in events] == ["place", "close"]
    assert events[1].public == {"pile": 5, "groups": ["run:6H,7H,5H=8,9H,10H"]}
    assert state.closed[2]
    assert "pile 5 is closed" in str(state.why_illegal(Place(5, Card.parse("9S"))))


def test_winning_closes_every_pile() -> None:
    others = [s for s in PILE_SIZES if s != 3]
    state = position({3: "QH QS 9D"}, closed=others, draw="KD 9S QC")
    events = state.apply(Place(3, Card.parse("9D")))
    assert [e.kind for e in events] == ["place", "close", "game_over"]
    out = state.outcome
    assert out is not None and out.termination is Termination.NORMAL
    assert out.scores == (11,) and out.places == (1,) and out.winners == (0,)
    assert out.detail["won"] is True and out.detail["points_left"] == 0
    assert state.to_move is None and state.decision == "over"
    assert state.why_illegal(Place(3, Card.parse("9S"))) == "the game is over"
    with pytest.raises(IllegalActionError):
        state.apply(Place(3, Card.parse("9S")))


def test_losing_when_the_draw_pile_runs_out() -> None:
    state = position(closed=[4, 13], draw="KD")
    events = state.apply(Place(3, Card.parse("KD")))
    assert events[-1].kind == "game_over"
    out = state.outcome
    assert out is not None and out.detail["won"] is False and out.scores == (2,)
    # The deck won: the player is second, and nobody is among the winners.
    assert out.places == (2,) and out.winners == ()
    assert events[-1].public["places"] == [2] and events[-1].public["winners"] == []
    assert out.detail["open_piles"] == [s for s in PILE_SIZES if s not in (4, 13)]
    assert out.detail["cards_left"] == sum(PILE_SIZES) - 4 - 13
    assert out.detail["points_left"] > 0 and out.detail["moves"] == 1


@pytest.mark.parametrize(("text", "reason"), [
    ("place 2 KD", "no pile 2"),
    ("place 14 KD", "no pile 14"),
    ("place 5 KH", "neither in pile 5 nor the drawn card"),
])
def test_illegal_moves_say_why(text: str, reason: str) -> None:
    state = position(draw="9S KD")
    why = state.why_illegal(state.parse_action(text))
    assert why is not None and reason in why


@pytest.mark.parametrize("text", ["", "place", "place five KD", "place 5", "put 5 KD",
                                  "place 5 KD 6", "place 5 ZZ"])
def test_malformed_moves(text: str) -> None:
    with pytest.raises(InvalidActionError):
        position().parse_action(text)


def test_move_texts_round_trip_and_legal_moves_are_legal() -> None:
    state = GAME.new_game(GAME.rules(), 1, 3)
    moves = state.legal_actions()
    open_piles = [s for s, c in zip(PILE_SIZES, state.closed, strict=True) if not c]
    assert {m.pile for m in moves} == set(open_piles)
    for move in moves:
        assert state.parse_action(str(move)) == move and state.why_illegal(move) is None
    assert str(Place(12, Card.parse("10*"))) == "place 12 10*"


def test_natural_option_decides_all_wild_piles() -> None:
    none = position({3: "X X 9D"}, draw="KD 9S X")
    assert [e.kind for e in none.apply(Place(3, Card.parse("9D")))] == ["place", "close"]
    group = position({3: "X X 9D"}, draw="KD 9S X", rules=SolitaireRules(natural="group"))
    assert [e.kind for e in group.apply(Place(3, Card.parse("9D")))] == ["place"]
    assert rules_to_json(parse_rules(GAME.rules_type, {"natural": "group"})) == {"natural": "group"}
    with pytest.raises(RuleOptionError):
        parse_rules(GAME.rules_type, {"natural": "phase"})


def test_one_player_only() -> None:
    with pytest.raises(RuleOptionError):
        GAME.new_game(GAME.rules(), 2, 1)


def test_snapshots_round_trip() -> None:
    state = GAME.new_game(GAME.rules(), 1, 8)
    state.apply(state.autoplay_action())
    snap = state.snapshot()
    again = GAME.from_snapshot(snap)
    assert again.snapshot() == snap
    assert again.observation(0).to_json() == state.observation(0).to_json()
    with pytest.raises(ValueError, match="not a Solitaire snapshot"):
        GAME.from_snapshot({"game": "fivecrowns"})
    with pytest.raises(ValueError, match="broken"):
        GAME.from_snapshot({"game": "solitaire"})


def test_a_piles_own_places_are_its_distinct_cards_in_order() -> None:
    for text in ("3S 3S 5H X X QD", "X 3S QD 3S X 5H", ""):
        cards = tuple(parse_cards(text))
        places = pile_places(7, cards)
        assert [p.card for p in places] == list(dict.fromkeys(cards))
        assert all(p == Place(7, p.card) for p in places)
