"""What every game module provides, and the values they share: errors, events and their
kinds (`EventKind`), actions, outcomes.

A game package (one per name in `registry.GAMES`) exports one `GameInfo` named `GAME`.
The referee, the protocol and the command line only ever talk to a game through it and through
the `GameState` protocol below, so they never depend on one game's rules.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol, TypeVar

from .registry import GAMES, find_part, registered

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

JSON = Any  # a value made of dict, list, str, int, float, bool and None only


class InvalidActionError(ValueError):
    """The text is not an action of this game (syntax)."""


class IllegalActionError(ValueError):
    """A well-formed action that the rules forbid in this position."""


class RuleOptionError(ValueError):
    """An unknown rule option, or a value the option does not take."""


class UnknownGameError(ValueError):
    """A game name that is not one of meldref's games."""


class Action(Protocol):
    """An action of a game (`Draw`, `Discard`, `Place`...): a frozen value whose `str` is its
    protocol text, which the game's `parse_action` reads back."""

    def __str__(self) -> str: ...


class Plan(Protocol):
    """A game's own working for a ruling (what its check found, what its move reads): opaque
    to everyone else, so any value is one. (A name of its own rather than `object`: a compiled
    dataclass resolves its fields' annotations by name, and `object` is not one it finds.)"""


# What `__reduce__` returns for a value rebuilt by its constructor: its class and arguments.
Rebuilt = tuple[type[object], tuple[object, ...]]


def by_init(value: DataclassInstance) -> Rebuilt:
    """`__reduce__` of a frozen dataclass whose hand-written `__init__` takes its init fields in
    order: copies and pickles rebuild it through the constructor. (Compiled, the dataclass's way
    of rebuilding one field by field meets the frozen `__setattr__`: copy.copy, deepcopy and
    pickle all failed with FrozenInstanceError.)"""
    fields = dataclasses.fields(value)
    return type(value), tuple(getattr(value, f.name) for f in fields if f.init)


class Observation(Protocol):
    """What a seat may know (a game's view): its JSON is what the seat is told."""

    def to_json(self) -> dict[str, JSON]: ...

    def legal_actions(self) -> Sequence[Action]: ...


@dataclass(frozen=True, slots=True)
class Ruling:
    """The rules' answer about one action in one position: legal (`reason` None) or why not.

    A legal ruling carries what the check worked out that playing the action needs (`plan`:
    the melds a lay-down builds), so `GameState.apply` plays it without judging it again.
    `position` counts the actions applied before it: a ruling is only good in its position."""

    action: Action
    reason: str | None
    plan: Plan | None = None  # the game's own working (its checks make it, its moves read it)
    position: int = 0

    # Hand-written rather than generated, here and in the other values made per decision: mypyc
    # compiles this one (0.1 us a value) but not the dataclass's (interpreted, 1.5 us).
    def __init__(self, action: Action, reason: str | None, plan: Plan | None = None,
                 position: int = 0) -> None:
        object.__setattr__(self, "action", action)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "plan", plan)
        object.__setattr__(self, "position", position)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    @property
    def legal(self) -> bool:
        return self.reason is None


class EventKind(StrEnum):
    """What an event says happened: its `event` word in the protocol and in replays."""

    DEAL = "deal"  # a seat's cards (Solitaire: the piles) for a new hand or round
    TURN_UP = "turn_up"  # the discard pile's first card
    DRAW = "draw"
    DISCARD = "discard"
    LAY_DOWN = "lay_down"  # Phase 10: a phase laid
    HIT = "hit"  # Phase 10: a card added to a group on the table
    SKIP = "skip"  # Phase 10: a Skip played on a seat
    SKIPPED = "skipped"  # Phase 10: a seat loses its turn
    GO_OUT = "go_out"  # Five Crowns: a seat lays its whole hand
    LAST_TURN = "last_turn"  # Five Crowns: a seat's last turn after someone went out
    PLACE = "place"  # Solitaire: a card put on a pile
    CLOSE = "close"  # Solitaire: a pile closed
    RESHUFFLE = "reshuffle"  # the discard pile becomes the draw pile
    HAND_END = "hand_end"  # Phase 10: a hand scored
    ROUND_END = "round_end"  # Five Crowns: a round scored
    GAME_OVER = "game_over"


# The events that end a hand (Phase 10) or a round (Five Crowns).
DEAL_ENDS: Final = frozenset({EventKind.HAND_END, EventKind.ROUND_END})


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened. `public` is known to every seat; `private` only to `seat`.

    Example: drawing from the pile is public (who drew, from where) with the card private.
    """

    kind: EventKind
    seat: int | None = None
    public: Mapping[str, JSON] = field(default_factory=dict)
    private: Mapping[str, JSON] = field(default_factory=dict)

    def __init__(self, kind: EventKind, seat: int | None = None,
                 public: Mapping[str, JSON] | None = None,
                 private: Mapping[str, JSON] | None = None) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "public", {} if public is None else public)
        object.__setattr__(self, "private", {} if private is None else private)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    def for_seat(self, seat: int | None, into: dict[str, JSON] | None = None) -> dict[str, JSON]:
        """The event as `seat` may see it (None: the referee, who sees everything), written
        into `into` when given (an empty dict: the referee's own kind, filled without a copy)."""
        # str(), not `.value`: the same text (a StrEnum's str is its value), without the
        # enum's property, a Python function, at every event told.
        out: dict[str, JSON] = {} if into is None else into
        out["event"] = str(self.kind)
        if self.seat is not None:
            out["seat"] = self.seat
        out.update(self.public)
        if seat is None or seat == self.seat:
            out.update(self.private)
        return out


class Termination(StrEnum):
    """Why a game ended."""

    NORMAL = "normal"  # the rules ended it (phase 10 completed, round 11 scored, piles closed...)
    TURN_CAP = "turn-cap"  # a hand or the game hit the configured cap (passive bots)
    FORFEIT = "forfeit"  # the referee ended it: every seat but one was out (a match policy)


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a finished game: places (1 = best, equal places share) and totals."""

    termination: Termination
    places: tuple[int, ...]  # per seat
    scores: tuple[int, ...]  # per seat, the game's own score (penalty points, piles closed...)
    detail: Mapping[str, JSON] = field(default_factory=dict)

    def __reduce__(self) -> Rebuilt:
        # Pickled through the constructor: a game's result crosses processes (a pool worker's
        # result line, a cluster's).
        return by_init(self)

    @property
    def winners(self) -> tuple[int, ...]:
        return tuple(s for s, p in enumerate(self.places) if p == 1)

    def to_json(self) -> dict[str, JSON]:
        return {
            "termination": self.termination.value,
            "winners": list(self.winners),
            "places": list(self.places),
            "scores": list(self.scores),
            **self.detail,
        }


class GameState(Protocol):
    """A game in progress. Every method but `apply` is a pure question."""

    @property
    def to_move(self) -> int | None:
        """The seat that must act now, or None once the game is over."""

    @property
    def decision(self) -> str:
        """What that seat must decide: a word such as "draw", "play", "place"."""

    @property
    def outcome(self) -> Outcome | None:
        """The result once the game is over."""

    @property
    def scores(self) -> Sequence[int]:
        """Per-seat running totals in the game's own units (penalty points; piles closed)."""

    @property
    def seed(self) -> int | str:
        """The seed the game was dealt from (`GameInfo.new_game`'s): every shuffle follows."""

    @property
    def rules(self) -> Rules:
        """The rule options played by (the game's frozen dataclass), as the game settled them
        when it started (Five Crowns turns `party=auto` into on or off by the players)."""

    def opening_events(self) -> list[Event]:
        """What happened before the first decision (the first deal), as events."""

    def parse_action(self, text: str) -> Action:
        """The action written as `text`; `InvalidActionError` if it is not one."""

    def judge(self, action: Action) -> Ruling:
        """The rules' answer about `action` for the seat to move, in this position."""

    def why_illegal(self, action: Action) -> str | None:
        """None if `action` is legal for the seat to move, else the reason."""

    def apply(self, action: Action | Ruling) -> list[Event]:
        """Play `action`, or a legal `Ruling` made in this position (not judged again); what
        happened. `IllegalActionError` for an illegal action or a ruling of another position."""

    def observation(self, seat: int) -> Observation:
        """What `seat` may know now."""

    def legal_actions(self) -> Sequence[Action]:
        """Legal actions for the seat to move (lay-downs and go-outs: one found way each)."""

    def autoplay_action(self) -> Action:
        """A safe legal action for a seat the referee plays (draw pile, discard a card...)."""

    def snapshot(self) -> dict[str, JSON]:
        """The whole state as JSON; the game's `from_snapshot` rebuilds it exactly."""

    def public_view(self) -> dict[str, JSON]:
        """The referee's full view, hidden cards included (logs and debugging)."""


class Rules(Protocol):
    """A game's rule options: a frozen dataclass of the game's own (`Phase10Rules`...), whose
    fields are the options (`rules_to_json` writes them by their public names). Code that reads
    one game's options narrows to its class with `rules_of`."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]


R = TypeVar("R", bound=Rules)


def rules_of(cls: type[R], rules: Rules) -> R:
    """`rules` as the game's own class `cls` (what its `new_game` and checks read);
    `RuleOptionError` for another game's rules."""
    if not isinstance(rules, cls):
        raise RuleOptionError(f"{type(rules).__name__} are not {cls.__name__}: another game's "
                              "rule options")
    return rules


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A game as the rest of meldref sees it."""

    name: str
    title: str
    min_players: int
    max_players: int
    rules_type: type[Rules]
    new_game: Callable[[Rules, int, int | str], GameState]  # (rules, players, seed)
    from_snapshot: Callable[[Mapping[str, JSON]], GameState]
    decisions: tuple[str, ...] = ()
    default_players: int = 4  # seats when none are named (a match of built-in bots)
    # What a game's scores mean: penalty points (lower is better) or piles closed (higher).
    higher_scores_win: bool = False
    # The game's own check that its rules can seat that many players (rules, players):
    # `RuleOptionError` if not (Five Crowns: party=off seats at most 7).
    check_rules: Callable[[Rules, int], Rules] | None = None
    # The engine's view of a seat from its JSON (what a protocol bot is sent) under the rules:
    # how the SDK hands a protocol bot the engine's legal actions and solvers (bots/sdk.py).
    view_from_json: Callable[[Mapping[str, JSON], Rules], Observation] | None = None

    def __deepcopy__(self, memo: dict[int, object]) -> GameInfo:
        # A game is one immutable entry, shared by every copy of what refers to it (OpenSpiel's
        # searches deep-copy states and games); compiled (setup.py), it could not be rebuilt
        # field by field anyway.
        return self

    def seats_for(self, bots: int) -> int:
        """Seats per table for `bots` bots when none are asked for: all of them, up to the
        default, within the game's range."""
        return max(self.min_players, min(bots, self.default_players, self.max_players))

    def rules(self, **values: object) -> Rules:
        """The rule options: the defaults, with `values` by field name (`run_wrap=True`).
        Text from users is read by `meldref.settings.parse_rules`."""
        try:
            return self.rules_type(**values)
        except TypeError as exc:
            raise RuleOptionError(str(exc)) from None

    def check_players(self, players: int) -> None:
        check_players(self.name, self.min_players, self.max_players, players)

    def check_setup(self, rules: Rules | None, players: int) -> None:
        """`RuleOptionError` unless a game of `players` seats can start under `rules` (None:
        the defaults): the checks a new game makes (`check_players`, then the game's
        `check_rules`), run before any game."""
        self.check_players(players)
        if self.check_rules is not None:
            self.check_rules(self.rules() if rules is None else rules, players)


def check_players(game: str, low: int, high: int, players: int) -> None:
    """`RuleOptionError` unless `players` is within the game's `low`..`high`."""
    if not low <= players <= high:
        raise RuleOptionError(f"{game} is for {low}..{high} players, not {players}")


GAME_NAMES: Final = GAMES  # the registered games (engine/registry.py), by name


def find_game(name: str) -> GameInfo:
    """The registered game called `name` (any case; `-`, `_` and spaces ignored)."""
    game = registered(name)
    if game is None:
        raise UnknownGameError(f"unknown game {name!r}; games: {', '.join(GAMES)}")
    return typing.cast(GameInfo, find_part(__package__, game, "GAME"))


# ----------------------------------------------------------------------------------------------
# Rule options: one frozen dataclass per game, by public names in JSON.


def option_name(field_name: str) -> str:
    """The option's public name: `skip_victim` -> `skip-victim`."""
    return field_name.replace("_", "-")


def rules_to_json(rules: Rules) -> dict[str, JSON]:
    """Every option of `rules` by its public name (the replay header and the protocol's list)."""
    return {option_name(f.name): getattr(rules, f.name) for f in dataclasses.fields(rules)}


def rules_from_json(cls: type[R], data: Mapping[str, JSON]) -> R:
    """The inverse of `rules_to_json`."""
    names = {option_name(f.name): f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - set(names)
    if unknown:
        raise RuleOptionError(f"unknown rule options {sorted(unknown)}")
    try:
        return cls(**{names[k]: v for k, v in data.items()})
    except TypeError as exc:
        raise RuleOptionError(str(exc)) from None


def check_choice(name: str, value: object, choices: Sequence[object]) -> None:
    """For `__post_init__` checks: `RuleOptionError` unless `value` is one of `choices`."""
    if value not in choices:
        shown = ", ".join(map(str, choices))
        raise RuleOptionError(f"rule option {option_name(name)}={value!r}: one of {shown}")


def check_fields(rules: Rules) -> None:
    """For `__post_init__` checks: `RuleOptionError` unless every field of the rules dataclass
    holds a value of its declared type (one of a Literal's choices, yes/no, a whole number, or
    None where the type allows it). Ranges and combinations are the game's own checks."""
    cls: type = type(rules)
    hints = _field_hints(cls)
    for f in dataclasses.fields(rules):
        _check_value(f.name, getattr(rules, f.name), hints[f.name])


@functools.cache
def _field_hints(cls: type) -> dict[str, object]:
    return typing.get_type_hints(cls)


def _check_value(name: str, value: object, hint: object) -> None:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Literal:
        check_choice(name, value, args)
    elif hint is bool and not isinstance(value, bool):
        raise RuleOptionError(f"rule option {option_name(name)}={value!r}: true or false")
    elif hint is not bool and not (
        (isinstance(value, int) and not isinstance(value, bool))
        or (value is None and type(None) in args)
    ):
        raise RuleOptionError(f"rule option {option_name(name)}={value!r}: a whole number")


class Bot(Protocol):
    """An in-process bot: sees only its seat's observation, answers with an action."""

    name: str

    def act(self, view: Any) -> Action | str:
        """The action for the decision in `view` (the seat's `observation`)."""
