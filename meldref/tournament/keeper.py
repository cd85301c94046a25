"""Bot programs kept running from game to game, as cutechess keeps its engines.

A match, or a tournament's worker process (a local pool's, or a dask worker's, which keeps one
keeper per tournament run and task thread: `cluster_worker.py`), starts each bot program once and
seats that process in every game it plays, each game marked by `game` ... `gameover`
(spec/PROTOCOL.md section 3).
A process is started afresh, with a new handshake, only when it is no longer fit to play:

- after a game in which it failed for good (crashed, closed, timeout, stalled, flooding, or an
  illegal or malformed answer on its last attempt): the referee has sent it `quit` and stopped
  it, and the next game it is seated in starts a new one;
- when it ended or closed a pipe between two games;
- when it has used half of its CPU cap (`Limits.cpu_seconds` is a kernel limit on the process's
  whole life, RLIMIT_CPU): so every game starts with at least half of the cap left.

With `Limits.fresh_bots` every game starts processes of its own and stops them after.
Built-in bots are never kept: each game seeds its own.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from multiprocessing.util import Finalize
from pathlib import Path

from ..engine.game import GameInfo
from ..protocol.referee import close_all, each_seat
from ..protocol.seats import BotSpec, Limits, ProcessSeat, Seat, seat_from_spec

Key = tuple[BotSpec, Limits, str | None]  # a program, its limits, the folder it runs in


class BotKeeper:
    """Bot-program seats between games, by program: lent to a game, given back after it.
    Programs that are seated twice in one game (two copies of a bot) have two processes."""

    def __init__(self) -> None:
        self._idle: dict[Key, list[ProcessSeat]] = {}
        self._lent: dict[ProcessSeat, Key] = {}
        self._lock = threading.Lock()  # a worker may play games on several threads
        self._closed = False  # closed: seats given back are stopped, not kept

    def lend(self, spec: BotSpec, info: GameInfo, limits: Limits, log: Path | None,
             cwd: str | None = None) -> ProcessSeat:
        """A seat of program `spec` for one game, its stderr to `log`: a kept one still fit to
        play (`ProcessSeat.ready`, CPU left), else a new one, whose program the referee starts
        at the game's `connect`."""
        key = (spec, limits, cwd)
        while (seat := self._take(key)) is not None:
            if fit(seat, limits):
                seat.log_to(log)
                return self._out(seat, key)
            seat.close()
        made = seat_from_spec(spec, info, limits=limits, log_path=log, cwd=cwd)
        assert isinstance(made, ProcessSeat)
        return self._out(made, key)

    def adopt(self, seat: ProcessSeat, spec: BotSpec, limits: Limits,
              cwd: str | None = None) -> None:
        """Keep a seat started elsewhere (a match's start-up check) for the games to come."""
        self._out(seat, (spec, limits, cwd))
        self.give_back([seat])

    def give_back(self, seats: Sequence[Seat], keep: bool = True) -> None:
        """Take the seats of a finished game back: programs fit to play on are kept (unless
        not `keep`: a game the referee could not finish), every other seat closed, each even
        if closing another failed or was interrupted; the first interruption (Ctrl-C, a
        signal) goes on once all are done."""
        each_seat(seats, lambda seat: self._back(seat, keep))

    def close(self) -> None:
        """Stop every kept program (`quit`, then SIGTERM and SIGKILL for those that linger)."""
        with self._lock:
            self._closed = True  # a game still playing (a cancelled dask task) keeps nothing
            seats = [s for idle in self._idle.values() for s in idle]
            self._idle.clear()
        close_all(seats)

    def __enter__(self) -> BotKeeper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _back(self, seat: Seat, keep: bool) -> None:
        with self._lock:
            key = self._lent.pop(seat, None) if isinstance(seat, ProcessSeat) else None
        if key is None or not keep or not isinstance(seat, ProcessSeat) or not fit(seat,
                                                                                  key[1]):
            seat.close()
            return
        seat.hold_log()  # the game's log is complete: what comes next opens the next one
        with self._lock:
            if not self._closed:
                self._idle.setdefault(key, []).append(seat)
                return
        seat.close()

    def _take(self, key: Key) -> ProcessSeat | None:
        with self._lock:
            idle = self._idle.get(key)
            return idle.pop() if idle else None

    def _out(self, seat: ProcessSeat, key: Key) -> ProcessSeat:
        with self._lock:
            self._lent[seat] = key
        return seat


def fit(seat: ProcessSeat, limits: Limits) -> bool:
    """Whether a kept seat may play another game as it is: running, through its handshake,
    pipes open, and (under a CPU cap) at least half of the cap left."""
    if not seat.ready:
        return False
    if limits.cpu_seconds is None:
        return True
    used = seat.cpu_time()
    return used is not None and used < limits.cpu_seconds / 2


_HERE: BotKeeper | None = None
_LENDER: ContextVar[BotKeeper | None] = ContextVar("meldref_keeper", default=None)


def keep_bots_here() -> BotKeeper:
    """Keep the bots of every game this process plays from now on (a tournament worker's:
    `runner.run_job` lends from it), stopped when the process exits."""
    global _HERE
    if _HERE is None:
        _HERE = BotKeeper()
        # A finalizer of multiprocessing's, not atexit: a pool worker forked from the fork
        # server ends with os._exit, which runs these but no atexit handler (its bots were
        # killed by their guards instead of told `quit`); the main process runs them at exit.
        Finalize(None, _HERE.close, exitpriority=10)
    return _HERE


def kept_here() -> BotKeeper | None:
    """The keeper of the game being played here: `lending_from`'s, else this process's (if
    `keep_bots_here` made one)."""
    return _LENDER.get() or _HERE


@contextlib.contextmanager
def lending_from(keeper: BotKeeper | None) -> Iterator[None]:
    """Games played in this block (by this thread) lend their bots from `keeper` (None: this
    process's): a dask worker keeps one per tournament run and task thread."""
    token = _LENDER.set(keeper)
    try:
        yield
    finally:
        _LENDER.reset(token)
