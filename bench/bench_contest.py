"""The contest's figures: the games adaptive matchmaking saves against a plain round robin, the
ladder's rating refresh at 200 bots and 200,000 games, and `contest run`'s speed and database
cost per game.

    python bench/bench_contest.py [--bots 8] [--seeds 5] [--spacing 40] [--batch 4]
                                  [--field even|contenders|both]
                                  [--resamples 100]
                                  [--refresh-bots 200] [--refresh-games 200000]
                                  [--run-games 24] [--skip-run]
                                  [--only matchmaking|refresh|run]

1. Matchmaking (synthetic outcomes, two seats): `--bots` bots of known Elo (`--field`: even,
   `--spacing` apart; or contenders, three at the top `--spacing` apart and a tail 2.5 x
   `--spacing` apart below them: `field_of`); every game a Bradley-Terry draw from the true
   ratings; every pairing a deal set of 2 games (both seatings). The ladder's own fit
   (`contest.ratings`, `--resamples` bootstrap resamples) is refreshed every `--batch` deal
   sets (as `-j` parallel games see it) and:
   - **top 3**: games until the fitted top 3 are the true top 3 in order in 95% of the
     bootstrap resamples (`LadderRatings.order_held`);
   - **placement**: after a ladder of the other bots has played 20 deal sets per bot, a new
     bot of middle strength arrives; games (all of them, from its arrival) until its rank is
     within one of its true rank, and stays so to the end of the run.
   Adaptive = `contest.matchmaking.next_table` with the contest's settings (placement burst,
   settling within two places, the minimum share and pair cap, then the neighbours in most
   doubt, weighted top first: `adaptive`); round robin = every pair
   in turn (the new bot: a new round robin of all). A placement is checked after each refit
   only: `--batch` deal sets (2 x `--batch` games) is the least either can score.
   The medians over `--seeds` runs, and their ratio (target: 0.5 or less).
2. Refresh: `--refresh-bots` bots, `--refresh-games` four-seat games (12-game deal sets) of
   synthetic results; seconds to add them, to refit (point + 200 resamples), and to add one
   deal set and refit again (what the run does after each deal set). Baseline, same run: the
   verdicts' standings (`verdicts.ratings.standings`, 200 resamples) on 1% of the games
   against the ladder fit on the same 1% (the verdicts' tally is deals x bots x bots: the
   full set would need ~5 GB).
3. `contest run` (unless `--skip-run`): a contest of three copies of bots/random_bot.py,
   Phase 10 to one phase, two seats, `--run-games` games with one job: games/s, and the
   database's cost per game (the time of `mark_running` + `record`, and bytes of database).
Prints a markdown table and one JSON line per figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from meldref.contest import one_blas_thread  # noqa: E402

one_blas_thread()  # as `contest run` does, before numpy is imported
from meldref.contest.ladder.choose import choose_table  # noqa: E402
from meldref.contest.matchmaking import MIN_SHARE, PAIR_CAP  # noqa: E402
from meldref.contest.ranking import Rating, ranked  # noqa: E402
from meldref.contest.ratings import LadderRatings  # noqa: E402
from meldref.verdicts.games import GameResult  # noqa: E402
from meldref.verdicts.ratings import standings  # noqa: E402

RESAMPLES = 200
# (ratings, deal sets played, deal sets chosen since the last refit) -> the next pair
Chooser = Callable[[dict[str, Rating], dict[str, int], dict[str, int]], tuple[str, str]]


# ----------------------------------------------------------------------------------------------
# 1. Matchmaking


def play_deal_set(rng: random.Random, truth: dict[str, float], a: str, b: str
                  ) -> list[GameResult]:
    p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
    games = []
    for seats in ((a, b), (b, a)):
        a_wins = rng.random() < p
        places = (1, 2) if (seats[0] == a) == a_wins else (2, 1)
        games.append(GameResult(0, seats, places, (float(places[0]), float(places[1]))))
    return games


class Round:
    """Every pair in turn, shuffled each time round."""

    def __init__(self, rng: random.Random, names: Sequence[str]) -> None:
        self.rng, self.names, self.queue = rng, list(names), list[tuple[str, str]]()

    def restart(self, names: Sequence[str]) -> None:
        self.names, self.queue = list(names), []

    def __call__(self, fitted: dict[str, Rating], played: dict[str, int],
                 pending: dict[str, int]) -> tuple[str, str]:
        if not self.queue:
            self.queue = list(itertools.combinations(self.names, 2))
            self.rng.shuffle(self.queue)
        return self.queue.pop()


def adaptive(names: Sequence[str], ratings: LadderRatings, placement: int = 6,
             tables: list[tuple[int, ...]] | None = None) -> Chooser:
    """`contest run`'s matchmaking with the contest's own settings (`choose_table`): the
    placement burst (`placement`, the default of `contest init`), and the minimum share and
    pair cap (`MIN_SHARE`, `PAIR_CAP`) over the recent deal sets (`tables`, the ladder's so
    far, as version keys: indexes into `names`)."""
    tables = [] if tables is None else tables
    key = {n: k for k, n in enumerate(names)}

    def choose(fitted: dict[str, Rating], played: dict[str, int],
               pending: dict[str, int]) -> tuple[str, str]:
        # Deal sets chosen since the last refit are in flight, as in a run with -j.
        counts = {key[n]: (played.get(n, 0) - pending.get(n, 0), pending.get(n, 0))
                  for n in names}
        table = choose_table(ratings, fitted, key, counts, tables, 2, placement,
                             (MIN_SHARE, PAIR_CAP))
        assert table is not None
        tables.append(table)
        return names[table[0]], names[table[1]]
    return choose


class Sim:
    """One ladder of synthetic bots: deal sets chosen by `choose`, refitted every batch."""

    def __init__(self, rng: random.Random, truth: dict[str, float], batch: int,
                 resamples: int) -> None:
        self.rng, self.truth, self.batch, self.resamples = rng, truth, batch, resamples
        self.ratings, self.fitted = LadderRatings(), dict[str, Rating]()
        self.played: dict[str, int] = {}
        self.games = 0

    def step(self, choose: Chooser, names: Sequence[str], fit: bool = True) -> None:
        pending: dict[str, int] = {}
        for _ in range(self.batch):
            a, b = choose(self.fitted, self.played, pending)
            self.ratings.add_deal_set(play_deal_set(self.rng, self.truth, a, b))
            self.games += 2
            for n in (a, b):
                self.played[n] = self.played.get(n, 0) + 1
                pending[n] = pending.get(n, 0) + 1
        if fit:
            self.fitted = self.ratings.fit(list(names), self.resamples, seed=self.games)


def top3_sure(sim: Sim, true_order: Sequence[str]) -> bool:
    """The fitted top 3 are the true top 3 in order, in 95% of the bootstrap resamples."""
    order = ranked(sim.fitted)[:3]
    return order == list(true_order[:3]) and sim.ratings.order_held(order) >= 0.95


def games_to_top3(seed: int, truth: dict[str, float], how: str, batch: int,
                  cap: int, resamples: int) -> int:
    rng = random.Random(seed)
    names = sorted(truth)
    order = sorted(names, key=lambda n: -truth[n])
    sim = Sim(rng, truth, batch, resamples)
    choose = Round(rng, names) if how == "round robin" else adaptive(names, sim.ratings)
    while sim.games < cap:
        sim.step(choose, names)
        if top3_sure(sim, order):
            return sim.games
    return cap


def games_to_place(seed: int, truth: dict[str, float], how: str, batch: int,
                   warm: int, horizon: int, resamples: int) -> int:
    """Games from the new bot's arrival until its rank is within one of its true rank for
    good (to the end of `horizon` games)."""
    rng = random.Random(seed)
    new = "new"
    old = sorted(n for n in truth if n != new)
    sim = Sim(rng, truth, batch, resamples)
    history: list[tuple[int, ...]] = []  # the recent tables carry over the arrival
    warm_choose = (adaptive(old, sim.ratings, tables=history) if how == "adaptive"
                   else Round(rng, old))
    while sim.games < warm * len(old) * 2:  # a round robin needs no fit to choose
        sim.step(warm_choose, old, fit=how == "adaptive")
    sim.step(warm_choose, old)
    names = sorted(truth)
    true_rank = sorted(names, key=lambda n: -truth[n]).index(new)
    choose: Chooser
    if how == "adaptive":  # "new" sorts after every old name: the old keys stay
        choose = adaptive(names, sim.ratings, tables=history)
    else:
        rr = Round(rng, names)
        rr.restart(names)
        choose = rr
    start, placed_since = sim.games, None
    while sim.games - start < horizon:
        sim.step(choose, names)
        rank = ranked(sim.fitted).index(new)
        if abs(rank - true_rank) <= 1:
            placed_since = placed_since if placed_since is not None else sim.games - start
        else:
            placed_since = None
    return placed_since if placed_since is not None else horizon


def field_of(kind: str, bots: int, spacing: float) -> dict[str, float]:
    """True Elo: `even`, every bot `spacing` above the next; `contenders`, three bots
    `spacing` apart at the top and the others 2.5 x `spacing` apart below them (a field of a
    few contenders and a tail)."""
    if kind == "even":
        return {f"b{k:02d}": spacing * (bots - k) for k in range(bots)}
    top = {f"b{k:02d}": -spacing * k for k in range(min(3, bots))}
    tail = {f"b{k:02d}": -spacing * 2 - 2.5 * spacing * (k - 2) for k in range(3, bots)}
    return {**top, **tail}


def matchmaking(bots: int, seeds: int, spacing: float, batch: int,
                resamples: int, field: str = "even") -> list[dict[str, Any]]:
    truth = field_of(field, bots, spacing)
    ranks = sorted(truth.values(), reverse=True)
    middle = len(ranks) // 2
    placed_truth = {**truth, "new": (ranks[middle - 1] + ranks[middle]) / 2}
    cap = 400 * bots
    rows = []
    for figure, run in (
        ("games until the top 3 are ordered with 95% confidence",
         lambda s, how: games_to_top3(s, truth, how, batch, cap, resamples)),
        ("games until a new version is within one rank of its place",
         lambda s, how: games_to_place(s, placed_truth, how, batch, 20, 40 * bots,
                                       resamples)),
    ):
        medians = {}
        for how in ("round robin", "adaptive"):
            medians[how] = statistics.median(run(seed, how) for seed in range(1, seeds + 1))
        rows.append({"figure": figure, "field": field, "bots": bots, "seeds": seeds,
                     "round_robin": medians["round robin"], "adaptive": medians["adaptive"],
                     "ratio": round(medians["adaptive"] / medians["round robin"], 3)})
    return rows


# ----------------------------------------------------------------------------------------------
# 2. Refresh


def synthetic_lines(rng: random.Random, names: Sequence[str], deal_sets: int,
                    seats: int = 4) -> list[list[GameResult]]:
    from meldref.verdicts.seatings import seatings

    strength = {n: rng.gauss(0, 1) for n in names}
    out = []
    rows = seatings(seats)
    for deal in range(deal_sets):
        table = rng.sample(list(names), seats)
        lines = []
        for row in rows:
            seated = tuple(table[i] for i in row)
            order = sorted(seated, key=lambda n: -strength[n] - rng.gauss(0, 1.5))
            places = tuple(order.index(n) + 1 for n in seated)
            lines.append(GameResult(deal, seated, places, tuple(float(p) for p in places)))
        out.append(lines)
    return out


def refresh(bots: int, games: int) -> list[dict[str, Any]]:
    rng = random.Random(3)
    names = [f"bot{k:03d}" for k in range(bots)]
    sets = synthetic_lines(rng, names, max(1, games // 12))
    ladder = LadderRatings()
    began = time.perf_counter()
    for lines in sets[:-1]:
        ladder.add_deal_set(lines)
    added = time.perf_counter() - began
    began = time.perf_counter()
    ladder.fit(names, RESAMPLES)
    first = time.perf_counter() - began
    began = time.perf_counter()
    ladder.add_deal_set(sets[-1])
    ladder.fit(names, RESAMPLES)
    again = time.perf_counter() - began
    # Baseline, same run: the verdicts' standings against the ladder fit on 1% of the games.
    small = sets[: max(1, len(sets) // 100)]
    began = time.perf_counter()
    standings([g for games in small for g in games], names, resamples=RESAMPLES)
    verdicts = time.perf_counter() - began
    little = LadderRatings()
    began = time.perf_counter()
    for lines in small:
        little.add_deal_set(lines)
    little.fit(names, RESAMPLES)
    ladder_small = time.perf_counter() - began
    played = 12 * len(sets)
    return [{"figure": "refresh", "bots": bots, "games": played,
             "add_all_s": round(added, 2), "first_fit_s": round(first, 2),
             "after_a_deal_set_s": round(again, 2),
             "baseline_games": 12 * len(small), "verdicts_standings_s": round(verdicts, 3),
             "ladder_fit_s": round(ladder_small, 3),
             "ladder_over_verdicts": round(ladder_small / verdicts, 3)}]


# ----------------------------------------------------------------------------------------------
# 3. contest run


def run_speed(games: int) -> list[dict[str, Any]]:
    import os

    from meldref.contest.store import ContestStore

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    tmp = Path(tempfile.mkdtemp(prefix="bench-contest-"))
    folder = tmp / "c"

    def meldref(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "meldref", "contest", *args], check=True,
                       env=env, capture_output=True, text=True, timeout=600)

    try:
        meldref("init", str(folder), "--game", "phase10", "-n", "2", "-r", "phases-to-win=1")
        for name in ("a", "b", "c"):
            meldref("submit", str(folder), str(ROOT / "bots" / "random_bot.py"), "--name", name)
        began = time.perf_counter()
        meldref("run", str(folder), "--games", str(games), "--no-wait")
        seconds = time.perf_counter() - began
        store = ContestStore.open(folder)
        played = store.counts().get("done", 0)
        rows = store.db.execute("SELECT id, result FROM games WHERE state = 'done'").fetchall()
        store.close()
        size = sum(p.stat().st_size for p in folder.glob("contest.db*"))
        db_cost = database_cost(tmp / "d", [json.loads(r[1]) for r in rows])
        return [{"figure": "contest run", "games": played, "seconds": round(seconds, 2),
                 "games_per_s": round(played / seconds, 2),
                 "db_ms_per_game": round(1000 * db_cost, 2),
                 "db_share_of_a_game": round(db_cost * played / seconds, 4),
                 "db_bytes_per_game": int(size / max(played, 1))}]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def database_cost(folder: Path, lines: list[dict[str, Any]]) -> float:
    """Seconds per game of what the run writes for it (`mark_running` + `record`), the
    same result lines written again into a fresh contest."""
    from meldref.contest.settings import ContestSettings
    from meldref.contest.store import ContestStore
    from meldref.protocol.records import ResultLine
    from meldref.verdicts.seatings import seatings

    store = ContestStore.create(folder, ContestSettings.checked(
        "phase10", 2, {"phases-to-win": 1}, {}, True, 2, 3, 1))
    for name in ("a", "b"):
        staged = folder / "bots" / ".staging" / name
        staged.mkdir(parents=True)
        store.join(name, "true", staged)
    for _ in range(-(-len(lines) // 2)):
        store.add_deal_set("ladder", (1, 2), seatings(2))
    queued = store.queued_games()
    began = time.perf_counter()
    for row, line in zip(queued, lines, strict=False):
        store.mark_running(row.id)
        store.record(ResultLine.from_json({**line, "index": row.id}))
    seconds = (time.perf_counter() - began) / max(1, min(len(queued), len(lines)))
    store.close()
    return seconds


# ----------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--spacing", type=float, default=40.0)
    parser.add_argument("--field", choices=("even", "contenders", "both"), default="both")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--refresh-bots", type=int, default=200)
    parser.add_argument("--refresh-games", type=int, default=200_000)
    parser.add_argument("--run-games", type=int, default=24)
    parser.add_argument("--skip-run", action="store_true")
    parser.add_argument("--only", choices=("matchmaking", "refresh", "run"),
                        help="Measure this part alone.")
    args = parser.parse_args(argv)
    rows = []
    if args.only in (None, "matchmaking"):
        fields = ("even", "contenders") if args.field == "both" else (args.field,)
        rows = [row for field in fields for row in matchmaking(
            args.bots, args.seeds, args.spacing, args.batch, args.resamples, field)]
        print("| figure | field | bots | round robin | adaptive | adaptive / round robin |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            print(f"| {row['figure']} | {row['field']} | {row['bots']} | "
                  f"{row['round_robin']:g} | {row['adaptive']:g} | {row['ratio']:.2f} |")
    out = list(rows)
    for row in refresh(args.refresh_bots, args.refresh_games) if args.only in (
            None, "refresh") else []:
        print(f"\nrefresh at {row['bots']} bots, {row['games']:,} games: first fit "
              f"{row['first_fit_s']} s, after a deal set {row['after_a_deal_set_s']} s "
              f"(adding all the games {row['add_all_s']} s); on {row['baseline_games']:,} "
              f"games the ladder fit takes {row['ladder_over_verdicts']:.2f} x the verdicts' "
              "standings")
        out.append(row)
    if not args.skip_run and args.only in (None, "run"):
        for row in run_speed(args.run_games):
            print(f"\ncontest run: {row['games']} games in {row['seconds']} s, "
                  f"{row['games_per_s']} games/s; database {row['db_ms_per_game']} ms and "
                  f"{row['db_bytes_per_game']} bytes per game "
                  f"({100 * row['db_share_of_a_game']:.2f}% of the run)")
            out.append(row)
    for row in out:
        print(json.dumps(row))
    if any(not math.isfinite(float(r.get("ratio", 0))) for r in rows):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
