"""Five Crowns Solitaire's fixed action space (616 actions) and observation vector.

Actions, by index: ``place <pile> <card>`` is (pile - 3) * 56 + k for piles 3 .. 13 and card
kind k (0 .. 55: 3* .. K*, 3H .. KH, 3C .., 3S .., 3D .., X): the draw pile's top goes into the
pile, then the card of kind k leaves it.

The observation: each pile's cards by kind and whether it is closed, the draw pile's top, how
many cards are left to draw, out of play, and moves made.
"""

from __future__ import annotations

import typing
from typing import Final

import numpy as np

from ..engine.cards import Card
from ..engine.game import Observation
from ..engine.solitaire import PILE_SIZES, SolitaireView
from .codec import FIVECROWNS_KINDS, Features, Vector, View, count, dense, kind_index, put

KINDS: Final = len(FIVECROWNS_KINDS)
ACTIONS: Final = len(PILE_SIZES) * KINDS  # 616
_KIND: Final = kind_index(FIVECROWNS_KINDS)
_FIRST: Final = PILE_SIZES[0]
_SIZE: Final = len(PILE_SIZES) * (KINDS + 1) + KINDS + 1 + 3


class SolitaireCodec:
    """Solitaire's numbering (module docstring)."""

    game = "solitaire"
    action_size = ACTIONS
    reads_typed_view = True

    def observation_size(self, players: int) -> int:
        return _SIZE

    def encode(self, view: View, players: int) -> Vector:
        return dense(self.features(view, players), _SIZE)

    def encode_observation(self, observation: Observation, players: int) -> Vector:
        """`encode`'s vector from the typed view: each pile's part remembered by the pile's
        own tuple (a move makes a new tuple for the one pile it changes; the state hands the
        others on as they were), the parts joined by numpy in one call."""
        view = typing.cast(SolitaireView, observation)
        parts = [_pile_part(cards, shut) for cards, shut in zip(view.piles, view.closed,
                                                                  strict=True)]
        tail = np.zeros(KINDS + 1 + 3, dtype=np.float32)
        top = view.draw_top
        tail[KINDS if top is None else _KIND[top.text]] = 1.0
        tail[KINDS + 1] = view.draw_pile_size / 56
        tail[KINDS + 2] = view.out_of_play / 56
        tail[KINDS + 3] = view.moves / 56
        parts.append(tail)
        return np.concatenate(parts)

    def features(self, view: View, players: int) -> Features:
        """`encode`'s vector as its non-zero entries: pile p's kinds at p * (KINDS + 1), then
        whether it is closed, then the draw pile's top and the counts."""
        out: Features = {}
        at = 0
        for pile in sorted(view["piles"], key=_pile_size):
            out.update(_pile(at, tuple(pile["cards"]), bool(pile["closed"])))
            at += KINDS + 1
        top = view["draw_top"]
        out[at + (KINDS if top is None else _KIND[top])] = 1.0
        put(out, at + KINDS + 1,
            (view["draw_pile_size"] / 56, view["out_of_play"] / 56, view["moves"] / 56))
        return out

    def action_index(self, text: str, view: View) -> int | None:
        _, pile, card = text.split()
        return (int(pile) - _FIRST) * KINDS + _KIND[card]

    def describe(self, index: int) -> str:
        pile, kind = divmod(index, KINDS)
        return f"place {pile + _FIRST} {FIVECROWNS_KINDS[kind].text}"


def _pile_size(pile: View) -> int:
    return int(pile["size"])


def _pile(at: int, cards: tuple[str, ...], closed: bool) -> Features:
    """The entries of a pile whose part of the vector starts at `at`, remembered: a move
    changes one pile, and the other ten were half of an encoding's time."""
    key = (at, cards, closed)
    part = _PILES.get(key)
    if part is None:
        if len(_PILES) >= _PILES_KEPT:
            _PILES.clear()
        part = _PILES[key] = {}
        for token in cards:
            count(part, at + _KIND[token])
        part[at + KINDS] = float(closed)
    return part


_PILES: dict[tuple[int, tuple[str, ...], bool], Features] = {}
_PILES_KEPT: Final = 200_000


def _pile_part(cards: tuple[Card, ...], closed: bool) -> Vector:
    """A pile's part of the vector (its kinds, then whether it is closed), remembered by the
    identity of its cards' tuple (the entry keeps the tuple, so the id is not reused while it
    is there): no tuple is hashed card by card."""
    key = (id(cards), closed)
    found = _PARTS.get(key)
    if found is not None and found[0] is cards:
        return found[1]
    if len(_PARTS) >= _PARTS_KEPT:
        _PARTS.clear()
    part = np.zeros(KINDS + 1, dtype=np.float32)
    for card in cards:
        part[_KIND[card.text]] += 1.0
    part[KINDS] = float(closed)
    _PARTS[key] = (cards, part)
    return part


_PARTS: dict[tuple[int, bool], tuple[tuple[Card, ...], Vector]] = {}
_PARTS_KEPT: Final = 20_000


CODEC: Final = SolitaireCodec()
