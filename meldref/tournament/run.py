"""Tournaments: many games over a schedule, in parallel, streamed to disk and resumable.

The output folder holds:
- `tournament.json`: the plan and its fingerprint (a rerun must match it to resume);
- `results.jsonl`: one line per finished game, written and flushed as each game ends;
- `replays/<game-id>.jsonl`: every game's replay;
- `logs/<game-id>/seat<k>-<bot>.stderr`: bots' stderr (kept for failed games, or all with
  `keep_logs`);
- `failures.txt`: one line per failed seat (game id, seat, bot, outcome, log, replay);
- `standings.json`: the standings once the run ends.

Parallel games run in worker processes (`pool.GamePool`: workers die with the tournament and
kill their bots; a game whose worker died is played again). Games with bot programs use a worker
even with one job, for that reason; games between built-in bots alone run in the tournament
process when `jobs` is 1. With a `cluster`, games run on a dask cluster instead
(`cluster.ClusterPool`, imported only then): the same results, files, standings and resume.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import secrets
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Final

from ..engine.game import find_game
from ..private import (
    UnsafeOutputError,
    existing_file_problem,
    folder_problem,
    open_private,
    private_dir,
    read_private_text,
    write_private_text,
)
from ..protocol.records import ResultLine
from ..settings import as_written, read_key
from .config import ConfigError, TournamentConfig
from .pool import GamePool, RunJob
from .runner import run_job
from .schedule import GameJob, Plan
from .standings import Report, SprtWatch, compute_standings

ProgressHook = Callable[[ResultLine, int, int], None]


@dataclass(slots=True)
class TournamentRun:
    """What a run did: games played now, games found done, and the standings of all of them."""

    folder: Path
    total: int
    already_done: int
    played: int
    stopped: str | None  # why the run stopped early: "sprt", "stop-after", "interrupted"
    standings: Report
    results: list[ResultLine] = field(default_factory=list)

    @property
    def missing(self) -> int:
        return self.total - len(self.results)


# ----------------------------------------------------------------------------------------------
# The folder


@dataclass(frozen=True, slots=True)
class OpenTournament:
    """A tournament ready to play: its seed settled, its folder made, checked to hold no other
    tournament's games, and its `tournament.json` written (`open_tournament`)."""

    config: TournamentConfig
    folder: Path


def open_tournament(config: TournamentConfig) -> OpenTournament:
    """Settle the seed, check the folder and prepare it (`tournament.json` written), once,
    before any game; `ConfigError` if the folder holds another tournament or cannot be
    written, or is not one to keep private files in (another user's, or one they can write:
    nothing in it is read). The one way a tournament starts: the command and
    `run_tournament` alike."""
    problem = folder_problem(config.folder)
    if problem:
        raise ConfigError(problem)
    config = settle_seed(config)
    check_folder(config)
    return OpenTournament(config, prepare_folder(config))


# What a run writes in its folder (the module's docstring): none may be a link or another
# user's when it starts (`check_folder`), so that nothing is written before one is refused.
FILES: Final = ("tournament.json", "results.jsonl", "failures.txt", "standings.json")
FOLDERS: Final = ("replays", "logs")


def check_folder(config: TournamentConfig) -> None:
    """`ConfigError` if the folder holds games of another tournament, or a link or another
    user's file where the run writes (nothing is written); `config`'s seed is settled
    (`settle_seed`)."""
    folder = config.folder
    for name in (*FILES, *FOLDERS):
        with contextlib.suppress(FileNotFoundError):
            info = (folder / name).lstat()
            if name in FILES or stat.S_ISLNK(info.st_mode):
                problem = existing_file_problem(folder / name, info)
                if problem:
                    raise ConfigError(problem)
    meta = folder / "tournament.json"
    try:
        with refused_as_config():
            if not read_results(folder / "results.jsonl"):
                return
            found = json.loads(read_private_text(meta)).get("fingerprint")
    except FileNotFoundError:
        return
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
        data = json.loads(read_private_text(folder / "tournament.json"))
        seed = data["plan"]["seed"]
        if read_key(data, "drawn-from") == seedless and isinstance(seed, int):
            return seed
    return None


def prepare_folder(config: TournamentConfig) -> Path:
    """Create the folder (checked by `check_folder`) and write `tournament.json`;
    `ConfigError` if it cannot be written ("X is not a folder", "cannot write X: <reason>")."""
    folder = config.folder
    problem = folder_problem(folder, create=True)
    if problem:
        raise ConfigError(problem)
    # The seed is written here only: the folder is owner-only, unlike a command line. Every
    # key as the configuration spells it (`bot-folder`, `shared-deals`, `move-time`); an
    # older meldref's `drawn_from` still reads (`_drawn_seed`). The fingerprint is of the
    # plan's own record (`Plan.to_json`), so it stays what it was and old folders resume.
    data = {"fingerprint": config.plan.fingerprint(), "drawn-from": config.drawn_from,
            "plan": as_written(config.plan.to_json()),
            "jobs": config.jobs, "limits": config.limits.to_json(),
            "cluster": None if config.cluster is None else str(config.cluster.target),
            "bot-folder": None if config.bot_folder is None else str(config.bot_folder),
            "sprt": config.sprt.to_json() if config.sprt else None}
    try:
        with refused_as_config():
            for inner in ("replays", "logs"):  # an older meldref's may be readable by all
                if (folder / inner).is_dir():
                    private_dir(folder / inner)
            write_private_text(folder / "tournament.json",
                               json.dumps(data, indent=2, default=str) + "\n")
    except OSError as exc:
        raise ConfigError(f"cannot write {exc.filename or folder}: {exc.strerror or exc}"
                          ) from None
    return folder


@contextlib.contextmanager
def refused_as_config() -> Iterator[None]:
    """A path refused as unsafe (`UnsafeOutputError`: a link, another user's file or folder)
    raised in the block is a `ConfigError`: the command says why and exits 2."""
    try:
        yield
    except UnsafeOutputError as exc:
        raise ConfigError(str(exc)) from None


def read_results(path: Path) -> list[ResultLine]:
    """The finished games in a results file; a last line cut short by a kill is removed, and
    a line that is not a game's result is skipped. `UnsafeOutputError` if it is a link or not
    ours (`open_private`): neither read nor cut."""
    try:
        with open_private(path, "r+b") as f:
            data = f.read()
            keep = data[: data.rfind(b"\n") + 1]
            if len(keep) != len(data):
                f.truncate(len(keep))  # drop the partial line so appends start clean
    except FileNotFoundError:
        return []
    out = []
    for text in keep.decode("utf-8", errors="replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError, KeyError, TypeError, ValueError):
            record = json.loads(text)
            if isinstance(record, dict):
                out.append(ResultLine.from_json(record))
    return out


def finished_games(lines: list[ResultLine], plan: Plan) -> list[ResultLine]:
    """The games of `plan` finished by earlier runs: one line per game, in file order. A game
    whose line records the referee's own error (status "error": a worker that died, a bug) is
    not finished: it is played again, and its new line is the one that counts."""
    played: dict[str, ResultLine] = {}
    for line in lines:
        if line.ok and _in_plan(plan, line):
            played.setdefault(line.game_id, line)
    return list(played.values())


def _in_plan(plan: Plan, line: ResultLine) -> bool:
    # The plan's game at the line's index has the line's id (the schedule is not listed).
    index = line.index
    return index is not None and 0 <= index < plan.game_count() and (
        plan.game_id(index) == line.game_id)


class ResultsLog:
    """Appends result lines and failure lines, flushing each one."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._results: IO[str] = open_private(folder / "results.jsonl", "a", encoding="utf-8")
        try:
            self._failures: IO[str] = open_private(folder / "failures.txt", "a",
                                                   encoding="utf-8")
        except BaseException:
            self._results.close()  # no one else holds it: it would stay open until collected
            raise

    def append(self, result: ResultLine) -> None:
        self._results.write(json.dumps(result.to_json(), separators=(",", ":")) + "\n")
        self._results.flush()
        for line in failure_lines(result):
            self._failures.write(line + "\n")
        self._failures.flush()

    def close(self) -> None:
        try:
            self._results.close()
        finally:
            self._failures.close()


def failure_lines(result: ResultLine) -> list[str]:
    """One tab-separated line per seat that failed in `result` (or the game's error)."""
    gid, replay = result.game_id, result.replay or "-"
    if result.figures is None:
        return [f"{gid}\t-\t-\terror: {result.error}\t-\t{replay}"]
    lines = []
    logs = result.logs or (None,) * len(result.bots)
    for seat, faults in enumerate(result.figures.faults):
        if faults:
            outcomes = ",".join(sorted({str(f.outcome) for f in faults}))
            lines.append(f"{gid}\tseat {seat}\t{result.bots[seat]}\t{outcomes}\t"
                         f"{logs[seat] or '-'}\t{replay}")
    return lines


# ----------------------------------------------------------------------------------------------
# Running


def run_tournament(
    tournament: OpenTournament,
    *,
    on_result: ProgressHook | None = None,
    stop_after: int | None = None,
    keep_logs: bool = False,
    run: RunJob = run_job,
    on_start: Callable[[int, int], None] | None = None,
    interruptible: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
) -> TournamentRun:
    """Play every game of `tournament` not yet in its folder's results, then rank the bots.

    `on_start(done, total)` is called once the games already played are known, `on_result`
    after each game; `stop_after` stops after that many games played now. The standings are
    computed in an `interruptible()` block: work that may be cut short anywhere (the command
    line lets a second signal stop it there, and nowhere else).
    """
    config, folder = tournament.config, tournament.folder
    total = config.plan.game_count()
    with refused_as_config():  # a link planted since `open_tournament` looked
        results = finished_games(read_results(folder / "results.jsonl"), config.plan)
    done = {r.game_id for r in results}
    todo: Iterable[GameJob] = (job for job in config.schedule() if job.game_id not in done)
    left = total - len(done)
    already = len(results)
    if on_start is not None:
        on_start(already, total)
    names = [b.name for b in config.plan.bots]
    watch = _sprt_watch(config, names)
    stopped: str | None = None
    if watch is not None and any([watch.add(r) for r in results]):
        stopped, todo, left = "sprt", (), 0  # decided by the games of an earlier run
    if stop_after is not None:
        # Only the first `stop_after` games are ever handed to the workers: stopping once
        # that many were played let -j N start (and finish) up to 2N more.
        todo, left = itertools.islice(todo, stop_after), min(left, stop_after)
    with refused_as_config():
        log = ResultsLog(folder)
    played = 0
    try:
        try:
            # On a stop no game is started, and the games in flight are finished and recorded
            # (after an SPRT stop they are left out of the standings): a stop never leaves a
            # replay cut short (it did at -j 2, failing `replay verify`).
            for result in _play(config, todo, left, folder, keep_logs, run,
                                lambda: stopped is not None):  # noqa: B023 (the latest)
                results.append(result)
                log.append(result)
                played += 1
                if on_result is not None:
                    on_result(result, len(results), total)
                if stopped is not None:
                    continue
                if watch is not None and watch.add(result):
                    stopped = "sprt"
                elif stop_after is not None and played >= stop_after:
                    stopped = "stop-after"
        except KeyboardInterrupt:
            stopped = "interrupted"
        finally:
            log.close()
        with interruptible():
            report = _write_standings(config, results, names, watch)
    except KeyboardInterrupt:  # a (second) signal after the games: the results are all kept
        with contextlib.suppress(OSError):
            (folder / "standings.json").unlink()  # of other results: none rather than stale
        raise StandingsInterrupted(
            f"interrupted while computing the standings: {folder / 'standings.json'} not "
            f"written ({len(results)} of {total} games kept in {folder / 'results.jsonl'});"
            " rerun the same command to compute them") from None
    return TournamentRun(folder, total, already, played, stopped, report, results)


class StandingsInterrupted(Exception):
    """A signal while the standings were computed or written: the games are kept, the
    standings file is not there (never half written); a rerun computes it."""


# Tests only: a file the standings phase creates, then waits (up to a minute) for a signal, so
# a test can signal a real tournament in that phase however fast its games are.
PAUSE_ENV = "MELDREF_TEST_PAUSE_STANDINGS"


def _write_standings(config: TournamentConfig, results: list[ResultLine], names: list[str],
                     watch: SprtWatch | None) -> Report:
    pause = os.environ.get(PAUSE_ENV)
    if pause:
        Path(pause).touch()
        time.sleep(60)
    info = find_game(config.plan.game)
    report = compute_standings(results, names, higher_is_better=info.higher_scores_win,
                               sprt=None if watch is None else watch.test,
                               upto=None if watch is None else watch.stop,
                               rank_by=config.rank_by)
    write_whole(config.folder / "standings.json", json.dumps(report.to_json(), indent=2) + "\n")
    return report


def write_whole(path: Path, text: str) -> None:
    """Write `path` whole or not at all: into a temporary file beside it, synced, then renamed
    over it (a rename is atomic), so a reader or a kill -9 sees the old file or the new one."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open_private(temp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _sprt_watch(config: TournamentConfig, names: list[str]) -> SprtWatch | None:
    if config.sprt is None or len(names) != 2:
        return None
    return SprtWatch.of(config.sprt, config.plan, names[0], names[1])


def _play(config: TournamentConfig, todo: Iterable[GameJob], left: int, folder: Path,
          keep_logs: bool, run: RunJob, stopping: Callable[[], bool]
          ) -> Iterator[ResultLine]:
    if not left:
        return
    if config.cluster is not None:
        missing = cluster_missing()
        if missing:
            raise ConfigError(missing)
        from .cluster import ClusterPool  # noqa: PLC0415 dask: an optional extra, only for this

        # A cluster game's files are put in place only when its result is taken, so the
        # games cancelled at a stop leave none behind.
        for line in ClusterPool(config, run, folder, keep_logs).play(todo):
            yield line
            if stopping():
                return
        return
    jobs, programs = min(config.jobs, left), _has_programs(config.plan)
    if jobs == 1 and not programs:
        # Built-in bots only: no process can outlive us, so no worker is needed.
        for job in todo:
            if stopping():
                return
            yield run(job, folder, keep_logs)
        return
    # Bot programs are played in worker processes even one game at a time: a worker dies with
    # the tournament process, also on kill -9 (after which nothing of ours runs), and stops its
    # bots on the way out; the tournament process could not stop them itself.
    pool = GamePool(jobs, run, folder, keep_logs)
    yield from pool.play(todo, stopping)


def cluster_missing() -> str | None:
    """Why `--cluster` cannot work here (dask.distributed not installed), or None."""
    for module in ("dask", "distributed"):
        if importlib.util.find_spec(module) is None:
            return (f"--cluster needs dask.distributed ({module} is not installed): "
                    "pip install 'meldref[cluster]'")
    return None


def _has_programs(plan: Plan) -> bool:
    return any(b.spec.builtin is None for b in plan.bots)
