"""Five Crowns' fixed action space (114 actions) and observation vector.

Actions, by index:

    0, 1          draw pile, draw discard
    2 .. 57       discard card kind k (0 .. 55: 3* .. K*, 3H .. KH, 3C .., 3S .., 3D .., X)
    58 .. 113     discard card kind k and go out with the rest (on a last turn: lay the
                  engine's best groups of the rest); the engine's found way

Seats in the observation are relative: 0 is the observing seat, 1 the next to its left.
"""

from __future__ import annotations

from typing import Final

from ..engine.cards import FC_RANK_TEXT
from .codec import (
    FIVECROWNS_KINDS,
    Vector,
    View,
    counts,
    group_cards,
    kind_index,
    one_hot,
    vector,
)

DISCARD: Final = 2
GO_OUT: Final = DISCARD + len(FIVECROWNS_KINDS)  # 58
ACTIONS: Final = GO_OUT + len(FIVECROWNS_KINDS)  # 114

_KIND: Final = kind_index(FIVECROWNS_KINDS)
_RANKS: Final = {text: rank - 3 for rank, text in FC_RANK_TEXT.items()}  # "3" -> 0 .. "K" -> 10
_DECISIONS: Final = ("draw", "discard")
SEAT_FEATURES: Final = 5
HEAD: Final = 2 * len(FIVECROWNS_KINDS) + 1 + len(_RANKS) + len(_DECISIONS) + 9 + 1


class FiveCrownsCodec:
    """Five Crowns' numbering (module docstring)."""

    game = "fivecrowns"
    action_size = ACTIONS

    def observation_size(self, players: int) -> int:
        return HEAD + len(FIVECROWNS_KINDS) + players + players * SEAT_FEATURES

    def encode(self, view: View, players: int) -> Vector:
        me = view["seat"]
        out = counts(view["hand"], _KIND)
        top = view["discard_top"]
        size = len(FIVECROWNS_KINDS)
        out += one_hot(size if top is None else _KIND[top], size + 1)
        out += one_hot(_RANKS[view["wild_rank"]], len(_RANKS))
        out += [1.0 if view["decision"] == d else 0.0 for d in _DECISIONS]
        cap = view["turn_cap"]
        out += [
            view["round"] / 11, view["deal_size"] / 13, view["turn"] / cap if cap else 0.0,
            float(view["last_turn"]), float(view["tiebreak"]), float(view["natural"] != "none"),
            view["discard_pile_size"] / 116, view["draw_pile_size"] / 116, view["decks"] / 4,
        ]
        went = view["went_out"]
        out += [1.0 if went is None else 0.0]
        out += counts((c for g in view["table"] for c in group_cards(str(g["group"]))), _KIND)
        out += one_hot(None if went is None else (went - me) % players, players)
        for rel in range(players):
            seat = view["seats"][(me + rel) % players]
            out += [
                float(seat["playing"]), seat["score"] / 300, seat["hand_size"] / 13,
                float(seat["gone_out"]), float(seat["had_last_turn"]),
            ]
        return vector(out)

    def action_index(self, text: str, view: View) -> int | None:
        words = text.split()
        if words[0] == "draw":
            return 0 if words[1] == "pile" else 1
        kind = _KIND[words[1]]
        return (GO_OUT if len(words) > 2 else DISCARD) + kind

    def describe(self, index: int) -> str:
        if index < DISCARD:
            return ("draw pile", "draw discard")[index]
        if index < GO_OUT:
            return f"discard {FIVECROWNS_KINDS[index - DISCARD].text}"
        return f"discard {FIVECROWNS_KINDS[index - GO_OUT].text} and lay the rest"


CODEC: Final = FiveCrownsCodec()
