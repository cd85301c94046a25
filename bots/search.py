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
- The clock: `Budget` takes the decision's own allowance (the request's `time`, through
  `think_within`) and stays well inside it (`CLOCK_SHARE`); without a clock (benchmarks, tests)
  a fixed number of guesses decides, so the bot is deterministic given its seed.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from meldref.engine.cards import Card

T = TypeVar("T")
CLOCK_SHARE: Final = 0.25  # of a decision's own allowance, spent on guesses
MAX_THINK: Final = 2.0  # seconds, whatever the clock allows
GUESSES: Final = 8  # determinizations per decision without a clock (and at most with one)
CLEAR: Final = 2.0  # standard errors a rival's mean gain must clear to replace the prior
ROLLOUT_ACTIONS: Final = 600  # a rollout that runs longer stops there (turn caps end it first)


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
    _deadline: float | None = None

    def think_within(self, allowance: float, bank: float = 0.0) -> None:
        """The next decision's clock (the request's `time` and `bank`, in seconds): the bot
        spends at most `CLOCK_SHARE` of `allowance` (never the bank) and `MAX_THINK`."""
        spend = min(MAX_THINK, CLOCK_SHARE * max(0.0, allowance))
        self._deadline = time.monotonic() + spend

    def budget(self) -> Budget:
        deadline, self._deadline = self._deadline, None  # one decision's clock
        return Budget(self.guesses, deadline)


class SearchBot(ClockedBot):
    """A search bot over an expert with a hand memory (`memory.observe(view)` before, and
    `memory.played(view, action)` after each decision): the expert's move is the prior, the
    game's subclass names the candidates, makes the guesses and values a candidate in one."""

    def __init__(self, seed: int | str, game: str, expert: Any, rollout: Any) -> None:
        self.seed = seed
        self.rng = random.Random(f"{game}-search:{seed}")
        self.expert = expert
        self.greedy = rollout  # every seat's policy in the rollouts

    def act(self, view: Any) -> Any:
        memory = self.expert.memory
        memory.observe(view)
        prior = self.prior(view)
        candidates = self.candidates(view, prior)
        action = prior
        if len(candidates) > 1:
            action = choose(candidates, lambda rng: self.guess(view, rng),
                            lambda world, move: self.value(view, world, move), self.budget(),
                            self.rng)
        memory.played(view, action)
        return action

    def prior(self, view: Any) -> Any:
        """The expert's move (its memory already took the view in)."""
        raise NotImplementedError

    def candidates(self, view: Any, prior: Any) -> list[Any]:
        """The moves to compare, `prior` first; one: no search."""
        raise NotImplementedError

    def guess(self, view: Any, rng: random.Random) -> Any:
        """One determinization (a snapshot of the game consistent with `view`)."""
        raise NotImplementedError

    def value(self, view: Any, world: Any, move: Any) -> float:
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


def deal_table(view: Any, left: Counter[Card], rng: random.Random
               ) -> tuple[list[list[str]], list[str], list[Card]]:
    """A guess at a table of seats (Phase 10, Five Crowns): every hand as tokens (this seat's
    own, the rivals' dealt from `left` at their known sizes), the draw pile (its known size;
    top last) and the unseen cards left over."""
    rivals = [s for s in range(view.players) if s != view.seat]
    sizes = [view.hand_sizes[s] for s in rivals] + [view.draw_pile_size]
    dealt, rest = deal_unseen(left, sizes, rng)
    hands: list[list[str]] = [[] for _ in range(view.players)]
    hands[view.seat] = [c.text for c in view.hand]
    for s, cards in zip(rivals, dealt, strict=False):
        hands[s] = [c.text for c in cards]
    return hands, [c.text for c in dealt[-1]], rest


def choose(candidates: Sequence[T], guess: Callable[[random.Random], Any],
           value: Callable[[Any, T], float], budget: Budget, rng: random.Random) -> T:
    """The first candidate (the prior's choice) unless another beats it clearly over the
    guesses the budget allows: every candidate meets the same guesses, and a rival replaces
    the prior only when its mean gain over it, guess by guess, is more than `CLEAR` standard
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
        edge = _clear_edge(gains[i])
        if edge > best_edge:
            best, best_edge = i, edge
    return candidates[best]


def _clear_edge(gains: Sequence[float]) -> float:
    """The mean gain when it is clearly above zero (`CLEAR` standard errors), else 0."""
    n = len(gains)
    if n < 2:
        return 0.0
    mean = sum(gains) / n
    spread = sum((g - mean) ** 2 for g in gains) / (n - 1)
    se = (spread / n) ** 0.5
    return mean if mean > 0 and mean > CLEAR * se else 0.0


def roll_out(state: Any, policies: Sequence[Any], stop: Callable[[Any], bool]) -> Any:
    """Play `state` on with `policies` (one in-process bot per seat) until `stop(state)` or
    the game ends; the state reached."""
    for _ in range(ROLLOUT_ACTIONS):
        seat = state.to_move
        if seat is None or stop(state):
            break
        state.apply(policies[seat].act(state.observation(seat)))
    return state


__all__ = ["Budget", "ClockedBot", "SearchBot", "choose", "deal_table", "deal_unseen",
           "roll_out"]
