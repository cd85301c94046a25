"""`contest run`: the ladder, played deal set by deal set until stopped, on the tournament's
machinery (`tournament.pool.GamePool`, or `tournament.cluster.ClusterPool` with a cluster;
`tournament.runner.run_job` plays each game, so replays, logs and result lines are a
tournament's).

The pool asks for its next game when it has room; the feed then gives the queued games of
open deal sets (a rerun finishes those first), or makes the next deal set by matchmaking on
the ratings as they stand (refreshed after every finished deal set). Submissions, retirements
and suspensions made meanwhile, by this process or another, are seen at the next deal set.

Stopping: `--games N` and `--hours H` stop making deal sets (every deal set begun is played
out); Ctrl-C or SIGTERM stops at once: the games in flight are discarded (their rows queued
again, their replays removed), and a rerun plays them. A kill -9 leaves the same to the check
on open (`store.repair`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Protocol

from ...protocol.records import ResultLine
from ...protocol.seats import BotSpec
from ...replay.files import compress_replay
from ...tournament.config import ClusterSpec, ClusterTarget, ConfigError, TournamentConfig
from ...tournament.pool import GamePool
from ...tournament.run import cluster_missing
from ...tournament.runner import run_job
from ...tournament.schedule import BotEntry, GameJob, Plan
from ...verdicts.seatings import seatings
from ..command import runnable
from ..matchmaking import Share
from ..ranking import Rating
from ..ratings import LadderRatings
from ..settings import RECENT_GAMES, ContestError
from ..store import ContestStore, DealKind, GameRow, Repair, Version, held
from .choose import choose_table
from .events import DealSetDone, GamePlayed, Listener, Suspended, Unseated, quiet

IDLE_POLL: Final = 1.0  # seconds between looks for submissions when too few are in play
TOO_FEW: Final = "too few versions in play"  # a run's stop: no table can be seated


class Pool(Protocol):
    """What plays the games: `tournament.pool.GamePool`, or `tournament.cluster.ClusterPool`."""

    def play(self, jobs: Iterable[GameJob], /) -> Iterator[ResultLine]: ...


@dataclass(slots=True)
class LadderRun:
    """What a run did."""

    played: int = 0
    deal_sets: int = 0
    stopped: str = "done"  # "games", "hours", TOO_FEW, "interrupted"
    repair: Repair = field(default_factory=Repair)
    seconds: float = 0.0


@dataclass(slots=True)
class Budget:
    """When to stop making deal sets: after `games` games given out, or at `deadline`."""

    games: int | None = None
    deadline: float | None = None
    given: int = 0

    def spent(self) -> str | None:
        if self.games is not None and self.given >= self.games:
            return "games"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "hours"
        return None


class Ladder:
    """The ladder of one contest: its ratings, kept up to date, and its next games."""

    def __init__(self, store: ContestStore, on_event: Listener = quiet) -> None:
        self.store, self.on_event = store, on_event
        self.ratings = LadderRatings()
        self.current: dict[int, Rating] = {}
        for _, games in store.done_deal_sets():
            self.ratings.add_deal_set(games)
        self.refresh()

    def refresh(self) -> None:
        """Fit the versions in play and keep a snapshot (the leaderboard's and the history)."""
        versions = self.store.in_play()
        fitted = self.ratings.fit([v.label for v in versions])
        self.current = {v.id: fitted[v.label] for v in versions}
        self.store.save_ratings([(vid, r.rating, r.low, r.high, r.games, r.no_interval)
                                 for vid, r in self.current.items()])

    def next_table(self) -> tuple[int, ...] | None:
        versions = self.store.in_play()
        fitted = {v.label: self.current[v.id] for v in versions if v.id in self.current}
        settings = self.store.settings
        recent = self.store.recent_tables(Share.window(len(versions)))
        return choose_table(self.ratings, fitted, {v.label: v.id for v in versions},
                            self.store.deal_set_counts(), recent, settings.players,
                            settings.placement, (settings.min_share, settings.pair_cap))

    def new_deal_set(self) -> int | None:
        table = self.next_table()
        if table is None:
            return None
        counts = self.store.deal_set_counts()
        placing = any(sum(counts.get(v, (0, 0))) < self.store.settings.placement for v in table)
        kind: DealKind = "placement" if placing else "ladder"
        return self.store.add_deal_set(kind, table, seatings(len(table)))

    def finished(self, ds: int) -> None:
        """A deal set complete: its games into the ratings, a refresh, suspensions."""
        self.ratings.add_deal_set(self.store.deal_set_games(ds))
        self.refresh()
        self.on_event(DealSetDone(ds))

    def check_suspension(self, versions: set[int]) -> None:
        """A version with `suspend_after` failing games among its last ones is suspended."""
        limit = self.store.settings.suspend_after
        for vid in versions:
            version = self.store.version(vid)
            if not version.in_play:
                continue
            recent = self.store.recent_seats(vid, RECENT_GAMES)
            failed = [s for s in recent if s.failed]
            if len(failed) >= limit:
                kinds = sorted({o for s in failed for o in s.outcomes})
                reason = (f"{len(failed)} of its last {len(recent)} games failed "
                          f"({', '.join(kinds)}; first {failed[-1].game_id}, last "
                          f"{failed[0].game_id})")
                self.store.set_state(vid, "suspended", reason)
                self.store.drop_deal_sets_of(vid)
                self.on_event(Suspended(version.label, reason))


def job_of(store: ContestStore, row: GameRow, versions: dict[int, Version]) -> GameJob:
    """The game of a row, as a tournament worker plays it."""
    settings = store.settings
    bots = tuple(BotEntry(versions[v].label,
                          BotSpec(runnable(versions[v].command, store.folder / versions[v].folder)))
                 for v in row.versions)
    return GameJob(row.id, row.game_id, settings.game, settings.parsed_rules(), row.seed,
                   row.deal_set, bots, settings.policy(), settings.process_limits())


def feed(store: ContestStore, ladder: Ladder, budget: Budget, final: int | None = None
         ) -> Iterator[GameJob]:
    """The games to play: queued ones of open deal sets first, then new deal sets (ladder
    only: a final plays what it queued), until the budget is spent or nothing can be made."""
    given: set[int] = set()
    while True:
        kind = "final" if final is not None else "ladder"
        queued = [g for g in store.queued_games(kind, final) if g.id not in given]
        if not queued:
            if final is not None or budget.spent() or ladder.new_deal_set() is None:
                return
            continue
        versions = {v.id: v for v in store.versions()}
        row = queued[0]
        given.add(row.id)
        budget.given += 1
        store.mark_running(row.id)
        yield job_of(store, row, versions)


def play_ladder(folder: Path, jobs: int = 1, cluster: str | None = None,
                games: int | None = None, hours: float | None = None,
                on_event: Listener = quiet, wait: bool | None = None) -> LadderRun:
    """Play the ladder of the contest in `folder` until the budget is spent, too few versions
    are in play to seat a table, or a signal stops it (KeyboardInterrupt: the games in flight
    are discarded). `wait`: with fewer versions in play than seats, wait for submissions
    instead of stopping; by default only a run without `games` or `hours` waits (one that
    has them would wait for ever once suspensions left too few: it stops and says so)."""
    began = time.monotonic()
    waits = wait if wait is not None else (games is None and hours is None)
    with held(folder, "a run is already playing this contest (pid {pid})") as store:
        out = LadderRun(repair=store.repair())
        try:
            ladder = Ladder(store, on_event)
            budget = Budget(games, None if hours is None else began + hours * 3600)
            pools = functools.partial(game_pool, store, jobs, cluster)
            out.stopped = _play(store, ladder, budget, pools, on_event, out, waits)
        except KeyboardInterrupt:
            out.stopped = "interrupted"
        finally:
            store.discard_in_flight()
    out.seconds = time.monotonic() - began
    return out


def _play(store: ContestStore, ladder: Ladder, budget: Budget, pools: Callable[[], Pool],
          events: Listener, out: LadderRun, waits: bool) -> str:
    """The ladder's games, pool after pool, until it stops; why it stopped."""
    while (stop := budget.spent()) is None:
        # A pool only when there is a game to give it: with --cluster a pool is a dask
        # cluster (local:N) or every worker's start-up check, not to be made at every look.
        if store.queued_games("ladder") or ladder.next_table() is not None:
            with played(pools(), feed(store, ladder, budget)) as lines:
                for line in lines:
                    recorded = compressed(store, line)
                    _take(store, ladder, recorded, out)
                    events(GamePlayed(recorded))
            continue
        seated = Unseated(len(store.in_play()), store.settings.players, waits)
        events(seated)
        if not waits:
            return TOO_FEW
        time.sleep(IDLE_POLL)
    return stop


@contextlib.contextmanager
def played(pool: Pool, jobs: Iterable[GameJob]) -> Iterator[Iterator[ResultLine]]:
    """The pool's result lines of `jobs`, as games finish; closed on leaving (its workers
    stop first), before the caller discards the games in flight."""
    lines = pool.play(jobs)
    try:
        yield lines
    finally:
        if isinstance(lines, Generator):  # both pools' `play`: what closing stops
            lines.close()


def _take(store: ContestStore, ladder: Ladder, line: ResultLine, out: LadderRun) -> None:
    recorded = store.record(line)
    out.played += 1
    ladder.check_suspension(set(recorded.versions))
    if recorded.complete:
        out.deal_sets += 1
        ladder.finished(recorded.deal_set)


def compressed(store: ContestStore, line: ResultLine) -> ResultLine:
    """A played game's result line with its replay compressed at rest (x.jsonl.gz, which
    every replay command, the pages and the authors' API read), done before the game is
    recorded: a run killed in between leaves a running game, whose files the next command
    removes (`ContestStore.repair`)."""
    path = store.folder / line.replay if line.replay else None
    if line.replay is None or path is None or not path.is_file():
        return line
    packed = compress_replay(path)
    return dataclasses.replace(line, replay=str(Path(line.replay).with_name(packed.name)))


def game_pool(store: ContestStore, jobs: int, cluster: str | None) -> Pool:
    if cluster is None:
        return GamePool(jobs, run_job, store.folder, True)
    return cluster_pool(store, cluster)


def cluster_pool(store: ContestStore, address: str) -> Pool:
    """A `ClusterPool` for the contest: every worker is checked (meldref, and the versions in
    play started through their handshake, by their absolute paths: the contest folder must be
    at the same path on every worker, a shared filesystem) as a tournament's are."""
    missing = cluster_missing()
    if missing:
        raise ContestError(missing)
    # Imported once `cluster_missing` found dask installed (an optional extra).
    from ...tournament.cluster import ClusterPool  # noqa: PLC0415 start-up: dask, optional

    settings = store.settings
    bots = tuple(BotEntry(v.label, BotSpec(runnable(v.command, store.folder / v.folder)))
                 for v in store.in_play())
    try:
        target = ClusterTarget.parse(address)
        plan = Plan(settings.game, bots, settings.players, 1, seed=settings.seed,
                    rules=settings.parsed_rules())
        config = TournamentConfig(plan, limits=settings.limit_settings(),
                                  cluster=ClusterSpec(target))
        return ClusterPool(config, run_job, store.folder.resolve(), True)
    except (ValueError, ConfigError) as exc:
        raise ContestError(f"--cluster {address}: {exc}") from None
