"""What `-j 2` costs against `-j 1`, in CPU per game, and what bounds its wall-clock speedup:
for `meldref tournament` (built-in bots) and for `meldref contest run` (bot programs: a contest
seats nothing else), with the contest's database cost per game.

    python bench/bench_jobs.py [--games 40] [--contest-games 48] [--rounds 3]
                               [--only tournament|contest] [--json PATH]

Every run is a fresh process (a `meldref` command has imported meldref before it plays: so has
the run, before it starts timing), run `--rounds` times for each -j, interleaved; the medians
are kept. The CPU counted is the whole process tree's: the run's own, its workers' and every
helper's (multiprocessing's fork server and resource tracker; bot programs), read from the
kernel (`getrusage`, and /proc for the helpers still running at the end), not wall time,
which on a shared machine says more about the others' load than about meldref.

Tournament (Phase 10, four seats: greedy, random, greedy, random, as bench/run.py's):
- CPU per game at -j 1 and -j 2, and their ratio (issue 28's target: within 5%);
- where -j 2's CPU goes, per game: in the games themselves (timed around `run_job` where it
  runs), in the parent (handing out jobs, taking results, writing results.jsonl), and the rest
  (workers' and the fork server's start-up and exit, passing jobs and results);
- the wall-clock ratio (on this machine, at its load), and the bound on an idle one: with
  N idle cores, -j N can at best be N x (CPU per game at -j 1) / (CPU per game at -j N)
  times faster, and never more than (CPU per game at -j 1) / (the parent's serial CPU per
  game): the parent takes every result in turn (Amdahl).

Contest (Phase 10 to one phase, two seats, three copies of the instant C bot, bench/c, or of
bots/random_bot.py without a C compiler): games/s and CPU per game at -j 1 and -j 2, and the
time the run spends in its database per game (every `ContestStore` call of the run, timed
around the call: sqlite and the Python around it), with the SQL statements per game (writes:
INSERT, UPDATE, DELETE) and the ratings' refits.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import inspect
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # meldref is imported inside the measured runs only
    from meldref.protocol.records import ResultLine

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
PR_SET_CHILD_SUBREAPER = 36
SPECS = ["builtin:greedy", "builtin:random"] * 2


# ----------------------------------------------------------------------------------------------
# CPU of a process tree


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def descendants(root: int) -> list[int]:
    """The live processes under `root` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def tree_cpu() -> float:
    """CPU seconds of this process, of its children that ended, and of every live descendant
    with the children it reaped (a fork server reaps its workers: they are not ours)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + ended.ru_utime + ended.ru_stime
    for pid in descendants(os.getpid()):
        fields = _stat(pid)
        if fields is not None:  # utime stime cutime cstime: fields 14-17 of stat
            total += sum(int(x) for x in fields[11:15]) / TICK
    return total


def self_cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def become_subreaper() -> None:
    """Orphans under this process (a fork server outliving its tournament) come back to it,
    so their CPU is counted when reaped, not lost to init."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)


def reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        if not pid:
            return


# ----------------------------------------------------------------------------------------------
# One run, in a fresh process


GAME_CPU = "bench-game-cpu"  # a folder in the tournament's: a file per game, its CPU seconds


def timed_job(job: Any, folder: Path, keep_logs: bool) -> ResultLine:
    """`run_job`, with the CPU the game took where it ran (the parent, or a worker), written
    beside its result (a result line is typed: it has no room for a figure of ours)."""
    from meldref.tournament.runner import run_job

    began = time.process_time()
    line = run_job(job, folder, keep_logs)
    cpu = time.process_time() - began
    (folder / GAME_CPU).mkdir(exist_ok=True)
    (folder / GAME_CPU / job.game_id).write_text(repr(cpu))
    return line


def tournament_child(jobs: int, games: int, start: str | None = None) -> dict[str, Any]:
    from meldref.engine.game import find_game
    from meldref.protocol.seats import BotSpec
    from meldref.tournament.config import TournamentConfig
    from meldref.tournament.run import open_tournament, run_tournament
    from meldref.tournament.schedule import Plan, bot_entries

    if start is not None:  # workers started another way, to compare (forkserver is meldref's)
        import multiprocessing

        from meldref.tournament import pool

        pool.worker_context = lambda: multiprocessing.get_context(start)
    plan = Plan("phase10", tuple(bot_entries([BotSpec.parse(s) for s in SPECS])),
                players=len(SPECS), games=games, duplicate=False, seed=7,
                rules=find_game("phase10").rules())
    with tempfile.TemporaryDirectory() as tmp:
        config = TournamentConfig(plan, jobs=jobs, out=Path(tmp) / "t")
        with measured() as figures:
            run = run_tournament(open_tournament(config), run=timed_job)
        figures["game_cpu"] = sum(float(f.read_text())
                                  for f in (config.folder / GAME_CPU).iterdir())
    if run.played != games or not all(r.ok for r in run.results):
        raise RuntimeError(f"played {run.played} of {games} games, or some failed")
    figures["games"] = games
    return figures


@contextlib.contextmanager
def measured() -> Iterator[dict[str, Any]]:
    """Wall, this process's CPU, and the whole tree's CPU of the block (helpers it left
    running, such as a fork server, counted as they stand at its end)."""
    figures: dict[str, Any] = {}
    wall, parent, tree = time.perf_counter(), self_cpu(), tree_cpu()
    yield figures
    figures.update(wall=time.perf_counter() - wall, parent_cpu=self_cpu() - parent,
                   tree_cpu=tree_cpu() - tree)


def run_child(part: str, jobs: int, games: int, folder: Path | None = None,
              start: str | None = None) -> dict[str, Any]:
    """One run in a fresh process; its figures. The helpers it leaves (a fork server ends
    just after its run) are reaped here, as the subreaper, so none is left running."""
    args = [sys.executable, str(Path(__file__).resolve()), "--child", part, "--jobs", str(jobs),
            "--games", str(games), *(["--folder", str(folder)] if folder else []),
            *(["--start", start] if start else [])]
    done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=1800)
    if done.returncode:
        raise RuntimeError(f"{part} -j {jobs}: {done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    reap_all()
    return figures


# ----------------------------------------------------------------------------------------------
# Tournament


# The runs of a round: (name, -j, games: None for --games, how workers start: None for meldref's)
TOURNAMENT_RUNS = (("j1", 1, None, None), ("j2", 2, None, None), ("j2 spawned", 2, None, "spawn"),
                   ("j2 start", 2, 2, None))


def tournament(games: int, rounds: int) -> list[dict[str, Any]]:
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, *_ in TOURNAMENT_RUNS}
    for r in range(rounds):
        for name, jobs, count, start in (TOURNAMENT_RUNS if r % 2 == 0
                                         else TOURNAMENT_RUNS[::-1]):
            runs[name].append(run_child("tournament", jobs, count or games, start=start))

    def med(name: str, key: str) -> float:
        return statistics.median(f[key] / f["games"] for f in runs[name])

    def rest(name: str) -> float:  # seconds a run, not in the games nor in the parent
        return statistics.median(f["tree_cpu"] - f["parent_cpu"] - f["game_cpu"]
                                 for f in runs[name])

    cpu = {name: med(name, "tree_cpu") for name in runs}
    parent, start_up = med("j2", "parent_cpu"), rest("j2 start")
    once_started = cpu["j2"] - start_up / games
    return [{"figure": "tournament -j", "games": games, "rounds": rounds,
             "cpu_ms_per_game_j1": round(1000 * cpu["j1"], 1),
             "cpu_ms_per_game_j2": round(1000 * cpu["j2"], 1),
             "cpu_ratio": round(cpu["j2"] / cpu["j1"], 3),
             "cpu_ratio_spawned": round(cpu["j2 spawned"] / cpu["j1"], 3),
             "start_up_s": round(start_up, 3),
             "start_up_s_spawned": round(rest("j2 spawned") - (rest("j2") - start_up), 3),
             "cpu_ratio_once_started": round(once_started / cpu["j1"], 3),
             "j1_in_games_ms": round(1000 * med("j1", "game_cpu"), 1),
             "j2_in_games_ms": round(1000 * med("j2", "game_cpu"), 1),
             "j2_parent_ms": round(1000 * parent, 2),
             "j2_passing_ms": round(1000 * (rest("j2") - start_up) / max(1, games - 2), 2),
             "wall_ratio": round(med("j1", "wall") / med("j2", "wall"), 3),
             "idle_bound_2_cores": round(2 * cpu["j1"] / cpu["j2"], 3),
             "amdahl_bound": round(cpu["j1"] / parent, 1)}]


def print_tournament(row: dict[str, Any]) -> None:
    print(f"tournament, {row['games']} Phase 10 games of built-in bots, median of "
          f"{row['rounds']} runs each:")
    print(f"  CPU per game: -j 1 {row['cpu_ms_per_game_j1']} ms, -j 2 "
          f"{row['cpu_ms_per_game_j2']} ms: x{row['cpu_ratio']:.3f} (spawned workers: "
          f"x{row['cpu_ratio_spawned']:.3f})")
    print(f"  -j 2's start-up: {row['start_up_s']} s a run (spawned workers: "
          f"{row['start_up_s_spawned']} s); once started, a game costs "
          f"x{row['cpu_ratio_once_started']:.3f} the CPU of -j 1's")
    print(f"  -j 2's per game: in the games {row['j2_in_games_ms']} ms (-j 1: "
          f"{row['j1_in_games_ms']} ms), the parent {row['j2_parent_ms']} ms, passing jobs and "
          f"results in the workers {row['j2_passing_ms']} ms")
    print(f"  wall: -j 2 x{row['wall_ratio']:.2f} the games/s of -j 1 (this machine, now); "
          f"bound on 2 idle cores x{row['idle_bound_2_cores']:.2f}; the parent's serial "
          f"share bounds any -j at x{row['amdahl_bound']:.0f}")


# ----------------------------------------------------------------------------------------------
# Contest


def contest_bot(tmp: Path) -> tuple[Path, str]:
    """The instant C bot (compiled here), else bots/random_bot.py; (file, command)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is not None:
        program = tmp / "instant_bot"
        made = subprocess.run([cc, "-O2", "-o", str(program), str(ROOT / "bench" / "c" /
                                                                  "instant_bot.c")],
                              capture_output=True, check=False)
        if made.returncode == 0:
            return program, "./instant_bot"
    return ROOT / "bots" / "random_bot.py", "python3 random_bot.py"


def make_contest(folder: Path, bot: Path, command: str, *init: str) -> None:
    """A phase10 contest of three copies of `bot`, `init`'s flags given to `contest init`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def meldref(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "meldref", "contest", *args], check=True,
                       env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)

    meldref("init", str(folder), "--game", "phase10", "-n", "2", "-r", "phases-to-win=1", *init)
    for name in ("a", "b", "c"):
        meldref("submit", str(folder), str(bot), "--name", name, "--cmd", command)


def contest_child(jobs: int, games: int, folder: Path) -> dict[str, Any]:
    from meldref.contest.ladder.run import play_ladder
    from meldref.contest.ratings import LadderRatings
    from meldref.contest.store import ContestStore

    spent: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    statements: Counter[str] = Counter()
    for name, method in list(vars(ContestStore).items()):
        if inspect.isfunction(method) and name not in ("__init__", "write"):
            setattr(ContestStore, name, _timed(method, name, spent, calls))
    opened = vars(ContestStore)["open"].__func__

    def open_counted(folder: Path) -> ContestStore:
        store: ContestStore = opened(folder)
        store.db.set_trace_callback(lambda sql: statements.update([sql.split(None, 1)[0]
                                                                   .upper()]))
        return store

    ContestStore.open = staticmethod(open_counted)  # type: ignore[method-assign]
    LadderRatings.fit = _timed(LadderRatings.fit, "fit", spent, calls)  # type: ignore[method-assign]
    with measured() as figures:
        run = play_ladder(folder, jobs=jobs, games=games, wait=False)
    figures["games"] = run.played
    store = [k for k in calls if k != "fit"]
    figures.update(store_s=sum(spent[k] for k in store),
                   store_wall_s=sum(spent[k + " wall"] for k in store), fit_s=spent["fit"],
                   statements=dict(statements), calls=dict(calls),
                   by_call={k: round(spent[k], 4) for k in calls})
    return figures


def _timed(method: Callable[..., Any], name: str, spent: Counter[str],
           calls: Counter[str]) -> Callable[..., Any]:
    """`method`, its CPU time added to `spent[name]` and its wall time to `spent[name +
    " wall"]`; a call inside another timed one (a store method calling another) is counted
    once, in the outer one."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _timed.inside:  # type: ignore[attr-defined]
            return method(*args, **kwargs)
        _timed.inside = True  # type: ignore[attr-defined]
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return method(*args, **kwargs)
        finally:
            spent[name] += time.thread_time() - cpu
            spent[name + " wall"] += time.perf_counter() - wall
            calls[name] += 1
            _timed.inside = False  # type: ignore[attr-defined]

    return wrapper


_timed.inside = False  # type: ignore[attr-defined]


def contest(games: int, rounds: int) -> list[dict[str, Any]]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-jobs-"))
    try:
        bot, command = contest_bot(tmp)
        runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
        for r in range(rounds):
            for jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
                folder = tmp / f"c{r}-{jobs}"
                make_contest(folder, bot, command)
                figures = run_child("contest", jobs, games, folder)
                figures["db_bytes"] = sum(p.stat().st_size for p in folder.glob("contest.db*"))
                runs[jobs].append(figures)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def med(jobs: int, key: str) -> float:
        return statistics.median(f[key] / f["games"] for f in runs[jobs])

    writes = ("INSERT", "UPDATE", "DELETE", "REPLACE")
    out = []
    for jobs in (1, 2):
        last = runs[jobs][-1]
        out.append({"figure": "contest run", "jobs": jobs, "bot": command,
                    "games": last["games"], "rounds": rounds,
                    "games_per_s": round(1 / med(jobs, "wall"), 2),
                    "cpu_ms_per_game": round(1000 * med(jobs, "tree_cpu"), 1),
                    "parent_cpu_ms_per_game": round(1000 * med(jobs, "parent_cpu"), 1),
                    "db_ms_per_game": round(1000 * med(jobs, "store_s"), 2),
                    "db_wall_ms_per_game": round(1000 * med(jobs, "store_wall_s"), 2),
                    "fit_ms_per_game": round(1000 * med(jobs, "fit_s"), 2),
                    "statements_per_game": round(sum(last["statements"].values())
                                                 / last["games"], 1),
                    "writes_per_game": round(sum(n for k, n in last["statements"].items()
                                                 if k in writes) / last["games"], 1),
                    "db_bytes_per_game": int(med(jobs, "db_bytes")),
                    "by_call_ms_per_game": {k: round(1000 * v / last["games"], 3)
                                            for k, v in sorted(last["by_call"].items(),
                                                               key=lambda kv: -kv[1])[:6]}})
    one, two = out
    two["cpu_ratio"] = round(two["cpu_ms_per_game"] / one["cpu_ms_per_game"], 3)
    two["wall_ratio"] = round(two["games_per_s"] / one["games_per_s"], 3)
    two["amdahl_bound"] = round(one["cpu_ms_per_game"] / two["parent_cpu_ms_per_game"], 1)
    return out


def print_contest(rows: list[dict[str, Any]]) -> None:
    one, two = rows
    print(f"contest run, Phase 10 to one phase, two seats, three copies of `{one['bot']}`, "
          f"{one['games']} games, median of {one['rounds']} runs each:")
    for row in rows:
        print(f"  -j {row['jobs']}: {row['games_per_s']} games/s, CPU {row['cpu_ms_per_game']} "
              f"ms a game (the run's own {row['parent_cpu_ms_per_game']} ms); database "
              f"{row['db_ms_per_game']} ms CPU ({row['db_wall_ms_per_game']} ms wall) a game "
              f"({row['statements_per_game']} statements, "
              f"{row['writes_per_game']} writes; {row['db_bytes_per_game']} bytes), ratings "
              f"{row['fit_ms_per_game']} ms CPU a game")
    print(f"  -j 2: CPU per game x{two['cpu_ratio']:.3f} of -j 1's, games/s x"
          f"{two['wall_ratio']:.2f}; the run's serial share bounds any -j at "
          f"x{two['amdahl_bound']:.1f}")
    print(f"  CPU by call, ms a game (-j 2): {two['by_call_ms_per_game']}")


# ----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="tournament games a run")
    parser.add_argument("--contest-games", type=int, default=48, help="contest games a run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each -j (medians)")
    parser.add_argument("--only", choices=("tournament", "contest"))
    parser.add_argument("--json", type=Path, help="also write the JSON lines to this file")
    parser.add_argument("--child", choices=("tournament", "contest"), help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--start", choices=("spawn", "forkserver", "fork"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child == "tournament":
        print(json.dumps(tournament_child(args.jobs, args.games, args.start)))
        return 0
    if args.child == "contest":
        print(json.dumps(contest_child(args.jobs, args.games, args.folder)))
        return 0
    become_subreaper()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    rows: list[dict[str, Any]] = []
    if args.only in (None, "tournament"):
        rows += tournament(args.games, args.rounds)
        print_tournament(rows[-1])
    if args.only in (None, "contest"):
        found = contest(args.contest_games, args.rounds)
        rows += found
        print_contest(found)
    lines = [json.dumps(row) for row in rows]
    print("\n".join(lines))
    if args.json:
        args.json.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
