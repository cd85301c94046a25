"""Toy Rummy's fixed action space (50 actions) and observation vector (this becomes
`meldref/envs/toyrummy.py`).

Actions, by index: 0 `draw pile`, 1 `draw discard`, 2 + k `discard` card kind k, 26 + k
`go out` discarding card kind k (k: 0 .. 23, R1 .. R6, B1 .., G1 .., Y1 .. in the deck's order).

The observation: the hand's cards by kind, the discard pile's top (one-hot, or none), whether
the seat draws or plays, the turn over the cap, the draw pile's size, and each seat's hand size
from the observing seat on.
"""

from __future__ import annotations

from typing import Final

from meldref.engine.game import Observation
from meldref.engine.toyrummy import DECK, NAME
from meldref.envs.codec import Vector, View, counts, kind_index, one_hot, vector

KINDS: Final = len(DECK)
DISCARD: Final = 2
GO_OUT: Final = DISCARD + KINDS
ACTIONS: Final = GO_OUT + KINDS  # 50
_KIND: Final = kind_index(DECK)


class ToyRummyCodec:
    """Toy Rummy's numbering (module docstring)."""

    game = NAME
    action_size = ACTIONS
    reads_typed_view = False  # it encodes the view's JSON (`encode`); the shipped games read
                              # the typed view, which a step's speed wants, not a first game

    def observation_size(self, players: int) -> int:
        return KINDS + KINDS + 1 + 2 + 2 + players

    def encode(self, view: View, players: int) -> Vector:
        top = view["discard_top"]
        me = view["seat"]
        out = counts(view["hand"], _KIND)
        out += one_hot(KINDS if top is None else _KIND[top], KINDS + 1)
        out += [float(view["decision"] == "draw"), float(view["decision"] == "play")]
        out += [view["turn"] / view["turn_cap"], view["draw_pile_size"] / KINDS]
        out += [view["seats"][(me + rel) % players]["hand_size"] / 4 for rel in range(players)]
        return vector(out)

    def encode_observation(self, observation: Observation, players: int) -> Vector:
        return self.encode(observation.to_json(), players)

    def action_index(self, text: str, view: View) -> int | None:
        words = text.split()
        if words[0] == "draw":
            return 0 if words[1] == "pile" else 1
        return (GO_OUT if words[0] == "go" else DISCARD) + _KIND[words[-1]]

    def describe(self, index: int) -> str:
        if index < DISCARD:
            return ("draw pile", "draw discard")[index]
        verb, kind = ("discard", index - DISCARD) if index < GO_OUT else ("go out", index - GO_OUT)
        return f"{verb} {DECK[kind].text}"


CODEC: Final = ToyRummyCodec()
