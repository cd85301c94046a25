"""In-process Five Crowns bots: `random` and `greedy`.

Each decides from its seat's view alone, the same information a bot program gets through the
protocol; `greedy` asks the solver (engine/fivecrowns/solver.py) for the best arrangement.
"""

from __future__ import annotations

import random

from ...engine.fivecrowns import Action, Discard, Draw, FiveCrownsView
from ...engine.fivecrowns.solver import card_points
from ..tiebreak import Tiebreak


class FiveCrownsRandomBot:
    """Draws at random and discards a random card; goes out (or lays, on a last turn) when
    the rest of the hand allows it."""

    name = "random"

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(f"fivecrowns-random:{seed}")

    def act(self, view: FiveCrownsView) -> Action:
        if view.decision == "draw":
            return self.rng.choice(view.draw_options())
        card = self.rng.choice(view.hand)
        solver = view.solver()
        if view.last_turn or solver.goes_out_without(card):
            return Discard.laying(card, solver.split(card).groups)
        return Discard(card)


class FiveCrownsGreedyBot:
    """Takes the discard when it lowers the best points left, goes out as soon as it can,
    else discards the card whose loss leaves the fewest points."""

    name = "greedy"

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed  # breaks ties between equal discards (bots.tiebreak)

    def act(self, view: FiveCrownsView) -> Action:
        if view.decision == "draw":
            return self._draw(view)
        return self._discard(view)

    def _discard(self, view: FiveCrownsView) -> Discard:
        best = view.best_discard()
        if best.groups or view.last_turn:  # going out, or laying what it can: as it comes
            return best
        # The solver's choice is the costliest of the cards leaving the fewest points; a card
        # of the same worth (another suit of the rank) leaving as few is as good: the seed
        # picks between them.
        solver = view.solver()
        floor, worth = solver.points(best.card), card_points(best.card, view.wild_rank)
        equal = [c for c in dict.fromkeys(view.hand)
                 if card_points(c, view.wild_rank) == worth and solver.points(c) == floor]
        tie = Tiebreak("fivecrowns-greedy", self.seed, view.round, view.turn)
        return Discard(min(equal, key=lambda c: tie(c.text)))

    def _draw(self, view: FiveCrownsView) -> Draw:
        options = view.draw_options()
        top = view.discard_top
        if len(options) == 1 or top is None:
            return options[0]
        now = view.solver().points()
        _, taken = view.solver((*view.hand, top)).best_discard()
        return Draw("discard") if taken < now else Draw("pile")
