"""Games played on a dask.distributed cluster: `ClusterPool`, with `pool.GamePool`'s interface;
the client side (what its workers run is in `cluster_worker`). This module runs the
tournament on the cluster (`ClusterPool`: submitting tasks, settling what comes back); the
client's other concerns are modules of their own: reaching the cluster (`cluster_connect`),
shipping the run's setup and checking the workers (`cluster_setup`), cutting the games into
tasks and tracking them (`cluster_tasks`), taking the results (`cluster_results`).

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
- **Bots.** Games run in the workers' task threads; every bot program runs under meldref's
  guard (`protocol/guard.py`), whose parent-death signal kills the bot and all it started, so
  a worker process that dies (killed, out of memory) takes its bots with it, and under the
  same `Limits` as everywhere. The seed travels inside the pickled job, never
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

import contextlib
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final, NoReturn

import distributed

from ..protocol.records import ResultLine
from .cluster_connect import (
    CLOSE_TIMEOUT,
    LOST,
    TLS_SETTINGS,
    WORKER_WAIT,
    ClusterError,
    NoHttp,
    connect,
    connect_timeout,
    local_cluster,
    quiet_logs,
    signals_held,
)
from .cluster_results import CLIENT_SAMPLE, Collector, count, remove
from .cluster_setup import Files, check_workers, files_way, run_setup
from .cluster_tasks import (
    TASK_GAMES,
    TASK_SECONDS,
    Batches,
    Flight,
    Task,
    TaskSize,
    deal_sets,
    once,
)
from .cluster_worker import (
    Checked,
    Played,
    RunSetup,
    inflate,
    install_setup,
    play_batch,
    plugin_name,
    release_run,
    verify_batch,
)
from .config import TournamentConfig
from .pool import RunJob
from .schedule import GameJob

# The cluster client's public names, importable from here wherever they now live.
__all__ = [
    "CLIENT_SAMPLE", "CLOSE_TIMEOUT", "LOST", "TASK_GAMES", "TASK_SECONDS", "TLS_SETTINGS",
    "WORKER_WAIT", "Batches", "ClusterError", "ClusterPool", "Collector", "Files", "Flight",
    "NoHttp", "Task", "TaskSize", "connect", "connect_timeout", "deal_sets", "files_way",
    "inflate", "local_cluster", "signals_held",
]

WINDOW_REFRESH: Final = 1.0  # seconds between looks at how many threads the workers have
MAX_RESENDS: Final = 3  # a worker sent the run's setup again this often, then refused


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
        self._cluster: distributed.LocalCluster | None = None
        self.client: distributed.Client | None = None
        self.files: Files = "client"
        self.size = TaskSize(TASK_SECONDS)  # its `seconds` 0: a deal set a task
        self.verify_elsewhere = True  # False: the client re-simulates every replay itself
        self.results = Collector(folder)  # ... and 1 in CLIENT_SAMPLE when another worker did
        self.workers: list[str] = []
        self.resent: Counter[str] = Counter()
        self.resent_after: dict[str, int] = {}  # by worker: the last task submitted then
        self.plugin: str | None = None
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
        self._quiet: contextlib.ExitStack | None = quiet_logs()
        target = self.spec.target
        if target.workers is not None:
            self._cluster = local_cluster(target.workers)
            self.address = self._cluster.scheduler_address
        else:
            assert target.address is not None
            self.address = target.address
        self.client = connect(self.address, self._cluster)
        setup = run_setup(self.client, config, self.token, self.attempts)
        # Sent once per worker, and to each that joins later (the scheduler keeps it for
        # them); the start-up check then finds it there.
        self.client.register_plugin(RunSetup(setup), name=plugin_name(self.token))
        self.plugin = plugin_name(self.token)
        self.setup, self.files = check_workers(self.client, setup, self.spec, self.folder)

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
                    self.results.record(batch, outcomes,
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
                self.results.record(batch, outcomes, None, seen, lines)
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
        self.results.record(batch, outcomes, None, seen, lines)

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
        return [count(job.error_line(why), seen) for job in once(batch, seen)]

    def _sweep(self) -> None:
        """Remove the attempt folders of earlier runs (a killed run's, and those its games
        still in flight wrote after it ended)."""
        with contextlib.suppress(OSError):
            for old in (self.folder / ".cluster").iterdir():
                if old.name != self.token:
                    remove(str(old))

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
        remove(str(self.attempts))
        with contextlib.suppress(OSError):
            (self.folder / ".cluster").rmdir()
        quiet: contextlib.ExitStack | None = getattr(self, "_quiet", None)
        self._quiet = None
        if quiet is not None:
            quiet.close()

