"""In-process Five Crowns Solitaire bots: `random` and `greedy`.

Each decides from the piles it sees (the whole game is face up but the deck's order);
`greedy` asks the solver (engine/fivecrowns/solver.py) which placement closes most.
"""

from __future__ import annotations

import random

from ...engine.solitaire import Place, SolitaireView


class SolitaireRandomBot:
    """Puts the drawn card into a random open pile and discards a random card of it."""

    name = "random"

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(f"solitaire-random:{seed}")

    def act(self, view: SolitaireView) -> Place:
        size = self.rng.choice(view.open_piles())
        assert view.draw_top is not None
        return Place(size, self.rng.choice([*view.pile(size), view.draw_top]))


class SolitaireGreedyBot:
    """Closes a pile when it can (the largest first), else makes the move that cuts a pile's
    points left the most (then: the fewest points left)."""

    name = "greedy"

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed

    def act(self, view: SolitaireView) -> Place:
        top = view.draw_top
        assert top is not None
        best: tuple[tuple[bool, int, int, int], Place] | None = None
        for size in view.open_piles():
            before = view.solver(size).points()
            card, after = view.solver(size, top).best_discard()
            key = (after != 0, after - before, after, -size)
            if best is None or key < best[0]:
                best = (key, Place(size, card))
        assert best is not None
        return best[1]
