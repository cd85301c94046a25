"""What the Solitaire player sees, and the legal actions it implies.

`SolitaireView` is the observation of `SolitaireState.observation()`; the state lists its legal
actions through it, so the two never disagree.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from ..cards import FC_RANK_TEXT, Card, holds
from ..fivecrowns.solver import Natural, Solver
from ..game import JSON, Rebuilt, by_init
from .actions import Place, place
from .rules import PILE_SIZES


@dataclass(frozen=True, slots=True)
class SolitaireView:
    """Everything the player may know: every pile (face up), the draw pile's top only, and
    the cards it put out of play (`discarded`: it saw each go, so a view holds the player's
    whole knowledge and a bot needs no memory of the game to decide)."""

    natural: Natural
    piles: tuple[tuple[Card, ...], ...]  # in the order of PILE_SIZES
    closed: tuple[bool, ...]
    draw_top: Card | None
    draw_pile_size: int
    out_of_play: int
    moves: int
    to_move: int | None
    decision: str
    seat: int = 0
    discarded: tuple[Card, ...] = ()  # the cards out of play, first first

    def __init__(self, natural: Natural, piles: tuple[tuple[Card, ...], ...],
                 closed: tuple[bool, ...], draw_top: Card | None, draw_pile_size: int,
                 out_of_play: int, moves: int, to_move: int | None, decision: str,
                 seat: int = 0, discarded: tuple[Card, ...] = ()) -> None:
        object.__setattr__(self, "natural", natural)
        object.__setattr__(self, "piles", piles)
        object.__setattr__(self, "closed", closed)
        object.__setattr__(self, "draw_top", draw_top)
        object.__setattr__(self, "draw_pile_size", draw_pile_size)
        object.__setattr__(self, "out_of_play", out_of_play)
        object.__setattr__(self, "moves", moves)
        object.__setattr__(self, "to_move", to_move)
        object.__setattr__(self, "decision", decision)
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "discarded", discarded)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    def pile(self, size: int) -> tuple[Card, ...]:
        return self.piles[PILE_SIZES.index(size)]

    def open_piles(self) -> list[int]:
        return [size for size, shut in zip(PILE_SIZES, self.closed, strict=True) if not shut]

    def solver(self, size: int, extra: Card | None = None) -> Solver:
        """The solver of pile `size`, with `extra` added to it."""
        cards = self.pile(size) if extra is None else (*self.pile(size), extra)
        return Solver(cards, size, self.natural)

    def legal_actions(self) -> list[Place]:
        """For every open pile, each of its cards (in order) and then the drawn card goes."""
        top = self.draw_top
        if self.to_move is None or top is None:
            return []
        places = [_pile_places(size, cards) for size, cards in zip(PILE_SIZES, self.piles,
                                                                   strict=True)]
        return legal_places(list(self.piles), list(self.closed), top, places)

    def to_json(self) -> dict[str, JSON]:
        piles = [
            {"size": size, "wild_rank": FC_RANK_TEXT[size], "closed": shut,
             "cards": [c.text for c in cards]}
            for size, cards, shut in zip(PILE_SIZES, self.piles, self.closed, strict=True)
        ]
        return {
            "seat": self.seat,
            "to_move": self.to_move,
            "decision": self.decision,
            "natural": self.natural,
            "draw_top": None if self.draw_top is None else self.draw_top.text,
            "draw_pile_size": self.draw_pile_size,
            "out_of_play": self.out_of_play,
            "discarded": [c.text for c in self.discarded],
            "moves": self.moves,
            "piles_closed": sum(self.closed),
            "piles": piles,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON], rules: object = None) -> SolitaireView:
        """The view whose `to_json()` is `data` (what a protocol bot is sent). The rules are
        taken and not needed (the view carries what it needs): `GameInfo.view_from_json`."""
        piles = sorted(data["piles"], key=lambda p: p["size"])
        return cls(
            natural=data["natural"],
            piles=tuple(tuple(Card.parse(c) for c in p["cards"]) for p in piles),
            closed=tuple(bool(p["closed"]) for p in piles),
            draw_top=None if data["draw_top"] is None else Card.parse(data["draw_top"]),
            draw_pile_size=data["draw_pile_size"],
            out_of_play=data["out_of_play"],
            moves=data["moves"],
            to_move=data["to_move"],
            decision=data["decision"],
            seat=data["seat"],
            discarded=tuple(Card.parse(c) for c in data["discarded"]),
        )


def legal_places(piles: list[tuple[Card, ...]], closed: list[bool], top: Card,
                 places: list[tuple[Place, ...]]) -> list[Place]:
    """For every open pile, each of its cards (`places`: its own discards, in order) and then
    the drawn card `top` goes. (The view's and the state's legal actions, written once; lists,
    not Sequences: compiled, a list's items are read directly, a Sequence's through the generic
    protocol, some 300 times a decision.)"""
    if not len(piles) == len(closed) == len(places) == len(PILE_SIZES):
        raise ValueError(f"{len(PILE_SIZES)} piles expected, not {len(piles)}")
    out: list[Place] = []
    drawn = _tops(top)
    # By index, not zip: compiled, a zip of four makes and unpacks a tuple per pile, and this
    # runs every decision.
    for i in range(len(PILE_SIZES)):
        if not closed[i]:
            out.extend(places[i])
            if not holds(piles[i], top):
                out.append(drawn[i])
    return out


def _tops(card: Card) -> tuple[Place, ...]:
    """The drawn card into each pile and out again, in the order of PILE_SIZES."""
    found = _TOPS.get(card)
    if found is None:  # a dict, not functools.cache: compiled, a plain lookup
        found = _TOPS[card] = tuple(place(size, card) for size in PILE_SIZES)
    return found


_TOPS: Final[dict[Card, tuple[Place, ...]]] = {}  # at most one entry per card of the deck


def pile_places(size: int, cards: tuple[Card, ...]) -> tuple[Place, ...]:
    """Pile `size`'s own discards: each distinct card of `cards` once, in order."""
    by_card = _BY_PILE.get(size)
    if by_card is None:
        by_card = _BY_PILE[size] = {}
    out: list[Place] = []
    for card in cards:
        # At most 13 comparisons of pointers (cards are interned): compiled, cheaper than
        # `dict.fromkeys` and `map` over a dict subclass's __missing__ were.
        if any(action.card is card for action in out):
            continue
        action = by_card.get(card)
        if action is None:
            action = by_card[card] = place(size, card)
        out.append(action)
    return tuple(out)


# Per pile, card -> `place(pile, card)`, filled as cards are asked for.
_BY_PILE: Final[dict[int, dict[Card, Place]]] = {}


# A view's piles: the pile changes one move in many, so most requests find them here. (The
# state keeps its own, updated on each move.)
_pile_places: Final = functools.lru_cache(maxsize=256)(pile_places)
