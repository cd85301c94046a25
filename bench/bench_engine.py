"""Phase 10 engine speed: full 4-player games between in-process bots.

    python bench/bench_engine.py [--games N] [--players P] [--bots random,greedy] [--profile]

Prints games/s and decisions/s (every applied action is a decision: draw, lay, hit, discard)
per bot kind, by this process's CPU time (steady on a shared machine) and by the wall clock; with
--profile, the ten functions with the most own time. Numbers compare runs on one machine only.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time

from meldref.engine.phase10 import GAME, Phase10Rules
from meldref.engine.play import play_inprocess


def bench(kind: str, games: int, players: int, rules: Phase10Rules) -> tuple[int, float, float]:
    """(decisions, CPU seconds, wall seconds) of `games` games of `kind` bots, seeds 0..games-1."""
    decisions = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for seed in range(games):
        bots = [GAME.bots[kind](seed * 100 + i) for i in range(players)]
        _, actions = play_inprocess(GAME, rules, bots, seed)
        decisions += len(actions)
    return decisions, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--bots", default="random,greedy")
    parser.add_argument("--profile", action="store_true", help="cProfile top 10 by own time")
    args = parser.parse_args()
    rules = Phase10Rules()
    for kind in args.bots.split(","):
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        decisions, cpu, wall = bench(kind, args.games, args.players, rules)
        if profiler:
            profiler.disable()
        print(f"{kind:>7}: {args.games} games, {decisions} decisions | CPU "
              f"{args.games / cpu:7.2f} games/s {decisions / cpu:8.0f} decisions/s | wall "
              f"{args.games / wall:7.2f} games/s {decisions / wall:8.0f} decisions/s")
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(10)
            print(out.getvalue())


if __name__ == "__main__":
    main()
