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
from .codec import FIVECROWNS_KINDS, Vector, View, counts, kind_index, one_hot, vector

KINDS: Final = len(FIVECROWNS_KINDS)
ACTIONS: Final = len(PILE_SIZES) * KINDS  # 616
_KIND: Final = kind_index(FIVECROWNS_KINDS)
_FIRST: Final = PILE_SIZES[0]


class SolitaireCodec:
    """Solitaire's numbering (module docstring)."""

    game = "solitaire"
    action_size = ACTIONS

    def observation_size(self, players: int) -> int:
        return len(PILE_SIZES) * (KINDS + 1) + KINDS + 1 + 3

    def encode(self, view: View, players: int) -> Vector:
        out: list[float] = []
        for pile in sorted(view["piles"], key=lambda p: p["size"]):
            out += counts(pile["cards"], _KIND)
            out.append(float(pile["closed"]))
        top = view["draw_top"]
        out += one_hot(KINDS if top is None else _KIND[top], KINDS + 1)
        out += [view["draw_pile_size"] / 56, view["out_of_play"] / 56, view["moves"] / 56]
        return vector(out)

    def action_index(self, text: str, view: View) -> int | None:
        _, pile, card = text.split()
        return (int(pile) - _FIRST) * KINDS + _KIND[card]

    def describe(self, index: int) -> str:
        pile, kind = divmod(index, KINDS)
        return f"place {pile + _FIRST} {FIVECROWNS_KINDS[kind].text}"


CODEC: Final = SolitaireCodec()
