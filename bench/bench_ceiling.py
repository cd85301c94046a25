"""What the hidden cards are worth to the experts' rules: a ceiling for bots built on them, and
what their guard against feeding the next seat is worth.

    python bench/bench_ceiling.py [--game phase10|fivecrowns] [--games 600] [--jobs 2]
                                  [--seed c26] [--only NAMES] [--guard]

Heads-up, on duplicate deals (each deal twice, seats swapped, as bench/bench_strength.py plays
them), `builtin:expert` against a copy of itself that is changed in one way. Phase 10:

- `peek-feed`: its guess at what feeds the next seat (0, 1 or 2 by the numbers and colours that
  seat showed it wants or not) replaced by the truth, read from the rival's real hand: 2 when
  the card brings that hand closer to its phase, else 0. It cheats: no bot can know this.
- `peek-all`: that, and its count of the cards still to come (its "outs") exact: the rival's
  hand taken out of the cards it has not seen. It cheats too.
- `peek-next`: it knows the card the draw pile gives next, and takes the discard only when
  that leaves its phase nearer than the card from the pile would. It cheats too.
- `no-feed`: no guard at all (every card 0): what the guard is worth.
- `pass-shun`: a card of its own that the next seat left on the discard pile (drawing from the
  pile instead) marks that card's number (colour) as not wanted, as a card the seat threw
  does; heads-up, where the views tell who passed.
- `no-wanted`: the other way: a card of its own that the next seat took marks nothing (its
  guard keeps only what that seat threw, and the table once it has laid): what reading the
  rival's pickups is worth.
- `feed-3`, `feed-10`: the guard weighed at 3 or 10 outs instead of 6; `points`: before laying,
  each point a discard sheds worth half an out (the expert weighs points only between equals).

Five Crowns (the expert keeps from the next seat a card of a rank and suit it saw that seat
take, at a cost of `FEED_COST` points, its `feed_cost`):
- `peek-feed`: the cards kept from the next seat are those that lower the points its real hand
  leaves (after its best discard), at the expert's cost; `peek-feed-heavy`: the same at ten
  times that cost. Both cheat.
- `no-feed`: no guard.
- `budget-200`: 200 solver searches a decision instead of 60; `candidates-5`: five discards
  looked at one draw ahead instead of three (and 150 searches); `end-0.3`, `end-0.8`: the chance
  that the round ends before its next turn rated lower or higher (`END_RATE` 0.54); `feed-5`:
  the guard worth 5 points instead of 2 (`no-feed` is 0).

Both games, `search` told the truth (it cheats): `truth`, the search bot (`builtin:search`)
whose every guess of the hidden cards is the real game, the rivals' hands and the draw pile's
order as they are, so each candidate's rollout plays the real cards (two such guesses a
decision: the same rollout twice, which `search`'s rule needs to judge an edge; its rollouts
by `greedy` as it ships); `truth-expert`, the same with rollouts by the expert, the rival's own
policy: a candidate's value is then nearly what the rest of the hand or round would really
bring; `truth-hands`, rollouts by `greedy`, every guess the rivals' real hands with the draw
pile shuffled (the guesses of `search` as it ships, a decision, each a new order): what knowing
the rivals' hands, and nothing the future holds, gives the search. No bot can know the pile's
order: `truth` bounds determinized search over the expert's candidates, and `truth-hands`
bounds what inferring the rivals' hands better could give it. `search`: the search bot as it
ships, told nothing, on the same deals: the baseline of the three. Phase 10's `peek-search`:
the search as it ships, its guesses its own, but its expert (the prior, and the guard its
discards are searched within) the `peek-feed` copy: what the search reaches when it knows what
feeds the next seat. These run only when named (`--only`): they search, and take minutes where
the experts' copies take seconds.

`--guard` (Phase 10) measures the guard itself instead: in games between two experts, at each
discard before either seat has laid, every card of the hand is put in the class the guard gives
it (0: the next seat showed it does not want its number, 2: that it does, 1: neither) and judged
against the rival's real hand (would it bring the phase closer?); the share that would, a class,
among the cards held and among the cards thrown.

Each prints one JSON line (the changed seat's score: 1 a game won alone, 1/2 shared, and its 95%
interval over deal sets), then a markdown table. docs/bots.md quotes a run: the issue's target
for `search` (0.65 against `expert`) lies above what `peek-all` scores.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from meldref.bots.fivecrowns.expert import FiveCrownsExpertBot
from meldref.bots.fivecrowns.search import FiveCrownsSearchBot
from meldref.bots.phase10 import expert as expert_module
from meldref.bots.phase10.expert import Phase10ExpertBot, distance
from meldref.bots.phase10.search import Phase10SearchBot
from meldref.engine.cards import SKIP, WILD, Card
from meldref.engine.common import DRAW_DISCARD, DRAW_PILE
from meldref.engine.fivecrowns.solver import Solver
from meldref.engine.fivecrowns.view import FiveCrownsView
from meldref.engine.game import find_game
from meldref.engine.phase10.actions import Discard
from meldref.engine.phase10.view import Phase10View

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_strength import game_result, interval, option_value

# Copies that differ only in a weight: what tuning the experts' rules could still give.
WEIGHTS: dict[str, dict[str, dict[str, float]]] = {
    "phase10": {"feed-3": {"feed_weight": 3.0}, "feed-10": {"feed_weight": 10.0},
                "points": {"points_weight": 0.5}},
    "fivecrowns": {"budget-200": {"budget": 200}, "candidates-5": {"candidates": 5, "budget": 150},
                   "end-0.3": {"end_rate": 0.3}, "end-0.8": {"end_rate": 0.8},
                   "feed-5": {"feed_cost": 5.0}},
}
# `search` with the real game as its guesses, and told nothing (the baseline)
TRUTHS = ("truth", "truth-expert", "truth-hands", "search")
SEARCHED = (*TRUTHS, "peek-search")  # the variants that search: minutes where the rest take seconds
VARIANTS = {"phase10": ("peek-feed", "peek-all", "peek-next", "no-feed", "pass-shun", "no-wanted",
                        *WEIGHTS["phase10"], *SEARCHED),
            "fivecrowns": ("peek-feed", "peek-feed-heavy", "no-feed", *WEIGHTS["fivecrowns"],
                           *TRUTHS)}
PEEKS = ("peek-feed", "peek-all", "peek-feed-heavy")  # the variants that read the rival's hand


def weigh(bot: Any, game: str, variant: str) -> None:
    """Give `bot` the weights of `variant` (none for the variants that change a rule)."""
    for name, value in WEIGHTS[game].get(variant, {}).items():
        setattr(bot, name, option_value(bot, name, str(value)))


class PassMemory(expert_module.HandMemory):
    """The expert's memory of the hand, where a card of this seat's that the next seat left on
    the discard pile (it drew from the pile) marks its trait as not wanted (`pass-shun`)."""

    def _after_others(self, view: Phase10View) -> None:
        mine, rival = self.my_discard, expert_module._previous_seat(view)
        if (view.players == 2 and mine is not None and rival is not None
                and self.pile_after_draw >= 0 and view.discard_top is not mine
                and view.draw_pile_size == self.pile_after_draw - 1):
            self.unwanted.setdefault(rival, Counter())[expert_module._trait(view, rival, mine)] += 1
        super()._after_others(view)


class ForgetfulMemory(expert_module.HandMemory):
    """The expert's memory of the hand, where a card the next seat took from this seat marks
    nothing (`no-wanted`)."""

    def _after_others(self, view: Phase10View) -> None:
        super()._after_others(view)
        self.wanted.clear()


class ChangedExpert(Phase10ExpertBot):
    """The expert with one change (`VARIANTS`); `state` is the real game, set before each
    decision by `play`, for the variants that peek."""

    def __init__(self, seed: int | str, variant: str) -> None:
        super().__init__(seed)
        self.variant = variant
        self.state: Any = None
        weigh(self, "phase10", variant)
        if variant == "pass-shun":
            self.memory = PassMemory()
        elif variant == "no-wanted":
            self.memory = ForgetfulMemory()

    def _draw(self, view: Phase10View) -> Any:
        if self.variant != "peek-next" or view.has_laid or not self.state.draw_pile:
            return super()._draw(view)
        top = view.discard_top
        if len(view.draw_options()) == 1 or top is None or top is WILD:
            return super()._draw(view)
        # It knows the card the draw pile gives next: the discard only when it is better.
        wrap, phases = view.rules.run_wrap, view.phases_left

        def after(card: Card) -> int:
            taken = [*view.hand, card]
            return min(distance(expert_module._without(taken, c), phases, wrap)
                       for c in dict.fromkeys(taken) if c is not SKIP)

        return DRAW_DISCARD if after(top) < after(self.state.draw_pile[-1]) else DRAW_PILE

    def _feed_risk(self, view: Phase10View) -> Callable[[Card], int]:
        guess: Callable[[Card], int] = super()._feed_risk(view)
        if self.variant == "no-feed":
            return lambda card: 0
        if self.variant not in PEEKS:
            return guess
        rival = expert_module._next_seat(view)
        if rival == view.seat or view.laid[rival] is not None:
            return guess  # a rival that has laid: what fits the table is known to all
        hand, phases = list(self.state.hands[rival]), (view.phases[rival],)
        wrap = view.rules.run_wrap
        now = distance(hand, phases, wrap)
        return lambda card: 2 if distance([*hand, card], phases, wrap) < now else 0

    def _discard(self, view: Phase10View) -> Any:
        if self.variant != "peek-all":
            return super()._discard(view)
        seen_unseen = expert_module.unseen
        rivals = Counter(c for s, hand in enumerate(self.state.hands) if s != view.seat
                         for c in hand)
        expert_module.unseen = lambda v, memory: +(seen_unseen(v, memory) - rivals)
        try:
            return super()._discard(view)
        finally:
            expert_module.unseen = seen_unseen


class Wanted(dict[tuple[int, str], int]):
    """The Five Crowns expert's memory of what the next seat wants (a Counter by rank and
    suit), answered instead from the rival's real hand: 1 when one of this seat's cards of
    that rank and suit lowers the points the hand leaves, else 0; or always 0 (`none`)."""

    def __init__(self, view: FiveCrownsView, rival: tuple[Card, ...] | None) -> None:
        super().__init__()
        self.view, self.rival = view, rival
        self.now = Solver(rival, view.wild_rank, view.natural).points() if rival else 0

    def __missing__(self, key: tuple[int, str]) -> int:
        mine = [c for c in self.view.hand if (c.rank, c.suit) == key]
        if not mine or not self.rival:
            return 0
        after = Solver((*self.rival, mine[0]), self.view.wild_rank,
                       self.view.natural).best_discard()[1]
        return int(after < self.now)


class ChangedFiveCrownsExpert(FiveCrownsExpertBot):
    """The Five Crowns expert with one change (`VARIANTS`); `state` as for Phase 10."""

    def __init__(self, seed: int | str, variant: str) -> None:
        super().__init__(seed)
        self.variant = variant
        self.state: Any = None
        weigh(self, "fivecrowns", variant)
        if variant == "peek-feed-heavy":
            self.feed_cost *= 10

    def _discard(self, view: FiveCrownsView) -> Any:
        if self.variant not in (*PEEKS, "no-feed"):
            return super()._discard(view)
        kept = self.memory.wanted
        rival = None if self.variant == "no-feed" else tuple(
            self.state.hands[(view.seat + 1) % view.players])
        self.memory.wanted = Wanted(view, rival)  # type: ignore[assignment]
        try:
            return super()._discard(view)
        finally:
            self.memory.wanted = kept


class Truthful:
    """`search` whose guesses are the real game (`TRUTHS`): mixed into a game's search bot."""

    state: Any = None
    variant = "truth"
    guesses: int
    rollout_expert: bool

    def told(self, variant: str) -> None:
        self.variant = variant
        self.rollout_expert = variant == "truth-expert"
        if variant in ("truth", "truth-expert"):
            self.guesses = 2  # the same guess twice: `search`'s rule judges an edge over two

    def guess(self, view: Any, rng: Any) -> dict[str, Any]:
        if self.variant == "search":  # told nothing: the baseline, on the same deals
            return super().guess(view, rng)  # type: ignore[misc,no-any-return]
        world = dict(self.state.snapshot())
        if self.variant == "truth-hands":  # the hands as they are, the pile's order guessed
            world["draw_pile"] = rng.sample(world["draw_pile"], len(world["draw_pile"]))
            world["seed"] = f"search:{rng.random()}"
        return world


class TruthfulPhase10Search(Truthful, Phase10SearchBot):
    pass


class TruthfulFiveCrownsSearch(Truthful, FiveCrownsSearchBot):
    pass


class PeekingPhase10Search(Phase10SearchBot):
    """`search` whose expert (its prior, and the guard its discards are searched within) is the
    `peek-feed` copy: it knows what feeds the next seat, its guesses are its own (`peek-search`).
    `play` sets `state`, the real game, which only the expert reads."""

    def __init__(self, seed: int | str) -> None:
        super().__init__(seed)
        self.expert = ChangedExpert(seed, "peek-feed")

    @property
    def state(self) -> Any:
        return self.expert.state

    @state.setter
    def state(self, state: Any) -> None:
        self.expert.state = state


EXPERTS: dict[str, Callable[[str], Any]] = {
    "phase10": Phase10ExpertBot, "fivecrowns": FiveCrownsExpertBot}
CHANGED: dict[str, Callable[[str, str], Any]] = {
    "phase10": ChangedExpert, "fivecrowns": ChangedFiveCrownsExpert}
SEARCHES: dict[str, Callable[[str], Any]] = {
    "phase10": TruthfulPhase10Search, "fivecrowns": TruthfulFiveCrownsSearch}


def changed_bot(game: str, seed: str, variant: str) -> Any:
    """The changed expert of `variant`, or `search` told the truth."""
    if variant == "peek-search":
        return PeekingPhase10Search(seed)
    if variant not in TRUTHS:
        return CHANGED[game](seed, variant)
    bot = SEARCHES[game](seed)
    bot.told(variant)
    return bot


def play(game: str, variant: str, deal: str, changed_seat: int) -> float:
    """One game of `deal`, the changed expert at `changed_seat`: its result (1, 1/2 or 0)."""
    info = find_game(game)
    bots = [EXPERTS[game](f"{deal}:{k}") for k in range(2)]
    changed = changed_bot(game, f"{deal}:{changed_seat}", variant)
    bots[changed_seat] = changed
    state = info.new_game(info.rules(), 2, deal)
    while (seat := state.to_move) is not None:
        changed.state = state
        state.apply(bots[seat].act(state.observation(seat)))
    return game_result(state.outcome.places, changed_seat)


def deal_set(job: tuple[str, str, str]) -> float:
    game, variant, deal = job
    return (play(game, variant, deal, 0) + play(game, variant, deal, 1)) / 2


def measure(game: str, variant: str, deals: Sequence[str], jobs: int) -> dict[str, Any]:
    with ProcessPoolExecutor(jobs) as pool:
        results = list(pool.map(deal_set, [(game, variant, d) for d in deals], chunksize=2))
    mean, low, high = interval(results)
    return {"variant": variant, "against": "expert", "game": game, "games": 2 * len(deals),
            "deal_sets": len(deals), "score": round(mean, 3), "low": round(low, 3),
            "high": round(high, 3)}


def guard_classes(deals: Sequence[str]) -> dict[str, Counter[tuple[int, bool]]]:
    """Phase 10 (`--guard`): by the guard's class of a card (0, 1, 2) and whether the card
    would bring the next seat's real hand closer to its phase, how many cards the deciding
    expert held and how many it threw, at its discards before either seat laid."""
    info = find_game("phase10")
    counts: dict[str, Counter[tuple[int, bool]]] = {"held": Counter(), "thrown": Counter()}
    for deal in deals:
        bots = [Phase10ExpertBot(f"{deal}:{k}") for k in range(2)]
        state = info.new_game(info.rules(), 2, deal)
        while (seat := state.to_move) is not None:
            view = state.observation(seat)
            action = bots[seat].act(view)
            if (isinstance(action, Discard) and view.laid[1 - seat] is None
                    and view.laid[seat] is None):
                _judge(view, bots[seat]._feed_risk(view), list(state.hands[1 - seat]),
                       action.card, counts)
            state.apply(action)
    return counts


def _judge(view: Phase10View, risk: Callable[[Card], int], rival: list[Card], thrown: Card,
           counts: dict[str, Counter[tuple[int, bool]]]) -> None:
    """Count each plain card of the hand, and the one thrown, by its class and the truth."""
    phases, wrap = (view.phases[1 - view.seat],), view.rules.run_wrap
    now = distance(rival, phases, wrap)
    for card in set(view.hand) - {SKIP, WILD}:
        helps = distance([*rival, card], phases, wrap) < now
        counts["held"][risk(card), helps] += 1
        if card is thrown:
            counts["thrown"][risk(card), helps] += 1


def print_guard(deals: Sequence[str]) -> None:
    counts = guard_classes(deals)
    print(f"| the guard's class (Phase 10, {len(deals)} games) | cards held | would help "
          "the next seat | cards thrown | would help |")
    print("|---|---|---|---|---|")
    for risk, name in ((0, "0: not wanted"), (1, "1: not known"), (2, "2: wanted")):
        row = []
        for kind in ("held", "thrown"):
            total = counts[kind][risk, True] + counts[kind][risk, False]
            share = 100 * counts[kind][risk, True] / total if total else 0.0
            row += [f"{total:,}", f"{share:.1f}%"]
        print(f"| {name} | " + " | ".join(row) + " |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="phase10", choices=list(VARIANTS))
    parser.add_argument("--games", type=int, default=600, help="games a variant (2 a deal set)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--seed", default="c26", help="names the deals")
    parser.add_argument("--only", default=None, help="variants, comma-separated (default: "
                        "all but the searches, which are named: " + ", ".join(SEARCHED) + ")")
    parser.add_argument("--guard", action="store_true", help="Phase 10: how often each class of "
                        "the guard against feeding the next seat would feed it (--games games "
                        "between two experts)")
    args = parser.parse_args(argv)
    if args.guard:
        if args.game != "phase10":
            parser.error("--guard measures Phase 10's guard")
        print_guard([f"{args.seed}-{i}" for i in range(args.games)])
        return 0
    known = VARIANTS[args.game]
    default = ",".join(v for v in known if v not in SEARCHED)  # the searches take far longer
    variants = [v for v in (args.only or default).split(",") if v]
    unknown = [v for v in variants if v not in known]
    if unknown or args.games < 4:
        parser.error(f"{args.game}'s variants are {', '.join(known)}" if unknown
                     else "--games at least 4 (two deal sets: an interval needs two)")
    deals = [f"{args.seed}-{i}" for i in range(args.games // 2)]
    rows = []
    for variant in variants:
        row = measure(args.game, variant, deals, args.jobs)
        print(json.dumps(row), flush=True)
        rows.append(row)
    print("\n| game | the expert, changed | against | games | deal sets | score (95% interval) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['game']} | {r['variant']} | expert | {r['games']} | {r['deal_sets']} | "
              f"{100 * r['score']:.1f}% ({100 * r['low']:.1f}-{100 * r['high']:.1f}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
