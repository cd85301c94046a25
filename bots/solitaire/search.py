"""The Solitaire `search` bot: determinized Monte Carlo over the rest of the deal (bots/search.py).

Everything is face up but the order of the draw pile. A guess is one order of the cards the seat
has not seen (the deck less the piles, the drawn card and the cards it put out of play). The
candidates are the expert's move and, for the other open piles, the throw that leaves each the
fewest points (the best `CANDIDATES` of them by how much they cut); each is played in the same
guesses and the deal is rolled out to its end by `greedy`. A candidate's value is the piles
closed at the end, so the bot plays for what the game counts. A move that closes a pile is the
expert's, and played at once.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Final

from meldref.bots.sdk import EngineBot, run
from meldref.bots.search import ClockedBot, choose, deal_unseen, roll_out
from meldref.bots.solitaire.expert import SolitaireExpertBot, unseen_cards
from meldref.bots.solitaire.greedy import SolitaireGreedyBot
from meldref.engine.cards import Card
from meldref.engine.game import JSON, rules_to_json
from meldref.engine.solitaire import Place, SolitaireRules, SolitaireState, SolitaireView

CANDIDATES: Final = 3  # moves besides the expert's
GUESSES: Final = 4  # a rollout plays the whole deal by `greedy`, a solver search a pile a move


class SolitaireSearchBot(ClockedBot):
    """Determinized Monte Carlo over the deal, the expert as its prior (module docstring)."""

    name = "search"
    guesses = GUESSES
    candidates: int = CANDIDATES  # an attribute too, so that a copy can differ (--set)

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed
        self.rng = random.Random(f"solitaire-search:{seed}")
        self.expert = SolitaireExpertBot(seed)
        self.greedy = SolitaireGreedyBot(seed)

    def act(self, view: SolitaireView) -> Place:
        prior = self.expert.act(view)
        candidates = self._candidates(view, prior)
        if len(candidates) < 2:
            return prior
        left = unseen_cards(view)  # the view holds the cards put out of play (`discarded`)
        return choose(candidates, lambda rng: self._guess(view, +left, rng),
                      lambda world, move: self._value(world, move), self.budget(), self.rng,
                      self.clear)

    def _candidates(self, view: SolitaireView, prior: Place) -> list[Place]:
        top = view.draw_top
        assert top is not None
        if not view.solver(prior.pile, top).points():  # a pile that closes: nothing better
            return [prior]
        scored = []
        for size in view.open_piles():
            if size == prior.pile:
                continue
            before = view.solver(size).points()
            card, after = view.solver(size, top).best_discard()
            scored.append((after - before, after, -size, Place(size, card)))
        scored.sort(key=lambda s: s[:3])
        return [prior, *(s[3] for s in scored[:self.candidates])]

    def _guess(self, view: SolitaireView, left: Counter[Card], rng: random.Random
               ) -> dict[str, JSON]:
        """One order of the draw pile below its top, as a state snapshot."""
        assert view.draw_top is not None
        (below,), _ = deal_unseen(left, [view.draw_pile_size - 1], rng)
        return {
            "game": "solitaire", "rules": rules_to_json(SolitaireRules(natural=view.natural)),
            "players": 1, "seed": "search",
            "piles": [[c.text for c in pile] for pile in view.piles],
            "closed": list(view.closed),
            "draw_pile": [c.text for c in below] + [view.draw_top.text],
            "out_of_play": [c.text for c in view.discarded],
            "moves": view.moves, "outcome": None,
        }

    def _value(self, world: dict[str, JSON], move: Place) -> float:
        state = SolitaireState.from_snapshot(world)
        state.apply(move)
        roll_out(state, [self.greedy], lambda s: False)
        return float(sum(state.closed))


def main() -> None:
    """Play as a protocol bot on standard input and output: `python3 bots/solitaire/search.py` (its
    imports name their package, as the expert's do, so that it runs as a file).
    Installed, `python3 -m meldref.bots.serve search` plays the same moves."""
    run(EngineBot({"solitaire": SolitaireSearchBot}, name="solitaire-search"))


if __name__ == "__main__":
    main()


__all__ = ["SolitaireSearchBot"]
