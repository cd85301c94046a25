"""Tournaments: many games over a schedule, in parallel, streamed to disk and resumable.

The output folder holds:
- `tournament.json`: the plan and its fingerprint (a rerun must match it to resume);
- `results.jsonl`: one line per finished game, written and flushed as each game ends;
- `replays/<game-id>.jsonl`: every game's replay;
- `logs/<game-id>/seat<k>-<bot>.stderr`: bots' stderr (kept for failed games, or all with
  `keep_logs`);
- `failures.txt`: one line per failed seat (game id, seat, bot, outcome, log, replay);
- `standings.json`: the standings once the run ends.

Parallel games run in worker processes (`ProcessPoolExecutor`): games between in-process bots
are CPU-bound and would queue behind one GIL in threads, and games between subprocess bots still
spend the referee's own CPU on every move (parsing, legality, observations). A worker costs one
interpreter; each worker asks the kernel to stop it when the tournament process dies, and closes
its bots on the way out. Games with bot programs use a worker even with one job, for that
reason; games between built-in bots alone run in the tournament process when `jobs` is 1, and
with more jobs the tournament process plays beside `jobs - 1` workers.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import secrets
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from .config import ConfigError, TournamentConfig
from .private import folder_problem, open_private, private_dir, write_private_text
from .runner import run_job
from .schedule import GameJob
from .standings import Standings, compute_standings

RunJob = Callable[[GameJob, Path, dict[str, Any], bool], dict[str, Any]]
ProgressHook = Callable[[dict[str, Any], int, int], None]


@dataclass(slots=True)
class TournamentRun:
    """What a run did: games played now, games found done, and the standings of all of them."""

    folder: Path
    total: int
    already_done: int
    played: int
    stopped: str | None  # why the run stopped early: "sprt", "stop-after", "interrupted"
    standings: Standings
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def missing(self) -> int:
        return self.total - len(self.results)


# ----------------------------------------------------------------------------------------------
# The folder


def check_folder(config: TournamentConfig) -> None:
    """`ConfigError` if the folder holds games of another tournament (nothing is written)."""
    config = settle_seed(config)
    folder = config.folder
    meta = folder / "tournament.json"
    if not meta.exists() or not read_results(folder / "results.jsonl"):
        return
    try:
        found = json.loads(meta.read_text(encoding="utf-8")).get("fingerprint")
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{meta} is unreadable: {exc}") from None
    fingerprint = config.plan.fingerprint()
    if found != fingerprint:
        raise ConfigError(f"{folder} holds another tournament (fingerprint {found}, this "
                          f"one {fingerprint}): choose another --out folder")


def settle_seed(config: TournamentConfig) -> TournamentConfig:
    """The configuration with a seed: its own, else the one drawn for this tournament before
    (found in its folder: a rerun resumes), else a new random one. The folder is pinned first:
    the default folder is named after the seedless plan, so a rerun finds it."""
    if config.plan.seed is not None:
        return config
    folder, seedless = config.folder, config.plan.fingerprint()
    seed = _drawn_seed(folder, seedless)
    if seed is None:
        seed = secrets.randbits(48)
    return replace(config, out=folder, plan=replace(config.plan, seed=seed), drawn_from=seedless)


def _drawn_seed(folder: Path, seedless: str) -> int | None:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        data = json.loads((folder / "tournament.json").read_text(encoding="utf-8"))
        seed = data["plan"]["seed"]
        if data.get("drawn_from") == seedless and isinstance(seed, int):
            return seed
    return None


def prepare_folder(config: TournamentConfig) -> Path:
    """Create the folder, or check that it holds this same tournament; `ConfigError` if not,
    or if it cannot be written ("X is not a folder", "cannot write X: <reason>")."""
    check_folder(config)
    folder = config.folder
    problem = folder_problem(folder, create=True)
    if problem:
        raise ConfigError(problem)
    # The seed is written here only: the folder is owner-only, unlike a command line.
    data = {"fingerprint": config.plan.fingerprint(), "drawn_from": config.drawn_from,
            "plan": asdict(config.plan),
            "jobs": config.jobs, "limits": dict(config.limits),
            "sprt": asdict(config.sprt) if config.sprt else None}
    try:
        for inner in ("replays", "logs"):  # an older meldref's may be readable by all
            if (folder / inner).is_dir():
                private_dir(folder / inner)
        write_private_text(folder / "tournament.json",
                           json.dumps(data, indent=2, default=str) + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot write {exc.filename or folder}: {exc.strerror or exc}"
                          ) from None
    return folder


def read_results(path: Path) -> list[dict[str, Any]]:
    """The finished games in a results file; a last line cut short by a kill is removed."""
    if not path.exists():
        return []
    data = path.read_bytes()
    keep = data[: data.rfind(b"\n") + 1]
    if len(keep) != len(data):
        with path.open("r+b") as f:  # drop the partial line so appends start clean
            f.truncate(len(keep))
    out = []
    for line in keep.decode("utf-8", errors="replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            record = json.loads(line)
            if isinstance(record, dict) and "game_id" in record:
                out.append(record)
    return out


class ResultsLog:
    """Appends result lines and failure lines, flushing each one."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._results: IO[str] = open_private(folder / "results.jsonl", "a", encoding="utf-8")
        self._failures: IO[str] = open_private(folder / "failures.txt", "a", encoding="utf-8")

    def append(self, result: dict[str, Any]) -> None:
        self._results.write(json.dumps(result, separators=(",", ":")) + "\n")
        self._results.flush()
        for line in failure_lines(result):
            self._failures.write(line + "\n")
        self._failures.flush()

    def close(self) -> None:
        self._results.close()
        self._failures.close()


def failure_lines(result: dict[str, Any]) -> list[str]:
    """One tab-separated line per seat that failed in `result` (or the game's error)."""
    gid, replay = result["game_id"], result.get("replay") or "-"
    if result.get("status") != "ok":
        return [f"{gid}\t-\t-\terror: {result.get('error')}\t-\t{replay}"]
    lines = []
    logs = result.get("logs") or [None] * len(result["bots"])
    for seat, faults in enumerate(result.get("faults") or []):
        if faults:
            outcomes = ",".join(sorted({str(f.get("outcome")) for f in faults}))
            lines.append(f"{gid}\tseat {seat}\t{result['bots'][seat]}\t{outcomes}\t"
                         f"{logs[seat] or '-'}\t{replay}")
    return lines


# ----------------------------------------------------------------------------------------------
# Running


def run_tournament(
    config: TournamentConfig,
    *,
    on_result: ProgressHook | None = None,
    stop_after: int | None = None,
    keep_logs: bool = False,
    run: RunJob = run_job,
    on_start: Callable[[int, int], None] | None = None,
) -> TournamentRun:
    """Play every game of `config` not yet in its folder's results, then rank the bots.

    `on_start(done, total)` is called once the games already played are known, `on_result`
    after each game; `stop_after` stops after that many games played now.
    """
    config = settle_seed(config)
    folder = prepare_folder(config)
    jobs = config.plan.jobs()
    results = read_results(folder / "results.jsonl")
    known = {job.game_id for job in jobs}
    results = [r for r in results if r["game_id"] in known]
    done = {r["game_id"] for r in results}
    todo = [job for job in jobs if job.game_id not in done]
    already = len(results)
    if on_start is not None:
        on_start(already, len(jobs))
    names = [b.name for b in config.plan.bots]
    stopped: str | None = None
    log = ResultsLog(folder)
    played = 0
    try:
        if _sprt_verdict(config, results, names):
            stopped, todo = "sprt", []
        for result in _play(config, todo, folder, keep_logs, run):
            results.append(result)
            log.append(result)
            played += 1
            if on_result is not None:
                on_result(result, len(results), len(jobs))
            if _sprt_verdict(config, results, names):
                stopped = "sprt"
                break
            if stop_after is not None and played >= stop_after:
                stopped = "stop-after"
                break
    except KeyboardInterrupt:
        stopped = "interrupted"
    finally:
        log.close()
    standings = compute_standings(results, names, config.sprt)
    write_private_text(folder / "standings.json", json.dumps(standings.to_json(), indent=2) + "\n")
    return TournamentRun(folder, len(jobs), already, played, stopped, standings, results)


def _sprt_verdict(config: TournamentConfig, results: list[dict[str, Any]],
                  names: list[str]) -> bool:
    if config.sprt is None or len(names) != 2:
        return False
    h2h = compute_standings(results, names).head_to_head
    return h2h is not None and config.sprt.verdict(h2h.wins, h2h.draws, h2h.losses) is not None


def _play(config: TournamentConfig, todo: list[GameJob], folder: Path, keep_logs: bool,
          run: RunJob) -> Iterator[dict[str, Any]]:
    limits = dict(config.limits)
    if not todo:
        return
    jobs, programs = min(config.jobs, len(todo)), _has_programs(todo)
    if jobs == 1 and not programs:
        # Built-in bots only: no process can outlive us, so no worker is needed.
        for job in todo:
            yield run(job, folder, limits, keep_logs)
        return
    # Bot programs are played in worker processes even one game at a time: a worker dies with
    # the tournament process, also on kill -9 (after which nothing of ours runs), and stops its
    # bots on the way out; the tournament process could not stop them itself. Built-in bots
    # alone: the tournament process plays too, beside one worker fewer (one start-up less, and
    # no process idles waiting).
    yield from _play_parallel(jobs, todo, folder, limits, keep_logs, run, inline=not programs)


def _has_programs(todo: list[GameJob]) -> bool:
    return any(not b.spec.strip().startswith("builtin:") for job in todo for b in job.bots)


def _play_parallel(workers: int, todo: list[GameJob], folder: Path, limits: dict[str, Any],
                   keep_logs: bool, run: RunJob, inline: bool = False
                   ) -> Iterator[dict[str, Any]]:
    """`workers` games at a time in worker processes, or with `inline` in `workers - 1` of them
    and the tournament process."""
    # A bounded window of submitted games, so that an SPRT stop or Ctrl-C leaves little to cancel.
    context = multiprocessing.get_context("spawn")
    size = workers - inline
    pool = ProcessPoolExecutor(max_workers=size, mp_context=context,
                               initializer=_worker_init, initargs=(os.getpid(),))
    pending: dict[Future[dict[str, Any]], GameJob] = {}
    queue = list(reversed(todo))
    clean = False
    try:
        while queue or pending:
            while queue and len(pending) < 2 * size:
                job = queue.pop()
                pending[pool.submit(run, job, folder, limits, keep_logs)] = job
            if inline and queue:  # our own game, while the workers play theirs
                yield run(queue.pop(), folder, limits, keep_logs)
                finished = {future for future in pending if future.done()}
            else:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=lambda f: pending[f].index):
                yield _outcome(future, pending.pop(future))
        clean = True
    finally:
        if not clean:
            _stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _outcome(future: Future[dict[str, Any]], job: GameJob) -> dict[str, Any]:
    error = future.exception()
    if error is None:
        return future.result()
    # A worker that died (killed, out of memory) takes its game with it: record why.
    return {**job.to_json(), "status": "error", "error": f"worker failed: {error!r}"}


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    # The executor has no public way to stop games already running; its workers stop on SIGTERM
    # (see `_worker_init`), closing their bots.
    for process in list(getattr(pool, "_processes", {}).values()):
        with contextlib.suppress(Exception):
            process.terminate()


def _worker_init(parent: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the tournament process decides on Ctrl-C
    signal.signal(signal.SIGTERM, _exit_on_signal)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG: our parent died -> SIGTERM
    if os.getppid() != parent:
        os._exit(1)  # the parent died before prctl took effect


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
