"""A Five Crowns tree-search bot (research, issue 49): information-set MCTS over every legal
action (bots/tree_search.py), heads-up, not seated as a built-in bot.

Every decision searched: both draws and every discard (with the going out or the last turn's lay
it allows: the engine's legal actions, none filtered). The guesses are `FiveCrownsSearchBot`'s
(the unseen cards dealt at the known sizes, a card the rival took from the discard pile kept in
its hand). As it ships (round 2's last attempt, docs/bots.md): the root in paired sweeps, each
legal action once in the same guess; the rival's turn played by `greedy` inside the guess; a
depth cut at this seat's next draw, valued by the solver; the expert's move kept unless another
action's gain over it, guess by guess, clears 3 standard errors. The options are attributes, so
that `bench_strength.py --set tree.OPTION=VALUE` changes one (docs/bots.md has what each scored
against `expert`; round 1's tree is `turns=0 rival_tree=yes puct=0 paired=no
discard_searched=yes edge=0`):

- `turns` (1): the depth cut, in this seat's turns. 0: no cut, rollouts by `greedy` seats (or
  the expert's, `rollout_expert`) to the end of the round, valued by the round's margin (the
  rival's points less this seat's: the game's own terms). N > 0: the tree stops when this seat
  is about to draw for the N-th time after this decision (or where the round ends, valued
  exactly), and the leaf is valued by the solver in the same points (`leaf`): the rival's points
  left after a draw of its own less this seat's after its next draw (each the better of the
  discard and the guess's next card from the pile, then the best discard): what the round would
  score if this seat went out next, or could not.
- `rival_tree` (off): whether the rival's draws and discards are nodes of the tree (round 1) or
  played by a policy inside each guess (`greedy`, or the expert with `rollout_expert`): the tree
  then holds this seat's decisions only, and the guesses carry the rival's luck.
- `paired` (on): the root searched in sweeps, every root action once in the same guess, the move
  the expert's unless another's gain over it, guess by guess, clears `edge` standard errors
  (`search`'s rule, over every legal action; the tree below the root as usual). Off: each
  iteration one walk down the tree, the move the most visited (the expert's credited
  `PRIOR_VISITS`), or with `edge` > 0 the best mean when it beats the expert's by `edge`
  standard errors.
- `edge` (`EDGE`, 3): those standard errors.
- `puct` (1.5): with a prior (> 0), selection below the root (and at it, unpaired) is PUCT over
  the expert's ranking (`action_weights`): at the root `prior_share` (half) of the weight on
  the expert's move, the rest, as at every node of this seat's, on the discards by the points
  each leaves (`TEMPERATURE`), a wild and a last turn's plain discard ranked low, going out
  high; at the draw the greedy choice first. 0: UCB1, round 1's.
- `discard_searched` (off): this seat's discard after a draw in the tree is `greedy`'s rather
  than a node: a node below a draw from the pile mixes the hands of every card the guesses drew
  there, so its best discard for one card is not the best for another, and the draw from the
  pile looked worse than it is (the decisions round 2's first trees changed were mostly draws
  from the pile turned into draws of the discard).
- `iterations` (200): a decision's iterations without a clock (with one, as many as fit in a
  quarter of the decision's allowance, as `search`).

Seated by `bench/bench_strength.py --game fivecrowns --pair tree:expert`, and as a program by
`python3 -m meldref.bots.fivecrowns.tree_search`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from meldref.engine.cards import Card
from meldref.engine.common import DRAW_DISCARD, DRAW_PILE, Draw
from meldref.engine.fivecrowns.actions import Action, Discard
from meldref.engine.fivecrowns.solver import Solver
from meldref.engine.fivecrowns.state import FiveCrownsState
from meldref.engine.fivecrowns.view import FiveCrownsView

from ..sdk import EngineBot, run
from ..search import roll_out
from ..tree_search import PUCT, SearchStats, TreeGame, iteration_budget, tree_search
from .expert import is_wild
from .search import FiveCrownsSearchBot, round_margin

ITERATIONS: Final = 200  # a decision's iterations without a clock (with one: as many as fit)
SCALE: Final = 30.0  # points: about a round's margin between two good players
TURNS: Final = 1  # the depth cut, in this seat's turns (0: rollouts to the round's end)
TEMPERATURE: Final = 4.0  # points: a discard leaving this many more is e times less likely
PRIOR_SHARE: Final = 0.5  # of the root's prior, on the expert's move
WILD_WEIGHT: Final = 0.05  # a wild's discard (the expert never throws one but to go out)
OUT_WEIGHT: Final = 20.0  # going out (or laying on a last turn), against the best plain discard
GREEDY_DRAW: Final = 0.7  # the prior of the draw `greedy` would make
# Standard errors a root action's paired gain over the expert's move must clear: 3, not the
# `search` bot's 2, as every legal action (up to 14) is compared with the expert's at once, and
# at 2 the tree's edges of 1 point in expert rollouts were mostly noise (docs/bots.md).
EDGE: Final = 3.0


class FiveCrownsTreeBot(FiveCrownsSearchBot):
    """Information-set MCTS over the round, heads-up (module docstring)."""

    name = "tree"
    search_seats = 2
    iterations: int = ITERATIONS
    turns: int = TURNS
    rival_tree: bool = False
    puct: float = PUCT
    prior_share: float = PRIOR_SHARE
    edge: float = EDGE
    paired: bool = True  # the root in sweeps, every action in the same guess (tree_search)
    discard_searched: bool = False  # after this seat's draw in the tree: its discards searched

    def __init__(self, seed: int | str = 0) -> None:
        super().__init__(seed)
        self.last = SearchStats()  # the last decision's search

    def decide(self, view: FiveCrownsView, prior: Action) -> Action:
        """The tree's move among every legal action (`last` keeps what the search did)."""
        actions: list[Action] = (list(view.draw_options()) if view.decision == "draw"
                                 else list(view.discard_options()))
        self.last = SearchStats(prior=str(prior))
        budget = iteration_budget(self.budget(), self.iterations)
        return tree_search(view.seat, actions, prior,
                           lambda rng: FiveCrownsState.from_snapshot(self.guess(view, rng)),
                           self._game(view, prior), budget, self.rng, self.last, self.edge,
                           self.paired)

    def _game(self, view: FiveCrownsView, expert_move: Action) -> TreeGame[Action, FiveCrownsState]:
        policies = self.rollout_policies(view.players)
        me, cut = view.seat, view.turn + view.players * self.turns

        def over(state: FiveCrownsState) -> bool:
            return state.round != view.round or state.to_move is None

        def at_cut(state: FiveCrownsState) -> bool:
            return (self.turns > 0 and state.turns >= cut and state.to_move == me
                    and state.decision == "draw")

        def to_move(state: FiveCrownsState) -> int | None:
            return None if over(state) or at_cut(state) else state.to_move

        def apply(state: FiveCrownsState, action: Action) -> None:
            state.apply(action)
            if isinstance(action, Draw) and not self.discard_searched and state.to_move == me:
                roll_out(state, policies, lambda s: s.decision != "discard")
            if not self.rival_tree:  # the rival's turn played by its policy, in the guess
                roll_out(state, policies, lambda s: s.to_move == me or over(s))

        def finish(state: FiveCrownsState) -> float:
            if not over(state) and self.turns > 0:
                return leaf(view, state)
            roll_out(state, policies, over)
            return round_margin(view, state)

        def prior(state: FiveCrownsState, actions: Sequence[Action]) -> list[float]:
            weights = action_weights(view, state, actions)
            if state.turns == view.turn and state.decision == view.decision:  # the root
                total = sum(weights)
                share = self.prior_share
                return [(1 - share) * w / total + share * (str(a) == str(expert_move))
                        for w, a in zip(weights, actions, strict=True)]
            return weights

        return TreeGame(to_move, FiveCrownsState.legal_actions, apply, finish, SCALE,
                        prior if self.puct > 0 else None, self.puct)


def leaf(view: FiveCrownsView, state: FiveCrownsState) -> float:
    """The round's margin for `view`'s seat were it to end at `state` (this seat about to draw,
    the round going on): the rival's points left after a draw of its own (the last turn it
    would have, were this seat to go out now) less this seat's after its draw, each the better
    of the discard pile's top and the guess's next card from the draw pile (this seat's the
    first, the rival's the second), then the best discard."""
    me = view.seat
    rivals = [s for s in range(view.players) if s != me and view.playing[s]]
    mine = after_draw(view, state, state.hands[me], 1)
    theirs = [after_draw(view, state, state.hands[s], 2) if state.went_out is None else
              Solver(state.hands[s], view.wild_rank, view.natural).whole_points for s in rivals]
    return sum(theirs) / max(1, len(theirs)) - mine


def after_draw(view: FiveCrownsView, state: FiveCrownsState, hand: Sequence[Card],
               depth: int) -> int:
    """The fewest points `hand` leaves after a draw and its best discard: the better of the
    discard pile's top and the draw pile's `depth`-th card from the top (the guess's)."""
    draws = [state.discard_pile[-1]] if state.discard_pile else []
    if len(state.draw_pile) >= depth:
        draws.append(state.draw_pile[-depth])
    wild, natural = view.wild_rank, view.natural
    return min((Solver((*hand, c), wild, natural).best_discard()[1] for c in draws),
               default=Solver(hand, wild, natural).whole_points)


def action_weights(view: FiveCrownsView, state: FiveCrownsState,
                   actions: Sequence[Action]) -> list[float]:
    """The prior's weights of `actions` in `state` (module docstring, `puct`), summing to 1."""
    seat = state.to_move
    assert seat is not None
    hand = state.hands[seat]
    solver = Solver(hand, view.wild_rank, view.natural)
    if all(isinstance(a, Draw) for a in actions):
        top = state.discard_pile[-1] if state.discard_pile else None
        takes = top is not None and Solver((*hand, top), view.wild_rank, view.natural
                                           ).best_discard()[1] < solver.whole_points
        liked = DRAW_DISCARD if takes else DRAW_PILE
        return _normal([GREEDY_DRAW if a == liked else 1 - GREEDY_DRAW for a in actions])
    discards = [a for a in actions if isinstance(a, Discard)]
    plain = {a.card: solver.points(a.card) for a in discards if not a.groups}
    best = min(plain.values(), default=0)
    last_turn = state.went_out is not None
    every_wild = all(is_wild(view, c) for c in hand)
    weights = []
    for a in discards:
        if a.groups:
            weights.append(OUT_WEIGHT)
            continue
        w = math.exp(-(plain[a.card] - best) / TEMPERATURE)
        if is_wild(view, a.card) and not every_wild:
            w *= WILD_WEIGHT
        if last_turn:
            w *= WILD_WEIGHT  # a plain discard on a last turn scores every card held
        weights.append(w)
    return _normal(weights)


def _normal(weights: list[float]) -> list[float]:
    total = sum(weights)
    return [w / total for w in weights]


def main() -> None:
    """Play as a protocol bot (`python3 -m meldref.bots.fivecrowns.tree_search`), its clock
    from each `go` line: how a tournament seats it (`--shared-deals` for duplicate deals)."""
    run(EngineBot({"fivecrowns": FiveCrownsTreeBot}, name="fivecrowns-tree"))


if __name__ == "__main__":
    main()


__all__ = ["FiveCrownsTreeBot", "action_weights", "leaf"]
