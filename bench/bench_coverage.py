"""How often the printed 95% intervals cover the truth, by field, table size and deal sets.

    python bench/bench_coverage.py [--runs 300] [--deals 1,2,3,5,10,20,40] [--seats 2,4]
                                   [--fields "2 apart,5 spread"] [--seed 1] [--quick]

Simulated bots of known strength play duplicate deals through the schedule's balanced
seatings (`verdicts.seatings`): in a game each seat gets the deal's luck for that seat (one
normal draw per seat and deal, shared by every seating of the deal, as cards are) and every bot
its strength plus a Gumbel draw; places follow the sums (Plackett-Luce when the luck is 0).
Every table of `seats` bots of a field plays, each table its own deals. The fields (`FIELDS`,
strengths in log-strength, 100 Elo = 0.23): two bots equal or 130 Elo apart, five spread
(0 .. 1.0), six or eight equal, 100 or 150 Elo apart, and six 100 apart with a near-hopeless
seventh (1,100 Elo under the weakest). The truth is what the statistic estimates, measured
once on a long run (`--truth` games in all): each pair's expected score (the pair's score
interval), the Bradley-Terry ratings on the standings' own scale (the median bot at zero:
the rating intervals) and each bot's rank in them (the rank intervals). For each number of
deals per table, `--runs` tournaments are simulated and read by `verdicts` (cross table and
standings, as `meldref tournament` prints them); a row gives, over every interval the
standings print, how often it holds the truth ("coverage", target 93-97%), how many of them
are one-sided bounds (a bot that (almost) never placed above another, or below), and how
often the standings print no interval and say why instead ("warned"). One-sided bounds count
as printed, covered when the truth is on their side.

The script also runs against an older meldref (one without `no_interval`): there every
interval counts as printed, which measures the old intervals the same way.

Prints a markdown table (for docs/verdicts.md) and one JSON line per row.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from meldref.contest.matchmaking import MIN_SHARE, PAIR_CAP
from meldref.contest.ratings import LadderRatings
from meldref.verdicts.games import GameResult
from meldref.verdicts.pairs import HeadToHead, cross_table
from meldref.verdicts.ratings import standings
from meldref.verdicts.seatings import seatings

LUCK = 0.5  # sd of a seat's luck in a deal, in units of log-strength
ELO = math.log(10) / 400  # log-strength per Elo


BATCH = 8  # the ladder's deal sets between two refreshes of its fit, with matchmaking
LADDER_TABLES = {"random": (False,), "matchmaking": (True,), "both": (False, True)}


def _spaced(n: int, elo: float) -> dict[str, float]:
    return {f"b{k}": k * elo * ELO for k in range(n)}


FIELDS: dict[str, dict[str, float]] = {
    "2 equal": {"a": 0.0, "b": 0.0},
    "2 apart": {"a": 0.0, "b": 0.3},  # about 130 Elo
    "5 spread": {"a": 0.0, "b": 0.2, "c": 0.4, "d": 0.6, "e": 1.0},
    "6 equal": _spaced(6, 0), "6 x 100": _spaced(6, 100),
    "8 equal": _spaced(8, 0), "8 x 100": _spaced(8, 100), "8 x 150": _spaced(8, 150),
    "6 x 100 + hopeless": {**_spaced(6, 100), "hopeless": -1100 * ELO},
}
DEFAULT_FIELDS = {2: ("2 equal", "2 apart", "6 equal", "6 x 100", "8 x 100", "8 x 150",
                      "6 x 100 + hopeless"),
                  4: ("5 spread", "6 equal", "6 x 100", "8 x 150", "6 x 100 + hopeless")}
QUICK_FIELDS = {2: ("2 apart",), 4: ("5 spread",)}
# The contest ladder's versions: eight, each table `seats` of them drawn at random.
LADDER = {"v0": 0.0, "v1": 0.2, "v2": 0.4, "v3": 0.6, "v4": 0.8, "v5": 1.0, "v6": 1.2,
          "v7": 1.5}


def simulate(strength: dict[str, float], seats: int, deals: int,
             rng: np.random.Generator) -> list[GameResult]:
    """Every table of `seats` bots of the field, `deals` duplicate deals each."""
    rows = np.array(seatings(seats))
    games = []
    for t, table in enumerate(itertools.combinations(sorted(strength), seats)):
        s = np.array([strength[b] for b in table])
        luck = rng.normal(0, LUCK, (deals, 1, seats))  # per seat, shared by the seatings
        keys = s[rows][None] + luck + rng.gumbel(size=(deals, len(rows), seats))
        places = 1 + (keys[..., None, :] > keys[..., :, None]).sum(axis=-1)
        for d in range(deals):
            for r, row in enumerate(rows):
                p = tuple(int(x) for x in places[d, r])
                games.append(GameResult(t * 100_000 + d, tuple(table[i] for i in row), p,
                                        tuple(10.0 * x for x in p)))
    return games


@dataclass
class Tally:
    printed: int = 0
    covered: int = 0
    warned: int = 0
    one_sided: int = 0
    widths: list[float] = field(default_factory=list)

    def add(self, low: float | None, high: float | None, truth: float,
            warned: bool) -> None:
        if low is None and high is None:
            self.warned += warned
            return
        self.printed += 1
        self.covered += (low is None or low <= truth) and (high is None or truth <= high)
        if low is not None and high is not None:
            self.widths.append(high - low)
        else:
            self.one_sided += 1

    def row(self) -> dict[str, Any]:
        total = self.printed + self.warned
        return {"intervals": total,
                "printed_pct": round(100 * self.printed / total, 1) if total else None,
                "coverage_pct": round(100 * self.covered / self.printed, 1)
                if self.printed else None,
                "coverage_se": round(100 * math.sqrt(
                    self.covered / self.printed * (1 - self.covered / self.printed)
                    / self.printed), 1) if self.printed else None,
                "one_sided_pct": round(100 * self.one_sided / self.printed, 1)
                if self.printed else None,
                "warned_pct": round(100 * self.warned / total, 1) if total else None,
                "median_width": round(float(np.median(self.widths)), 3)
                if self.widths else None}


Truth = tuple[dict[tuple[str, str], float], dict[str, float]]


def truths(strength: dict[str, float], seats: int, games: int, seed: int) -> Truth:
    """Each pair's expected score and each bot's rating (up to a constant), from a long run
    of about `games` games."""
    tables = math.comb(len(strength), seats)
    deals = max(20, games // (tables * len(seatings(seats))))
    played = simulate(strength, seats, deals, np.random.default_rng(seed))
    cross = cross_table(played)
    scores = {}
    for pair in cross.pairs:
        assert isinstance(pair, HeadToHead)
        scores[(pair.first, pair.second)] = pair.stats.score.mean
    rows = standings(played, resamples=0).rows
    return scores, {r.bot: float(r.rating or 0.0) for r in rows}


def anchored(truth: dict[str, float], ratings: dict[str, float]) -> dict[str, float]:
    """The true ratings on the run's own scale: its zero is its median bot(s) (the bots at
    the middle of its estimated ratings), so the truth is taken relative to the same bots."""
    order = sorted(ratings, key=lambda b: ratings[b])
    n = len(order)
    middle = [order[n // 2]] if n % 2 else [order[n // 2 - 1], order[n // 2]]
    zero = sum(truth[b] for b in middle) / len(middle)
    return {b: v - zero for b, v in truth.items()}


TIE = 10.0  # Elo: bots this close in the long run's truth are taken as equal (its error)


def true_ranks(truth: dict[str, float]) -> dict[str, tuple[int, int]]:
    """Each bot's rank in the truth: the range of ranks of the bots within `TIE` of it
    (equal bots' ranks are the draws' to decide, not the long run's noise)."""
    values = sorted(truth.values(), reverse=True)
    out = {}
    for bot, v in truth.items():
        out[bot] = (1 + sum(x > v + TIE for x in values), sum(x >= v - TIE for x in values))
    return out


def measure(strength: dict[str, float], seats: int, deals: int, runs: int, seed: int,
            truth: Truth) -> dict[str, Tally]:
    pair_truth, rating_truth = truth
    ranks = true_ranks(rating_truth)
    rng = np.random.default_rng([seed, seats, deals, len(strength)])
    out = {"score": Tally(), "rating": Tally(), "rank": Tally()}
    for _ in range(runs):
        games = simulate(strength, seats, deals, rng)
        for pair in cross_table(games).pairs:
            assert isinstance(pair, HeadToHead)
            stats = pair.to_json()
            low, high = stats["score_ci95"]
            out["score"].add(low, high, pair_truth[(pair.first, pair.second)],
                             stats.get("no_interval") is not None)
        rows = standings(games).rows
        ratings = {r.bot: float(r.rating or 0.0) for r in rows}
        true = anchored(rating_truth, ratings)
        for r in rows:
            why = getattr(r, "no_interval", None)
            low_rank, high_rank = getattr(r, "rank_low", None), getattr(r, "rank_high", None)
            if low_rank is not None and high_rank is not None:
                # Covered when some rank the truth allows lies inside the interval.
                first, last = ranks[r.bot]
                out["rank"].add(low_rank, high_rank, min(max(first, low_rank), last), False)
            else:
                out["rank"].add(None, None, 0.0, why is not None)
            if why is not None and "anchor" in why:
                continue  # the scale's zero: 0 by definition, nothing to cover
            out["rating"].add(r.rating_low, r.rating_high, true[r.bot], why is not None)
    return out


def ladder_deal_set(seats: int, deal: int, rng: np.random.Generator,
                    table: Sequence[str] = ()) -> list[GameResult]:
    """One deal set of the contest ladder: a table of `seats` versions of `LADDER` (`table`,
    or drawn at random), every seating of one deal, as the ladder's games."""
    table = list(table) or [str(b) for b in rng.choice(sorted(LADDER), size=seats,
                                                       replace=False)]
    s = np.array([LADDER[b] for b in table])
    luck = rng.normal(0, LUCK, seats)
    rows = seatings(seats)
    noise = rng.gumbel(size=(len(rows), seats))
    lines = []
    for r, row in enumerate(rows):
        keys = s[list(row)] + luck + noise[r]
        places = tuple(int(1 + (keys > k).sum()) for k in keys)
        lines.append(GameResult(deal, tuple(table[i] for i in row), places,
                                tuple(10.0 * p for p in places)))
    return lines


def ladder_fit(seats: int, deal_sets: int, rng: np.random.Generator,
               resamples: int, matchmaking: bool = False) -> dict[str, Any]:
    """The ladder's ratings after `deal_sets` deal sets, each table drawn at random or
    (`matchmaking`) chosen as `contest run` chooses it, with the contest's minimum share and
    pair cap, from the fit refreshed every `BATCH` deal sets (as -j parallel games see it)."""
    from bench_matchmaking import choose

    ladder = LadderRatings()
    names = sorted(LADDER)
    key = {n: k for k, n in enumerate(names)}
    fitted: dict[str, Any] = {}
    played = dict.fromkeys(names, 0)
    tables: list[tuple[int, ...]] = []
    for start in range(0, deal_sets, BATCH):
        pending = dict.fromkeys(names, 0)
        for deal in range(start, min(start + BATCH, deal_sets)):
            table: tuple[str, ...] = ()
            if matchmaking:
                table = choose(names, key, fitted, played, pending, ladder, tables, "share",
                               (MIN_SHARE, PAIR_CAP), seats)
                tables.append(tuple(key[n] for n in table))
                for n in table:
                    played[n] += 1
                    pending[n] += 1
            ladder.add_deal_set(ladder_deal_set(seats, deal, rng, table))
        if matchmaking:
            fitted = ladder.fit(names, resamples=resamples)
    return ladder.fit(names, resamples=resamples)


def measure_ladder(seats: int, deal_sets: int, runs: int, seed: int, truth: dict[str, float],
                   resamples: int, matchmaking: bool = False) -> Tally:
    """The ladder's printed rating intervals (`contest.ratings`, as `contest status` and the
    leaderboard show them) over `runs` ladders of `deal_sets` deal sets."""
    rng = np.random.default_rng([seed, seats, deal_sets, 1 + matchmaking])
    tally = Tally()
    for _ in range(runs):
        fitted = ladder_fit(seats, deal_sets, rng, resamples, matchmaking)
        rated = {b: r for b, r in fitted.items() if r.rating is not None}
        true = anchored(truth, {b: float(r.rating) for b, r in rated.items()})
        for bot, r in rated.items():
            why = getattr(r, "no_interval", None)
            if why is not None and "anchor" in why:
                continue
            tally.add(r.low, r.high, true[bot], why is not None)
    return tally


def _markdown(row: dict[str, Any]) -> str:
    cov = ("-" if row["coverage_pct"] is None else
           f"{row['coverage_pct']:.1f}% +- {row['coverage_se']:.1f}")
    width = row["median_width"]
    unit = {"score": "{:.1f} pts", "rank": "{:.0f} places"}.get(row["interval"],
                                                                  "{:.0f} Elo")
    shown = "-" if width is None else unit.format(
        100 * width if row["interval"] == "score" else width)
    sided = "-" if row["one_sided_pct"] is None else f"{row['one_sided_pct']}%"
    return (f"| {row['field']} | {row['seats']} | {row['deals']} | {row['interval']} "
            f"| {row['printed_pct']}% | {cov} | {sided} | {row['warned_pct']}% | {shown} |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--deals", default="1,2,3,5,10,20,40")
    parser.add_argument("--seats", default="2,4")
    parser.add_argument("--fields", default="",
                        help="comma-separated names of FIELDS ('' : every field that fits)")
    parser.add_argument("--truth", type=int, default=300_000,
                        help="games of the long run that measures the truth")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ladder", default="20,40,80,160",
                        help="deal sets of the contest ladder (all versions); '' for none")
    parser.add_argument("--resamples", type=int, default=100,
                        help="the ladder fit's draws for order_held")
    parser.add_argument("--tables", choices=sorted(LADDER_TABLES), default="both",
                        help="the ladder's tables: drawn at random, chosen by the contest's "
                             "matchmaking, or both")
    parser.add_argument("--quick", action="store_true",
                        help="20 runs, deals 1,5, two fields, ladder 40, truth 30,000 games")
    args = parser.parse_args(argv)
    chosen: dict[int, tuple[str, ...]] = DEFAULT_FIELDS
    if args.quick:
        args.runs, args.deals, args.truth, args.ladder = 20, "1,5", 30_000, "40"
        chosen = QUICK_FIELDS
    if args.fields:
        names = tuple(f.strip() for f in args.fields.split(","))
        chosen = {k: names for k in (2, 4)}
    table = ["| field | seats | deal sets per table | interval | printed | coverage (95% "
             "target) | one-sided | warned instead | median width |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines = []
    for seats in (int(x) for x in args.seats.split(",")):
        for name in chosen.get(seats, ()):
            strength = FIELDS[name]
            if len(strength) < seats:
                continue
            truth = truths(strength, seats, args.truth, args.seed + 10_000)
            for deals in (int(x) for x in args.deals.split(",") if x):
                for kind, tally in measure(strength, seats, deals, args.runs, args.seed,
                                           truth).items():
                    row = {"field": name, "seats": seats, "deals": deals, "interval": kind,
                           **tally.row()}
                    lines.append(json.dumps(row))
                    table.append(_markdown(row))
                    print(json.dumps(row), file=sys.stderr, flush=True)
        truth_rng = np.random.default_rng(args.seed + 20_000)
        ladder_truth = {b: float(r.rating or 0.0) for b, r in ladder_fit(
            seats, max(300, args.truth // 100), truth_rng, 0).items()}
        for deal_sets, matchmaking in itertools.product(
                (int(x) for x in args.ladder.split(",") if x), LADDER_TABLES[args.tables]):
            tally = measure_ladder(seats, deal_sets, args.runs, args.seed, ladder_truth,
                                   args.resamples, matchmaking)
            row = {"field": "ladder of 8" + (", matchmaking" if matchmaking else ""),
                   "seats": seats, "deals": deal_sets, "interval": "ladder rating",
                   **tally.row()}
            lines.append(json.dumps(row))
            table.append(_markdown(row))
            print(json.dumps(row), file=sys.stderr, flush=True)
    print("\n".join(table))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
