"""Positions: a game's state as a person writes it down (spec/POSITION.md), read and written.

A position is a mapping of plain values, what a TOML file or the JSON of a replay header holds:
whole numbers, yes/no, texts, lists and tables. It says where every card is (each hand, the
piles, the table), the scores and progress, and who is to decide what; read, it becomes the
game's snapshot (`GameState.snapshot`), so a position is exactly a state, and every state
between two actions writes as a position. Each game reads and writes its own keys in
`engine/<game>/position.py` (a `Codec`); this module holds what they share: typed reading
with errors that name the key, card lists, the accounting of the deck (every card exactly once),
and the checked `Position` value.

The rules core reads mappings, not files: the app reads the TOML file and writes it, so the
engine stays free of I/O and of file formats, and the replay header holds the same mapping as
JSON. The rule options are not part of the mapping either: they are read by the app like every
other rule option (`[rules]` in the file, `--rules`), and given here as the rules dataclass.
"""

from __future__ import annotations

import importlib
import json
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from .cards import Card, CardError, rng_for, shuffled
from .game import (
    JSON,
    GameInfo,
    GameState,
    InvalidActionError,
    Rebuilt,
    RuleOptionError,
    Rules,
    by_init,
    find_game,
)

SHUFFLED: Final = "shuffled"  # the last word of a draw pile: the rest, shuffled from the seed


class PositionError(ValueError):
    """A position that cannot be played; the message names the key and the problem."""


# ----------------------------------------------------------------------------------------------
# Reading keys


_MISSING: Final = object()


class Fields:
    """One table of a position, read key by key; `done()` refuses the keys nobody read.

    `where` prefixes messages: "" for the top level, "seat 2: ", "table group 3: "...
    """

    def __init__(self, data: JSON, where: str = "") -> None:
        if not isinstance(data, Mapping):
            raise PositionError(f"{where}a table of keys, not {_shown(data)}")
        self.data, self.where, self.read = data, where, set[str]()

    def has(self, key: str) -> bool:
        return key in self.data

    def value(self, key: str, default: JSON = _MISSING) -> JSON:
        self.read.add(key)
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise PositionError(f"{self.where}{key} is missing")
        return default

    def fail(self, key: str, problem: str) -> PositionError:
        """The error for `key`'s value: "seat 2: score = -5: at least 0"."""
        shown = _shown(self.data[key]) if key in self.data else "(missing)"
        return PositionError(f"{self.where}{key} = {shown}: {problem}")

    def whole(self, key: str, default: int | None = None, low: int = 0,
              high: int | None = None) -> int:
        """A whole number in low..high."""
        value = self.value(key, _MISSING if default is None else default)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(key, "a whole number")
        if value < low or (high is not None and value > high):
            upper = f"..{high}" if high is not None else " or more"
            raise self.fail(key, f"{low}{upper}")
        return value

    def maybe_whole(self, key: str, low: int = 0, high: int | None = None) -> int | None:
        """A whole number, or None when the key is left out."""
        return self.whole(key, None, low, high) if self.has(key) else self.value(key, None)

    def flag(self, key: str, default: bool) -> bool:
        value = self.value(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false")
        return value

    def word(self, key: str, choices: Sequence[str], default: str | None = None) -> str:
        value = self.value(key, _MISSING if default is None else default)
        if value not in choices:
            raise self.fail(key, f"one of {', '.join(choices)}")
        return typing.cast(str, value)

    def wholes(self, key: str, low: int = 0, high: int | None = None) -> list[int]:
        """A list of whole numbers (default: empty)."""
        value = self.value(key, [])
        if not isinstance(value, list) or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= low
                and (high is None or v <= high) for v in value):
            upper = f"..{high}" if high is not None else " or more"
            raise self.fail(key, f"a list of whole numbers {low}{upper}")
        return value

    def texts(self, key: str) -> list[str]:
        """A list of texts (default: empty)."""
        value = self.value(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "a list of texts")
        return value

    def cards(self, key: str, default: str | None = "") -> list[Card]:
        """Cards written as one text of tokens ("R7 B7 W") or a list of tokens."""
        return [self._card(key, t) for t in self._tokens(key, default)]

    def draw_pile(self, key: str) -> tuple[list[Card], bool]:
        """A pile written top first whose last word may be `shuffled`: its named cards, and
        whether the rest of the deck goes under them."""
        words = self._tokens(key, SHUFFLED)
        rest = bool(words) and words[-1].lower() == SHUFFLED
        return [self._card(key, t) for t in (words[:-1] if rest else words)], rest

    def tables(self, key: str, label: str, first: int = 0) -> list[Fields]:
        """An array of tables (`[[seat]]`), each read as "<label> <i>: ", counted from
        `first` as the game counts them (seats from 0, table groups from 1)."""
        value = self.value(key, [])
        if not isinstance(value, list):
            raise self.fail(key, "a list of tables ([[...]] in TOML)")
        return [Fields(v, f"{label} {i}: ") for i, v in enumerate(value, start=first)]

    def done(self) -> None:
        """`PositionError` for a key no reader took (a typo, or a key of another game)."""
        unknown = sorted(str(k) for k in self.data if k not in self.read)
        if unknown:
            known = ", ".join(sorted(self.read))
            raise PositionError(f"{self.where}unknown key{'s' if len(unknown) > 1 else ''} "
                                f"{', '.join(unknown)} (keys here: {known})")

    def _tokens(self, key: str, default: str | None) -> list[str]:
        value = self.value(key, _MISSING if default is None else default)
        if isinstance(value, str):
            return value.replace(",", " ").split()
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [t for v in value for t in v.split()]
        raise self.fail(key, 'cards as one text of tokens ("R7 B7 W") or a list of tokens')

    def _card(self, key: str, token: str) -> Card:
        try:
            return Card.parse(token)
        except CardError as exc:
            raise self.fail(key, str(exc)) from None


def _shown(value: JSON) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def seed_of(fields: Fields) -> int:
    """The position's `seed` (default 0): every shuffle from here on is drawn from it."""
    return fields.whole("seed", 0)


def check_players(game: GameInfo, players: int) -> None:
    try:
        game.check_players(players)
    except RuleOptionError as exc:
        raise PositionError(f"{players} [[seat]] tables: {exc}") from None


# ----------------------------------------------------------------------------------------------
# Cards: piles written top first, and every card of the deck exactly once


def top_first(pile: Sequence[str]) -> str:
    """A pile as a position writes it: top card first (the state keeps the top at the end)."""
    return " ".join(reversed(pile))


def account(deck: Iterable[Card], zones: Sequence[tuple[str, Sequence[Card]]]) -> list[Card]:
    """The cards of `deck` that no zone holds (in deck order); `PositionError` naming a card
    held more often than the deck has it, and where."""
    left = Counter(deck)
    used: Counter[Card] = Counter()
    where: dict[Card, list[str]] = {}
    for name, cards in zones:
        for card in cards:
            used[card] += 1
            if name not in where.setdefault(card, []):
                where[card].append(name)
    for card, count in used.items():
        if count > left[card]:
            held = f"the deck has {left[card]}" if left[card] else "it is not a card of this deck"
            raise PositionError(f"{card.text} is in the position {count} times "
                                f"({', '.join(where[card])}); {held}")
    rest = left - used
    out = []
    for card in dict.fromkeys(left):  # deck order, so the shuffle of the rest is reproducible
        out += [card] * rest[card]
    return out


def fill_draw_pile(named: list[Card], rest_wanted: bool, rest: list[Card], seed: int,
                   key: str = "draw_pile") -> list[Card]:
    """The draw pile as the state keeps it (top at the end): `named` (top first) on top of the
    `rest` of the deck shuffled from the seed, if wanted; `PositionError` for cards missing."""
    if rest and not rest_wanted:
        shown = " ".join(c.text for c in rest[:12]) + (" ..." if len(rest) > 12 else "")
        raise PositionError(f"{len(rest)} cards of the deck are nowhere: {shown}; every card "
                            f"is somewhere exactly once (end {key} with \"{SHUFFLED}\" to put "
                            "the rest there)")
    under = shuffled(rest, rng_for(seed, "position")) if rest_wanted else []
    return [*under, *reversed(named)]


# ----------------------------------------------------------------------------------------------
# A game's reading and writing, and the checked value


@dataclass(frozen=True, slots=True)
class Codec:
    """One game's positions: `read` checks a position into a snapshot (`Fields` of the top
    level, the rules dataclass), `write` turns a snapshot into a position."""

    read: Callable[[Fields, Rules], dict[str, JSON]]
    write: Callable[[Mapping[str, JSON]], dict[str, JSON]]


def codec(game: GameInfo) -> Codec:
    module = importlib.import_module(f"{__package__}.{game.name}.position")
    return typing.cast(Codec, module.CODEC)


@dataclass(frozen=True, slots=True)
class Position:
    """A checked position: the state it is (its snapshot's JSON text, so the value is frozen
    and each `start()` is a fresh game) and the actions a bot test expects there."""

    game: str
    snapshot_text: str
    expect: tuple[str, ...] = ()

    def __reduce__(self) -> Rebuilt:
        # A tournament's `--positions` sends positions to its workers: compiled, a frozen
        # dataclass rebuilt field by field met its frozen __setattr__ (by_init says why).
        return by_init(self)

    @property
    def info(self) -> GameInfo:
        return find_game(self.game)

    @property
    def snapshot(self) -> dict[str, JSON]:
        return typing.cast(dict[str, JSON], json.loads(self.snapshot_text))

    @property
    def players(self) -> int:
        return int(self.snapshot["players"])

    @property
    def seed(self) -> int:
        return int(self.snapshot["seed"])

    def start(self) -> GameState:
        """A new game in this position."""
        return self.info.from_snapshot(self.snapshot)

    def to_json(self) -> dict[str, JSON]:
        """The position as written (spec/POSITION.md), without the rules; `expect` included."""
        data = position_of(self.start())
        if self.expect:
            data["expect"] = list(self.expect) if len(self.expect) > 1 else self.expect[0]
        return data


def read_position(game: GameInfo, rules: Rules, data: Mapping[str, JSON]) -> Position:
    """The position `data` of `game` under `rules`; `PositionError` naming what is wrong."""
    fields = Fields(data)
    named = fields.value("game", game.name)
    if named != game.name:
        raise fields.fail("game", f"this is a {game.name} position")
    expect = fields.value("expect", [])
    expect = [expect] if isinstance(expect, str) else expect
    if not isinstance(expect, list) or not all(isinstance(e, str) for e in expect):
        raise fields.fail("expect", "an action, or a list of actions")
    snapshot = codec(game).read(fields, rules)
    fields.done()
    try:
        state = game.from_snapshot(snapshot)
    except ValueError as exc:  # a check the reader missed: still the position's fault
        raise PositionError(f"not a state the game can hold: {exc}") from None
    if state.to_move is None:
        raise PositionError("the game is over in this position: nothing is left to play")
    for text in expect:
        why = why_not_action(state, text)
        if why is not None:
            raise PositionError(f"expect = {text!r}: {why}")
    return Position(game.name, json.dumps(snapshot, sort_keys=True), tuple(expect))


def position_of(state: GameState) -> dict[str, JSON]:
    """The position of `state`, between two actions (`PositionError` once the game is over)."""
    snapshot = state.snapshot()
    if state.to_move is None:
        raise PositionError("the game is over: a position is a game still to play")
    return {"game": snapshot["game"], **codec(find_game(snapshot["game"])).write(snapshot)}


def why_not_action(state: GameState, text: str) -> str | None:
    """None if `text` is a legal action in `state`, else why not."""
    try:
        action = state.parse_action(text)
    except InvalidActionError as exc:
        return f"not an action: {exc}"
    return state.why_illegal(action)


def same_action(state: GameState, first: str, second: str) -> bool:
    """Whether two legal action texts do the same in `state`: the states after each are
    equal (a group written with or without its wilds' declarations, a card token in lower
    case: one action; the same groups laid in another order are not, their ids differ)."""
    snapshot = state.snapshot()
    info = find_game(snapshot["game"])
    after = []
    for text in (first, second):
        copy = info.from_snapshot(snapshot)
        copy.apply(copy.parse_action(text))
        after.append(copy.snapshot())
    return after[0] == after[1]
