"""What the game states share, written once.

`CardGameState` answers the members of `engine.game.GameState` that every game answers alike
(who is to move, the outcome, the opening events, legal actions, apply = check then play,
snapshots read back with clear errors). `DrawDiscardState` adds what Phase 10 and Five Crowns
share: seats in turn around a table, hands dealt from a seeded shuffle, `draw pile` /
`draw discard`, and the discard pile (less its top) reshuffled into an empty draw pile.
Also here: the snapshot forms of cards and outcomes.
"""

from __future__ import annotations

import abc
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Generic, Literal, Self, TypeVar

from mypy_extensions import mypyc_attr

from .cards import Card, CardError, parse_cards, rng_for, shuffled
from .game import (
    JSON,
    Action,
    Event,
    EventKind,
    IllegalActionError,
    InvalidActionError,
    Observation,
    Outcome,
    Rebuilt,
    RuleOptionError,
    Rules,
    Ruling,
    Termination,
    by_init,
    rules_to_json,
)
from .melds import MeldError

# ----------------------------------------------------------------------------------------------
# Drawing: the one action both table games write the same way


@dataclass(frozen=True, slots=True)
class Draw:
    """`draw pile` or `draw discard`."""

    source: Literal["pile", "discard"]

    def __init__(self, source: Literal["pile", "discard"]) -> None:
        object.__setattr__(self, "source", source)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    def __str__(self) -> str:
        return f"draw {self.source}"


DRAW_PILE: Final = Draw("pile")
DRAW_DISCARD: Final = Draw("discard")


def parse_draw(args: Sequence[str]) -> Draw:
    """The draw written as `draw <args>`; `InvalidActionError` unless one word, pile or discard."""
    if len(args) != 1 or args[0].lower() not in ("pile", "discard"):
        raise InvalidActionError("draw takes one word: draw pile | draw discard")
    return Draw(typing.cast(Literal["pile", "discard"], args[0].lower()))


# ----------------------------------------------------------------------------------------------
# Snapshot forms


def tokens(cards: Iterable[Card]) -> list[str]:
    """The cards' tokens, in order (a hand or pile as a snapshot or an observation holds it)."""
    return [c.text for c in cards]


def snapshot_outcome(outcome: Outcome | None) -> JSON:
    """An outcome as a snapshot holds it (None: the game goes on)."""
    if outcome is None:
        return None
    return {"termination": outcome.termination.value, "places": list(outcome.places),
            "scores": list(outcome.scores), "detail": dict(outcome.detail)}


def restore_outcome(data: JSON) -> Outcome | None:
    """The inverse of `snapshot_outcome`."""
    if data is None:
        return None
    return Outcome(Termination(data["termination"]), tuple(data["places"]),
                   tuple(data["scores"]), dict(data["detail"]))


# What reading a damaged snapshot raises: reported as one "broken snapshot" ValueError.
SNAPSHOT_ERRORS: Final = (KeyError, TypeError, IndexError, CardError, MeldError, RuleOptionError)


# ----------------------------------------------------------------------------------------------
# The state every game builds on

# action type -> its check: a str is why it is illegal; anything else says it is legal, and is
# the plan playing it needs (None: nothing to pass on).
Checks = Mapping[type, Callable[[Any, Any], object]]
Moves = Mapping[type, Callable[[Any, Any, Any], list[Event]]]  # (state, action, plan) -> events


RulesT = TypeVar("RulesT", bound=Rules)  # the game's rule options (a frozen dataclass)
StateT = TypeVar("StateT", bound="CardGameState[Any]")


def blank_state(cls: type[StateT]) -> StateT:
    """A state of `cls` whose `__init__` has not run: a snapshot is restored into it."""
    return cls.__new__(cls)


# serializable: compiled (setup.py), a state pickles as in Python, and its `__new__` leaves
# `__init__` to the caller, as `blank_state` needs.
@mypyc_attr(serializable=True)
class CardGameState(abc.ABC, Generic[RulesT]):
    """The `GameState` members every game answers alike.

    A game's state names its game (`game_name`, `title`), holds its `rules`, `players` and
    `seed`, keeps `_to_move`, `_decision` and `_opening` up to date and ends with `_end_game`.
    It maps each action type to its check (`_checks()`: the reason it is illegal, or what
    playing it needs) and its move (`_moves()`: play it with that plan, return the events),
    tables beside the game's class (a compiled class body cannot name its own methods): an
    action is
    judged once (`judge`, a `Ruling`) and played from the ruling. It writes `observation`,
    `snapshot` (from `_snapshot_head`) and `_restore`.
    """

    game_name: ClassVar[str]
    title: ClassVar[str]  # the game's name in messages
    rules: RulesT
    players: int
    seed: int | str
    _applied: int = 0  # actions applied so far (instances count their own): a ruling's position
    _to_move: int
    _decision: str
    _outcome: Outcome | None
    _opening: list[Event]

    @abc.abstractmethod
    def _checks(self) -> Checks:
        """Each action type's check."""

    @abc.abstractmethod
    def _moves(self) -> Moves:
        """Each action type's move."""

    @property
    def to_move(self) -> int | None:
        return None if self._outcome is not None else self._to_move

    @property
    def decision(self) -> str:
        return "over" if self._outcome is not None else self._decision

    @property
    def outcome(self) -> Outcome | None:
        return self._outcome

    def opening_events(self) -> list[Event]:
        """The events of the first deal (later deals come from the `apply` that ends a hand)."""
        return list(self._opening)

    @abc.abstractmethod
    def observation(self, seat: int) -> Observation:
        """What `seat` may know now (a view with `to_json()` and `legal_actions()`)."""

    def legal_actions(self) -> Sequence[Action]:
        seat = self.to_move
        return [] if seat is None else self.observation(seat).legal_actions()

    def judge(self, action: Action) -> Ruling:
        position = self._applied
        if self._outcome is not None:
            return Ruling(action, "the game is over", position=position)
        check = self._checks().get(type(action))
        if check is None:
            return Ruling(action, f"not a {self.title} action: {action!r}", position=position)
        verdict = check(self, action)
        if isinstance(verdict, str):
            return Ruling(action, verdict, position=position)
        return Ruling(action, None, verdict, position)

    def why_illegal(self, action: Action) -> str | None:
        return self.judge(action).reason

    def apply(self, action: Action | Ruling) -> list[Event]:
        ruling = action if isinstance(action, Ruling) else self.judge(action)
        if ruling.reason is not None:
            raise IllegalActionError(ruling.reason)
        if ruling.position != self._applied:
            raise IllegalActionError("a ruling of another position: judge the action again")
        self._applied += 1
        return self._moves()[type(ruling.action)](self, ruling.action, ruling.plan)

    def _end_game(self, outcome: Outcome, events: list[Event]) -> None:
        """The game is over with `outcome`, which every seat is told (`game_over`)."""
        self._outcome = outcome
        events.append(Event(EventKind.GAME_OVER, None, outcome.to_json()))

    @abc.abstractmethod
    def snapshot(self) -> dict[str, JSON]:
        """The whole state as JSON; `from_snapshot` rebuilds it exactly."""

    def _snapshot_head(self) -> dict[str, JSON]:
        """What every snapshot starts with: the game, its rules, the players and the seed."""
        return {"game": self.game_name, "rules": rules_to_json(self.rules),
                "players": self.players, "seed": self.seed}

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        # A copy is the snapshot read back (exact: the engine's contract), as OpenSpiel's
        # searches make them; compiled (setup.py), frozen values inside cannot be copied field
        # by field.
        return self.from_snapshot(self.snapshot())

    @classmethod
    def from_snapshot(cls, data: Mapping[str, JSON]) -> Self:
        """The state `snapshot()` wrote; `ValueError` if `data` is not this game's snapshot."""
        if data.get("game") != cls.game_name:
            raise ValueError(f"not a {cls.title} snapshot (game={data.get('game')!r})")
        try:
            return cls._restore(data)
        except SNAPSHOT_ERRORS as exc:
            raise ValueError(f"broken {cls.title} snapshot: {exc!r}") from None

    @classmethod
    @abc.abstractmethod
    def _restore(cls, data: Mapping[str, JSON]) -> Self:
        """The state of a snapshot of this game (errors as `from_snapshot` reports them)."""

    def public_view(self) -> dict[str, JSON]:
        """The referee's whole view (every hand and the pile order): the snapshot itself."""
        return self.snapshot()


# ----------------------------------------------------------------------------------------------
# Phase 10 and Five Crowns: a table of seats drawing and discarding


class DrawDiscardState(CardGameState[RulesT]):
    """Seats in turn, hands dealt from a seeded shuffle, a draw pile and a discard pile.

    Deal number d (Phase 10's hand, Five Crowns' round) is shuffled by rng_for(seed, "deal", d),
    its k-th reshuffle by rng_for(seed, "reshuffle", d, k), so a snapshot holds no generator.
    """

    after_draw: ClassVar[str]  # the decision that follows a draw
    seed: int | str
    players: int
    dealer: int
    hands: list[list[Card]]  # per seat
    draw_pile: list[Card]  # top at the end
    discard_pile: list[Card]  # top at the end
    playing: tuple[bool, ...]  # per seat: dealt into this hand or round
    turns: int  # turns started this hand or round (the turn cap)
    reshuffles: int  # of this hand or round (the reshuffle's seed label)
    _next: list[int]  # per playing seat: the next playing seat to its left

    def _seat(self, playing: tuple[bool, ...]) -> list[int]:
        """Seat the playing seats; their turn order, starting left of the dealer."""
        self.playing = playing
        n = len(playing)
        order = [s for s in ((self.dealer + k) % n for k in range(1, n + 1)) if playing[s]]
        self._next = [0] * n
        for i, s in enumerate(order):
            self._next[s] = order[(i + 1) % len(order)]
        return order

    def _deal_hands(self, deck: list[Card], number: int, size: int, order: list[int]) -> None:
        """Deal `size` cards a seat in `order` from `deck` shuffled for deal `number`, turn up
        the discard pile's first card; the rest is the draw pile."""
        deck = shuffled(deck, rng_for(self.seed, "deal", number))
        self.hands = [[] for _ in range(self.players)]
        for _ in range(size):
            for s in order:
                self.hands[s].append(deck.pop())
        self.draw_pile = deck
        self.discard_pile = [deck.pop()]
        self.turns = 0
        self.reshuffles = 0

    def _draw(self, action: Draw, plan: None = None) -> list[Event]:
        seat = self._to_move
        if action.source == "pile":
            card = self.draw_pile.pop()
            event = Event(EventKind.DRAW, seat, {"source": "pile"}, {"card": card.text})
        else:
            card = self.discard_pile.pop()
            event = Event(EventKind.DRAW, seat, {"source": "discard", "card": card.text})
        self.hands[seat].append(card)
        self._decision = self.after_draw
        return [event]

    def _reshuffle_if_out(self, number: int, events: list[Event]) -> None:
        """When the draw pile is out, the discard pile but its top becomes the draw pile."""
        if self.draw_pile or len(self.discard_pile) <= 1:
            return
        self.reshuffles += 1
        top = self.discard_pile.pop()
        rng = rng_for(self.seed, "reshuffle", number, self.reshuffles)
        self.draw_pile = shuffled(self.discard_pile, rng)
        self.discard_pile = [top]
        events.append(Event(EventKind.RESHUFFLE, None, {"draw_pile_size": len(self.draw_pile)}))

    def _piles_to_json(self) -> dict[str, JSON]:
        return {
            "playing": [s for s in range(self.players) if self.playing[s]],
            "hands": [tokens(h) for h in self.hands],
            "draw_pile": tokens(self.draw_pile),
            "discard_pile": tokens(self.discard_pile),
        }

    def _restore_piles(self, data: Mapping[str, JSON]) -> None:
        """The inverse of `_piles_to_json` (after `players` and `dealer`)."""
        seats = set(data["playing"])
        self._seat(tuple(s in seats for s in range(self.players)))
        self.hands = [parse_cards(h) for h in data["hands"]]
        self.draw_pile = parse_cards(data["draw_pile"])
        self.discard_pile = parse_cards(data["discard_pile"])


def first_dealer(choice: str, players: int, seed: int | str) -> int:
    """The first dealer: seat 0 (`seat0`), else drawn by rng_for(seed, "dealer")."""
    return 0 if choice == "seat0" else rng_for(seed, "dealer").randrange(players)
