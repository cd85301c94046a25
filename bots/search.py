"""Determinized Monte Carlo search with the engine as the model: what the `search` bots share.

A seat does not know the other hands nor the order of the draw pile. A *determinization* is one
guess at them, consistent with what the seat has seen: the cards it has not seen (the deck less
its hand, the table and the cards it saw go into the discard pile) dealt at random into the
other hands (of their known sizes), the draw pile (of its known size) and the buried part of the
discard pile. In each guess, every candidate action is played by the engine itself (a real game
state, rebuilt from a snapshot) and the game is rolled out to the end of the hand or round by a
fast policy (`greedy` for every seat); the candidate with the best mean result wins.

- Common random numbers: every candidate meets the same guesses, so the noise of the deal
  cancels in the differences, which are what the choice needs.
- The prior: the candidates come from the expert (its choice first, then its close rivals); a
  candidate replaces the expert's choice only when it does clearly better, guess by guess
  (`CLEAR` standard errors of the paired gain), so a budget too small to tell (a single guess)
  still plays the expert's move.
- Heads-up only by default (`SEARCH_SEATS`; a game's bot may allow more): at a table of more
  seats it plays the expert's moves, which took more first places there than the Phase 10
  search's own.
- The rivals' hands (`RivalHands`, heads-up): a card the rival took from the discard pile is
  in its hand until it throws it (or lays it: it is then on the table, no longer unseen), so
  the guesses deal it there, not at random.
- The clock: `Budget` takes the decision's own allowance (the request's `time`, through
  `think_within`) and stays well inside it (`CLOCK_SHARE`), taking as many guesses as fit (up
  to `CLOCKED_GUESSES`); without a clock (benchmarks, tests) a fixed number of guesses decides,
  so the bot is deterministic given its seed.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Generic, Protocol, TypeVar

from meldref.engine.cards import Card
from meldref.engine.game import Bot, GameState

T = TypeVar("T")
A = TypeVar("A")  # a game's action
W = TypeVar("W")  # a guess: a game state's snapshot
S = TypeVar("S", bound=GameState)
V_in = TypeVar("V_in", contravariant=True)
A_in = TypeVar("A_in", contravariant=True)
CLOCK_SHARE: Final = 0.25  # of a decision's own allowance, spent on guesses
MAX_THINK: Final = 2.0  # seconds, whatever the clock allows
GUESSES: Final = 8  # determinizations per decision without a clock
CLOCKED_GUESSES: Final = 64  # at most, with a clock: the deadline bounds them first
CLEAR: Final = 2.0  # standard errors a rival's mean gain must clear to replace the prior
# The most seats in play at which the search overrules its prior: heads-up it plays level with
# the expert or a little above; at Phase 10's 4-seat table, in balanced seatings, it took 2.5
# fewer first places in a hundred than the expert's moves would (standard error 1.4, 40 deal
# sets; docs/bots.md), so there it plays the expert's moves. Five Crowns' search allows 4.
SEARCH_SEATS: Final = 2
ROLLOUT_ACTIONS: Final = 600  # a rollout that runs longer stops there (turn caps end it first)


class TableView(Protocol):
    """What the search bots read of a seat's view at a table (Phase 10's and Five Crowns'
    views have it): the seats, the turn, this seat's hand and the sizes of the others."""

    @property
    def seat(self) -> int: ...
    @property
    def players(self) -> int: ...
    @property
    def turn(self) -> int: ...
    @property
    def decision(self) -> str: ...
    @property
    def hand(self) -> Sequence[Card]: ...
    @property
    def hand_sizes(self) -> Sequence[int]: ...
    @property
    def discard_top(self) -> Card | None: ...
    @property
    def draw_pile_size(self) -> int: ...
    @property
    def playing(self) -> Sequence[bool]: ...


V = TypeVar("V", bound=TableView)


class Memory(Protocol[V_in, A_in]):
    """An expert's memory of the hand, as a search bot keeps it up to date: each view before
    the decision, each move after it."""

    def observe(self, view: V_in) -> None: ...

    def played(self, view: V_in, action: A_in) -> None: ...


class Expert(Bot, Protocol):
    """The expert a search bot builds on: a bot made from a seed (rollouts by the expert seat
    fresh ones of its type)."""

    def __init__(self, seed: int | str = 0) -> None: ...


E = TypeVar("E", bound=Expert)


@dataclass
class Budget:
    """How many guesses a decision may take, and until when (`deadline`, monotonic; None:
    no clock, the guesses alone bound it)."""

    guesses: int = GUESSES
    deadline: float | None = None

    def more(self, done: int) -> bool:
        if done >= self.guesses:
            return False
        return done == 0 or self.deadline is None or time.monotonic() < self.deadline


class ClockedBot:
    """An in-process bot that may be told its clock before each decision: the referee's
    in-process seat calls `think_within(time, bank)` (seconds) when the bot has it."""

    guesses = GUESSES
    clear: float = CLEAR  # standard errors a rival's gain must clear to replace the prior
    _deadline: float | None = None

    def think_within(self, allowance: float, bank: float = 0.0) -> None:
        """The next decision's clock (the request's `time` and `bank`, in seconds): the bot
        spends at most `CLOCK_SHARE` of `allowance` (never the bank) and `MAX_THINK`."""
        spend = min(MAX_THINK, CLOCK_SHARE * max(0.0, allowance))
        self._deadline = time.monotonic() + spend

    def budget(self) -> Budget:
        """This decision's guesses: `guesses` without a clock; with one, as many as fit in
        it (up to `CLOCKED_GUESSES`, and never fewer than without)."""
        deadline, self._deadline = self._deadline, None  # one decision's clock
        if deadline is None:
            return Budget(self.guesses, None)
        return Budget(max(self.guesses, CLOCKED_GUESSES), deadline)


@dataclass
class RivalHands:
    """Cards known to be in a rival's hand, read from the views of one seat, heads-up: after
    this seat's turn the rival drew from the discard pile when, at this seat's next draw, the
    draw pile is as this seat left it and the top is another card (the one it threw); the card
    it took (this seat's discard) is held until it is seen thrown or laid (a card new on the
    table since this seat's last view is the rival's). At more seats who took a card cannot be
    told from the views: nothing is known."""

    key: object = None
    turn: int = -1
    held: dict[int, Counter[Card]] = field(default_factory=dict)
    my_discard: Card | None = None
    draw_after: int = -1  # the draw pile's size after this seat's turn
    table: Counter[Card] = field(default_factory=Counter)  # on the table at the last view

    def observe(self, view: TableView, key: object, table: Counter[Card]) -> None:
        """Take in a view of this seat's (`key`: the hand or round, a new one forgets all;
        `table`: the cards on the table)."""
        if key != self.key or view.turn < self.turn:
            self.__init__()  # type: ignore[misc]
            self.key = key
        self.turn = view.turn
        laid, self.table = table - self.table, table
        if view.decision != "draw" or view.players != 2 or self.draw_after < 0:
            return
        rival, top, mine = 1 - view.seat, view.discard_top, self.my_discard
        held = self.held.setdefault(rival, Counter())
        if mine is not None and top is not None and top != mine and (
                view.draw_pile_size == self.draw_after):
            held[mine] += 1  # taken: the pile untouched, and another card thrown on it
        held.subtract(laid)  # laid or hit by the rival since this seat's turn
        if top is not None and top != mine:
            held[top] -= 1  # thrown
        self.held[rival] = +held
        self.my_discard, self.draw_after = None, -1

    def played(self, view: TableView, discard: Card | None) -> None:
        """This seat's move (`discard`: the card it throws, if it does)."""
        if discard is not None:
            self.my_discard, self.draw_after = discard, view.draw_pile_size

    def known(self, seat: int) -> Counter[Card]:
        return +self.held.get(seat, Counter())


class SearchBot(ClockedBot, Generic[V, A, W, E]):
    """A search bot over an expert with a hand memory (`memory().observe(view)` before, and
    `memory().played(view, action)` after each decision): the expert's move is the prior, the
    game's subclass names the candidates, makes the guesses and values a candidate in one
    (`V`: its view, `A`: its action, `W`: a guess, `E`: its expert)."""

    # Whether the rollouts are played by the expert (a fresh one a seat) rather than `greedy`:
    # closer to how the table plays, several times slower a decision (docs/bots.md: it was not
    # clearly better at either game).
    rollout_expert = False
    search_seats: int = SEARCH_SEATS  # the most seats in play at which it searches

    def __init__(self, seed: int | str, game: str, expert: E, rollout: Bot) -> None:
        self.seed = seed
        self.rng = random.Random(f"{game}-search:{seed}")
        self.expert = expert
        self.greedy = rollout  # every seat's policy in the rollouts
        self.rivals = RivalHands()

    def act(self, view: V) -> A:
        memory = self.memory()
        memory.observe(view)
        self.rivals.observe(view, self.hand_key(view), self.table_cards(view))
        prior = self.prior(view)
        searched = sum(view.playing) <= self.search_seats
        action = self.decide(view, prior) if searched else prior
        memory.played(view, action)
        self.rivals.played(view, self.thrown(action))
        return action

    def decide(self, view: V, prior: A) -> A:
        """The move, searched (the memories took the view in): the prior unless one of the
        candidates beats it clearly."""
        candidates = self.candidates(view, prior)
        if len(candidates) < 2:
            return prior
        return choose(candidates, lambda rng: self.guess(view, rng),
                      lambda world, move: self.value(view, world, move), self.budget(),
                      self.rng, self.clear)

    def rollout_policies(self, players: int) -> list[Bot]:
        """Every seat's policy in a rollout (`rollout_expert`)."""
        if self.rollout_expert:
            return [type(self.expert)(f"{self.seed}:rollout:{s}") for s in range(players)]
        return [self.greedy] * players

    def memory(self) -> Memory[V, A]:
        """The expert's memory of the hand."""
        raise NotImplementedError

    def hand_key(self, view: V) -> object:
        """What names the hand or round under way (a new one: the rivals' hands are new)."""
        raise NotImplementedError

    def table_cards(self, view: V) -> Counter[Card]:
        """Every card on the table."""
        raise NotImplementedError

    def thrown(self, action: A) -> Card | None:
        """The card `action` throws on the discard pile, if it does."""
        raise NotImplementedError

    def prior(self, view: V) -> A:
        """The expert's move (its memory already took the view in)."""
        raise NotImplementedError

    def candidates(self, view: V, prior: A) -> list[A]:
        """The moves to compare, `prior` first; one: no search."""
        raise NotImplementedError

    def guess(self, view: V, rng: random.Random) -> W:
        """One determinization (a snapshot of the game consistent with `view`)."""
        raise NotImplementedError

    def value(self, view: V, world: W, move: A) -> float:
        """How good `move` is in the guess `world`, for this seat (higher is better)."""
        raise NotImplementedError


def deal_unseen(unseen: Counter[Card], sizes: Sequence[int], rng: random.Random
                ) -> tuple[list[list[Card]], list[Card]]:
    """The unseen cards shuffled and dealt: one list per size in `sizes` (as many as there
    are, the last ones short when cards run out), and the cards left over."""
    pool = list(unseen.elements())
    rng.shuffle(pool)
    out = []
    for size in sizes:
        out.append(pool[:size])
        pool = pool[size:]
    return out, pool


def deal_table(view: TableView, left: Counter[Card], rng: random.Random,
               rivals_known: RivalHands | None = None
               ) -> tuple[list[list[str]], list[str], list[Card]]:
    """A guess at a table of seats (Phase 10, Five Crowns): every hand as tokens (this seat's
    own, the rivals' dealt from `left` at their known sizes, each first given the cards it is
    known to hold, as far as they are still unseen), the draw pile (its known size; top last)
    and the unseen cards left over."""
    rivals = [s for s in range(view.players) if s != view.seat]
    left = Counter(left)
    given: dict[int, list[Card]] = {}
    for s in rivals:
        known = rivals_known.known(s) if rivals_known is not None else Counter()
        sure = list((known & left).elements())[:view.hand_sizes[s]]
        left.subtract(sure)
        given[s] = sure
    left = +left
    sizes = [view.hand_sizes[s] - len(given[s]) for s in rivals] + [view.draw_pile_size]
    dealt, rest = deal_unseen(left, sizes, rng)
    hands: list[list[str]] = [[] for _ in range(view.players)]
    hands[view.seat] = [c.text for c in view.hand]
    for s, cards in zip(rivals, dealt, strict=False):
        hands[s] = [c.text for c in given[s] + cards]
    return hands, [c.text for c in dealt[-1]], rest


def choose(candidates: Sequence[T], guess: Callable[[random.Random], W],
           value: Callable[[W, T], float], budget: Budget, rng: random.Random,
           clear: float = CLEAR) -> T:
    """The first candidate (the prior's choice) unless another beats it clearly over the
    guesses the budget allows: every candidate meets the same guesses, and a rival replaces
    the prior only when its mean gain over it, guess by guess, is more than `clear` standard
    errors above zero (rollouts by a simple policy are biased, and a few guesses are noisy:
    the prior is right more often than a small, noisy edge)."""
    if len(candidates) < 2 or budget.guesses < 2:  # one guess can never be clear
        return candidates[0]
    gains: list[list[float]] = [[] for _ in candidates]
    done = 0
    while budget.more(done):
        world = guess(rng)
        values = [value(world, candidate) for candidate in candidates]
        for i, v in enumerate(values):
            gains[i].append(v - values[0])
        done += 1
    best, best_edge = 0, 0.0
    for i in range(1, len(candidates)):
        edge = _clear_edge(gains[i], clear)
        if edge > best_edge:
            best, best_edge = i, edge
    return candidates[best]


def _clear_edge(gains: Sequence[float], clear: float) -> float:
    """The mean gain when it is clearly above zero (`clear` standard errors), else 0."""
    n = len(gains)
    if n < 2:
        return 0.0
    mean = sum(gains) / n
    spread = sum((g - mean) ** 2 for g in gains) / (n - 1)
    se = (spread / n) ** 0.5
    return mean if mean > 0 and mean > clear * se else 0.0


def roll_out(state: S, policies: Sequence[Bot], stop: Callable[[S], bool]) -> S:
    """Play `state` on with `policies` (one in-process bot per seat) until `stop(state)` or
    the game ends; the state reached."""
    for _ in range(ROLLOUT_ACTIONS):
        seat = state.to_move
        if seat is None or stop(state):
            break
        action = policies[seat].act(state.observation(seat))
        state.apply(state.parse_action(action) if isinstance(action, str) else action)
    return state


__all__ = ["CLOCKED_GUESSES", "SEARCH_SEATS", "Budget", "ClockedBot", "Expert", "Memory",
           "RivalHands", "SearchBot", "TableView", "choose", "deal_table", "deal_unseen",
           "roll_out"]
