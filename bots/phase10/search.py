"""The Phase 10 `search` bot: determinized Monte Carlo over the hand (bots/search.py).

Lay-downs, hits and Skips are the expert's (lay as soon as possible with every extra, hit all,
Skip the leader: a search would not change them). The draw and the discard are searched: the
expert's source and the other one, each played in the same guesses
of the unseen cards and rolled out by `greedy` seats to the end of the hand, or `HORIZON`
actions; the expert's discard and its two runners-up among the discards that feed the next seat
no more than its own choice and keep the phase as near (`SEARCH_DISCARDS`, `DISCARDS`). A
candidate's value is this seat's standing less its rivals' mean: `PHASE_WORTH` for a phase
completed (or laid, when the hand is still on), less the points scored (or held in hand).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Final

from meldref.bots.phase10.expert import Phase10ExpertBot, distance, unseen
from meldref.bots.phase10.greedy import GreedyBot
from meldref.bots.sdk import EngineBot, run
from meldref.bots.search import Memory, SearchBot, deal_table, roll_out
from meldref.engine.cards import SKIP, WILD, Card
from meldref.engine.common import DRAW_DISCARD, DRAW_PILE, Draw
from meldref.engine.game import JSON, rules_to_json
from meldref.engine.phase10.actions import Action, Discard
from meldref.engine.phase10.rules import card_points
from meldref.engine.phase10.state import Phase10State
from meldref.engine.phase10.view import Phase10View

DISCARDS: Final = 3  # discard candidates: the expert's and the best others
# Whether discards are searched too: yes, among those the expert's guard lets go as readily
# (`_other_discards`). Against the expert, on the same deal sets, draws and guarded discards
# searched scored 0.52 (0.47-0.57) on 100 (`--seed g26`) and 0.522 (0.489-0.556) on 200
# (`--seed h26`), draws alone 0.48 and 0.485, at about twice the time a decision (10-12 ms
# against 6). Searched among every card, discards scored 0.35-0.40 (docs/bots.md): the guessed
# rival hands are random, so the rollouts cannot see what a discard feeds the next seat.
SEARCH_DISCARDS: Final = True
HORIZON: Final = 90  # actions a rollout plays before the hand is judged as it stands
PHASE_WORTH: Final = 60.0  # points a phase completed is worth (a hand's points rarely pass it)
# Points a card still lacking for the phase costs a seat that has not laid when a rollout stops
# before the hand ends (0: only laid or not counts).
LEAF_STEP: Final = 0.0
# Whether the rollouts are played by the expert (`SearchBot.rollout_expert`): closer to how the
# table plays (the expert keeps what the next seat wants), about seven times slower a decision;
# on 40 deal sets against the expert, 0.50 (0.44-0.56), 0.475 without.
ROLLOUT_EXPERT: Final = False
# Shedding points: once a rival has laid and holds at most `DUMP_HAND` cards while this seat
# still lacks `DUMP_DISTANCE` cards or more, the hand is most likely lost and its cards will
# count: the discard is the costliest card that fits nothing on the table (0: never).
DUMP_HAND: Final = 0
DUMP_DISTANCE: Final = 2


class Phase10SearchBot(SearchBot[Phase10View, Action, dict[str, JSON], Phase10ExpertBot]):
    """Determinized Monte Carlo over the hand, the expert as its prior (module docstring)."""

    name = "search"
    rollout_expert = ROLLOUT_EXPERT
    # The module's options as attributes, so that a copy can differ in one (bench_strength.py's
    # --set): their meanings are at the constants above.
    discards: int = DISCARDS
    search_discards: bool = SEARCH_DISCARDS
    horizon: int = HORIZON
    phase_worth: float = PHASE_WORTH
    leaf_step: float = LEAF_STEP
    dump_hand: int = DUMP_HAND
    dump_distance: int = DUMP_DISTANCE
    expert: Phase10ExpertBot

    def __init__(self, seed: int | str = 0) -> None:
        super().__init__(seed, "phase10", Phase10ExpertBot(seed), GreedyBot(seed))

    def memory(self) -> Memory[Phase10View, Action]:
        return self.expert.memory

    def prior(self, view: Phase10View) -> Action:
        action = self.expert._choose(view)
        if isinstance(action, Discard) and action.card not in (SKIP, WILD):
            return self._shed(view) or action
        return action

    def _shed(self, view: Phase10View) -> Discard | None:
        """The costliest safe discard when the hand is most likely lost (`DUMP_HAND`)."""
        if not self.dump_hand or view.has_laid:
            return None
        rivals = [s for s in range(view.players) if s != view.seat and view.playing[s]]
        if not any(view.laid[s] is not None and view.hand_sizes[s] <= self.dump_hand
                   for s in rivals):
            return None
        wrap, phases = view.rules.run_wrap, view.phases_left
        plain = [c for c in dict.fromkeys(view.hand) if c not in (SKIP, WILD)]
        after = {c: distance(_without(view.hand, c), phases, wrap) for c in plain}
        if not after or min(after.values()) < self.dump_distance:
            return None
        safe = [c for c in plain if not any(g.fits(c) for g in view.table)]
        if not safe:
            return None
        return Discard(min(safe, key=lambda c: (-card_points(c), after[c], c.text)))

    def hand_key(self, view: Phase10View) -> object:
        return (view.hand_number, view.tiebreak)

    def table_cards(self, view: Phase10View) -> Counter[Card]:
        return Counter(c for g in view.table for c in g.meld.cards)

    def thrown(self, action: Action) -> Card | None:
        return action.card if isinstance(action, Discard) else None

    def candidates(self, view: Phase10View, prior: Action) -> list[Action]:
        if isinstance(prior, Draw):
            if len(view.draw_options()) < 2 or view.discard_top in (None, WILD, SKIP):
                return [prior]
            return [prior, DRAW_PILE if prior == DRAW_DISCARD else DRAW_DISCARD]
        if not self.search_discards or not isinstance(prior, Discard) or prior.card in (SKIP, WILD):
            return [prior]
        return [prior, *(Discard(c) for c in self._other_discards(view, prior.card))]

    def _other_discards(self, view: Phase10View, chosen: Card) -> list[Card]:
        """The expert's runners-up to `chosen`, among the cards its guard lets go as readily:
        none that feeds the next seat more (the guessed rival hands are drawn at random, so the
        rollouts cannot see what a discard feeds: searched without this, discards scored 0.35
        to 0.40 against the expert), none that leaves the phase further; the expert's best first."""
        risk = self.expert._feed_risk(view)
        plain = [c for c in dict.fromkeys(view.hand)
                 if c not in (SKIP, WILD, chosen) and risk(c) <= risk(chosen)]
        if view.has_laid:
            return sorted(plain, key=lambda c: (-card_points(c), c.text))[:self.discards - 1]
        # The expert's own ranking, its guard left out: every card here is as safe as `chosen`.
        cost = self.expert.discard_cost(view, lambda card: 0)
        near = cost(chosen)[0]
        return [c for c in sorted(plain, key=cost) if cost(c)[0] <= near][:self.discards - 1]

    def guess(self, view: Phase10View, rng: random.Random) -> dict[str, JSON]:
        """One determinization of the hand as a state snapshot."""
        left = unseen(view, self.expert.memory)
        hands, draw_pile, rest = deal_table(view, left, rng, self.rivals)
        pile = [c.text for c in rest[:8]]  # buried cards: only their count could matter
        if view.discard_top is not None:
            pile.append(view.discard_top.text)
        return {
            "game": "phase10", "rules": rules_to_json(view.rules), "players": view.players,
            "seed": f"search:{rng.random()}", "scores": list(view.scores),
            "completed": [list(c) for c in view.completed], "hand_number": view.hand_number,
            "dealer": view.dealer, "history": [], "tied": None, "outcome": None,
            "playing": [s for s in range(view.players) if view.playing[s]], "hands": hands,
            "draw_pile": draw_pile, "discard_pile": pile,
            "table": [{"id": g.id, "owner": g.owner, "group": str(g.meld)} for g in view.table],
            "phase_now": list(view.phases), "laid": list(view.laid), "skips": list(view.skips),
            "turns": view.turn, "reshuffles": 0, "to_move": view.seat,
            "decision": view.decision, "laid_this_turn": view.laid_this_turn,
        }

    def value(self, view: Phase10View, world: dict[str, JSON], action: Action) -> float:
        state = Phase10State.from_snapshot(world)
        before = [self._standing(state, s, None) for s in range(view.players)]
        state.apply(action)
        steps = [0]

        def stop(s: Phase10State) -> bool:
            steps[0] += 1
            return s.hand_number != view.hand_number or steps[0] > self.horizon

        roll_out(state, self.rollout_policies(view.players), stop)
        ended = state.hand_number != view.hand_number or state.outcome is not None
        gained = [self._standing(state, s, ended) - before[s] for s in range(view.players)]
        rivals = [gained[s] for s in range(view.players) if s != view.seat and view.playing[s]]
        return gained[view.seat] - sum(rivals) / max(1, len(rivals))

    def _standing(self, state: Phase10State, seat: int, ended: bool | None) -> float:
        """Phases and points so far; while the hand goes on (`ended` False), a phase laid
        counts as completed, the cards held as scored and each card a seat still lacks for
        its phase `LEAF_STEP`."""
        value = self.phase_worth * len(state.completed[seat]) - state.scores[seat]
        if ended is False:
            value += self.phase_worth * (state.laid[seat] is not None)
            value -= sum(card_points(c) for c in state.hands[seat])
            if self.leaf_step and state.laid[seat] is None and state.playing[seat]:
                seen = state.observation(seat)
                value -= self.leaf_step * distance(seen.hand, seen.phases_left, seen.rules.run_wrap)
        return value


def _without(cards: tuple[Card, ...], card: Card) -> list[Card]:
    rest = list(cards)
    rest.remove(card)
    return rest


def main() -> None:
    """Play as a protocol bot on standard input and output: `python3 bots/phase10/search.py` (its
    imports name their package, as the expert's do, so that it runs as a file).
    Installed, `python3 -m meldref.bots.serve search` plays the same moves."""
    run(EngineBot({"phase10": Phase10SearchBot}, name="phase10-search"))


if __name__ == "__main__":
    main()


__all__ = ["Phase10SearchBot"]
