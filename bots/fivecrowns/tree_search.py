"""A Five Crowns tree-search bot (research, issue 49): information-set MCTS over every legal
action (bots/tree_search.py), not seated as a built-in bot yet.

Every decision searched: both draws and every discard (with the going out or the last turn's lay
it allows: the engine's legal actions, none filtered), and in the tree the rival's draws and
discards too. The guesses are `FiveCrownsSearchBot`'s (the unseen cards dealt at the known sizes,
a card the rival took from the discard pile kept in its hand). Rollouts by `greedy` seats to the
end of the round; a value is the round's margin (the rival's points less this seat's), the
game's own terms. The expert's move is expanded first at the root and wins ties of visits.

Measured against `expert` in docs/bots.md ("A search that searches"); `bench/bench_strength.py
--game fivecrowns --pair tree:expert` seats it.
"""

from __future__ import annotations

from typing import Final

from meldref.engine.fivecrowns.actions import Action
from meldref.engine.fivecrowns.state import FiveCrownsState
from meldref.engine.fivecrowns.view import FiveCrownsView

from ..sdk import EngineBot, run
from ..search import Budget, roll_out
from ..tree_search import SearchStats, TreeGame, tree_search
from .search import FiveCrownsSearchBot, round_margin

ITERATIONS: Final = 200  # a decision's iterations without a clock (with one: as many as fit)
CLOCKED_ITERATIONS: Final = 100_000  # with a clock the deadline bounds them first
SCALE: Final = 30.0  # points: about a round's margin between two good players


class FiveCrownsTreeBot(FiveCrownsSearchBot):
    """Information-set MCTS over the round, heads-up (module docstring)."""

    name = "tree"
    iterations: int = ITERATIONS
    search_seats = 2

    def __init__(self, seed: int | str = 0) -> None:
        super().__init__(seed)
        self.last = SearchStats()  # the last decision's search

    def decide(self, view: FiveCrownsView, prior: Action) -> Action:
        """The tree's move among every legal action (`last` keeps what the search did)."""
        actions: list[Action] = (list(view.draw_options()) if view.decision == "draw"
                                 else list(view.discard_options()))
        self.last = SearchStats(prior=str(prior))
        return tree_search(view.seat, actions, prior,
                           lambda rng: FiveCrownsState.from_snapshot(self.guess(view, rng)),
                           self._game(view), self._budget(), self.rng, self.last)

    def _budget(self) -> Budget:
        clocked = self.budget()  # the clock, if the referee or the SDK told one
        if clocked.deadline is None:
            return Budget(self.iterations, None)
        return Budget(CLOCKED_ITERATIONS, clocked.deadline)

    def _game(self, view: FiveCrownsView) -> TreeGame[Action]:
        policies = self.rollout_policies(view.players)

        def to_move(state: FiveCrownsState) -> int | None:
            return None if state.round != view.round else state.to_move

        def finish(state: FiveCrownsState) -> float:
            """The rollout to the round's end; the round's margin for this seat."""
            roll_out(state, policies, lambda s: s.round != view.round)
            return round_margin(view, state)

        return TreeGame(to_move, FiveCrownsState.legal_actions, FiveCrownsState.apply, finish,
                        SCALE)


def main() -> None:
    """Play as a protocol bot (`python3 -m meldref.bots.fivecrowns.tree_search`), its clock
    from each `go` line: how a tournament seats it (`--shared-deals` for duplicate deals)."""
    run(EngineBot({"fivecrowns": FiveCrownsTreeBot}, name="fivecrowns-tree"))


if __name__ == "__main__":
    main()


__all__ = ["FiveCrownsTreeBot"]
