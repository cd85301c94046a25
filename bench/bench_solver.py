"""How fast the Five Crowns solver is, on typical hands and on the slowest hands we can find.

    python bench/bench_solver.py [--hands 2000] [--climb 40] [--seed 1]

Three questions are timed, each on its own solver (no memo shared between questions):
- split: the best split of a 13-card hand (a last turn, a Solitaire pile check);
- discard: the best discard of a 14-card hand and its split (a greedy bot's whole decision);
- go out: can a 14-card hand go out, and how.
Random hands give the mean and the tail. Worst cases come from a seeded hill climb that changes
one card at a time to make the search visit more states, plus hand-made hard hands (many equal
ranks in every suit, long runs with wilds). Timings are the best of several repeats, in ms of
CPU time (process time), so that other work on the machine disturbs them less.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence

from meldref.engine.cards import Card, fivecrowns_deck, parse_cards
from meldref.engine.fivecrowns.solver import (
    Natural,
    Solver,
    clear_tables,
    reset_counts,
    solved_states,
)

Question = Callable[[Sequence[Card], int, Natural], object]

HARD_HANDS = (  # (14 cards, wild rank)
    ("5S 8H 5* 5H 6* 6C 5D 7* 7C 10C 6D 5C 7H 6S", 10),
    ("3S 6C 6* 7H 6H 5H 5S 3H 5* 3C 3* 5* 5C 6S", 7),
    ("6* 4* 4D 5S 3S 3* 6C 6D 5* 4* 3C 4C QH 3D", 12),
    ("3H 3S 3C 3D 3* 5H 5S 5C 5D 5* X X QH KH", 12),
    ("3H 4H 5H 6H 7H 8H 9H 10H JH QH X X X 4S", 13),
    ("3H 4H 5H 6H 3S 4S 5S 6S 3C 4C 5C 6C X X", 13),
    ("KH KH KS QS QH JH X X X X X X 4D 9C", 13),
)


def split(hand: Sequence[Card], wild: int, natural: Natural) -> object:
    return Solver(hand[:13], wild, natural).split()


def discard(hand: Sequence[Card], wild: int, natural: Natural) -> object:
    solver = Solver(hand, wild, natural)
    card, _ = solver.best_discard()
    return solver.split(card)


def go_out(hand: Sequence[Card], wild: int, natural: Natural) -> object:
    return Solver(hand, wild, natural).go_out()


QUESTIONS: dict[str, Question] = {"split": split, "discard": discard, "go out": go_out}


def best_of(question: Question, hand: Sequence[Card], wild: int, natural: Natural,
            repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        clear_tables()  # a cold search: the worst case, not the tables' luck
        began = time.process_time()
        question(hand, wild, natural)
        best = min(best, time.process_time() - began)
    return best * 1000


def states(hand: Sequence[Card], wild: int) -> int:
    """How many states the search expands for a greedy decision: what the climb maximises."""
    reset_counts()
    solver = Solver(hand, wild)
    solver.best_discard()
    solver.go_out()
    return solved_states()


DECK = Counter(fivecrowns_deck())


def climb(rng: random.Random, steps: int) -> tuple[list[Card], int]:
    deck = fivecrowns_deck()
    wild = rng.randint(3, 13)
    hand = rng.sample(deck, 14)
    size = states(hand, wild)
    for _ in range(steps):
        trial = list(hand)
        trial[rng.randrange(14)] = rng.choice(deck)
        if Counter(trial) - DECK:
            continue  # more copies of a card than two decks hold
        trial_size = states(trial, wild)
        if trial_size >= size:
            hand, size = trial, trial_size
    return hand, wild


def hardest(rng: random.Random, climb_restarts: int, steps: int) -> list[tuple[list[Card], int]]:
    """The hand-made hard hands and `climb_restarts` climbed ones, most search states first."""
    hard = [(parse_cards(text), wild) for text, wild in HARD_HANDS]
    hard += [climb(rng, steps) for _ in range(climb_restarts)]
    hard.sort(key=lambda hw: -states(*hw))
    return hard


def worst_cases(climb: int = 0, steps: int = 150, seed: int = 1,
                hands: int = 5) -> list[tuple[str, float, str, int]]:
    """(question, ms, hand, wild rank) of each question's slowest hand among the `hands`
    hardest (bench/run.py's figure)."""
    hard = hardest(random.Random(seed), climb, steps)[:hands]
    out = []
    for name, question in QUESTIONS.items():
        timed = [(max(best_of(question, h, w, n) for n in ("none", "group")), h, w)  # type: ignore[arg-type]
                 for h, w in hard]
        ms, hand, wild = max(timed, key=lambda t: t[0])
        out.append((name, ms, " ".join(c.text for c in hand), wild))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=2000, help="random hands for the mean")
    parser.add_argument("--climb", type=int, default=40, help="hill-climb restarts")
    parser.add_argument("--steps", type=int, default=150, help="steps per restart")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    deck = fivecrowns_deck()

    print(f"random hands ({args.hands}, 14 cards, any wild rank, natural none/group):")
    samples = [(rng.sample(deck, 14), rng.randint(3, 13), rng.choice(["none", "group"]))
               for _ in range(args.hands)]
    for name, question in QUESTIONS.items():
        times = sorted(best_of(question, h, w, n, repeats=1) for h, w, n in samples)  # type: ignore[arg-type]
        p99 = times[int(len(times) * 0.99) - 1]
        print(f"  {name:8} mean {statistics.mean(times):6.2f} ms   p99 {p99:6.2f} ms   "
              f"max {times[-1]:6.2f} ms")

    hard = hardest(rng, args.climb, args.steps)
    print(f"\nworst cases ({len(HARD_HANDS)} hand-made + {args.climb} climbed; 5 slowest by "
          "search states):")
    worst = dict.fromkeys(QUESTIONS, 0.0)
    for hand, wild in hard[:5]:
        row = []
        for name, question in QUESTIONS.items():
            ms = max(best_of(question, hand, wild, n) for n in ("none", "group"))  # type: ignore[arg-type]
            worst[name] = max(worst[name], ms)
            row.append(f"{name} {ms:6.2f} ms")
        text = " ".join(c.text for c in hand)
        print(f"  {text:44} wild {wild:2}  states {states(hand, wild):5}  " + "  ".join(row))
    print("\nworst: " + "   ".join(f"{name} {ms:.2f} ms" for name, ms in worst.items()))


if __name__ == "__main__":
    main()
