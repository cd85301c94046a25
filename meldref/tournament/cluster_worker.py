"""The cluster's worker side: what a dask worker runs for `cluster.ClusterPool`, and the
values the two sides exchange (`WorkerSetup`, installed once per worker by `RunSetup`, a
`WorkerReport`, a `GameOutcome` per game, a `Checked` per task verified).

A worker checks itself once a run (`check_worker`: the same meldref by version and by digest,
every bot program's files, the bot folder, every bot started through its handshake, whether
it sees the output folder). The run's setup then reaches it once, as a dask worker plugin
(`RunSetup`: the scheduler gives it to every worker, and to each that joins later, as it
joins), and each task carries only the run's token: `play_batch` plays a task's deal sets with
the setup installed under that token, or says it has none (`GameOutcome.missing`: the client
installs it again). Another worker then re-simulates the task's replays (`verify_batch`) and
returns their digests and figures, for the client to compare with what the player sent.

Games' files go to an attempt folder of the shared output folder or are sent back compressed.
A worker keeps a run's bot programs from game to game, one keeper per run and task thread
(`run_keeper`: the kernel's death signal follows the thread that started a bot); they stop
when the run ends (`release_run`), when the worker process exits, and once the run has played
no game here for `KEEP_IDLE` seconds.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import tempfile
import threading
import time
import uuid
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Literal

import distributed

from .. import __version__
from ..private import private_dir
from ..protocol.channel import look_before_sleeping
from ..protocol.records import JSON, ResultLine
from ..protocol.seats import Limits
from ..replay.audit import verify
from ..replay.files import ReplayError
from .botfolder import BotFolderError, digest, unpack
from .config import ConfigError
from .keeper import BotKeeper, lending_from
from .match import preflight
from .pool import RunJob
from .proof import Digests, code_digest, program_mismatch
from .schedule import BotEntry, GameJob

MAX_FILE_BYTES: Final = 256 << 20  # a replay or log sent back (logs are cut at 1 MiB)
KEEP_IDLE: Final = 10.0  # seconds a run's kept bots wait idle on a worker (run killed?)
REAP_POLL: Final = 1.0  # seconds between a worker's looks for such idle bots


@dataclass(frozen=True, slots=True)
class WorkerSetup:
    """A run's setup, installed once on each worker (`RunSetup`; the start-up check carries
    it too): enough for a worker to check itself (once per run) and to know where a game's
    files go."""

    token: str  # this run's id: the worker's check is cached under it
    version: str  # the tournament's meldref
    game: str
    bots: tuple[BotEntry, ...]
    startup_time: float
    limits: Limits
    bot_folder: str  # the tournament machine's (absolute): given, or its working folder
    bot_folder_given: bool  # False: a worker without that folder uses its own working folder
    folder_digest: str | None  # the bot folder's digest, when it is checked
    archive: str | None  # with upload-bots: the archive's name in the worker's folder
    files: Literal["auto", "shared", "client"]  # "auto" only during the start-up check
    attempts: str  # <out>/.cluster/<token>: attempt folders (shared files)
    code: str = ""  # the tournament machine's `proof.code_digest()`
    programs: Digests = field(default_factory=dict)  # its bot programs' files, by digest
    uid: int = -1  # the tournament process's user (a shared folder must be theirs to share)

    @property
    def probe(self) -> Path:
        return Path(self.attempts) / "probe"


@dataclass(frozen=True, slots=True)
class WorkerReport:
    """A worker's start-up check: what is wrong there (None: nothing), and whether it sees
    (and may write in) the tournament's output folder."""

    address: str
    problem: str | None
    sees_folder: bool
    bot_folder: str | None = None  # where bots start on this worker (checked once, here)
    folder_problem: str | None = None  # why it may not share the output folder


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """A game task's return: the result line and where its files are, or why the worker
    could not play (`unfit`)."""

    worker: str
    line: ResultLine | None = None
    attempt: str | None = None  # shared files: the attempt folder
    files: dict[str, bytes] | None = None  # client files: relative path -> zlib content
    unfit: str | None = None
    seconds: float = 0.0  # the game's time here (the client sizes its tasks by it)
    missing: bool = False  # this worker has no setup for the run: nothing was played

    def __reduce__(self) -> tuple[type[GameOutcome], tuple[object, ...]]:
        # Through the constructor, as `ResultLine`: the client unpickles every game's.
        return (GameOutcome, (self.worker, self.line, self.attempt, self.files, self.unfit,
                              self.seconds, self.missing))


@dataclass(frozen=True, slots=True)
class Played:
    """A game task's return: its games' outcomes, in one object (dask would serialize a list
    item by item: a third of the client's CPU per game went to that)."""

    outcomes: list[GameOutcome]


Figures = tuple[int, tuple[int, ...], tuple[int, ...]]  # actions, places, scores


@dataclass(frozen=True, slots=True)
class Verdict:
    """A replay as another worker than its player read and re-simulated it."""

    digest: str  # sha256 of the replay's bytes as read
    figures: Figures | None  # as re-simulated; None: it does not verify (`problem`)
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class Checked:
    """A verifying task's answer: who verified, and a verdict per outcome (None: no replay to
    verify, as for a game that never started)."""

    verifier: str
    verdicts: list[Verdict | None]


# ----------------------------------------------------------------------------------------------
# On the workers


_SETUPS: dict[str, WorkerSetup] = {}  # by run token: the setups installed on this worker
_INSTALLS: Counter[str] = Counter()  # by run token: how often it was installed here
_TASKS: Counter[str] = Counter()  # by run token: the game tasks this worker took
_SETUP_LOCK = threading.Lock()


class RunSetup(distributed.WorkerPlugin):
    """A run's setup, installed on each worker once: registered with the scheduler, which
    gives it to every worker now and to each that joins (or is restarted) later, before its
    first task. Tasks then carry the run's token only, whatever the number of bots."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.run_setup = setup  # not `setup`: that is the plugin's method
        self.name = plugin_name(setup.token)

    def setup(self, worker: object) -> None:
        install_setup(self.run_setup)

    def teardown(self, worker: object) -> None:
        with _SETUP_LOCK:
            _SETUPS.pop(self.run_setup.token, None)


def plugin_name(token: str) -> str:
    return f"meldref-setup-{token}"


def install_setup(setup: WorkerSetup) -> None:
    """Keep `setup` on this worker for the tasks of its run."""
    with _SETUP_LOCK:
        _SETUPS[setup.token] = setup
        _INSTALLS[setup.token] += 1


def setup_counts(token: str) -> tuple[int, int]:
    """(how often run `token`'s setup was installed here, how many game tasks it took here)."""
    with _SETUP_LOCK:
        return _INSTALLS[token], _TASKS[token]


def forget_setup(token: str) -> None:
    """Drop run `token`'s setup here (as a worker restarted without it would be)."""
    with _SETUP_LOCK:
        _SETUPS.pop(token, None)


_CHECKED: dict[str, WorkerReport] = {}  # by run token: each worker checks itself once a run
_SEATED: dict[str, set[str]] = {}  # by run token: the bots this worker has checked
_CHECK_LOCK = threading.Lock()


def check_worker(setup: WorkerSetup) -> WorkerReport:
    """This worker's check for the run `setup.token`: itself and the setup's bots the first
    time (the start-up check's setup holds every bot), then each bot a later task seats that
    it has not checked yet (a task checks only its games' bots: `seating_only`)."""
    with _CHECK_LOCK:
        report = _CHECKED.get(setup.token)
        checked = _SEATED.setdefault(setup.token, set())
        if report is None:
            address = distributed.get_worker().address
            folder, problem = _checked_bots(setup)
            shared = _shared_folder_problem(setup)
            report = WorkerReport(address, problem, shared is None, folder, shared)
        elif report.problem is None:
            new = {bot.name for bot in setup.bots} - checked
            problem = _checked_programs(seating_only(setup, new), report.bot_folder) \
                if new else None
            if problem is not None:
                report = replace(report, problem=problem)
        checked.update(bot.name for bot in setup.bots)
        _CHECKED[setup.token] = report
        return report


def check_run(token: str) -> WorkerReport:
    """The start-up check of run `token` with the setup installed here (`RunSetup`)."""
    with _SETUP_LOCK:
        setup = _SETUPS.get(token)
    if setup is None:
        return WorkerReport(distributed.get_worker().address, "the run's setup did not reach "
                            "it (its worker plugin failed: see the worker's log)", False)
    return check_worker(setup)


def _checked_bots(setup: WorkerSetup) -> tuple[str | None, str | None]:
    """(the bot folder here, what is wrong with it or with a bot here, or None)."""
    if setup.version != __version__:
        return None, f"meldref {__version__} here, {setup.version} on the tournament's machine"
    mine = code_digest()
    if setup.code and setup.code != mine:
        return None, (f"other meldref code here than on the tournament's machine (digest "
                      f"{mine[:12]}, there {setup.code[:12]}), though both say {__version__}: "
                      "install the same checkout on every worker")
    try:
        folder = worker_bot_folder(setup)
    except (ConfigError, BotFolderError) as exc:
        return None, str(exc)
    except Exception as exc:  # a bug shown where it happened, not a worker lost in silence
        return None, f"the check failed: {exc!r}"
    problem = _checked_programs(setup, folder)
    return (None, problem) if problem is not None else (folder, None)


def _checked_programs(setup: WorkerSetup, folder: str | None) -> str | None:
    """What is wrong with the setup's bots here (their programs' digests, their handshake
    under the run's limits), or None."""
    try:
        drift = program_mismatch(setup.programs, setup.bots, Path(folder or os.getcwd()))
        if drift is not None:
            return drift
        preflight(setup.game, setup.bots, setup.startup_time, None, setup.limits, folder)
    except (ConfigError, BotFolderError) as exc:
        return str(exc)
    except Exception as exc:  # a bug shown where it happened, not a worker lost in silence
        return f"the check failed: {exc!r}"
    return None


def seating_only(setup: WorkerSetup, names: Iterable[str]) -> WorkerSetup:
    """`setup` with only the bots named (and their programs' digests): what a task checks
    for the bots its games seat (a late worker meets a run's bots a few at a time)."""
    wanted = set(names)
    bots = tuple(bot for bot in setup.bots if bot.name in wanted)
    specs = {str(bot.spec) for bot in bots}
    return replace(setup, bots=bots,
                   programs={spec: files for spec, files in setup.programs.items()
                             if spec in specs})


def worker_bot_folder(setup: WorkerSetup) -> str | None:
    """The bot folder on this worker (unpacked from the upload, or the shared one), checked
    against the tournament's digest; `BotFolderError` if it is missing or differs. None: the
    tournament's working folder (no bot folder given) is not here; use this worker's own."""
    if setup.archive is None:
        if not setup.bot_folder_given and not Path(setup.bot_folder).is_dir():
            return None  # then a program named by a relative path fails its handshake here
        if not Path(setup.bot_folder).is_dir():
            raise BotFolderError(f"the bot folder {setup.bot_folder} is not here (not on a "
                                 "shared filesystem? --upload-bots sends it)")
        if setup.folder_digest is not None and digest(Path(setup.bot_folder)) != \
                setup.folder_digest:
            raise BotFolderError(f"the bot folder {setup.bot_folder} here differs from the "
                                 "tournament machine's (its digest does not match)")
        return setup.bot_folder
    assert setup.folder_digest is not None
    local = Path(distributed.get_worker().local_directory)
    target = local / f"meldref-bots-{setup.folder_digest[:16]}"
    if not target.is_dir():
        try:
            archive = (local / setup.archive).read_bytes()
        except OSError as exc:
            raise BotFolderError(f"the uploaded bot folder is missing ({exc.strerror})"
                                 ) from None
        unpack(archive, target, setup.folder_digest)
    return str(target)


def _shared_folder_problem(setup: WorkerSetup) -> str | None:
    """Why this worker may not write the games' files into the tournament's output folder
    (None: it may): it does not read the probe the tournament wrote, may not write beside it,
    or runs as another user, whose files the tournament could then not move into place."""
    try:
        if setup.probe.read_text(encoding="utf-8") != setup.token:
            return "it does not see the output folder (not on a shared filesystem?)"
        mine = private_dir(Path(setup.attempts) / f"probe-{uuid.uuid4().hex[:8]}")
        mine.rmdir()
    except OSError as exc:
        return f"it cannot use the output folder ({exc.strerror or exc})"
    if setup.uid >= 0 and os.getuid() != setup.uid:
        return (f"it runs as uid {os.getuid()}, the tournament as uid {setup.uid}: the files "
                "it wrote could not be moved into place")
    return None


@dataclass(slots=True)
class RunKeeper:
    """A run's kept bots on one task thread of this worker, whether a game is playing there
    now and when the last one ended (for `KEEP_IDLE`)."""

    keeper: BotKeeper
    playing: int = 0
    last: float = 0.0


_KEPT: dict[tuple[str, int], RunKeeper] = {}  # by run token and task thread
_KEPT_LOCK = threading.Lock()


@contextlib.contextmanager
def run_keeper(token: str) -> Iterator[BotKeeper]:
    """The keeper of run `token` on this task thread, for one game. One per thread: the
    kernel's parent-death signal (the guard's) follows the thread that started a bot, so
    a bot is only ever seated by the thread that started it; a thread that ends (the worker
    closing, or dask replacing a thread after another workload's `secede`) takes only its
    own idle bots with it, never one playing in another thread's game."""
    global _REAPER
    with _KEPT_LOCK:
        if _REAPER is None:
            atexit.register(_close_all_kept)  # the worker's process ends: its bots with it
            _REAPER = threading.Thread(target=_reap, name="meldref-reaper", daemon=True)
            _REAPER.start()
        entry = _KEPT.setdefault((token, threading.get_ident()), RunKeeper(BotKeeper()))
        entry.playing += 1
    try:
        yield entry.keeper
    finally:
        with _KEPT_LOCK:
            entry.playing -= 1
            entry.last = time.monotonic()


_REAPER: threading.Thread | None = None


def _reap() -> None:
    """Close the keepers that played no game for `KEEP_IDLE` seconds: a live run keeps every
    task thread busy (a game follows the last within a scheduler's round trip), so such a run
    is over, or its tournament process was killed (its `release_run` never comes)."""
    while True:
        time.sleep(REAP_POLL)
        with _KEPT_LOCK:
            now = time.monotonic()
            stale = [k for k, r in _KEPT.items() if not r.playing and now - r.last > KEEP_IDLE]
            idle = [_KEPT.pop(k).keeper for k in stale]
        _close_each(idle)


def release_run(token: str) -> None:
    """Stop the kept bots of run `token` on this worker (its tournament is over), in a thread
    of their own, as `quit` and its graces take seconds: the caller is the worker's event loop
    (`Client.run`). A game of the run still playing (cancelled) gives its bots back to a
    closed keeper, which stops them."""
    with _KEPT_LOCK:
        ended = [_KEPT.pop(key).keeper for key in list(_KEPT) if key[0] == token]
    if ended:
        threading.Thread(target=_close_each, args=(ended,), name="meldref-release",
                         daemon=True).start()


def _close_all_kept() -> None:
    with _KEPT_LOCK:
        keepers = [entry.keeper for entry in _KEPT.values()]
        _KEPT.clear()
    _close_each(keepers)


def _close_each(keepers: list[BotKeeper]) -> None:
    for keeper in keepers:
        with contextlib.suppress(Exception):
            keeper.close()


def play_task(run: RunJob, job: GameJob, setup: WorkerSetup, keep_logs: bool,
              attempt: Path | None = None) -> GameOutcome:
    """Play one game on this worker: its result line, with its files (see the module; shared
    files in `attempt`, else in an attempt folder of its own)."""
    report = check_worker(setup)
    if report.problem is None and setup.files == "shared" and not report.sees_folder:
        return GameOutcome(report.address, unfit=f"it does not see the output folder "
                           f"{Path(setup.attempts).parent.parent} (shared files)")
    if report.problem is not None:
        return GameOutcome(report.address, unfit=report.problem)
    job = replace(job, cwd=report.bot_folder)
    if job.limits.fresh_bots:
        return _play_here(run, job, setup, keep_logs, report.address, attempt)
    with run_keeper(setup.token) as keeper, lending_from(keeper):
        return _play_here(run, job, setup, keep_logs, report.address, attempt)


def play_batch(run: RunJob, jobs: tuple[GameJob, ...], token: str,
               files: Literal["shared", "client"], keep_logs: bool) -> Played:
    """Play `jobs` (whole deal sets) one after another on this worker, with the setup of run
    `token` installed here (`RunSetup`), their files the way the start-up check settled: one
    task for many games, so the scheduler and the client handle a task per couple of seconds
    of play, not per game. A worker without the setup (`missing`) or that cannot play
    (`unfit`) says so in its one outcome."""
    with _SETUP_LOCK:
        setup = _SETUPS.get(token)
        _TASKS[token] += setup is not None
    if setup is None:
        return Played([GameOutcome(distributed.get_worker().address, missing=True)])
    # A cluster's machines play a game per core or more at once: reads sleep at once, no core
    # taken from another game's bots.
    look_before_sleeping(False)
    # Only the bots these games seat are checked here (a worker that joined late meets a
    # run's bots a few at a time).
    setup = replace(seating_only(setup, (bot.name for job in jobs for bot in job.bots)),
                    files=files)
    # One attempt folder for the task's games (their files are named by game id): the client
    # removes one folder a task, not one a game.
    attempt = Path(setup.attempts) / f"{jobs[0].game_id}.{uuid.uuid4().hex[:8]}" \
        if setup.files == "shared" else None
    outcomes = []
    for job in jobs:
        began = time.perf_counter()
        outcome = play_task(run, job, setup, keep_logs, attempt)
        outcomes.append(replace(outcome, seconds=time.perf_counter() - began))
        if outcome.unfit is not None:
            break
    return Played(outcomes)


def verify_batch(played: Played) -> Checked:
    """Another worker's games' replays read and re-simulated here (`replay verify`): the
    digest of each replay's bytes and the figures the re-simulation found, for the client
    to compare with the player's result lines and the files it keeps."""
    return Checked(distributed.get_worker().address,
                   [_verdict(outcome) for outcome in played.outcomes])


def _verdict(outcome: GameOutcome) -> Verdict | None:
    line = outcome.line
    if line is None or not line.replay:
        return None
    try:
        data = replay_bytes(outcome, line.replay)
    except (OSError, ValueError) as exc:
        return Verdict("", None, f"the replay cannot be read: {exc}")
    found = hashlib.sha256(data).hexdigest()
    with tempfile.TemporaryDirectory(prefix="meldref-verify-") as scratch:
        path = Path(scratch) / "replay.jsonl"
        path.write_bytes(data)
        try:
            done = verify(path)
        except (ReplayError, OSError) as exc:
            return Verdict(found, None, str(exc))
    return Verdict(found, verified_figures(done.actions, done.result))


def verified_figures(actions: int, result: dict[str, JSON]) -> Figures:
    """A re-simulated game's figures, as `line_figures` gives a result line's."""
    outcome = result.get("outcome") or {}
    return (actions, tuple(outcome.get("places") or ()), tuple(outcome.get("scores") or ()))


def line_figures(line: ResultLine) -> Figures | None:
    """What a result line says its game came to (None: a game that did not finish)."""
    if line.figures is None:
        return None
    return (line.figures.actions, tuple(line.figures.outcome.places),
            tuple(line.figures.outcome.scores))


def replay_bytes(outcome: GameOutcome, rel: str) -> bytes:
    """The replay `rel` of a game as its worker left it: sent back (inflated) or in its
    attempt folder."""
    if outcome.files is not None:
        if rel not in outcome.files:
            raise ValueError(f"{rel} was not sent")
        return inflate(outcome.files[rel], rel)
    if outcome.attempt is None:
        raise ValueError(f"{rel} is nowhere")
    return (Path(outcome.attempt) / rel).read_bytes()


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


def _play_here(run: RunJob, job: GameJob, setup: WorkerSetup, keep_logs: bool,
               address: str, attempt: Path | None = None) -> GameOutcome:
    """`job` played by `run` here, its files where `setup.files` says."""
    if setup.files == "shared":
        attempt = attempt or Path(setup.attempts) / f"{job.game_id}.{uuid.uuid4().hex[:8]}"
        private_dir(attempt)
        return GameOutcome(address, run(job, attempt, keep_logs), attempt=str(attempt))
    with tempfile.TemporaryDirectory(prefix="meldref-game-") as scratch:
        line = run(job, Path(scratch), keep_logs)
        files = {}
        for rel in files_of(line):
            with contextlib.suppress(OSError):
                # A replay compresses about 7 to 1 (in 6 ms for a full four-seat game, which
                # took a second to play): that is what a hundred machines send back.
                files[rel] = zlib.compress((Path(scratch) / rel).read_bytes())
        return GameOutcome(address, line, files=files)


def files_of(line: ResultLine) -> list[str]:
    """The files a result line names (its replay, the logs it kept), relative to the folder;
    `ValueError` for a path that is not a replay or log of that game (a worker must not
    write anywhere else in the tournament's folder)."""
    game_id = line.game_id
    names = [line.replay, *line.logs]
    out = []
    for rel in (n for n in names if n):
        parts = str(rel).split("/")
        safe = re.fullmatch(r"[A-Za-z0-9_.#-]+", parts[-1]) and parts[-1] not in (".", "..")
        if not safe or parts[:-1] not in (["replays"], ["logs", game_id]) or (
                parts[0] == "replays" and parts[1] != f"{game_id}.jsonl"):
            raise ValueError(f"{rel!r} is not a replay or log of game {game_id}")
        out.append(str(rel))
    return out


# ----------------------------------------------------------------------------------------------
# On the tournament's machine


