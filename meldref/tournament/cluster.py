"""Games played on a dask.distributed cluster: `ClusterPool`, with `pool.GamePool`'s interface;
the client side (what its workers run is in `cluster_worker`).

Imported only when a tournament has a `cluster` (`pip install 'meldref[cluster]'`). What
the client and the scheduler spend per game bounds a cluster's games per second whatever its
size (each runs on one thread), so:
- **Setup once per worker.** The run's setup (its bots, their programs' digests, limits) is
  installed on each worker once, as a dask worker plugin (`cluster_worker.RunSetup`: the
  scheduler gives it to every worker that joins later, or is restarted, before its first
  task); a task carries the run's token only, and a worker that lacks the setup all the same
  says so and is sent it again.
- **Tasks of whole deal sets** (a deal's games in all its seatings), as many as make about
  `TASK_SECONDS` of play at the game time measured so far (a deal set a task until the first
  results say; `TASK_GAMES` at most); the scheduler spreads the tasks over the workers.
- **Results gathered in batches**: every task finished since the last look, in one gather.
- **Replays verified by another worker.** When a task's games are played, a verifying task
  on another worker than the player re-simulates each replay (`cluster_worker.verify_batch`)
  and returns its sha256 digest and figures; the client compares them with the replay it
  keeps and the player's result line. It re-simulates a game itself when they differ, when
  no other worker verified (one worker; a task moved to its player), and 1 game in
  `CLIENT_SAMPLE` at random; if its own re-simulation disagrees, the run stops (exit 2)
  naming the worker. Only the tournament process writes the output folder's `results.jsonl`.

How it keeps the guarantees of local runs:
- **Start-up check.** Before any game, a task pinned to every worker checks that worker: the
  same meldref, by version and by a digest of its code (`proof.code_digest`), every bot
  program's files by digest (`proof.program_digests`, with or without a bot folder), the bot
  folder (present; with `upload-bots` unpacked from dask's upload and
  checked by digest; an explicit shared bot folder checked by digest too), every distinct bot
  started through its handshake under the tournament's limits, and whether it sees the output
  folder. Any failure stops the tournament (exit 2) naming the worker and the bot. A worker
  that joins later runs the same check before its first game, and checks each bot the first
  time a task seats it (`play_batch` checks only its games' bots), and stops the tournament
  the same way if it fails.
- **Files.** "shared": a worker plays each task's games in an attempt folder of its own under
  `<out>/.cluster/<run>/`, and the tournament process moves the replay and kept logs into
  place when it takes the result; "client": the worker plays in a scratch folder of its own
  and sends the files back with the result. Either way only the tournament process writes
  `replays/` and `logs/`, and only for the one result it counts per game: a game still played
  by a worker after its tournament process was killed (dask cannot stop a running task)
  writes nowhere that counts, and is played again when the tournament resumes. Each replay that
  comes back is verified (above) before its game counts: a worker's proof at start-up says
  what it runs, this says what it played.
- **Worker deaths.** dask plays again elsewhere the tasks of a worker that died (up to the
  scheduler's `allowed-failures`; `local:N` sets 2, so 3 plays as with local workers), then
  reports `KilledWorker`: a task's games are then played again a game a task, and a game
  that alone kills its worker is recorded as the referee's own error, played again by a
  rerun. A game id is counted once whatever arrives twice: the client takes one result per
  task (a task dask plays again, as when its player died before its verifier read it, is
  seen only by the verifier: a digest that differs sends the game to the client's own
  re-simulation, not to the results twice).
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
import hashlib
import logging
import os
import random
import shutil
import signal
import tempfile
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Final, Literal, NoReturn

import dask.config
import dask.utils
import distributed

from .. import __version__
from ..private import open_private, private_dir, write_private_text
from ..protocol.records import ResultLine
from .botfolder import BotFolderError, digest, pack
from .cluster_worker import (
    Checked,
    GameOutcome,
    Played,
    RunSetup,
    Verdict,
    WorkerReport,
    WorkerSetup,
    check_run,
    files_of,
    inflate,
    install_setup,
    line_figures,
    play_batch,
    plugin_name,
    release_run,
    verify_batch,
)
from .config import ConfigError, TournamentConfig
from .pool import MAX_TRIES, RunJob
from .proof import code_digest, program_digests
from .schedule import GameJob

WORKER_WAIT: Final = 60.0  # seconds for a first worker to join it
CHECK_POLL: Final = 0.5  # seconds between looks for workers gone during the start-up check
WINDOW_REFRESH: Final = 1.0  # seconds between looks at how many threads the workers have
CLOSE_TIMEOUT: Final = 10.0  # seconds for the client, then a local cluster, to close
TASK_SECONDS: Final = 2.0  # a task's play, at the game time measured so far
TASK_GAMES: Final = 480  # games in one task at most
CLIENT_SAMPLE: Final = 500  # the client re-simulates 1 game in so many itself, at random
MAX_RESENDS: Final = 3  # a worker sent the run's setup again this often, then refused
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
    start a bot or see the bot folder, the scheduler lost, a worker whose games do not
    verify."""


def deal_sets(jobs: Iterable[GameJob]) -> Iterator[tuple[GameJob, ...]]:
    """Consecutive jobs of one deal set (the same id but for its seating), `TASK_GAMES` at
    most a set."""
    batch: list[GameJob] = []
    for job in jobs:
        if batch and (len(batch) >= TASK_GAMES or _deal_set(job) != _deal_set(batch[0])):
            yield tuple(batch)
            batch = []
        batch.append(job)
    if batch:
        yield tuple(batch)


class Batches:
    """The tasks still to submit: those a failed task gives back first; then whole deal sets
    from the plan, taken only as they are submitted (a million-game plan is never held)."""

    def __init__(self, source: Iterator[tuple[GameJob, ...]]) -> None:
        self.source = source
        self.returned: deque[tuple[GameJob, ...]] = deque()
        self.next: tuple[GameJob, ...] | None = next(source, None)

    def more(self) -> bool:
        return bool(self.returned) or self.next is not None

    def take(self, games: int = 1) -> tuple[GameJob, ...] | None:
        """The next task: one given back, else as many whole deal sets as fit in `games`
        (one at least)."""
        if self.returned:
            return self.returned.popleft()
        if self.next is None:
            return None
        task = list(self.next)
        self.next = next(self.source, None)
        while self.next is not None and len(task) + len(self.next) <= games:
            task += self.next
            self.next = next(self.source, None)
        return tuple(task)

    def again(self, batch: tuple[GameJob, ...]) -> None:
        """Play each game of `batch` again, alone."""
        self.returned.extendleft((job,) for job in reversed(batch))

    def whole_again(self, batch: tuple[GameJob, ...]) -> None:
        """Play `batch` again as it was (a worker without the setup played none of it)."""
        self.returned.appendleft(batch)


class TaskSize:
    """How many games a task holds: `seconds` of play at the mean game time measured so far
    (a deal set a task until results say; `TASK_GAMES` at most). Larger tasks cost the
    scheduler and the client less per game; smaller ones leave less to wait for at the end."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.played = 0
        self.time = 0.0

    def observe(self, outcomes: Iterable[GameOutcome]) -> None:
        for outcome in outcomes:
            if outcome.line is not None:
                self.played += 1
                self.time += outcome.seconds

    def games(self) -> int:
        if not self.played or self.seconds <= 0:
            return 1
        mean = max(self.time / self.played, 1e-4)
        return max(1, min(TASK_GAMES, int(self.seconds / mean)))


Task = distributed.Future[Played] | distributed.Future[Checked]  # playing, verifying


class Flight:
    """The tasks in flight: playing (by their games), verifying (with the games and what
    their player sent), and dask's view of which have finished."""

    def __init__(self, finished: distributed.as_completed) -> None:
        self.finished = finished
        self.playing: dict[Task, tuple[GameJob, ...]] = {}
        self.checking: dict[Task, tuple[tuple[GameJob, ...], list[GameOutcome]]] = {}
        self.verifiers: dict[Task, list[str]] = {}  # the workers a verifying task may run on
        self.order: dict[Task, int] = {}  # each playing task's number, in submission order
        self.submitted = 0

    def next_done(self, until: float) -> list[Task]:
        """The tasks finished since the last look, waiting for one until `until` (monotonic)
        at most: past it, none (the caller looks at the workers again)."""
        while True:
            done: list[Task] = self.finished.next_batch(block=False)
            if done or time.monotonic() >= until:
                return done
            # Notified as a task finishes; a tenth of a second at most, as dask's own wait,
            # should a notice come between the look above and the wait.
            with self.finished.thread_condition:
                self.finished.thread_condition.wait(
                    timeout=max(0.0, min(0.1, until - time.monotonic())))


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
        self.size = TaskSize(TASK_SECONDS)  # its `seconds` 0: a deal set a task
        self.verify_elsewhere = True  # False: the client re-simulates every replay itself
        self.sample_every = CLIENT_SAMPLE  # ... and 1 in so many when another worker did
        self._sample = random.Random()  # seeded from os.urandom: no worker foresees it
        self.workers: list[str] = []
        self.resent: Counter[str] = Counter()
        self.resent_after: dict[str, int] = {}  # by worker: the last task submitted then
        self.plugin: str | None = None
        self._made: set[Path] = set()  # the folders `_place` made or found already
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
        setup = self._setup(config)
        # Sent once per worker, and to each that joins later (the scheduler keeps it for
        # them); the start-up check then finds it there.
        self.client.register_plugin(RunSetup(setup), name=plugin_name(self.token))
        self.plugin = plugin_name(self.token)
        self.setup = self._check(setup)

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
        futures = {self.client.submit(check_run, setup.token, workers=[address],
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
        """Each job's result line as games finish, a game id yielded once. Each task plays
        whole deal sets (`Batches`, `TaskSize`) with the setup installed on its worker; two
        tasks per worker thread are in flight, so a stop leaves little to cancel; the tasks
        finished since the last look are gathered at once. `ClusterError` if the scheduler is
        lost (rerun to resume) or a worker's game does not verify."""
        assert self.client is not None
        queue = Batches(deal_sets(jobs))
        flight = Flight(distributed.as_completed(loop=self.client.loop))
        seen: set[str] = set()
        window, looked = 0, 0.0
        try:
            while queue.more() or flight.playing or flight.checking:
                try:
                    lines: list[ResultLine] = []
                    stop: ClusterError | None = None
                    if time.monotonic() - looked > WINDOW_REFRESH:
                        threads = self.client.nthreads()
                        window = 2 * max(1, sum(threads.values()))
                        self.workers = sorted(threads)
                        looked = time.monotonic()
                        stop = self._orphans(flight, seen, lines)
                    if stop is None:
                        self._submit(queue, flight, window)
                        done = flight.next_done(looked + WINDOW_REFRESH)
                        stop = self._settle(done, flight, queue, seen, lines)
                except LOST as exc:
                    raise ClusterError(f"lost the dask scheduler at {self.address} "
                                       f"({type(exc).__name__}); rerun to resume") from None
                yield from lines
                if stop is not None:
                    raise stop
        finally:
            with signals_held():
                left = [*flight.playing, *flight.checking]
                if left:
                    with contextlib.suppress(Exception):
                        self.client.cancel(left, force=True)
                self.close()

    def _submit(self, queue: Batches, flight: Flight, window: int) -> None:
        """Submit tasks up to `window` playing (one at least): each carries its games and the
        run's token, not its setup (installed on the workers: `RunSetup`)."""
        assert self.client is not None
        while len(flight.playing) < max(1, window) and (
                taken := queue.take(self.size.games())) is not None:
            # A game given twice in one task is played once: its games share an attempt
            # folder, named files by game id.
            batch = tuple({job.game_id: job for job in taken}.values())
            future = self.client.submit(
                play_batch, self.run, batch, self.token, self.files, self.keep_logs, pure=False,
                key=f"meldref-{batch[0].game_id}-{uuid.uuid4().hex[:8]}",
                priority=-batch[0].index)
            flight.playing[future] = batch
            flight.submitted += 1
            flight.order[future] = flight.submitted
            flight.finished.add(future)

    def _settle(self, done: list[Task], flight: Flight, queue: Batches, seen: set[str],
                lines: list[ResultLine]) -> ClusterError | None:
        """Append to `lines` the result lines of the tasks `done` (played, or verified),
        gathered in one round trip; a played task whose games another worker can verify is
        sent to it first. The error that stops the run, if one does (the lines counted
        before it are in `lines`)."""
        assert self.client is not None
        done = [f for f in done if f in flight.playing or f in flight.checking]
        ready = [f for f in done if f.status == "finished"]
        values: dict[Task, object] = dict(zip(ready, self.client.gather(ready), strict=True)) \
            if ready else {}
        for future in done:
            try:
                if future in flight.playing:
                    batch = flight.playing.pop(future)
                    self._played(future, batch, values.get(future), flight, queue, seen,
                                 flight.order.pop(future), lines)
                else:
                    batch, outcomes = flight.checking.pop(future)
                    del flight.verifiers[future]
                    checked = values.get(future)
                    if future.status not in ("finished", "error"):
                        self._lost(batch, future.status)
                    self._record(batch, outcomes,
                                 checked if isinstance(checked, Checked) else None, seen, lines)
            except ClusterError as exc:
                return exc
        return None

    def _orphans(self, flight: Flight, seen: set[str], lines: list[ResultLine]
                 ) -> ClusterError | None:
        """Verifying tasks none of whose workers is left (they wait for one of them): given
        up, their games verified here instead."""
        assert self.client is not None
        present = set(self.workers)
        orphans = [f for f, allowed in flight.verifiers.items()
                   if not present.intersection(allowed) and not f.done()]
        if orphans:
            with contextlib.suppress(Exception):
                self.client.cancel(orphans)
        for future in orphans:
            batch, outcomes = flight.checking.pop(future)
            del flight.verifiers[future]
            try:
                self._record(batch, outcomes, None, seen, lines)
            except ClusterError as exc:
                return exc
        return None

    def _lost(self, batch: tuple[GameJob, ...], status: str | None) -> NoReturn:
        raise ClusterError(f"lost the dask scheduler at {self.address} (game "
                           f"{batch[0].game_id} {status}); rerun to resume")

    def _played(self, future: Task, batch: tuple[GameJob, ...], played: object,
                flight: Flight, queue: Batches, seen: set[str], number: int,
                lines: list[ResultLine]) -> None:
        """A played task: its games given back (a killed worker, no setup there), refused (a
        worker that cannot play), sent to another worker to verify, or recorded (in
        `lines`)."""
        assert self.client is not None
        if future.status == "error":
            lines += self._failed(future, batch, seen, queue)
            return
        if future.status != "finished":
            self._lost(batch, future.status)
        assert isinstance(played, Played)
        outcomes = played.outcomes
        first = outcomes[0]
        if first.missing:
            # Once for the tasks it had taken before: they all come back so.
            if self.resent_after.get(first.worker, -1) < number:
                self._resend(first.worker)
                self.resent_after[first.worker] = flight.submitted
            queue.whole_again(batch)
            return
        for outcome in outcomes:
            if outcome.unfit is not None:
                raise ClusterError(f"worker {outcome.worker} joined after the start and "
                                   f"cannot play: {outcome.unfit}; fix or stop it, then "
                                   "rerun to resume")
        self.size.observe(outcomes)
        others = [w for w in self.workers if w != first.worker]
        if self.verify_elsewhere and others and any(o.line and o.line.replay
                                                    for o in outcomes):
            # Only on the others: dask would otherwise move it to an idle player (work
            # stealing), whose verdict proves nothing; if they all leave, `_orphans`.
            check = self.client.submit(verify_batch, future, workers=others,
                                       allow_other_workers=False, pure=False, priority=1,
                                       key=f"meldref-verify-{batch[0].game_id}-"
                                           f"{uuid.uuid4().hex[:8]}")
            flight.checking[check] = (batch, outcomes)
            flight.verifiers[check] = others
            flight.finished.add(check)
            return
        self._record(batch, outcomes, None, seen, lines)

    def _resend(self, worker: str) -> None:
        """Install the run's setup again on `worker`, which had none (its plugin failed, or it
        was restarted as the plugin went out); `ClusterError` if it keeps losing it."""
        assert self.client is not None
        self.resent[worker] += 1
        if self.resent[worker] > MAX_RESENDS:
            raise ClusterError(f"worker {worker} lost the run's setup {MAX_RESENDS} times; "
                               "fix or stop it, then rerun to resume")
        with contextlib.suppress(Exception):  # gone meanwhile: its tasks go elsewhere
            self.client.run(install_setup, self.setup, workers=[worker])

    def _failed(self, future: Task, batch: tuple[GameJob, ...], seen: set[str],
                queue: Batches) -> list[ResultLine]:
        """A task that failed: a task of several games that killed its worker every time is
        played again a game a task, so only a game that kills its worker alone is counted
        against; any other failure is each game's error."""
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

    def _record(self, batch: tuple[GameJob, ...], outcomes: list[GameOutcome],
                checked: Checked | None, seen: set[str], lines: list[ResultLine]) -> None:
        """Append the result lines of a task's games to `lines`, files put in place and
        replays verified, games counted already left out; `ClusterError` at the first game
        that does not verify (the lines before it are in `lines`)."""
        try:
            for k, (job, outcome) in enumerate(zip(batch, outcomes, strict=False)):
                verdict = None
                if checked is not None and checked.verifier != outcome.worker and \
                        k < len(checked.verdicts):
                    verdict = checked.verdicts[k]
                line = self._line(outcome, job, job.game_id in seen, verdict,
                                  checked.verifier if checked is not None else None)
                if line is not None:
                    lines.append(self._count(line, seen))
        finally:
            # A task's games share an attempt folder; those not reached (a stop) go too.
            for attempt in {outcome.attempt for outcome in outcomes}:
                _remove(attempt)

    @staticmethod
    def _count(line: ResultLine, seen: set[str]) -> ResultLine:
        """`line`, its game now counted (a game id is yielded once)."""
        seen.add(line.game_id)
        return line

    def _line(self, outcome: GameOutcome, job: GameJob, duplicate: bool,
              verdict: Verdict | None = None, verifier: str | None = None
              ) -> ResultLine | None:
        """A played game's result line, its files put in place and its replay verified;
        None for a game already counted; `ClusterError` for a game that does not verify."""
        assert outcome.line is not None
        if duplicate:
            return None  # its attempt folder goes with its task's (`_record`)
        try:
            digest = self._place(outcome)
        except (OSError, ValueError) as exc:
            return job.error_line(f"its files could not be kept: {exc}")
        line = outcome.line
        figures = line_figures(line)
        if not line.replay:
            return line  # a game that never started writes no replay
        if figures is None:  # a game that did not finish: its replay may be cut short
            problem = self._unverified(line)
            if problem is not None:
                return job.error_line(f"the replay worker {outcome.worker} sent does not "
                                      f"verify ({problem}): it was not counted")
            return line
        same = verdict is not None and verdict.digest == digest
        if same and verdict is not None and verdict.figures == figures and \
                self._sample.random() * self.sample_every >= 1:
            return line  # another worker re-simulated these very bytes to these figures
        problem = self._unverified(line)
        if problem is not None:
            raise ClusterError(
                f"worker {outcome.worker} sent game {line.game_id}, whose replay does not "
                f"verify here ({problem}): it does not play what it proved at its start-up "
                "check; fix or stop it, then rerun to resume (the game was not counted)")
        if same and verdict is not None and verdict.figures != figures:  # the verifier's
            (self.folder / line.replay).unlink(missing_ok=True)
            found = "it does not verify" if verdict.figures is None else \
                f"figures {verdict.figures}"
            raise ClusterError(
                f"worker {verifier} re-simulated game {line.game_id} otherwise than this "
                f"machine ({found}; here {figures}): it does not run what it proved at its "
                "start-up check; fix or stop it, then rerun to resume")
        return line

    def _unverified(self, line: ResultLine) -> str | None:
        """What is wrong with a game's replay as it arrived, re-simulated here from its seed
        and actions under this machine's rules (None: it verifies, and says the result the
        line says); a replay that does not verify is removed."""
        from ..replay.files import ReplayError, verify

        assert line.replay
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

    def _place(self, outcome: GameOutcome) -> str | None:
        """Move (shared) or write (client) the game's replay and kept logs into the folder;
        the sha256 digest of the replay as kept."""
        assert outcome.line is not None
        digest = None
        for rel in files_of(outcome.line):
            target = self.folder / rel
            if target.parent not in self._made:  # once a run for replays/
                private_dir(target.parent)
                self._made.add(target.parent)
            data = None
            if outcome.attempt is not None:
                try:
                    os.replace(os.path.join(outcome.attempt, rel), target)
                except FileNotFoundError:
                    continue  # a log the game did not write
                if rel == outcome.line.replay:
                    data = target.read_bytes()
            elif outcome.files is not None and rel in outcome.files:
                data = inflate(outcome.files[rel], rel)
                with open_private(target, "wb") as f:
                    f.write(data)
            if rel == outcome.line.replay and data is not None:
                digest = hashlib.sha256(data).hexdigest()
        return digest


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
                if self.plugin is not None:
                    with contextlib.suppress(Exception):
                        client.unregister_worker_plugin(self.plugin)
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


def connect_timeout() -> float:
    """Seconds the client tries to reach the scheduler, and to reach it again once lost:
    dask's own `distributed.comm.timeouts.connect` (30 s unless set), one setting for the
    client and its workers."""
    setting = dask.config.get("distributed.comm.timeouts.connect")
    return float(dask.utils.parse_timedelta(setting, default="s"))


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
                  distributed.Client(address, timeout=connect_timeout(), set_as_default=False))
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


def _remove(path: str | None) -> None:
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
