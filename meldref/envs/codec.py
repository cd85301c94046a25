"""What the research environments share: a game's fixed action space and its observation vector.

A `Codec` turns what one seat may see (the view in the engine's JSON form, `to_json()` of the
seat's observation: exactly what a protocol bot is sent as `View.data`) into a vector, and an
action's protocol text into an index of the game's fixed action space. Both work from the
seat's view and the legal actions' texts alone, so an environment, a replay export and a
protocol bot (meldref.envs.policy) encode the same position the same way, and no vector can
hold a card the seat may not see: nothing else goes in.

docs/research.md documents each game's numbering; one module per registered game, named after
it (engine/registry.py), holds it as its `CODEC`.
"""

from __future__ import annotations

import functools
import struct
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from ..engine.cards import FIVECROWNS_SUITED, JOKER, PHASE10_NUMBERS, SKIP, WILD, Card
from ..engine.game import JSON, Observation, find_game
from ..engine.registry import find_part

# Every feature is a count or a ratio of a few hundred at most: the Box spaces' bound.
FEATURE_MAX: Final = 1000.0

Vector = npt.NDArray[np.float32]
Mask = npt.NDArray[np.int8]
View = Mapping[str, JSON]  # a seat's view as the engine writes it (`to_json`)
A = TypeVar("A")  # an engine action, or its protocol text

# Card kinds in a fixed order: a vector counts each kind (the decks hold copies).
PHASE10_KINDS: Final[tuple[Card, ...]] = (*PHASE10_NUMBERS, WILD, SKIP)  # 50
FIVECROWNS_KINDS: Final[tuple[Card, ...]] = (*FIVECROWNS_SUITED, JOKER)  # 56


def kind_index(kinds: Sequence[Card]) -> dict[str, int]:
    """Each card token's place in `kinds`."""
    return {card.text: i for i, card in enumerate(kinds)}


def counts(tokens: Iterable[str], index: Mapping[str, int]) -> list[float]:
    """How many of each kind `tokens` hold, in `index`'s order."""
    out = [0.0] * len(index)
    for token in tokens:
        out[index[token]] += 1.0
    return out


def one_hot(position: int | None, size: int) -> list[float]:
    """`size` zeros with a one at `position` (none for None)."""
    out = [0.0] * size
    if position is not None:
        out[position] = 1.0
    return out


def group_cards(token: str) -> list[str]:
    """The card tokens of a group token such as ``run:R3,W=4,R5`` (declarations dropped)."""
    body = token.partition(":")[2]
    return [part.partition("=")[0] for part in body.split(",") if part]


class Codec(Protocol):
    """A game's fixed action space and observation vector (one module per game)."""

    game: str
    action_size: int
    # Whether `encode_observation` reads the typed view itself (no JSON written): then an
    # environment hands it the engine's view, else the JSON's non-zero entries (`features`).
    reads_typed_view: bool

    def observation_size(self, players: int) -> int:
        """The length of the vector for a table of `players` seats."""

    def encode(self, view: View, players: int) -> Vector:
        """The vector of what the seat whose `view` this is may see."""

    def encode_observation(self, observation: Observation, players: int) -> Vector:
        """`encode(observation.to_json(), players)`, read from the engine's typed view where
        the codec can (an environment's step skips writing the JSON)."""

    def action_index(self, text: str, view: View) -> int | None:
        """The index of the action written `text` in `view`'s position; None for an action
        the fixed space does not number (documented per game: none that is ever the only
        legal one)."""

    def describe(self, index: int) -> str:
        """What index `index` stands for, in words (for docs and debugging)."""


def find_codec(game: str) -> Codec:
    """The codec of the game called `game` (a name as `find_game` takes it)."""
    return typing.cast(Codec, find_part(__package__, find_game(game).name, "CODEC"))


def legal_indices(codec: Codec, actions: Iterable[A], view: View,
                  texts: list[str] | None = None) -> dict[int, A]:
    """The numbered legal actions: index -> the first legal action with that index (the
    engine lists one found way per lay-down and go-out, and a wild's hit top end first, so
    the first is the engine's own choice). `actions` are the engine's actions or their texts:
    an action's index is its text's (`str`; an engine action keeps its text, so no action is
    written or parsed here). `texts`, when given, gets the kept actions' texts in the same
    order (an environment's `info["legal_actions"]`, without a second pass in Python)."""
    known = _known(codec.game)
    out: dict[int, A] = {}
    for action in actions:
        text = str(action)
        index = known.get(text, _UNSEEN)  # inline `index_of`: a Solitaire step lists 88
        if index is not None and index < 0:  # not met yet, or the view decides it
            index = index_of(codec, text, view)
        if index is not None and index not in out:
            out[index] = action
            if texts is not None:
                texts.append(text)
    return out


class LazyView(Mapping[str, JSON]):
    """A seat's view in the engine's JSON form, made (`to_json`) only when something reads it:
    an environment that encodes the typed view (`Codec.encode_observation`) asks the JSON
    only for the few actions whose index the view decides (Phase 10's lay-downs)."""

    def __init__(self, observation: Observation) -> None:
        self.observation = observation
        self._json: dict[str, JSON] | None = None

    def json(self) -> dict[str, JSON]:
        if self._json is None:
            self._json = self.observation.to_json()
        return self._json

    def __getitem__(self, key: str) -> JSON:
        return self.json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.json())

    def __len__(self) -> int:
        return len(self.json())


class _ReadsView(Exception):
    """An action's index that depends on the position (raised by `_NO_VIEW`)."""


class _NoView(Mapping[str, JSON]):
    """A view that answers nothing: a codec reading it for an action's index raises."""

    def __getitem__(self, key: str) -> JSON:
        raise _ReadsView(key)

    def __iter__(self) -> Iterator[str]:
        raise _ReadsView("")

    def __len__(self) -> int:
        raise _ReadsView("")


_NO_VIEW: Final = _NoView()
_DEPENDS: Final = -1  # a remembered index that depends on the view
_UNSEEN: Final = -2  # a text not met yet
_INDEX: dict[str, dict[str, int | None]] = {}  # game -> action text -> its index
_INDEX_KEPT: Final = 200_000  # texts remembered a game (a go-out's text holds its groups)


def _known(game: str) -> dict[str, int | None]:
    known = _INDEX.get(game)
    if known is None or len(known) >= _INDEX_KEPT:
        known = _INDEX[game] = {}
    return known


def index_of(codec: Codec, text: str, view: View) -> int | None:
    """`codec.action_index(text, view)`, remembered by text for the actions whose index the
    view does not decide (tried once with a view that answers nothing): a step's legal
    actions are mostly the texts of the steps before."""
    known = _known(codec.game)
    index = known.get(text, _UNSEEN)
    if index == _UNSEEN:
        try:
            index = known[text] = codec.action_index(text, _NO_VIEW)
        except _ReadsView:
            index = known[text] = _DEPENDS
    return codec.action_index(text, view) if index == _DEPENDS else index


def mask_of(codec: Codec, legal: Mapping[int, object]) -> Mask:
    """The action mask: 1 at every numbered legal action. (Set byte by byte, compiled: a
    numpy assignment through a list of indices costs a list's conversion, several us for
    Solitaire's ~80 legal actions.)"""
    mask = bytearray(codec.action_size)
    for index in legal:
        mask[index] = 1
    return np.frombuffer(mask, dtype=np.int8)


Features = dict[int, float]  # a vector's non-zero entries, by their index


def count(out: Features, index: int) -> None:
    """One more at `index` (a card of that kind)."""
    out[index] = out.get(index, 0.0) + 1.0


def put(out: Features, at: int, values: Iterable[float]) -> None:
    """`values` at `at`, `at + 1`, ..."""
    for offset, value in enumerate(values, at):
        out[offset] = value


def dense(features: Features, size: int) -> Vector:
    """The float32 vector of `size` with `features` set, the rest zero: a vector is mostly
    zeros (a Phase 10 one holds ~60 non-zero of 1,465), and numpy sets a list of entries at
    once in a quarter of the time `vector` packs the whole list."""
    out = np.zeros(size, dtype=np.float32)
    write(out, features)
    return out


def write(row: Vector, features: Features) -> None:
    """`features` into `row`, which is all zeros (float64 values rounded to float32 once, as
    `vector` rounds them)."""
    if features:
        row[list(features)] = list(features.values())


def vector(values: Sequence[float]) -> Vector:
    """`values` as a float32 vector (packed by `struct`: a third of numpy's time to convert a
    list of Python floats, which was half of a Phase 10 encoding)."""
    return np.frombuffer(bytearray(_packer(len(values)).pack(*values)), dtype=np.float32)


@functools.cache
def _packer(size: int) -> struct.Struct:
    return struct.Struct(f"={size}f")  # native order, as numpy's float32
