"""Why tournaments run parallel games in processes: the same games, one at a time, in two threads
and in two worker processes, for built-in bots (CPU-bound) and bot programs (pipes).

    python bench/bench_tournament.py [--games 16]

Prints games per second and the ratio to one-at-a-time, measured in the same run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

from meldref.engine.game import find_game
from meldref.protocol.seats import BotSpec
from meldref.tournament.runner import run_job
from meldref.tournament.schedule import Plan, bot_entries

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'}"
CASES = {
    "built-in bots": ["builtin:greedy", "builtin:random", "builtin:greedy", "builtin:random"],
    "bot programs": ["builtin:greedy", "builtin:random", f"{RANDOM_BOT} --seed 1",
                     f"{RANDOM_BOT} --seed 2"],
}


def run_all(games: int, specs: list[str], make: Callable[[], Executor] | None) -> float:
    bots = tuple(bot_entries([BotSpec.parse(s) for s in specs]))
    plan = Plan("phase10", bots, players=4, games=games, duplicate=False,
                rules=find_game("phase10").rules())
    jobs = plan.jobs()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        began = time.perf_counter()
        if make is None:
            for job in jobs:
                run_job(job, folder)
        else:
            with make() as pool:
                list(pool.map(run_job, jobs, [folder] * len(jobs)))
        return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=16)
    games = parser.parse_args().games
    spawn = multiprocessing.get_context("spawn")
    ways: dict[str, Callable[[], Executor] | None] = {
        "one at a time": None,
        "2 threads": lambda: ThreadPoolExecutor(2),
        "2 processes": lambda: ProcessPoolExecutor(2, mp_context=spawn),
    }
    for case, specs in CASES.items():
        base = None
        for way, make in ways.items():
            seconds = run_all(games, specs, make)
            base = base or seconds
            print(f"{case:14} {way:14} {games / seconds:6.2f} games/s  x{base / seconds:.2f}")


if __name__ == "__main__":
    main()
