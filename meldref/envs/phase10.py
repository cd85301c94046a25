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

import typing
from collections.abc import Iterable, Sequence
from typing import Final

from ..engine.game import Observation
from ..engine.melds import GroupKind
from ..engine.phase10 import Phase10View
from .codec import (
    PHASE10_KINDS,
    Features,
    Vector,
    View,
    count,
    dense,
    group_cards,
    kind_index,
    put,
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
# Where each part of the vector starts (`Phase10Codec.features`), before the seat-count parts.
_TOP: Final = len(PHASE10_KINDS)
_DECISION: Final = _TOP + len(PHASE10_KINDS) + 1
_PHASE: Final = _DECISION + len(_DECISIONS)
_LEFT: Final = _PHASE + 10
_FLAGS: Final = _LEFT + 10
_VICTIMS: Final = _FLAGS + 6
_GROUPS: dict[str, list[int]] = {}  # group token -> its cards' kinds
_GROUPS_KEPT: Final = 100_000


class Phase10Codec:
    """Phase 10's numbering (module docstring)."""

    game = "phase10"
    action_size = ACTIONS
    reads_typed_view = True

    def observation_size(self, players: int) -> int:
        head = 2 * len(PHASE10_KINDS) + 1 + len(_DECISIONS) + 10 + 10 + 6 + players
        return head + MAX_GROUPS * (GROUP_FEATURES + players) + players * SEAT_FEATURES

    def encode(self, view: View, players: int) -> Vector:
        return dense(self.features(view, players), self.observation_size(players))

    def features(self, view: View, players: int) -> Features:
        """`encode`'s vector as its non-zero entries, each part at its offset: building the
        whole list of floats and packing it was most of a step's time."""
        me = view["seat"]
        seats = view["seats"]
        return _features(
            me, players, view["hand"], view["discard_top"], view["decision"], view["phase"],
            view["phases_left"],
            (float(view["laid"] is not None), float(view["laid_this_turn"]),
             float(view["tiebreak"]), view["turn"] / max(1, view["turn_cap"]),
             view["hand_number"] / 10, view["draw_pile_size"] / 108),
            view["victims"],
            [(int(str(g["id"])), str(g["group"]), int(str(g["owner"]))) for g in view["table"]],
            [_seat_features(seats[(me + rel) % players]) for rel in range(players)])

    def encode_observation(self, observation: Observation, players: int) -> Vector:
        """`encode`'s vector from the typed view (the same parts as `features` reads from the
        JSON, without writing it: a Phase 10 view's JSON is a few dozen dicts and lists a step,
        and their allocations cost the collector's passes too)."""
        view = typing.cast(Phase10View, observation)
        me = view.seat
        top = view.discard_top
        return dense(_features(
            me, players, [card.text for card in view.hand], None if top is None else top.text,
            view.decision, view.phases[me], view.phases_left,
            (float(view.laid[me] is not None), float(view.laid_this_turn),
             float(view.tiebreak), view.turn / max(1, view.rules.turn_cap),
             view.hand_number / 10, view.draw_pile_size / 108),
            view.victims, [(group.id, group.token, group.owner) for group in view.table],
            [(float(view.playing[s]), (view.phases[s] or 0) / 10,
              float(view.laid[s] is not None), view.scores[s] / 500, view.hand_sizes[s] / 11,
              float(view.skips[s]), len(view.completed[s]) / 10)
             for s in ((me + rel) % players for rel in range(players))]),
            self.observation_size(players))

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


SeatFeatures = tuple[float, float, float, float, float, float, float]


def _seat_features(seat: View) -> SeatFeatures:
    """A seat's features from its part of the JSON view."""
    return (float(seat["playing"]), (seat["phase"] or 0) / 10, float(seat["laid"]),
            seat["score"] / 500, seat["hand_size"] / 11, float(seat["skip_pending"]),
            len(seat["completed"]) / 10)


def _features(me: int, players: int, hand: Iterable[str], top: str | None, decision: str,
              phase: int | None, phases_left: Iterable[int | None], flags: Sequence[float],
              victims: Iterable[int], table: Iterable[tuple[int, str, int]],
              seats: Sequence[SeatFeatures]) -> Features:
    """The vector's non-zero entries from the view's parts (as the JSON and the typed view
    give them): the hand's kinds, the discard's top, the decision, the phase and the phases
    left, the flags, the Skip's victims, the table's groups (id, token, owner), and each seat
    from the observer's on (relative seats)."""
    out: Features = {}
    for token in hand:
        count(out, _KIND[token])
    out[_TOP + (len(PHASE10_KINDS) if top is None else _KIND[top])] = 1.0
    for i, name in enumerate(_DECISIONS):
        if decision == name:
            out[_DECISION + i] = 1.0
    if phase is not None:
        out[_PHASE + phase - 1] = 1.0
    for left in phases_left:
        if left is not None and 1 <= left <= 10:  # None: a seat whose game is over
            out[_LEFT + left - 1] = 1.0
    put(out, _FLAGS, flags)
    for victim in victims:
        out[_VICTIMS + (victim - me) % players] = 1.0
    _table(out, _VICTIMS + players, table, me, players)
    at = _VICTIMS + players + MAX_GROUPS * (GROUP_FEATURES + players)
    for seat in seats:
        put(out, at, seat)
        at += SEAT_FEATURES
    return out


def _table(out: Features, at: int, table: Iterable[tuple[int, str, int]], me: int,
           players: int) -> None:
    """The table's groups into `out` from `at`: group id g's features at
    `at + (g - 1) * (GROUP_FEATURES + players)` (an absent group's left zero)."""
    width = GROUP_FEATURES + players
    for group_id, token, owner in table:
        if not 1 <= group_id <= MAX_GROUPS:
            continue
        start = at + (group_id - 1) * width
        out[start + _GROUP_KINDS.index(token.partition(":")[0])] = 1.0
        out[start + len(_GROUP_KINDS) + (owner - me) % players] = 1.0
        cards = start + len(_GROUP_KINDS) + players
        for card in _group_kinds(token):
            count(out, cards + card)


def _group_kinds(token: str) -> list[int]:
    """The card kinds of a group token, remembered (a group stays on the table for a hand and
    is encoded at every step)."""
    kinds = _GROUPS.get(token)
    if kinds is None:
        if len(_GROUPS) >= _GROUPS_KEPT:
            _GROUPS.clear()
        kinds = _GROUPS[token] = [_KIND[card] for card in group_cards(token)]
    return kinds


CODEC: Final = Phase10Codec()
