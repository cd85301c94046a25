"""How many games a verdict needs: duplicate against plain deals, deal-set against per-game
statistics, win rate (score) against score margin.

    python bench/bench_verdicts.py [--games 800] [--quick] [--half-width 0.02]
                                   [--margin-half-width 5] [--seed 1]
    python bench/bench_verdicts.py --speed
    python bench/bench_verdicts.py --sprt 0,100 [--elos=-50,0,50,100,150,250] [--runs 200]

`--speed` times the standings and the cross table on synthetic results instead: 10,000 and
50,000 four-seat games against 1,000, as ratios (the fit needs only the matrix of wins, so
the cost grows with the games only through reading them).

For Phase 10 and Five Crowns at two seats, the built-in `greedy` bot plays a copy of itself
that makes a random legal move with probability 5% or 15% (`Noisy`), in-process:
- duplicate: deal d is played twice, the bots swapping seats (a deal set of 2 games);
- plain: every game a new deal, the seats alternating.
Each game gives greedy's score against the copy (1 placed better, 1/2 equal, 0 worse) and
its score margin (the copy's penalty points minus greedy's: positive = greedy better). For
each estimator the variance per game is measured (the variance of the mean times the games
behind it) and turned into the games a 95% interval of half-width h needs, n = (1.96 sd / h)^2,
and the games that separate the two bots (half-width = the difference, score - 1/2 or the
margin, pooled over both schedules so that only the variances differ between rows):
- plain, per game: the right statistic for plain deals;
- duplicate, per game: the games of a deal set counted as independent (today's Wilson
  interval and trinomial SPRT): the variance it *assumes*;
- duplicate, deal sets: the deal sets as the units (the pentanomial model).
Prints a markdown table (for the README) and one JSON line per figure.

`--sprt elo0,elo1` measures the Elo printed after an SPRT stop instead: at each true Elo of
`--elos`, `--runs` SPRTs on deal sets of 2 games (20% drawn, `sprt.reference` tilted to the
Elo) played until they stop; the plain estimate's and the stop-corrected one's mean error
(`sprt.stopped_estimate`) with standard errors, how often the corrected one lands above the
truth (median-unbiased: 50%), and how often its 95% interval holds the truth.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from meldref.bots import builtin_bot
from meldref.engine.game import find_game
from meldref.engine.play import play_inprocess
from meldref.verdicts.elo import Z95, ratio_estimate
from meldref.verdicts.games import GameResult
from meldref.verdicts.pairs import cross_table
from meldref.verdicts.ratings import standings
from meldref.verdicts.sprt import (
    SprtSpec,
    SprtTest,
    Verdict,
    reference,
    stopped_estimate,
    tilted,
)

GAMES = ("phase10", "fivecrowns")
NOISE = (0.05, 0.15)
PLAIN_SEEDS = 1_000_000  # plain deals are drawn from seeds far from the duplicate ones


class Noisy:
    """Plays like `inner`, except that with probability `noise` it makes a random legal
    move (from its own view, as any bot could)."""

    def __init__(self, inner: Any, noise: float, seed: int | str) -> None:
        self.inner = inner
        self.noise = noise
        self.rng = random.Random(f"noisy:{seed}")

    def act(self, view: Any) -> Any:
        if self.rng.random() < self.noise:
            return self.rng.choice(view.legal_actions())
        return self.inner.act(view)


@dataclass(frozen=True, slots=True)
class Game:
    """One game from greedy's side: its points and its score margin."""

    points: float
    margin: float


def play(game: str, noise: float, seed: int, greedy_first: bool) -> Game:
    info = find_game(game)
    greedy = builtin_bot(game, "greedy", seed)
    noisy = Noisy(builtin_bot(game, "greedy", seed), noise, f"{seed}:{greedy_first}")
    bots = [greedy, noisy] if greedy_first else [noisy, greedy]
    outcome, _ = play_inprocess(info, info.rules(), bots, seed)
    g, n = (0, 1) if greedy_first else (1, 0)
    places, scores = outcome.places, outcome.scores
    points = 1.0 if places[g] < places[n] else 0.5 if places[g] == places[n] else 0.0
    return Game(points, float(scores[n] - scores[g]))  # penalty points: lower is better


def play_duplicate(game: str, noise: float, deal_sets: int, seed: int) -> list[list[Game]]:
    return [[play(game, noise, seed + d, True), play(game, noise, seed + d, False)]
            for d in range(deal_sets)]


def play_plain(game: str, noise: float, games: int, seed: int) -> list[list[Game]]:
    return [[play(game, noise, seed + PLAIN_SEEDS + g, g % 2 == 0)] for g in range(games)]


@dataclass(frozen=True, slots=True)
class Figure:
    """One estimator's mean and variance per game, from `games` games."""

    game: str
    noise: float
    measure: str  # "score" or "margin"
    schedule: str  # "plain" or "duplicate"
    statistic: str  # "per game" or "deal sets"
    games: int
    mean: float
    var_per_game: float

    def games_for(self, half_width: float) -> float:
        return (Z95 / half_width) ** 2 * self.var_per_game if half_width > 0 else math.inf

    @property
    def effect(self) -> float:
        """The distance from "no difference": score - 1/2, or the margin itself."""
        return self.mean - 0.5 if self.measure == "score" else self.mean


def figures(game: str, noise: float, measure: str, schedule: str,
            units: Sequence[Sequence[Game]]) -> list[Figure]:
    value: Callable[[Game], float] = (lambda g: g.points) if measure == "score" else (
        lambda g: g.margin)
    per_game = [[value(g)] for unit in units for g in unit]
    ways = {"per game": per_game}
    if schedule == "duplicate":
        ways["deal sets"] = [[value(g) for g in unit] for unit in units]
    out = []
    for statistic, groups in ways.items():
        est, n = ratio_estimate([sum(u) for u in groups], [len(u) for u in groups])
        out.append(Figure(game, noise, measure, schedule, statistic, int(n), est.mean,
                          est.se**2 * n))
    return out


def pooled_effects(rows: Sequence[Figure]) -> dict[tuple[str, float, str], float]:
    """Per game, noise and measure: the effect over all games of both schedules."""
    out: dict[tuple[str, float, str], float] = {}
    for key in {(f.game, f.noise, f.measure) for f in rows}:
        per_game = [f for f in rows if (f.game, f.noise, f.measure) == key
                    and f.statistic == "per game"]
        out[key] = sum(f.effect * f.games for f in per_game) / sum(f.games for f in per_game)
    return out


def table(rows: Sequence[Figure], half_width: float, margin_half_width: float) -> str:
    head = ("| game | noise | measure | deals | statistic | games | mean | variance/game "
            "| games for +-h | games to separate | variance vs plain |")
    lines = [head, "|" + "---|" * 11]
    plain = {(f.game, f.noise, f.measure): f for f in rows if f.schedule == "plain"}
    effects = pooled_effects(rows)
    for f in rows:
        h = half_width if f.measure == "score" else margin_half_width
        key = (f.game, f.noise, f.measure)
        mean = f"{100 * f.mean:.1f}%" if f.measure == "score" else f"{f.mean:+.1f}"
        lines.append(
            f"| {f.game} | {100 * f.noise:.0f}% | {f.measure} | {f.schedule} | {f.statistic} "
            f"| {f.games} | {mean} | {f.var_per_game:.4g} | {f.games_for(h):,.0f} "
            f"| {f.games_for(abs(effects[key])):,.0f} "
            f"| {_ratio(f.var_per_game, plain[key].var_per_game)} |")
    return "\n".join(lines)


def _ratio(variance: float, plain: float) -> str:
    # A small run can give the plain schedule no variance at all (every game alike).
    return f"{variance / plain:.2f}" if plain else "-"


def synthetic(games: int, seats: int = 4, bots: int = 6, seed: int = 1) -> list[GameResult]:
    """`games` games of `seats` bots drawn from `bots`, deal sets of `seats` rotations,
    finishing orders from Plackett-Luce (Gumbel keys), scores 10 x place."""
    rng = random.Random(seed)
    names = [f"bot{i}" for i in range(bots)]
    out: list[GameResult] = []
    deal = 0
    while len(out) < games:
        table = rng.sample(names, seats)
        for r in range(seats):
            seated = tuple(table[r:] + table[:r])
            keys = [0.1 * names.index(b) - math.log(-math.log(rng.random())) for b in seated]
            places = tuple(1 + sum(1 for k in keys if k > x) for x in keys)
            out.append(GameResult(deal, seated, places, tuple(10.0 * p for p in places)))
        deal += 1
    return out[:games]


def speed() -> None:
    base = None
    for n in (1_000, 10_000, 50_000):
        games = synthetic(n)
        began = time.perf_counter()
        standings(games)
        cross_table(games)
        seconds = time.perf_counter() - began
        base = base or seconds
        print(f"{n:>6} games: standings + cross table {seconds:6.2f} s  "
              f"x{seconds / base:.2f} of 1,000 games")


def simulate_sprts(spec: SprtSpec, elo: float, runs: int, seed: int
                   ) -> list[tuple[list[int], Verdict]]:
    """`runs` SPRTs on deal sets of 2 games (20% drawn, tilted to `elo`) until they stop:
    each one's counts of deal sets by half-points, and its verdict."""
    chances = np.array(tilted(reference(2, 0.2), elo, spec.model))
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(runs):
        test = SprtTest(spec, 2)
        while (verdict := test.verdict()) is None:
            test.add(int(rng.choice(5, p=chances)))
        out.append((list(test.counts), verdict))
    return out


def sprt_errors(spec: SprtSpec, elo: float, runs: int, seed: int) -> dict[str, Any]:
    """The plain and the stop-corrected Elo's errors over `runs` simulated SPRTs."""
    tests = simulate_sprts(spec, elo, runs, seed)
    estimates = [stopped_estimate(spec, counts) for counts, _ in tests]
    # A plain estimate is infinite after a run of all wins: clipped to +-1500, as printed.
    plain = np.clip([e.plain - elo for e in estimates], -1500, 1500)
    corrected = np.array([e.elo - elo for e in estimates])
    covered = [(e.low is None or e.low <= elo) and (e.high is None or elo <= e.high)
               for e in estimates]

    def se(x: Any) -> float:
        return round(float(np.std(x, ddof=1) / math.sqrt(len(x))), 1)

    return {"elo0": spec.elo0, "elo1": spec.elo1, "true_elo": elo, "runs": runs,
            "deal_sets": round(float(np.mean([sum(c) for c, _ in tests])), 1),
            "plain_error": round(float(np.mean(plain)), 1), "plain_se": se(plain),
            "corrected_error": round(float(np.mean(corrected)), 1),
            "corrected_se": se(corrected),
            "corrected_above": round(float(np.mean(corrected > 0)), 3),
            "covered": round(float(np.mean(covered)), 3)}


def sprt_table(bounds: str, elos: str, runs: int, seed: int) -> None:
    elo0, elo1 = (float(x) for x in bounds.split(","))
    spec = SprtSpec(elo0, elo1)
    rows = [sprt_errors(spec, float(e), runs, seed) for e in elos.split(",")]
    print(f"| true Elo | deal sets | plain error | corrected error | corrected above the "
          f"truth | corrected 95% interval covers |  (SPRT [{elo0:g}, {elo1:g}], {runs} runs)")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['true_elo']:+g} | {r['deal_sets']:.1f} | {r['plain_error']:+.1f} +- "
              f"{r['plain_se']:.1f} | {r['corrected_error']:+.1f} +- {r['corrected_se']:.1f} "
              f"| {100 * r['corrected_above']:.1f}% | {100 * r['covered']:.1f}% |")
    for r in rows:
        print(json.dumps(r))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=800,
                        help="games per setting and schedule (duplicate: rounded to pairs)")
    parser.add_argument("--quick", action="store_true",
                        help="40 games per setting and schedule, to see it work")
    parser.add_argument("--half-width", type=float, default=0.02,
                        help="the score interval's half-width h (0.02: +-2 percentage points)")
    parser.add_argument("--margin-half-width", type=float, default=5.0,
                        help="the margin interval's half-width h, in points per game")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", choices=GAMES, action="append",
                        help="only this game (repeatable)")
    parser.add_argument("--speed", action="store_true",
                        help="time standings and cross table on synthetic results instead")
    parser.add_argument("--sprt", metavar="ELO0,ELO1",
                        help="measure the Elo printed after SPRT stops instead")
    parser.add_argument("--elos", default="-50,0,50,100,150,250",
                        help="with --sprt: the true Elos simulated")
    parser.add_argument("--runs", type=int, default=200, help="with --sprt: SPRTs per Elo")
    args = parser.parse_args(argv)
    if args.speed:
        speed()
        return
    if args.sprt:
        sprt_table(args.sprt, args.elos, args.runs, args.seed)
        return
    games = 40 if args.quick else args.games
    rows: list[Figure] = []
    began = time.perf_counter()
    for game in args.game or GAMES:
        for noise in NOISE:
            duplicate = play_duplicate(game, noise, games // 2, args.seed)
            plain = play_plain(game, noise, games, args.seed)
            for measure in ("score", "margin"):
                rows += figures(game, noise, measure, "plain", plain)
                rows += figures(game, noise, measure, "duplicate", duplicate)
            print(f"# {game} noise {noise:g}: {len(duplicate) * 2 + len(plain)} games, "
                  f"{time.perf_counter() - began:.0f} s", file=sys.stderr)
    print(f"Half-widths: score +-{args.half_width:g}, margin +-{args.margin_half_width:g} "
          f"points per game; {games} games per setting and schedule, seed {args.seed}.\n")
    print(table(rows, args.half_width, args.margin_half_width))
    print()
    effects = pooled_effects(rows)
    for f in rows:
        h = args.half_width if f.measure == "score" else args.margin_half_width
        effect = effects[(f.game, f.noise, f.measure)]
        print(json.dumps({"game": f.game, "noise": f.noise, "measure": f.measure,
                          "schedule": f.schedule, "statistic": f.statistic, "games": f.games,
                          "mean": round(f.mean, 6), "var_per_game": round(f.var_per_game, 6),
                          "half_width": h, "games_for_half_width": round(f.games_for(h)),
                          "pooled_effect": round(effect, 6),
                          "games_to_separate": round(f.games_for(abs(effect)))
                          if effect else None}))


if __name__ == "__main__":
    main()
