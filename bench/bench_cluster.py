"""Games per second on a dask cluster against the local process pool: the same games (four-seat
Phase 10, two seats bot programs on pipes), in one run, through `pool.GamePool` with 1 and 2
workers (`-j 1`, `-j 2`) and through `cluster.ClusterPool` on `local:1` and `local:2` (a
LocalCluster of 1 or 2 worker processes, TLS, files written by the workers).

    python bench/bench_cluster.py [--games 24] [--phases 10] [--rounds 2] [--fresh-bots]
    python bench/bench_cluster.py --overhead [--games 900]

For each way: the seconds until the first result (the pool's or cluster's start-up, its start-up
check and a first game), the games per second from the first result to the last (the steady
rate), and that rate as a ratio to `-j 1`'s. The ways take turns over `--rounds` rounds and the
best round of each is shown (the machine may be shared). Needs the `cluster` extra.

`--overhead`: what the cluster itself costs per game, on a `dask scheduler` and two `dask
worker` processes of this machine (plain TCP on 127.0.0.1): the client's CPU (the tournament
process: submitting, gathering, placing and verifying each replay) and the scheduler's CPU per
game, in one run, before and after, with the games/s ceiling each implies (1 / CPU per game:
the scheduler and the client each run on one thread), and the games/s the two workers played.
"Before" is the earlier way as far as the pool still plays it: a deal set a task and every
replay re-simulated by the client (the run's setup is installed once per worker either way,
and results gathered in batches); "after" is the default: tasks of about 2 s of play, each
task's replays re-simulated by the other worker and 1 game in 500 by the client. Short games
of built-in bots (three seats: six seatings a deal set), so the overhead is what shows.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from meldref.protocol.records import ResultLine
from meldref.tournament.config import TournamentConfig, build_config
from meldref.tournament.pool import GamePool
from meldref.tournament.run import open_tournament
from meldref.tournament.runner import run_job

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'}"
BOTS = ["builtin:greedy", "builtin:random", f"{RANDOM_BOT} --seed 1", f"{RANDOM_BOT} --seed 2"]


def config(games: int, phases: int, cluster: str | None, out: Path,
           fresh_bots: bool = False) -> TournamentConfig:
    flags: dict[str, Any] = {"bots": BOTS, "players": 4, "games": games, "duplicate": False,
                             "seed": 1, "rules": {"phases-to-win": phases}, "out": str(out),
                             "cluster": cluster, "limits": {"fresh-bots": fresh_bots}}
    return build_config({}, flags)


def timed(start: Callable[[], Any], play: Callable[[Any], Iterator[ResultLine]]
          ) -> tuple[float, float, int]:
    """(seconds to the first result, games per second after it, games not "ok")."""
    began = time.perf_counter()
    pool = start()
    stamps, failed = [], 0
    for line in play(pool):
        stamps.append(time.perf_counter())
        failed += not line.ok
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
                folder = open_tournament(cfg).folder
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


def _cpu_of(pid: int) -> float:
    """Seconds of CPU (user + system) process `pid` has used."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


IDLE_SECONDS = 6.0  # the scheduler's and client's CPU measured with nothing to do


def overhead(games: int) -> None:
    """Client and scheduler CPU per game, before and after (see the module)."""
    import os
    import signal
    import socket
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    env["PYTHONPATH"] = str(ROOT)
    procs = [subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)]
    time.sleep(2)
    procs += [subprocess.Popen(["dask", "worker", address, "--nthreads", "1", "--host",
                                "127.0.0.1", "--no-dashboard"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True) for _ in range(2)]
    rows = []
    try:
        import distributed

        with distributed.Client(address, timeout=60) as waiting:
            waiting.wait_for_workers(2, timeout=120)  # both in before the clock starts
            # What the scheduler (heartbeats, its event loop's ticks, work stealing's looks)
            # and a client spend each second with no task: paid whatever the games.
            idle = _busy(procs[0].pid, lambda: time.sleep(IDLE_SECONDS))
            idle = (idle[0] / IDLE_SECONDS, idle[1] / IDLE_SECONDS, 1.0)
        for label, before in (("before: a deal set a task, the client verifies all", True),
                              ("after: ~2 s tasks, verified by the other worker", False)):
            with tempfile.TemporaryDirectory(prefix="meldref-bench-") as tmp:
                rows.append((label, *_overhead_run(address, procs[0].pid, games, Path(tmp),
                                                   before)))
    finally:
        for proc in procs:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    _overhead_table(games, idle, rows)


def _busy(scheduler: int, work: Callable[[], Any]) -> tuple[float, float, float]:
    """(this process's CPU seconds, the scheduler's, wall seconds) over `work()`."""
    import resource

    def own() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    client0, scheduler0, began = own(), _cpu_of(scheduler), time.perf_counter()
    work()
    return own() - client0, _cpu_of(scheduler) - scheduler0, time.perf_counter() - began


def _overhead_run(address: str, scheduler: int, games: int, tmp: Path, before: bool
                  ) -> tuple[int, float, float, float]:
    """(games played, wall seconds, client CPU seconds, scheduler CPU seconds) of one run."""
    from meldref.tournament import cluster as cluster_module

    flags: dict[str, Any] = {
        "bots": ["builtin:greedy", "builtin:random", "builtin:expert"], "players": 3,
        "games": games, "seed": 1, "out": str(tmp / "t"), "rules": {"phases-to-win": 1},
        "cluster": address, "insecure-tcp": True}
    cfg = build_config({}, flags)
    folder = open_tournament(cfg).folder
    pool = cluster_module.ClusterPool(cfg, run_job, folder, False)
    if before:
        pool.size.seconds = 0.0  # a deal set a task
        pool.verify_elsewhere = False  # the client re-simulates every replay
    played: list[ResultLine] = []
    client, scheduler_cpu, wall = _busy(scheduler, lambda: played.extend(pool.play(
        cfg.schedule())))
    return len(played), wall, client, scheduler_cpu


def _overhead_table(games: int, idle: tuple[float, float, float],
                    rows: list[tuple[str, int, float, float, float]]) -> None:
    """The CPU per game each way cost the client and the scheduler: as measured, and over
    their idle spending (what a game adds), with the games/s ceiling that implies: the rate
    at which the idle share plus the games' fill one thread."""
    print(f"{games} three-seat Phase 10 games (phases-to-win 1) of built-in bots, one "
          "scheduler and two workers on this machine (plain TCP on 127.0.0.1); idle: the "
          f"client {idle[0] * 1000:.1f} ms and the scheduler {idle[1] * 1000:.1f} ms of CPU "
          "a second")
    print("| way | games/s played | client CPU/game (over idle) | its ceiling | "
          "scheduler CPU/game (over idle) | its ceiling |")
    print("|---|---|---|---|---|---|")
    figures = []
    for label, played, wall, client, scheduler in rows:
        per = [(cpu / played, max(cpu - rate * wall, 1e-9) / played, rate)
               for cpu, rate in ((client, idle[0]), (scheduler, idle[1]))]
        ceilings = [(1 - rate) / added for _, added, rate in per]
        figures.append((played / wall, [added for _, added, _ in per], ceilings))
        cells = [f"{raw * 1000:.3f} ms ({added * 1000:.3f} ms) | {ceiling:,.0f}/s"
                 for (raw, added, _), ceiling in zip(per, ceilings, strict=True)]
        print(f"| {label} | {played / wall:.1f} | {' | '.join(cells)} |")
    (rate0, added0, ceiling0), (rate1, added1, ceiling1) = figures
    print(f"after/before: client CPU a game x{added0[0] / added1[0]:.1f} less, scheduler "
          f"x{added0[1] / added1[1]:.1f} less; ceilings x{ceiling1[0] / ceiling0[0]:.1f} "
          f"(client) and x{ceiling1[1] / ceiling0[1]:.1f} (scheduler); games/s played "
          f"x{rate1 / rate0:.2f}")


if __name__ == "__main__":
    import sys as _sys

    if "--overhead" in _sys.argv:
        games = int(_sys.argv[_sys.argv.index("--games") + 1]) if "--games" in _sys.argv \
            else 900
        overhead(games)
    else:
        main()
