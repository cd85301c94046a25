"""Who the ladder's matchmaking lets play, and whether that biases the ratings (issue 44).

    python bench/bench_matchmaking.py [--bots 8] [--seeds 30] [--deal-sets 600]
                                      [--batch 8] [--resamples 50] [--spacing 40]
                                      [--schemes share,old,random]
                                      [--min-share 0.5] [--pair-cap 0.25]
                                      [--first-seed 0]

A ladder of `--bots` synthetic versions of known Elo: the top two equal (the outside check's
case: two equal leaders), the others `--spacing` apart below them. Every pairing is a deal
set of 2 games (both seatings), each a Bradley-Terry draw from the true ratings; the ladder's
own fit (`contest.ratings`, `--resamples` bootstrap resamples) is refreshed every `--batch`
deal sets (as `-j` parallel games see it), and `contest.matchmaking.next_table` picks every
table, with the recent deal sets counted as `contest run` counts them (`Share.window`).
Schemes: `share` (the minimum share and pair cap, `--min-share` and `--pair-cap`, the
contest's defaults unless given), `old` (neither: as
before issue 44), `random` (a pair drawn at random: no choice at all, the reference).

After `--deal-sets` deal sets, per true rank, over `--seeds` runs: the mean error of the
fitted rating (fit minus truth, each centred on its mean over the versions, so the scale's
anchor does not enter) with its standard error over the seeds, and the deal sets the version
played. Also the leaders' share of the last half of the deal sets. Prints a markdown table
and one JSON line per scheme.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from meldref.contest import one_blas_thread  # noqa: E402

one_blas_thread()
from bench_contest import play_deal_set  # noqa: E402  (a deal set's two synthetic games)

from meldref.contest.ladder.choose import choose_table  # noqa: E402
from meldref.contest.matchmaking import MIN_SHARE, PAIR_CAP  # noqa: E402
from meldref.contest.ranking import Rating  # noqa: E402
from meldref.contest.ratings import LadderRatings  # noqa: E402

PLACEMENT = 6  # the contest's default burst


def field_of(bots: int, spacing: float) -> dict[str, float]:
    """Two equal leaders, then every version `spacing` below the one above."""
    elo = [0.0, 0.0, *(-spacing * k for k in range(1, bots - 1))]
    return {f"b{k:02d}": e for k, e in enumerate(elo)}


def run(seed: int, truth: dict[str, float], scheme: str, deal_sets: int, batch: int,
        resamples: int, bounds: tuple[float, float] = (MIN_SHARE, PAIR_CAP)
        ) -> tuple[dict[str, float], dict[str, int], float]:
    """One ladder: each version's fitted rating, its deal sets, the leaders' late share."""
    rng = random.Random(seed)
    names = sorted(truth)
    key = {n: k for k, n in enumerate(names)}
    ratings, fitted = LadderRatings(), dict[str, Rating]()
    played = dict.fromkeys(names, 0)
    tables: list[tuple[int, int]] = []
    while len(tables) < deal_sets:
        pending = dict.fromkeys(names, 0)
        for _ in range(batch):
            if scheme == "random":
                a, b = rng.sample(names, 2)
            else:
                a, b = choose(names, key, fitted, played, pending, ratings, tables, scheme,
                              bounds)[:2]
            ratings.add_deal_set(play_deal_set(rng, truth, a, b))
            tables.append((key[a], key[b]))
            for n in (a, b):
                played[n] += 1
                pending[n] += 1
        fitted = ratings.fit(names, resamples, seed=len(tables))
    leaders = {key[n] for n in names if truth[n] == max(truth.values())}
    late = tables[len(tables) // 2:]
    share = sum(set(t) == leaders for t in late) / len(late)
    return {n: float(fitted[n].rating or 0.0) for n in names}, played, share


def choose(names: Sequence[str], key: dict[str, int], fitted: dict[str, Rating],
           played: dict[str, int], pending: dict[str, int], ratings: LadderRatings,
           tables: Sequence[tuple[int, ...]], scheme: str, bounds: tuple[float, float],
           seats: int = 2) -> tuple[str, ...]:
    """The next table as `contest run` chooses it (`choose_table`; `scheme` "share": with
    the minimum share and pair cap `bounds` over the recent `tables`; "old": without)."""
    counts = {key[n]: (played[n] - pending[n], pending[n]) for n in names}
    table = choose_table(ratings, fitted, key, counts, tables, seats, PLACEMENT,
                         bounds if scheme == "share" else None)
    assert table is not None
    return tuple(names[k] for k in table)


def summary(truth: dict[str, float], scheme: str, seeds: int, deal_sets: int, batch: int,
            resamples: int, bounds: tuple[float, float], first_seed: int = 0
            ) -> dict[str, Any]:
    names = sorted(truth, key=lambda n: -truth[n])
    errors: dict[str, list[float]] = {n: [] for n in names}
    counts: dict[str, list[int]] = {n: [] for n in names}
    shares = []
    centre = statistics.fmean(truth.values())
    for seed in range(first_seed, first_seed + seeds):
        fit, played, share = run(seed, truth, scheme, deal_sets, batch, resamples, bounds)
        mean = statistics.fmean(fit.values())
        for n in names:
            errors[n].append((fit[n] - mean) - (truth[n] - centre))
            counts[n].append(played[n])
        shares.append(share)
    rows = []
    for rank, n in enumerate(names, 1):
        e = errors[n]
        se = statistics.stdev(e) / len(e) ** 0.5 if len(e) > 1 else float("nan")
        rows.append({"rank": rank, "truth": truth[n], "mean_error": round(statistics.fmean(e), 1),
                     "se": round(se, 1), "z": round(statistics.fmean(e) / se, 2),
                     "deal_sets": round(statistics.fmean(counts[n]), 1)})
    return {"scheme": scheme, "seeds": seeds, "deal_sets": deal_sets, "rows": rows,
            "leaders_late_share": round(statistics.fmean(shares), 3)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="the seeds are first-seed .. first-seed + seeds - 1")
    parser.add_argument("--deal-sets", type=int, default=600)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--resamples", type=int, default=50)
    parser.add_argument("--spacing", type=float, default=40.0)
    parser.add_argument("--schemes", default="share,old,random")
    parser.add_argument("--min-share", type=float, default=MIN_SHARE)
    parser.add_argument("--pair-cap", type=float, default=PAIR_CAP)
    args = parser.parse_args(argv)
    truth = field_of(args.bots, args.spacing)
    bounds = (args.min_share, args.pair_cap)
    results = [summary(truth, s, args.seeds, args.deal_sets, args.batch, args.resamples,
                       bounds, args.first_seed)
               for s in args.schemes.split(",")]
    print("| rank | true Elo | " + " | ".join(
        f"{r['scheme']}: error ± se (z), deal sets" for r in results) + " |")
    print("|---|---|" + "---|" * len(results))
    for k in range(args.bots):
        cells = [f"{r['rows'][k]['mean_error']:+.1f} ± {r['rows'][k]['se']:.1f} "
                 f"({r['rows'][k]['z']:+.1f}), {r['rows'][k]['deal_sets']:.0f}" for r in results]
        print(f"| {k + 1} | {results[0]['rows'][k]['truth']:+.0f} | " + " | ".join(cells) + " |")
    print("| leaders' share of the last half | | " + " | ".join(
        f"{r['leaders_late_share']:.2f}" for r in results) + " |")
    for r in results:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
