"""Games played on a dask.distributed cluster: `ClusterPool`, with `pool.GamePool`'s interface;
the client side (what its workers run is in `cluster_worker`).

Imported only when a tournament has a `cluster` (`pip install 'meldref[cluster]'`). Each deal
set (a deal's games in all its seatings, `BATCH_GAMES` at most) is one dask task, carrying
the run's setup once for its games, cut to the bots they seat; the scheduler spreads the tasks
over the workers, and results stream back to the tournament process, which alone writes the
output folder's `results.jsonl`.

How it keeps the guarantees of local runs:
- **Start-up check.** Before any game, a task pinned to every worker checks that worker: the
  same meldref, by version and by a digest of its code (`proof.code_digest`), every bot
  program's files by digest (`proof.program_digests`, with or without a bot folder), the bot
  folder (present; with `upload-bots` unpacked from dask's upload and
  checked by digest; an explicit shared bot folder checked by digest too), every distinct bot
  started through its handshake under the tournament's limits, and whether it sees the output
  folder. Any failure stops the tournament (exit 2) naming the worker and the bot. A worker
  that joins later runs the same check before its first game, and checks each bot the first
  time a task seats it (a task carries only its games' bots), and stops the tournament the
  same way if it fails.
- **Files.** "shared": a worker plays each game in its own attempt folder under
  `<out>/.cluster/<run>/`, and the tournament process moves the replay and kept logs into
  place when it takes the result; "client": the worker plays in a scratch folder of its own
  and sends the files back with the result. Either way only the tournament process writes
  `replays/` and `logs/`, and only for the one result it counts per game: a game still played
  by a worker after its tournament process was killed (dask cannot stop a running task)
  writes nowhere that counts, and is played again when the tournament resumes. Each replay that
  comes back is re-simulated here (`replay verify`) before its game counts: a worker's proof
  at start-up says what it runs, this says what it played.
- **Worker deaths.** dask plays again elsewhere the tasks of a worker that died (up to the
  scheduler's `allowed-failures`; `local:N` sets 2, so 3 plays as with local workers), then
  reports `KilledWorker`: a deal set's task is then played again a game a task, and a game
  that alone kills its worker is recorded as the referee's own error, played again by a
  rerun. A game id is counted once whatever arrives twice.
- **Bots.** Games run in the workers' task threads; every bot program runs under `setpriv
  --pdeathsig KILL`, so a worker process that dies (killed, out of memory) takes its bots with
  it, and under the same `Limits` as everywhere. The seed travels inside the pickled job, never
  on a command line. A worker keeps the bot programs of a run from game to game, as a local
  pool's worker does (`keeper.BotKeeper`, one per run and task thread; none with
  `fresh_bots`): the kernel's death signal follows the thread that started a bot, not its
  process, so a bot plays only the games of the thread that started it, and dies with that
  thread (dask's task threads live as long as their worker process). A run's
  kept bots are stopped when the run ends (`release_run`, on every worker), when the worker
  process exits, and once the run has played no game on the worker for `KEEP_IDLE` seconds
  (its tournament process was killed: no `release_run` comes).
- **Security.** Whoever can reach the scheduler can run code on every worker as its user: the
  address is a trust boundary. `local:N` listens on 127.0.0.1 only, with TLS certificates made
  for the run and held in memory (it refuses to run without `cryptography`) so that no other
  local user (a bot running as another user) can submit work, and serves none of dask's
  plain-HTTP status pages (routes off, servers stopped). `tls://` addresses use dask's own TLS
  settings (`distributed.comm.tls.*`, docs/cluster.md), refused at once when they are
  missing; a plain `tcp://` address only with `insecure-tcp`, which says what it exposes. A
  worker of another user than the tournament's cannot share its output folder (the files it
  wrote could not be moved into place): client files then, or a refusal before any game.
- **Ends.** A lost scheduler, a refused setting, a worker that cannot play: one message and
  exit 2 (ClusterError), never dask's traceback (its loggers are held to CRITICAL here).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
import threading
import time
import uuid
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, Literal

import dask.config
import distributed

from .. import __version__
from ..private import open_private, private_dir, write_private_text
from ..protocol.records import ResultLine
from .botfolder import BotFolderError, digest, pack
from .cluster_worker import (
    GameOutcome,
    WorkerReport,
    WorkerSetup,
    check_worker,
    files_of,
    play_batch,
    release_run,
    seating_only,
)
from .config import ConfigError, TournamentConfig
from .pool import MAX_TRIES, RunJob
from .proof import code_digest, program_digests
from .schedule import GameJob

CONNECT_TIMEOUT: Final = 20.0  # seconds to reach the scheduler
WORKER_WAIT: Final = 60.0  # seconds for a first worker to join it
CHECK_POLL: Final = 0.5  # seconds between looks for workers gone during the start-up check
WINDOW_REFRESH: Final = 1.0  # seconds between looks at how many threads the workers have
CLOSE_TIMEOUT: Final = 10.0  # seconds for the client, then a local cluster, to close
MAX_FILE_BYTES: Final = 256 << 20  # a replay or log sent back (logs are cut at 1 MiB)
Files = Literal["shared", "client"]
# What a lost scheduler raises at the client: a closed connection (an OSError), a time-out,
# or futures cancelled under it.
LOST: Final = (OSError, TimeoutError, distributed.client.FutureCancelledError,
               asyncio.CancelledError)
# What a client needs to reach a tls:// scheduler: the authority to trust, its own certificate.
# (the key may be in the certificate's file, as dask allows)
TLS_SETTINGS: Final = ("distributed.comm.tls.ca-file", "distributed.comm.tls.client.cert")


class ClusterError(ConfigError):
    """The cluster cannot play this tournament: unreachable, no workers, a worker that cannot
    start a bot or see the bot folder, the scheduler lost."""


BATCH_GAMES: Final = 12  # games in one task at most: a deal set's (2 seatings, 6 at 3 seats)


def batches(jobs: Iterable[GameJob]) -> Iterator[tuple[GameJob, ...]]:
    """Consecutive jobs of one deal set (the same id but for its seating), `BATCH_GAMES` at
    most a batch."""
    batch: list[GameJob] = []
    for job in jobs:
        if batch and (len(batch) >= BATCH_GAMES or _deal_set(job) != _deal_set(batch[0])):
            yield tuple(batch)
            batch = []
        batch.append(job)
    if batch:
        yield tuple(batch)


class Batches:
    """The batches still to submit: those a killed task gives back, one game each, first;
    then the rest, taken from the plan only as they are submitted (a million-game plan is
    never held)."""

    def __init__(self, source: Iterator[tuple[GameJob, ...]]) -> None:
        self.source = source
        self.returned: deque[tuple[GameJob, ...]] = deque()
        self.next: tuple[GameJob, ...] | None = next(source, None)

    def more(self) -> bool:
        return bool(self.returned) or self.next is not None

    def take(self) -> tuple[GameJob, ...] | None:
        if self.returned:
            return self.returned.popleft()
        batch, self.next = self.next, next(self.source, None) if self.next else None
        return batch

    def again(self, batch: tuple[GameJob, ...]) -> None:
        """Play each game of `batch` again, alone."""
        self.returned.extendleft((job,) for job in reversed(batch))


def _once(batch: tuple[GameJob, ...], seen: set[str]) -> list[GameJob]:
    """The jobs of `batch` whose game is not counted yet, each game once."""
    out: dict[str, GameJob] = {}
    for job in batch:
        if job.game_id not in seen:
            out.setdefault(job.game_id, job)
    return list(out.values())


def _deal_set(job: GameJob) -> str:
    return job.game_id.rpartition("-s")[0] or job.game_id


class ClusterPool:
    """Games of one tournament run played on a dask cluster, as `GamePool` plays them on
    local processes: `play(jobs)` yields each result line as its game finishes."""

    def __init__(self, config: TournamentConfig, run: RunJob, folder: Path,
                 keep_logs: bool) -> None:
        assert config.cluster is not None
        # Absolute: the workers have working folders of their own.
        folder = folder.resolve()
        self.spec, self.run, self.folder, self.keep_logs = config.cluster, run, folder, keep_logs
        self.token = uuid.uuid4().hex
        self.attempts = folder / ".cluster" / self.token
        self._cluster: Any = None
        self.client: distributed.Client | None = None
        self.files: Files = "client"
        try:
            self._start(config)
        except BaseException:
            with signals_held():
                self.close()
            raise

    def _start(self, config: TournamentConfig) -> None:
        self._sweep()
        # dask's client logs its own view of a lost scheduler (reconnect attempts, then a
        # traceback): this process says it once, in its own words (`play`).
        self._quiet: contextlib.ExitStack | None = _quiet_logs()
        target = self.spec.target
        if target.workers is not None:
            self._cluster = _local_cluster(target.workers)
            self.address = self._cluster.scheduler_address
        else:
            assert target.address is not None
            self.address = target.address
        self.client = _connect(self.address, self._cluster)
        self.setup = self._check(self._setup(config))

    def _setup(self, config: TournamentConfig) -> WorkerSetup:
        """The run's setup, the bot folder uploaded first if asked, and the probe written."""
        assert self.client is not None
        explicit = config.bot_folder
        folder_digest = archive = None
        try:
            if explicit is not None:
                folder_digest = digest(explicit)
            if self.spec.upload_bots:
                assert explicit is not None and folder_digest is not None
                archive = f"meldref-bots-{folder_digest[:16]}.tar.gz"
                self._upload(pack(explicit), archive)
        except BotFolderError as exc:
            raise ClusterError(str(exc)) from None
        private_dir(self.attempts)
        bots = config.plan.bots
        setup = WorkerSetup(self.token, __version__, config.plan.game, bots,
                            config.policy.startup_time, config.process_limits,
                            str(explicit or Path.cwd()), explicit is not None, folder_digest,
                            archive, self.spec.files, str(self.attempts), code_digest(),
                            program_digests(bots, explicit or Path.cwd()), os.getuid())
        write_private_text(setup.probe, self.token)
        return setup

    def _upload(self, data: bytes, name: str) -> None:
        """dask's upload (every worker now, and each that joins later, gets the file)."""
        assert self.client is not None
        with tempfile.TemporaryDirectory(prefix="meldref-upload-") as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            self.client.upload_file(str(path), load=False)

    def _check(self, setup: WorkerSetup) -> WorkerSetup:
        """Every worker's start-up check; the setup with the files' way settled;
        `ClusterError` naming each worker that failed and why."""
        assert self.client is not None
        workers = sorted(self.client.scheduler_info(n_workers=-1)["workers"])
        futures = {self.client.submit(check_worker, setup, workers=[address],
                                      allow_other_workers=False, pure=False,
                                      key=f"meldref-check-{self.token}-{k}"): address
                   for k, address in enumerate(workers)}
        bound = 30.0 + setup.startup_time * (1 + len({b.spec for b in setup.bots}))
        left = self._await_checks(futures, bound)
        reports = []
        for future, address in futures.items():
            if future.status == "finished":
                reports.append(future.result())
            elif address in left:
                continue  # its replacement (or any later worker) checks itself at its 1st game
            elif future.status == "error":
                reports.append(WorkerReport(address, f"the check failed: "
                                            f"{future.exception()!r}", False))
            else:
                reports.append(WorkerReport(address, f"no answer to the start-up check in "
                                            f"{bound:.0f} s", False))
        if not reports:
            raise ClusterError("every worker left the cluster during the start-up check")
        self.client.cancel(list(futures))
        problems = [f"worker {r.address}: {r.problem}" for r in reports if r.problem]
        if problems:
            raise ClusterError("; ".join(problems))
        self.files = _files_way(self.spec.files, reports, self.folder)
        return replace(setup, files=self.files)

    def _await_checks(self, futures: Mapping[distributed.Future[WorkerReport], str],
                      bound: float) -> set[str]:
        """Wait up to `bound` seconds for every check, but not for those of workers that
        leave the cluster meanwhile (killed, lost): the addresses that left."""
        assert self.client is not None
        waiting, left = dict(futures), set()
        deadline = time.monotonic() + bound
        while waiting and time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):  # none finished in CHECK_POLL seconds
                for _ in distributed.as_completed(list(waiting), loop=self.client.loop,
                                                  timeout=CHECK_POLL):
                    break
            present = set(self.client.scheduler_info(n_workers=-1)["workers"])
            for future, address in list(waiting.items()):
                if future.done() or address not in present:
                    del waiting[future]
                    if not future.done():
                        left.add(address)
        return left

    def play(self, jobs: Iterable[GameJob]) -> Iterator[ResultLine]:
        """Each job's result line as games finish, a game id yielded once. Each task plays a
        deal set's games (`batches`, at most `BATCH_GAMES`) with the run's setup; two tasks per
        worker thread are in flight, so a stop leaves
        little to cancel. `ClusterError` if the scheduler is lost: rerun to resume."""
        assert self.client is not None
        queue = Batches(batches(jobs))
        pending: dict[distributed.Future[list[GameOutcome]], tuple[GameJob, ...]] = {}
        finished = distributed.as_completed(loop=self.client.loop)
        seen: set[str] = set()
        window, looked = 0, 0.0
        try:
            # Each task carries the setup (not scattered: scattered data dies with the workers
            # that hold it, and a killed worker's games would be cancelled, not played again),
            # cut to the bots its games seat (`_next`); a task is a deal set, so it is sent
            # once for its games.
            setup = self.setup
            while queue.more() or pending:
                try:
                    if time.monotonic() - looked > WINDOW_REFRESH:
                        window = 2 * max(1, sum(self.client.nthreads().values()))
                        looked = time.monotonic()
                    future, batch = self._next(queue, pending, finished, window, setup)
                    lines = self._take(future, batch, seen, queue)
                except LOST as exc:
                    raise ClusterError(f"lost the dask scheduler at {self.address} "
                                       f"({type(exc).__name__}); rerun to resume") from None
                yield from lines
        finally:
            with signals_held():
                if pending:
                    with contextlib.suppress(Exception):
                        self.client.cancel(list(pending), force=True)
                self.close()

    def _next(self, queue: Batches,
              pending: dict[distributed.Future[list[GameOutcome]], tuple[GameJob, ...]],
              finished: Any, window: int, setup: Any
              ) -> tuple[distributed.Future[list[GameOutcome]], tuple[GameJob, ...]]:
        """Submit batches up to `window` in flight (one at least), then wait for one."""
        assert self.client is not None
        while len(pending) < max(1, window) and (batch := queue.take()) is not None:
            seated = seating_only(setup, (bot.name for job in batch for bot in job.bots))
            future = self.client.submit(
                play_batch, self.run, batch, seated, self.keep_logs, pure=False,
                key=f"meldref-{batch[0].game_id}-{uuid.uuid4().hex[:8]}",
                priority=-batch[0].index)
            pending[future] = batch
            finished.add(future)
        future = next(finished)
        return future, pending.pop(future)

    def _take(self, future: distributed.Future[list[GameOutcome]], batch: tuple[GameJob, ...],
              seen: set[str], queue: Batches) -> list[ResultLine]:
        """The result lines of a finished task, files put in place, games counted already
        left out. A task of several games that killed its worker every time is played again
        a game a task, so only a game that kills its worker alone is counted against."""
        if future.status == "error":
            error = future.exception()
            if isinstance(error, distributed.KilledWorker):
                if len(batch) > 1:
                    queue.again(batch)
                    return []
                why = (f"its worker died {error.allowed_failures + 1} times (killed, or out "
                       "of memory?)")
            else:
                why = f"the worker failed: {error!r}"
            return [self._count(job.error_line(why), seen) for job in _once(batch, seen)]
        if future.status != "finished":
            raise ClusterError(f"lost the dask scheduler at {self.address} (game "
                               f"{batch[0].game_id} {future.status}); rerun to resume")
        outcomes: list[GameOutcome] = future.result()
        lines = []
        for job, outcome in zip(batch, outcomes, strict=False):
            line = self._line(outcome, job, job.game_id in seen)
            if line is not None:
                lines.append(self._count(line, seen))
        return lines

    @staticmethod
    def _count(line: ResultLine, seen: set[str]) -> ResultLine:
        """`line`, its game now counted (a game id is yielded once)."""
        seen.add(line.game_id)
        return line

    def _line(self, outcome: GameOutcome, job: GameJob, duplicate: bool
              ) -> ResultLine | None:
        """A played game's result line, its files put in place and its replay verified;
        None for a game already counted."""
        if outcome.unfit is not None:
            raise ClusterError(f"worker {outcome.worker} joined after the start and cannot "
                               f"play: {outcome.unfit}; fix or stop it, then rerun to resume")
        assert outcome.line is not None
        if duplicate:
            _remove(outcome.attempt)
            return None
        try:
            self._place(outcome)
        except (OSError, ValueError) as exc:
            return job.error_line(f"its files could not be kept: {exc}")
        finally:
            _remove(outcome.attempt)
        problem = self._unverified(outcome.line)
        if problem is not None:
            return job.error_line(f"the replay worker {outcome.worker} sent does not verify "
                                  f"({problem}): it was not counted")
        return outcome.line

    def _unverified(self, line: ResultLine) -> str | None:
        """What is wrong with a game's replay as it arrived, re-simulated here from its seed
        and actions under this machine's rules (None: it verifies, and says the result the
        line says); a replay that does not verify is removed. A worker proved its code at
        its start-up check; this proves each game."""
        from ..replay.files import ReplayError, verify

        if not line.replay:
            return None  # a game that never started writes no replay
        path = self.folder / line.replay
        try:
            done = verify(path)
            outcome = done.result.get("outcome") or {}
            said = {} if line.figures is None else {
                "actions": line.figures.actions, "places": list(line.figures.outcome.places),
                "scores": list(line.figures.outcome.scores)}
            for key, found in (("actions", done.actions), ("places", outcome.get("places")),
                               ("scores", outcome.get("scores"))):
                if key in said and said[key] != found:
                    raise ReplayError(0, f"{key} {found} in the replay, {said[key]} in the "
                                         "result it came with")
        except (ReplayError, OSError) as exc:
            path.unlink(missing_ok=True)
            return str(exc)
        return None

    def _place(self, outcome: GameOutcome) -> None:
        """Move (shared) or write (client) the game's replay and kept logs into the folder."""
        assert outcome.line is not None
        for rel in files_of(outcome.line):
            target = self.folder / rel
            private_dir(target.parent)
            if outcome.attempt is not None:
                source = Path(outcome.attempt) / rel
                if source.exists():
                    os.replace(source, target)
            elif outcome.files is not None and rel in outcome.files:
                with open_private(target, "wb") as f:
                    f.write(inflate(outcome.files[rel], rel))

    def _sweep(self) -> None:
        """Remove the attempt folders of earlier runs (a killed run's, and those its games
        still in flight wrote after it ended)."""
        with contextlib.suppress(OSError):
            for old in (self.folder / ".cluster").iterdir():
                if old.name != self.token:
                    _remove(str(old))

    def close(self) -> None:
        """Leave the cluster (stopping `local:N`'s workers, and with them their bots). Call it
        under `signals_held`: a signal that cuts `cluster.close()` short leaves a cluster that
        dask's exit handler waits 10 s for, and the attempt folders in place."""
        client, self.client = self.client, None
        cluster, self._cluster = self._cluster, None
        if client is not None:
            if cluster is None:  # local:N's workers stop, and their bots with them
                with contextlib.suppress(Exception):
                    client.run(release_run, self.token, on_error="ignore")
            with contextlib.suppress(Exception):
                client.close(timeout=CLOSE_TIMEOUT)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=CLOSE_TIMEOUT)
        _remove(str(self.attempts))
        with contextlib.suppress(OSError):
            (self.folder / ".cluster").rmdir()
        quiet: contextlib.ExitStack | None = getattr(self, "_quiet", None)
        self._quiet = None
        if quiet is not None:
            quiet.close()


def _quiet_logs() -> contextlib.ExitStack:
    """dask's loggers in this process held to CRITICAL until the stack closes."""
    stack = contextlib.ExitStack()
    for name in ("distributed", "distributed.client", "distributed.worker", "tornado"):
        logger = logging.getLogger(name)
        stack.callback(logger.setLevel, logger.level)
        logger.setLevel(logging.CRITICAL)
    return stack


STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block (leaving the cluster: two seconds for
    `local:2`) is done, then act as they would have (`KeyboardInterrupt` for the command
    line's handlers); a second one acts at once. Only the main thread handles signals:
    elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: object) -> None:
        if caught:  # asked twice: stop now, whatever is left half done
            for number, handler in before.items():
                signal.signal(number, handler)
            signal.raise_signal(signum)
        caught.append(signum)

    before = {number: signal.signal(number, hold) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
    if caught:
        signal.raise_signal(caught[0])


def _local_cluster(workers: int) -> Any:
    """A LocalCluster of `workers` processes of one thread each, on 127.0.0.1, with TLS made
    for this run; `ClusterError` without `cryptography` to make the certificates."""
    try:
        security: Any = distributed.security.Security.temporary()
    except ImportError:
        raise ClusterError(
            "local:N runs its workers over TLS with certificates made for the run, which "
            "needs the cryptography package: pip install 'meldref[cluster]' (over plain TCP "
            "any process on this machine could run code on the workers)") from None
    # dask's sampling profiler walks the game's stack 100 times a second: games took 20-40%
    # longer with it (bench/bench_cluster.py); docs/cluster.md says how to turn it off.
    # No HTTP routes: the scheduler and each worker serve plain-HTTP status pages (workers,
    # logs, metrics) to anyone on the machine, dashboard or not; their servers are stopped too.
    settings = {"distributed.scheduler.allowed-failures": MAX_TRIES - 1,
                "distributed.worker.profile.enabled": False,
                "distributed.scheduler.http.routes": [],
                "distributed.worker.http.routes": []}
    # Quiet: a worker's death is told by the game's result line, and the lines dask logs as
    # the cluster stops (heartbeats to a scheduler already gone) would only clutter the screen.
    with dask.config.set(settings), _ctrl_c_ignored():
        cluster: Any = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
            # A port of its own (not 8787, which another cluster may hold), closed at once.
            dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False},
            worker_dashboard_address=None, plugins=(NoHttp(),),
            silence_logs=logging.CRITICAL, security=security, protocol="tls://")
    with contextlib.suppress(AttributeError):  # the scheduler runs in this process
        cluster.scheduler.http_server.stop()
    return cluster


@contextlib.contextmanager
def _ctrl_c_ignored() -> Iterator[None]:
    """SIGINT ignored while `local:N` starts its worker processes, which inherit that: Ctrl-C
    reaches the terminal's whole process group, and each worker would print its traceback;
    the tournament stops them itself (`ClusterPool.close`). Only the main thread can."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


class NoHttp(distributed.WorkerPlugin):
    """Stops a `local:N` worker's HTTP server as it starts (its routes are off already)."""

    def setup(self, worker: Any) -> None:
        worker.http_server.stop()


def _connect(address: str, cluster: Any) -> distributed.Client:
    """A client of the scheduler with a worker to play on; `ClusterError` if it cannot be
    reached, if a tls:// address comes without dask's TLS settings, or no worker joins in
    time."""
    if cluster is None and address.startswith("tls://"):
        missing = [key for key in TLS_SETTINGS if not dask.config.get(key, None)]
        if missing:
            raise ClusterError(
                f"--cluster {address}: dask's TLS settings are missing ({', '.join(missing)}); "
                "set them in a dask configuration file or as DASK_DISTRIBUTED__COMM__TLS__... "
                "variables (docs/cluster.md)")
    try:
        client = (distributed.Client(cluster, set_as_default=False) if cluster is not None else
                  distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False))
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the dask scheduler at {address}: {exc}") from None
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise ClusterError(f"no dask worker joined the scheduler at {address} in "
                           f"{WORKER_WAIT:.0f} s ({exc})") from None
    return client


def _files_way(asked: str, reports: list[WorkerReport], folder: Path) -> Files:
    """Where games' files are written: "shared" when asked or when every worker sees the
    folder ("auto"); `ClusterError` naming a worker that does not see it when asked."""
    blind = [r for r in reports if not r.sees_folder]
    if asked == "client" or (asked == "auto" and blind):
        return "client"
    if blind:
        why = "; ".join(f"worker {r.address}: {r.folder_problem}" for r in blind)
        raise ClusterError(f"shared files in {folder} cannot work: {why}; give "
                           "--cluster-files client (files come back with each result)")
    return "shared"


def inflate(data: bytes, name: str) -> bytes:
    """A file sent back compressed; `ValueError` past `MAX_FILE_BYTES` (a worker's bomb)."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, MAX_FILE_BYTES)
    except zlib.error:
        out = b""
    if inflater.unconsumed_tail or not inflater.eof:
        raise ValueError(f"{name} is over {MAX_FILE_BYTES >> 20} MiB, or damaged")
    return out


def _remove(path: str | None) -> None:
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
