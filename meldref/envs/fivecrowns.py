"""Five Crowns' fixed action space (114 actions) and observation vector.

Actions, by index:

    0, 1          draw pile, draw discard
    2 .. 57       discard card kind k (0 .. 55: 3* .. K*, 3H .. KH, 3C .., 3S .., 3D .., X)
    58 .. 113     discard card kind k and go out with the rest (on a last turn: lay the
                  engine's best groups of the rest); the engine's found way

Seats in the observation are relative: 0 is the observing seat, 1 the next to its left.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Sequence
from typing import Final

from ..engine.cards import FC_RANK_TEXT
from ..engine.fivecrowns import FiveCrownsView
from ..engine.fivecrowns.rules import TIEBREAK_ROUND
from ..engine.game import Observation
from .codec import (
    FIVECROWNS_KINDS,
    Features,
    Vector,
    View,
    count,
    dense,
    group_cards,
    kind_index,
    put,
)

DISCARD: Final = 2
GO_OUT: Final = DISCARD + len(FIVECROWNS_KINDS)  # 58
ACTIONS: Final = GO_OUT + len(FIVECROWNS_KINDS)  # 114

_KIND: Final = kind_index(FIVECROWNS_KINDS)
_RANKS: Final = {text: rank - 3 for rank, text in FC_RANK_TEXT.items()}  # "3" -> 0 .. "K" -> 10
_DECISIONS: Final = ("draw", "discard")
SEAT_FEATURES: Final = 5
HEAD: Final = 2 * len(FIVECROWNS_KINDS) + 1 + len(_RANKS) + len(_DECISIONS) + 9 + 1
# Where each part of the vector starts (`FiveCrownsCodec.features`): the table's cards at HEAD.
_TOP: Final = len(FIVECROWNS_KINDS)
_WILD: Final = _TOP + len(FIVECROWNS_KINDS) + 1
_DECISION: Final = _WILD + len(_RANKS)
_FLAGS: Final = _DECISION + len(_DECISIONS)


class FiveCrownsCodec:
    """Five Crowns' numbering (module docstring)."""

    game = "fivecrowns"
    action_size = ACTIONS
    reads_typed_view = True

    def observation_size(self, players: int) -> int:
        return HEAD + len(FIVECROWNS_KINDS) + players + players * SEAT_FEATURES

    def encode(self, view: View, players: int) -> Vector:
        return dense(self.features(view, players), self.observation_size(players))

    def encode_observation(self, observation: Observation, players: int) -> Vector:
        """`encode`'s vector from the typed view (the parts `features` reads from the JSON,
        without writing it)."""
        view = typing.cast(FiveCrownsView, observation)
        me, cap, went, top = view.seat, view.turn_cap, view.went_out, view.discard_top
        return dense(_features(
            me, players, [card.text for card in view.hand], None if top is None else top.text,
            view.wild_rank - 3, view.decision,
            (view.round / 11, view.deal_size / 13, view.turn / cap if cap else 0.0,
             float(view.last_turn), float(view.round == TIEBREAK_ROUND),
             float(view.natural != "none"), view.discard_pile_size / 116,
             view.draw_pile_size / 116, view.decks / 4, 1.0 if went is None else 0.0),
            [card.text for _, meld in view.table for card in meld.cards], went,
            [(float(view.playing[s]), view.scores[s] / 300, view.hand_sizes[s] / 13,
              float(went == s), float(view.had_last_turn[s]))
             for s in ((me + rel) % players for rel in range(players))]),
            self.observation_size(players))

    def features(self, view: View, players: int) -> Features:
        """`encode`'s vector as its non-zero entries, each part at its offset (as Phase
        10's)."""
        me = view["seat"]
        cap = view["turn_cap"]
        went = view["went_out"]
        seats = view["seats"]
        return _features(
            me, players, view["hand"], view["discard_top"], _RANKS[view["wild_rank"]],
            view["decision"],
            (view["round"] / 11, view["deal_size"] / 13, view["turn"] / cap if cap else 0.0,
             float(view["last_turn"]), float(view["tiebreak"]),
             float(view["natural"] != "none"), view["discard_pile_size"] / 116,
             view["draw_pile_size"] / 116, view["decks"] / 4, 1.0 if went is None else 0.0),
            [card for group in view["table"] for card in group_cards(str(group["group"]))],
            went,
            [(float(seat["playing"]), seat["score"] / 300, seat["hand_size"] / 13,
              float(seat["gone_out"]), float(seat["had_last_turn"]))
             for seat in (seats[(me + rel) % players] for rel in range(players))])

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


SeatFeatures = tuple[float, float, float, float, float]


def _features(me: int, players: int, hand: Iterable[str], top: str | None, wild: int,
              decision: str, flags: Sequence[float], table: Iterable[str], went: int | None,
              seats: Sequence[SeatFeatures]) -> Features:
    """The vector's non-zero entries from the view's parts (as the JSON and the typed view
    give them): the hand's kinds, the discard's top, the wild rank (0 for 3s), the decision,
    the flags, the table's cards, who went out, and each seat from the observer's on."""
    out: Features = {}
    for token in hand:
        count(out, _KIND[token])
    out[_TOP + (len(FIVECROWNS_KINDS) if top is None else _KIND[top])] = 1.0
    out[_WILD + wild] = 1.0
    for i, name in enumerate(_DECISIONS):
        if decision == name:
            out[_DECISION + i] = 1.0
    put(out, _FLAGS, flags)
    for card in table:
        count(out, HEAD + _KIND[card])
    at = HEAD + len(FIVECROWNS_KINDS)
    if went is not None:
        out[at + (went - me) % players] = 1.0
    at += players
    for seat in seats:
        put(out, at, seat)
        at += SEAT_FEATURES
    return out


CODEC: Final = FiveCrownsCodec()
