"""Phase 10's fixed action space (1,244 actions) and observation vector.

Actions, by index:

    0, 1          draw pile, draw discard
    2 .. 11       lay phase 1 .. 10 (the engine's found way: the first lay of that phase listed)
    12 .. 1187    hit group g (1 .. 24) with card kind k (0 .. 48: R1..R12, B.., Y.., G.., W),
                  12 + (g - 1) * 49 + k; a Wild's hit takes the engine's first declaration
    1188 .. 1236  discard card kind k (0 .. 48)
    1237          discard a Skip naming no seat (skip-victim=next)
    1238 .. 1243  discard a Skip at seat v (0 .. 5, absolute seat numbers)

Group ids count from 1 within a hand; a hand with more than 24 groups on the table (never seen
in play) has its later groups unnumbered, which leaves every draw and discard numbered.

Seats in the observation are relative: 0 is the observing seat, 1 the next to its left.
"""

from __future__ import annotations

from typing import Final

from ..engine.melds import GroupKind
from .codec import (
    PHASE10_KINDS,
    Vector,
    View,
    counts,
    group_cards,
    kind_index,
    one_hot,
    vector,
)

MAX_GROUPS: Final = 24
MAX_SEATS: Final = 6
HIT_KINDS: Final = 49  # every kind but the Skip
LAY: Final = 2
HIT: Final = 12
DISCARD: Final = HIT + MAX_GROUPS * HIT_KINDS  # 1188
SKIP_NO_VICTIM: Final = DISCARD + HIT_KINDS  # 1237
SKIP_AT: Final = SKIP_NO_VICTIM + 1  # 1238
ACTIONS: Final = SKIP_AT + MAX_SEATS  # 1244

_KIND: Final = kind_index(PHASE10_KINDS)
_GROUP_KINDS: Final = (GroupKind.SET.value, GroupKind.RUN.value, GroupKind.COLOUR.value)
_DECISIONS: Final = ("draw", "play")
SEAT_FEATURES: Final = 7
GROUP_FEATURES: Final = len(_GROUP_KINDS) + len(PHASE10_KINDS)  # + the owner, per seat


class Phase10Codec:
    """Phase 10's numbering (module docstring)."""

    game = "phase10"
    action_size = ACTIONS

    def observation_size(self, players: int) -> int:
        head = 2 * len(PHASE10_KINDS) + 1 + len(_DECISIONS) + 10 + 10 + 6 + players
        return head + MAX_GROUPS * (GROUP_FEATURES + players) + players * SEAT_FEATURES

    def encode(self, view: View, players: int) -> Vector:
        me = view["seat"]
        out = counts(view["hand"], _KIND)
        top = view["discard_top"]
        out += one_hot(len(PHASE10_KINDS) if top is None else _KIND[top], len(PHASE10_KINDS) + 1)
        out += [1.0 if view["decision"] == d else 0.0 for d in _DECISIONS]
        phase = view["phase"]
        out += one_hot(None if phase is None else phase - 1, 10)
        out += [1.0 if p in view["phases_left"] else 0.0 for p in range(1, 11)]
        out += [
            float(view["laid"] is not None), float(view["laid_this_turn"]),
            float(view["tiebreak"]), view["turn"] / max(1, view["turn_cap"]),
            view["hand_number"] / 10, view["draw_pile_size"] / 108,
        ]
        victims = {(v - me) % players for v in view["victims"]}
        out += [1.0 if s in victims else 0.0 for s in range(players)]
        out += _table(view["table"], me, players)
        for rel in range(players):
            seat = view["seats"][(me + rel) % players]
            out += [
                float(seat["playing"]), (seat["phase"] or 0) / 10, float(seat["laid"]),
                seat["score"] / 500, seat["hand_size"] / 11, float(seat["skip_pending"]),
                len(seat["completed"]) / 10,
            ]
        return vector(out)

    def action_index(self, text: str, view: View) -> int | None:
        words = text.split()
        verb = words[0]
        if verb == "draw":
            return 0 if words[1] == "pile" else 1
        if verb == "lay":
            phase = view["phase"]
            if words[1].startswith("phase="):
                phase = int(words[1].partition("=")[2])
            return None if phase is None else LAY + phase - 1
        if verb == "hit":
            group = int(words[1])
            if group > MAX_GROUPS:
                return None
            return HIT + (group - 1) * HIT_KINDS + _KIND[words[2].partition("=")[0]]
        card = words[1]
        if card != "S":
            return DISCARD + _KIND[card]
        return SKIP_NO_VICTIM if len(words) == 2 else SKIP_AT + int(words[2])

    def describe(self, index: int) -> str:
        if index < LAY:
            return ("draw pile", "draw discard")[index]
        if index < HIT:
            return f"lay phase {index - LAY + 1}"
        if index < DISCARD:
            group, kind = divmod(index - HIT, HIT_KINDS)
            return f"hit group {group + 1} with {PHASE10_KINDS[kind].text}"
        if index < SKIP_NO_VICTIM:
            return f"discard {PHASE10_KINDS[index - DISCARD].text}"
        if index == SKIP_NO_VICTIM:
            return "discard S"
        return f"discard S at seat {index - SKIP_AT}"


def _table(table: list[dict[str, object]], me: int, players: int) -> list[float]:
    out: list[float] = []
    by_id = {int(str(g["id"])): g for g in table}
    for group_id in range(1, MAX_GROUPS + 1):
        group = by_id.get(group_id)
        if group is None:
            out += [0.0] * (GROUP_FEATURES + players)
            continue
        token = str(group["group"])
        out += one_hot(_GROUP_KINDS.index(token.partition(":")[0]), len(_GROUP_KINDS))
        out += one_hot((int(str(group["owner"])) - me) % players, players)
        out += counts(group_cards(token), _KIND)
    return out


CODEC: Final = Phase10Codec()
