"""Games played in worker processes: a pool that survives its workers' deaths, and workers
that never outlive the tournament or leave a bot behind.

Games between in-process bots are CPU-bound and would queue behind one GIL in threads, and games
between bot programs still spend the referee's own CPU on every move (legality, observations,
the protocol's text), so games run in processes (`ProcessPoolExecutor`). The workers are forked
from multiprocessing's fork server, which has imported meldref once (`worker_context`): a
spawned worker imported meldref (and pydantic) itself, about 0.4 s of CPU each, which made a
game at -j 2 cost x1.25 the CPU of one at -j 1 (bench/bench_jobs.py). Forking the tournament
process itself would be cheaper still, but it may have threads (the progress display's), and a
fork copies their locks in whatever state they are.

A worker:
- runs with the tournament's environment, stdout and stderr (the fork server's are those of
  the first pool);
- keeps the bot programs it seats from game to game (`keeper.BotKeeper`; fresh ones per game
  with `Limits.fresh_bots`), and stops them when it ends;
- asks the kernel for SIGTERM when its parent dies (`PR_SET_PDEATHSIG`): the fork server,
  which ends when the tournament process does, also on `kill -9`, after which nothing of the
  tournament runs to stop it;
- on SIGTERM kills every bot program it started (their process groups and what escaped them)
  and exits at once. It must not raise `SystemExit` there: the executor would take it for the
  game's result and keep the worker waiting for the next game.

A worker that dies in a game (killed, out of memory) breaks the executor: every game it had in
flight is played again on a new pool, up to `MAX_TRIES` times each, and is only then recorded
as the referee's own error. Game ids make a game played twice count once.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import reduction
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Final

from ..engine.game import GAME_NAMES
from ..protocol.channel import look_before_sleeping
from ..protocol.records import ResultLine
from ..protocol.sweep import kill_all_bots
from . import forkserver
from .keeper import keep_bots_here
from .runner import replay_file
from .schedule import GameJob

RunJob = Callable[[GameJob, Path, bool], ResultLine]
MAX_TRIES: Final = 3  # plays of one game whose worker died, before it is recorded as an error
PR_SET_PDEATHSIG: Final = 1


class GamePool:
    """`workers` processes playing `run(job, folder, keep_logs)` for each job given."""

    def __init__(self, workers: int, run: RunJob, folder: Path, keep_logs: bool) -> None:
        self.workers, self.run, self.folder, self.keep_logs = workers, run, folder, keep_logs
        self.tries: Counter[str] = Counter()
        self.restarts = 0  # pools replaced after a worker died
        self._pool: ProcessPoolExecutor | None = None

    def play(self, jobs: Iterable[GameJob],
             stopping: Callable[[], bool] = lambda: False) -> Iterator[ResultLine]:
        """Each job's result line, as games finish (in order of index among those finishing
        together). Games are taken from `jobs` a few at a time, as workers free up. Once
        `stopping()` says so, no game is started, and the games in flight are finished and
        yielded: a stop never leaves a game's replay cut short."""
        source = iter(jobs)
        again: deque[GameJob] = deque()  # games whose worker died, to play first
        pending: dict[Future[ResultLine], GameJob] = {}
        try:
            while True:
                # After a worker died, the games lost with it are played again one at a
                # time: a try is counted only against a game that broke a worker alone, never
                # against the innocent ones that were in flight with it.
                limit = 1 if again else 2 * self.workers
                while len(pending) < limit and not stopping():
                    job = again.popleft() if again else next(source, None)
                    if job is None:
                        break
                    pending[self._executor().submit(self.run, job, self.folder,
                                                    self.keep_logs)] = job
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                lost = []
                for future in sorted(finished, key=lambda f: pending[f].index):
                    job = pending.pop(future)
                    if isinstance(future.exception(), BrokenProcessPool):
                        lost.append(job)
                    else:
                        yield _result(future, job)
                if lost:
                    # The dead worker broke the whole executor: what was still in flight is
                    # lost with it. Play it all again (in schedule order) on a new pool.
                    lost += pending.values()
                    pending.clear()
                    self._replace()
                    alone = len(lost) == 1
                    for job in sorted(lost, key=lambda j: j.index, reverse=True):
                        self.tries[job.game_id] += alone
                        if self.tries[job.game_id] >= MAX_TRIES:
                            yield job.error_line(f"its worker died {MAX_TRIES} times (killed, or "
                                              "out of memory?)")
                        else:
                            again.appendleft(job)
        finally:
            try:
                self.close(wait=not pending)
            finally:  # even if a second signal cut the close short
                for job in pending.values():
                    # Killed in flight (an interrupt): its replay is cut short, so it goes;
                    # the game has no result line, and a resume plays it again.
                    with contextlib.suppress(OSError):
                        replay_file(self.folder, job.game_id).unlink(missing_ok=True)

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=worker_context(),
                initializer=worker_init,
                initargs=(os.getpid(), dict(os.environ), self.workers, StandardFd(1),
                          StandardFd(2)))
        return self._pool

    def _replace(self) -> None:
        self.close(wait=False)
        self.restarts += 1

    def close(self, wait: bool = True) -> None:
        """Stop the workers: at once (SIGTERM: each kills its bots) unless `wait`ing for the
        games in flight is what the caller wants."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if not wait:
            stop_workers()
        pool.shutdown(wait=True, cancel_futures=True)


def _result(future: Future[ResultLine], job: GameJob) -> ResultLine:
    error = future.exception()
    if error is None:
        return future.result()
    # run_job records every failure of a game as its result: this is a bug in meldref itself.
    return job.error_line(f"the worker failed: {error!r}")


def stop_workers() -> None:
    """SIGTERM every worker process of ours (`worker_init`'s handler kills its bots first)."""
    for process in multiprocessing.active_children():
        with contextlib.suppress(Exception):
            process.terminate()


def worker_context() -> BaseContext:
    """How workers start: forked from the fork server, which imports what a game needs
    (`worker_modules`) once, when the first pool starts; spawned where there is no fork server.
    What the pool needs of the server beyond the public API is in `forkserver`."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(worker_modules())  # heeded only before the server starts
    # Left to itself the server ends only once this process has exited (its "alive" pipe
    # closed), so it outlived `meldref tournament -j 2`'s return a moment: stopped at exit.
    atexit.unregister(forkserver.stop)  # once, however many pools the process makes
    atexit.register(forkserver.stop)
    return context


def worker_modules() -> list[str]:
    """The modules a worker's games import: this one (the referee, the engines, the replay
    writer), the built-in bots. A worker also runs the tournament's main script again (as
    multiprocessing does), so with meldref's own command line that is loaded too."""
    root = __name__.partition(".")[0]
    names = [__name__, *(f"{root}.bots.{game}" for game in GAME_NAMES)]
    return [*names, f"{root}.cli"] if f"{root}.cli" in sys.modules else names


class StandardFd:
    """The tournament's stdout or stderr (`fd` 1 or 2) as it is when a worker starts, handed
    to the worker with its start-up arguments: a worker forked from the fork server has the
    server's, those of the process's first pool (another file, or a pipe no one reads)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __reduce__(self) -> tuple[Callable[..., int | None], tuple[object, int]]:
        # Pickled as the worker starts: multiprocessing sends the descriptor along.
        try:
            os.fstat(self.fd)
        except OSError:
            return _standard_fd, (None, self.fd)  # closed here: the worker keeps its own

        return _standard_fd, (reduction.DupFd(self.fd), self.fd)


def _standard_fd(sent: object, fd: int) -> int | None:
    """In the worker: the descriptor received put in place of its `fd`."""
    detach = getattr(sent, "detach", None)
    if not callable(detach):
        return None
    received = int(detach())
    if received != fd:
        os.dup2(received, fd)
        os.close(received)
    return fd


def worker_init(tournament: int, environment: dict[str, str], workers: int,
                *standard: object) -> None:
    """Set up a worker: the tournament's environment (a forked worker has the fork server's),
    its stdout and stderr (`StandardFd`, put in place as the arguments arrive); with as many
    workers as cores or more, reads that sleep at once (`look_before_sleeping`);
    Ctrl-C is the tournament's to decide; SIGTERM (sent by the tournament, or by the kernel
    when the worker's parent dies) kills the worker's bots and ends it. The bot programs the
    worker seats are kept from game to game (`keeper`), stopped when it ends."""
    os.environ.clear()
    os.environ.update(environment)
    look_before_sleeping(workers < (os.cpu_count() or 1))
    # The server ends when no process holds its "alive" pipe; were the workers to hold it, the
    # server would outlive a tournament killed with SIGKILL, and so would they (their
    # parent-death signal is the server's end), and their bots.
    forkserver.leave_alive_pipe()
    keep_bots_here()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_now)
    parent = os.getppid()  # the tournament, or the fork server (which ends with it)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent or not _alive(tournament):
        os._exit(1)  # the tournament died before prctl took effect


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_now(signum: int, frame: object) -> None:
    kill_all_bots()
    os._exit(128 + signum)
