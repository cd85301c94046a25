"""Information-set Monte Carlo tree search (single observer): what a tree-search bot shares.

`search.py`'s bots compare a few candidates picked by the expert, one rollout each per guess.
This search builds a tree over **every** legal action, the seat's own and, unless the game's
`apply` plays them by a policy inside the guess, its rivals':

- Each iteration deals one *guess* (a determinization: the hidden cards dealt consistently with
  what the seat has seen, as `search.deal_table` does) and walks the tree down from the root.
  At each node the legal actions are those of the guess (a rival's discards are the cards the
  guess gave it): a child is known by its action's text, and counts how often it was
  *available* as well as how often it was chosen, so the selection (UCB1 with availability,
  Cowling, Powley and Whitehouse 2012) compares actions over the guesses in which they existed.
- The first action expanded at a node is the prior's (the expert's move, at the root), then
  the others in the order the engine lists them; a node with an action not yet tried expands
  it, then `finish` values the state (a rollout by a fast policy to the end of the hand or
  round, or at a depth cut, where `to_move` says None, a leaf value), in the game's own points
  (the round's margin), and the value is backed up along the path. A rival's node picks for
  the rival: heads-up the margin's negation (zero-sum).
- A prior (optional, `TreeGame.prior`): the probabilities a policy (the expert's ranking) gives
  the actions of a node, asked once a node; selection is then PUCT (Silver et al. 2017: the
  mean plus `TreeGame.puct` x prior x sqrt(node's visits) / (1 + the child's visits), an
  action not tried yet counted at its node's mean), so a node need not try every action before
  it deepens the likely ones, and the actions the prior ranks low are tried as evidence allows
  (at the root each is tried once first, the likeliest first).
  Without a prior, UCB1 with availability as above.
- Anytime: iterations until the budget's deadline (a clock) or its count (no clock: the bot is
  then deterministic given its seed). The move played is the root's most visited child, the
  prior's credited with `PRIOR_VISITS` more, so a budget too small to learn anything plays the
  prior, and more time departs from it where the search finds better. Or (`clear`) the best
  mean when it beats the prior's by that many standard errors; or (`paired`) the root in
  sweeps, every root action once in the same guess, judged by `search.choose`'s rule on the
  differences guess by guess.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

from .search import CLEAR, Budget, choose

A = TypeVar("A")  # a game's action
S = TypeVar("S")  # a game's state (an engine state: the guesses are dealt into one)
EXPLORE: Final = 0.7  # UCB1's exploration constant, on values scaled to about [-1, 1]
PUCT: Final = 1.5  # PUCT's exploration constant (with a prior), on the same scale
# Visits the prior's action is credited with in the final choice: a few iterations spread
# over many actions pick one at random by one visit more (10 iterations changed 12 of 24 of the
# expert's decisions, 150 changed 12 too); with the credit another action must earn its place.
PRIOR_VISITS: Final = 10
# Visits a child needs before `clear` judges its mean, and sweeps before `paired` judges the
# gains (a spread of a few samples says little: at 8 iterations, 4 sweeps of a draw, the Five
# Crowns tree departed from the expert once in 52 decisions, on a 3-standard-error rule).
CLEAR_VISITS: Final = 8


CLOCKED_ITERATIONS: Final = 100_000  # with a clock the deadline bounds the iterations first


def iteration_budget(clocked: Budget, iterations: int) -> Budget:
    """A tree-search bot's budget for one decision from its clock (`ClockedBot.budget()`):
    `iterations` without a clock (deterministic given the seed), else as many as the deadline
    allows."""
    if clocked.deadline is None:
        return Budget(iterations, None)
    return Budget(CLOCKED_ITERATIONS, clocked.deadline)


@dataclass(slots=True)
class Node:
    """A node of the tree: the seat that chooses here and the children by action text, with
    their visits, their summed value (for the root's seat) and how often each was available."""

    actor: int
    visits: int = 0
    total: float = 0.0
    squares: float = 0.0  # the sum of the values' squares (their spread, for `clear`)
    available: int = 0
    children: dict[str, Node] = field(default_factory=dict)
    priors: dict[str, float] | None = None  # the prior's probabilities here, by action text

    def mean(self) -> float:
        return self.total / self.visits if self.visits else 0.0

    def spread(self) -> float:
        """The variance of the values backed up here (0 below two)."""
        if self.visits < 2:
            return 0.0
        return max(0.0, (self.squares - self.total ** 2 / self.visits) / (self.visits - 1))


@dataclass(frozen=True, slots=True)
class TreeGame(Generic[A, S]):
    """What the search needs of a game, as functions of its state."""

    to_move: Callable[[S], int | None]  # the seat to act; None: the search's horizon reached
    legal: Callable[[S], Sequence[A]]  # every legal action, in the engine's order
    apply: Callable[[S, A], object]
    finish: Callable[[S], float]  # the rollout from here and its value for the root's seat
    scale: float  # a typical size of a value (UCB's exploration is relative to it)
    # The prior's probabilities of `legal`'s actions in a state (same order), asked once a
    # node; None: no prior, UCB1 (the first round's selection).
    prior: Callable[[S, Sequence[A]], Sequence[float]] | None = None
    puct: float = PUCT  # PUCT's exploration constant, used with a prior


@dataclass
class SearchStats:
    """What one decision's search did: the prior's action, the iterations run and the root's
    visits by action."""

    prior: str = ""
    iterations: int = 0
    visits: dict[str, int] = field(default_factory=dict)


def tree_search(me: int, root_actions: Sequence[A], prior: A, guess: Callable[[random.Random], S],
                game: TreeGame[A, S], budget: Budget, rng: random.Random,
                stats: SearchStats | None = None, clear: float = 0.0, paired: bool = False) -> A:
    """The action to play among `root_actions` (every legal one) after searching the tree of
    the guesses `guess` makes, within `budget`. The move: the most visited (`PRIOR_VISITS`
    credited to `prior`); with `clear` > 0 instead the best mean, when it beats the prior's by
    more than `clear` standard errors of the difference (else the prior: `search.choose`'s
    rule, over the root's visits). `paired`: the root is searched in sweeps, every root action
    once in the same guess (common random numbers: the guess's luck cancels in the
    differences), the tree below it as before, and the move chosen by `search.choose`'s rule on
    the differences guess by guess (`clear` standard errors, 2 when not given)."""
    if len(root_actions) == 1:
        return root_actions[0]
    root = Node(me)
    first = str(prior)
    if paired:
        return _paired(root, me, root_actions, prior, guess, game, budget, rng, stats,
                       clear or CLEAR)
    order = {str(a): i for i, a in enumerate(root_actions)}
    done = 0
    while budget.more(done):
        _iterate(root, me, guess(rng), game, rng, first)
        done += 1
    by_text = {str(a): a for a in root_actions}

    def rank(text: str) -> tuple[int, int, int]:
        visits = root.children[text].visits + (PRIOR_VISITS if text == first else 0)
        return (visits, text == first, -order.get(text, len(order)))

    tried = [t for t in root.children if t in by_text]
    if stats is not None:
        stats.prior, stats.iterations = first, done
        stats.visits = {t: root.children[t].visits for t in tried}
    if not tried:
        return prior
    if clear > 0:
        return by_text[_clear_best(root, tried, first, clear)]
    return by_text[max(tried, key=rank)]


def _paired(root: Node, me: int, root_actions: Sequence[A], prior: A,
            guess: Callable[[random.Random], S], game: TreeGame[A, S], budget: Budget,
            rng: random.Random, stats: SearchStats | None, clear: float) -> A:
    """`tree_search` in sweeps (`paired`): a sweep's guess is made again from one seed for
    each root action, so that every action meets the same cards."""
    first = str(prior)
    candidates = [prior, *(a for a in root_actions if str(a) != first)]
    if not budget.more(1):  # no time beyond one iteration: the prior's, and the prior
        _iterate(root, me, guess(rng), game, rng, first, first)
        if stats is not None:
            stats.prior, stats.iterations, stats.visits = first, 1, {first: 1}
        return prior
    sweeps = Budget(budget.guesses // len(candidates), budget.deadline)
    swept = [0]

    def value(seed: float, action: A) -> float:
        swept[0] += 1
        return _iterate(root, me, guess(random.Random(seed)), game, rng, first, str(action))

    move = choose(candidates, lambda r: r.random(), value, sweeps, rng, clear)
    if swept[0] < CLEAR_VISITS * len(candidates):  # too few sweeps for a spread to mean much
        move = prior
    if stats is not None:
        stats.prior, stats.iterations = first, swept[0]
        stats.visits = {t: child.visits for t, child in root.children.items()}
    return move


def _clear_best(root: Node, tried: list[str], first: str, clear: float) -> str:
    """The child of the best mean if it beats the prior's clearly (`tree_search`), else the
    prior's (each needs `CLEAR_VISITS` visits to be judged)."""
    base = root.children.get(first)
    if base is None or base.visits < CLEAR_VISITS:
        return first
    best, edge = first, 0.0
    for text in tried:
        child = root.children[text]
        if text == first or child.visits < CLEAR_VISITS:
            continue
        gain = child.mean() - base.mean()
        error = math.sqrt(child.spread() / child.visits + base.spread() / base.visits)
        if gain > clear * error and gain > edge:
            best, edge = text, gain
    return best


def _iterate(root: Node, me: int, state: S, game: TreeGame[A, S], rng: random.Random,
             first: str, forced: str | None = None) -> float:
    """One iteration: select and expand in the guess `state` (at the root the action `forced`,
    when given), roll out, back up; the value backed up."""
    path = [root]
    node = root
    while True:
        seat = game.to_move(state)
        if seat is None:
            break
        node.actor = seat
        actions = game.legal(state)
        texts = [str(a) for a in actions]
        for text in texts:
            child = node.children.get(text)
            if child is not None:
                child.available += 1
        sign = 1.0 if seat == me else -1.0
        if forced is not None and node is root:
            text = forced
        elif game.prior is not None:
            text = _puct_pick(node, state, actions, texts, sign, game, node is root)
        else:
            untried = [t for t in texts if t not in node.children]
            if untried and node is root:  # the prior's move first, then the engine's order
                text = first if first in untried else untried[0]
            elif untried:
                text = rng.choice(untried)
            else:
                text = max(texts, key=lambda t: _ucb(node.children[t], sign, game.scale))
        game.apply(state, actions[texts.index(text)])
        child = node.children.get(text)
        if child is None:  # expanded: the leaf of this iteration
            child = node.children[text] = Node(seat, available=1)
            path.append(child)
            break
        node = child
        path.append(node)
    value = game.finish(state)
    for visited in path:
        visited.visits += 1
        visited.total += value
        visited.squares += value * value
    return value


def _puct_pick(node: Node, state: S, actions: Sequence[A], texts: list[str], sign: float,
               game: TreeGame[A, S], root: bool) -> str:
    """PUCT's choice among `texts` (module docstring); the prior asked at the node's first
    visit (an action first met later gets the least prior of the others). At the root every
    action is tried once first, the likeliest first: each is considered, none filtered."""
    priors = node.priors
    if priors is None:
        assert game.prior is not None
        priors = node.priors = dict(zip(texts, game.prior(state, actions), strict=True))
    floor = min(priors.values(), default=1.0)
    untried = [t for t in texts if t not in node.children]
    if root and untried:
        return max(untried, key=lambda t: priors.get(t, floor))
    base = sign * node.mean() / game.scale  # an action not tried yet: its node's mean
    root_n = math.sqrt(max(1, node.visits))

    def score(text: str) -> float:
        child = node.children.get(text)
        visits = child.visits if child is not None else 0
        q = sign * child.mean() / game.scale if child is not None and visits else base
        return q + game.puct * priors.get(text, floor) * root_n / (1 + visits)

    return max(texts, key=score)


def _ucb(child: Node, sign: float, scale: float) -> float:
    """UCB1 with availability: the mean for the seat choosing, plus exploration."""
    return (sign * child.mean() / scale
            + EXPLORE * math.sqrt(math.log(max(1, child.available)) / child.visits))


__all__ = ["CLOCKED_ITERATIONS", "Node", "SearchStats", "TreeGame", "iteration_budget",
           "tree_search"]
