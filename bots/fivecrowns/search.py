"""The Five Crowns `search` bot: determinized Monte Carlo over the round (bots/search.py).

It goes out as soon as the solver finds a way, and lays the best groups on a last turn (the
expert's moves: nothing to search). Every other decision, the draw and the discard, is searched:
the candidates are the expert's choice and its close rivals (the other source to draw from; the
non-wild discards leaving the fewest points now), each played in the same guesses of the unseen
cards and rolled out by `greedy` seats to the end of the round. A candidate's value is the
points the rivals score this round less the points this seat scores (their mean, at a table of
more), so the bot plays for the round's margin, which is what the game's total adds up.

It never throws a wild while the round goes on unless the throw goes out: wilds are no
candidates (`keep_wilds`), as for the expert.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Final

from meldref.bots.fivecrowns.expert import FiveCrownsExpertBot, is_wild, keep_wilds, unseen
from meldref.bots.fivecrowns.greedy import FiveCrownsGreedyBot
from meldref.bots.sdk import EngineBot, run
from meldref.bots.search import Memory, SearchBot, deal_table, roll_out
from meldref.engine.cards import Card
from meldref.engine.common import DRAW_DISCARD, DRAW_PILE, Draw
from meldref.engine.fivecrowns.actions import Action, Discard
from meldref.engine.fivecrowns.rules import FiveCrownsRules
from meldref.engine.fivecrowns.state import FiveCrownsState
from meldref.engine.fivecrowns.view import FiveCrownsView
from meldref.engine.game import JSON, rules_to_json

DISCARDS: Final = 3  # discard candidates: the expert's and the best others by points now
# Guesses a decision without a clock (a clock allows more: bots/search.py). With 8, on the same
# 20 deal sets against the expert, `bench/bench_strength.py --game fivecrowns --games 40 --pair
# search:expert`: 0.475 (0.43-0.52) with seeds s26 and u26 alike; with 32, 0.55 (0.48-0.62)
# with both (64: 0.55 again, twice the time).
GUESSES: Final = 32
# It searches at up to 4 seats in play (the shared default is heads-up only): at the docs'
# 4-seat table, in balanced seatings, searching took 1.7 more first places in a hundred than
# playing the expert's moves (standard error 1.1, 30 deal sets of --seed t41); at more seats
# it was not measured, and plays the expert's moves.
SEARCH_SEATS: Final = 4


class FiveCrownsSearchBot(SearchBot[FiveCrownsView, Action, dict[str, JSON], FiveCrownsExpertBot]):
    """Determinized Monte Carlo over the round, the expert as its prior (module docstring)."""

    name = "search"
    guesses = GUESSES
    search_seats = SEARCH_SEATS
    discards: int = DISCARDS  # an attribute too, so that a copy can differ (--set)
    expert: FiveCrownsExpertBot

    def __init__(self, seed: int | str = 0) -> None:
        super().__init__(seed, "fivecrowns", FiveCrownsExpertBot(seed), FiveCrownsGreedyBot(seed))

    def memory(self) -> Memory[FiveCrownsView, Action]:
        return self.expert.memory

    def prior(self, view: FiveCrownsView) -> Action:
        return self.expert._draw(view) if view.decision == "draw" else self.expert._discard(view)

    def hand_key(self, view: FiveCrownsView) -> object:
        return (view.round, view.dealer)

    def table_cards(self, view: FiveCrownsView) -> Counter[Card]:
        return Counter(c for _, meld in view.table for c in meld.cards)

    def thrown(self, action: Action) -> Card | None:
        return action.card if isinstance(action, Discard) else None

    def candidates(self, view: FiveCrownsView, prior: Action) -> list[Action]:
        if isinstance(prior, Draw):
            if DRAW_DISCARD not in view.draw_options() or view.discard_top is None:
                return [prior]
            if is_wild(view, view.discard_top):
                return [DRAW_DISCARD]  # a wild is never worse to hold than a card drawn blind
            return [prior, DRAW_PILE if prior == DRAW_DISCARD else DRAW_DISCARD]
        if prior.groups or view.last_turn:  # going out, or the last turn's best: no search
            return [prior]
        solver = view.solver()
        ranked = sorted(keep_wilds(view, solver.discards()),
                        key=lambda c: (solver.points(c), c.text))
        others = [Discard(c) for c in ranked if c != prior.card][:self.discards - 1]
        return [prior, *others]

    def guess(self, view: FiveCrownsView, rng: random.Random) -> dict[str, JSON]:
        """One determinization of the round as a state snapshot."""
        left = unseen(view, self.expert.memory)
        hands, draw_pile, rest = deal_table(view, left, rng, self.rivals)
        buried = max(0, view.discard_pile_size - (view.discard_top is not None))
        dead = list(self.expert.memory.dead.elements())
        pile = ([c.text for c in (dead + rest)[:buried]]
                + ([view.discard_top.text] if view.discard_top is not None else []))
        rules = FiveCrownsRules(natural=view.natural, turn_cap=view.turn_cap,
                                party="on" if view.decks == 4 else "off")
        return {
            "game": "fivecrowns", "rules": rules_to_json(rules), "players": view.players,
            "seed": f"search:{rng.random()}", "scores": list(view.scores), "round": view.round,
            "dealer": view.dealer, "history": [], "tied": None, "tiebreak_points": None,
            "outcome": None, "playing": [s for s in range(view.players) if view.playing[s]],
            "hands": hands, "draw_pile": draw_pile, "discard_pile": pile,
            "table": [{"seat": s, "group": str(m)} for s, m in view.table],
            "went_out": view.went_out, "had_last_turn": list(view.had_last_turn),
            "turns": view.turn, "reshuffles": 0, "to_move": view.seat,
            "decision": view.decision,
        }

    def value(self, view: FiveCrownsView, world: dict[str, JSON], action: Action) -> float:
        """The rivals' points this round less this seat's, after `action` and a rollout."""
        state = FiveCrownsState.from_snapshot(world)
        state.apply(action)
        roll_out(state, self.rollout_policies(view.players), lambda s: s.round != view.round)
        return round_margin(view, state)


def round_margin(view: FiveCrownsView, state: FiveCrownsState) -> float:
    """The rivals' points (their mean) less this seat's, scored since `view` in `state` (a
    guess made from `view` and played on to the round's end): the round's margin."""
    gained = [after - b for after, b in zip(state.scores, view.scores, strict=True)]
    rivals = [gained[s] for s in range(view.players) if s != view.seat and view.playing[s]]
    return (sum(rivals) / max(1, len(rivals))) - gained[view.seat]


def main() -> None:
    """Play as a protocol bot on standard input and output: `python3 bots/fivecrowns/search.py` (its
    imports name their package, as the expert's do, so that it runs as a file).
    Installed, `python3 -m meldref.bots.serve search` plays the same moves."""
    run(EngineBot({"fivecrowns": FiveCrownsSearchBot}, name="fivecrowns-search"))


if __name__ == "__main__":
    main()


__all__ = ["FiveCrownsSearchBot", "round_margin"]
