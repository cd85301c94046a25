"""In-process Phase 10 bots: `random` (uniform over action kinds) and `greedy` (a heuristic).

Both decide from their seat's `Phase10View` alone, the same information a bot program gets
through the protocol.
"""

from __future__ import annotations

import random
from typing import Final

from ...engine.cards import SKIP, WILD, Card
from ...engine.common import DRAW_DISCARD, DRAW_PILE, Draw
from ...engine.phase10.actions import Action, Discard, LayDown
from ...engine.phase10.rules import PHASES, card_points
from ...engine.phase10.view import Phase10View, missing_cards, missing_without_each
from .expert import leader, with_extras

LAY_CHANCE: Final = 0.5  # how often the random bot looks for a lay-down it could make


class RandomBot:
    """Picks an action kind at random among those open to it, then an action of that kind."""

    name = "random"

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(f"phase10-random:{seed}")

    def act(self, view: Phase10View) -> Action:
        rng = self.rng
        if view.decision == "draw":
            return rng.choice(view.draw_options())
        if not view.has_laid:
            if rng.random() < LAY_CHANCE:  # the coin first: the finder runs only when it wins
                phases = list(view.phases_left)
                rng.shuffle(phases)
                for phase in phases:
                    lay = view.find_lay(phase)
                    if lay is not None:
                        return lay
        elif rng.random() < 0.5:
            hits = view.hit_options()
            if hits:
                return rng.choice(hits)
        card = rng.choice(view.hand)
        if card is SKIP:
            victims = view.victims
            return Discard(SKIP, rng.choice(victims) if victims else None)
        return Discard(card)


class GreedyBot:
    """Lays as soon as it can (with extras), hits all it can, discards the least useful card.

    It takes the discard when that brings its phase closer (or the card can be hit), keeps its
    wilds, and skips the seat that leads the game.
    """

    name = "greedy"

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed

    def act(self, view: Phase10View) -> Action:
        if view.decision == "draw":
            return self._draw(view)
        if not view.has_laid:
            lay = self._lay(view)
            if lay is not None:
                return lay
        else:
            hits = view.hit_options()
            if hits:  # naturals before wilds: a wild fits anywhere later
                return min(hits, key=lambda h: h.card is WILD)
        return self._discard(view)

    # -- drawing -------------------------------------------------------------------------------

    def _draw(self, view: Phase10View) -> Draw:
        options = view.draw_options()
        top = view.discard_top
        if len(options) == 1 or top is None:
            return options[0]
        if top is WILD:
            return DRAW_DISCARD
        if view.has_laid:
            useful = any(g.fits(top) for g in view.table)
        else:
            useful = _distance(view, (*view.hand, top)) < _distance(view, view.hand)
        return DRAW_DISCARD if useful else DRAW_PILE

    # -- laying down ---------------------------------------------------------------------------

    def _lay(self, view: Phase10View) -> LayDown | None:
        # Harder phases first when the order is free: they are the ones hard to make later.
        for phase in sorted(view.phases_left, reverse=True):
            lay = view.find_lay(phase)
            if lay is not None:
                return with_extras(view, lay)
        return None

    # -- discarding ----------------------------------------------------------------------------

    def _discard(self, view: Phase10View) -> Discard:
        hand = view.hand
        if SKIP in hand:
            victims = view.victims
            if victims or all(c is SKIP or c is WILD for c in hand):
                return Discard(SKIP, leader(view, victims))
        plain = [c for c in dict.fromkeys(hand) if c is not SKIP and c is not WILD]
        if not plain:
            return Discard(WILD if WILD in hand else SKIP, None)
        if view.has_laid:
            return Discard(max(plain, key=card_points))
        wilds = hand.count(WILD)
        wrap = view.rules.run_wrap
        after = [missing_without_each(hand, PHASES[p], wrap) for p in view.phases_left]
        # Ties are broken by a draw named by the seed and the turn, not by a generator run
        # through the game: a bot begun on a position plays as one that played to it.
        rng = random.Random(f"phase10-greedy:{self.seed}:{view.hand_number}:{view.tiebreak}:"
                            f"{view.turn}")

        def cost(card: Card) -> tuple[int, int, float]:
            distance = min(max(0, m[card] - wilds) for m in after)
            return (distance, -card_points(card), rng.random())

        return Discard(min(plain, key=cost))


def _distance(view: Phase10View, hand: tuple[Card, ...] | list[Card]) -> int:
    """Cards still lacking for the easiest phase left, wilds counted as found."""
    wilds = hand.count(WILD)
    wrap = view.rules.run_wrap
    return min(
        max(0, missing_cards(hand, PHASES[p], wrap) - wilds) for p in view.phases_left
    )
