"""Games per second on a dask cluster against the local process pool: the same games (four-seat
Phase 10, two seats bot programs on pipes), in one run, through `pool.GamePool` with 1 and 2
workers (`-j 1`, `-j 2`) and through `cluster.ClusterPool` on `local:1` and `local:2` (a
LocalCluster of 1 or 2 worker processes, TLS, files written by the workers).

    python bench/bench_cluster.py [--games 24] [--phases 10] [--rounds 2] [--fresh-bots]

For each way: the seconds until the first result (the pool's or cluster's start-up, its start-up
check and a first game), the games per second from the first result to the last (the steady
rate), and that rate as a ratio to `-j 1`'s. The ways take turns over `--rounds` rounds and the
best round of each is shown (the machine may be shared). Needs the `cluster` extra.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from meldref.tournament.config import TournamentConfig, build_config
from meldref.tournament.pool import GamePool
from meldref.tournament.run import prepare_folder, settle_seed
from meldref.tournament.runner import run_job

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'}"
BOTS = ["builtin:greedy", "builtin:random", f"{RANDOM_BOT} --seed 1", f"{RANDOM_BOT} --seed 2"]


def config(games: int, phases: int, cluster: str | None, out: Path,
           fresh_bots: bool = False) -> TournamentConfig:
    flags: dict[str, Any] = {"bots": BOTS, "players": 4, "games": games, "duplicate": False,
                             "seed": 1, "rules": {"phases-to-win": phases}, "out": str(out),
                             "cluster": cluster, "limits": {"fresh-bots": fresh_bots}}
    return settle_seed(build_config({}, flags))


def timed(start: Callable[[], Any], play: Callable[[Any], Iterator[dict[str, Any]]]
          ) -> tuple[float, float, int]:
    """(seconds to the first result, games per second after it, games not "ok")."""
    began = time.perf_counter()
    pool = start()
    stamps, failed = [], 0
    for line in play(pool):
        stamps.append(time.perf_counter())
        failed += line.get("status") != "ok"
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    return stamps[0] - began, rate, failed


def main() -> None:
    from meldref.tournament.cluster import ClusterPool

    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=24)
    parser.add_argument("--phases", type=int, default=10, help="phases-to-win (1-10)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="each way is measured once a round; the best round is shown")
    parser.add_argument("--fresh-bots", action="store_true",
                        help="a bot process per game (default: kept across a worker's games)")
    args = parser.parse_args()
    ways = {"-j 1": (None, 1), "-j 2": (None, 2), "local:1": ("local:1", 0),
            "local:2": ("local:2", 0)}
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(args.rounds):  # the ways take turns, so a busy spell hits them all alike
        for name, (cluster, jobs) in ways.items():
            with tempfile.TemporaryDirectory(prefix="meldref-bench-") as tmp:
                cfg = config(args.games, args.phases, cluster, Path(tmp) / "t",
                             args.fresh_bots)
                folder = prepare_folder(cfg)
                todo = cfg.schedule()

                def start(cfg: TournamentConfig = cfg, folder: Path = folder,
                          jobs: int = jobs) -> Any:
                    if cfg.cluster is None:
                        return GamePool(jobs, run_job, folder, False)
                    return ClusterPool(cfg, run_job, folder, False)

                measured = timed(start, lambda pool, todo=todo: pool.play(todo))
            if name not in best or measured[1] > best[name][1]:
                best[name] = measured
    print(f"{args.games} four-seat Phase 10 games (phases-to-win {args.phases}), 2 of 4 seats "
          f"bot programs ({'a process per game' if args.fresh_bots else 'kept'}); best of "
          f"{args.rounds} rounds")
    print(f"{'way':10} {'first result':>13} {'games/s':>8} {'ratio':>6}")
    base = best["-j 1"][1]
    for name, (first, rate, failed) in best.items():
        note = f"  ({failed} games failed)" if failed else ""
        print(f"{name:10} {first:12.1f}s {rate:8.2f} {rate / base:5.2f}x{note}")


if __name__ == "__main__":
    main()
