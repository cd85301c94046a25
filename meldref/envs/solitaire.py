"""Five Crowns Solitaire's fixed action space (616 actions) and observation vector.

Actions, by index: ``place <pile> <card>`` is (pile - 3) * 56 + k for piles 3 .. 13 and card
kind k (0 .. 55: 3* .. K*, 3H .. KH, 3C .., 3S .., 3D .., X): the draw pile's top goes into the
pile, then the card of kind k leaves it.

The observation: each pile's cards by kind and whether it is closed, the draw pile's top, how
many cards are left to draw, out of play, and moves made.
"""

from __future__ import annotations

from typing import Final

from ..engine.solitaire import PILE_SIZES
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

    def observation_size(self, players: int) -> int:
        return _SIZE

    def encode(self, view: View, players: int) -> Vector:
        return dense(self.features(view, players), _SIZE)

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


CODEC: Final = SolitaireCodec()
