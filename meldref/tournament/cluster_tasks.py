"""The cluster's tasks: games cut into tasks of whole deal sets (`deal_sets`, `Batches`),
sized by the game time measured so far (`TaskSize`), and the tasks in flight (`Flight`).

Part of the cluster client (`cluster`, whose docstring says the whole design).
"""

# dask.distributed is typed only in part (as in `cluster`: pyproject's mypy overrides), and its
# calls here are checked by tests/test_cluster*.py against a real scheduler and workers.

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Final

import distributed

from .cluster_worker import Checked, GameOutcome, Played
from .schedule import GameJob

TASK_SECONDS: Final = 2.0  # a task's play, at the game time measured so far
TASK_GAMES: Final = 480  # games in one task at most


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


def once(batch: tuple[GameJob, ...], seen: set[str]) -> list[GameJob]:
    """The jobs of `batch` whose game is not counted yet, each game once."""
    out: dict[str, GameJob] = {}
    for job in batch:
        if job.game_id not in seen:
            out.setdefault(job.game_id, job)
    return list(out.values())


def _deal_set(job: GameJob) -> str:
    return job.game_id.rpartition("-s")[0] or job.game_id

