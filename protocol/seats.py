"""Seats: what the referee talks to, a bot in this process or a bot program on pipes.

The referee sees one interface (`Seat`) for both, so a match can mix ``builtin:greedy`` with
``python3 bots/random_bot.py``. A seat only moves messages and measures time; legality is the
referee's question to the game, and failures come back as `BotError`s carrying a `Fault`.
"""

from __future__ import annotations

import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType, TracebackType

from mypy_extensions import mypyc_attr

from ..bots import BUILTIN_PREFIX, builtin_bot
from ..engine.game import JSON, Bot, GameInfo, Rebuilt, by_init
from .channel import LineHook
from .command import BotCommand
from .command import describe_exit as describe_exit
from .conversation import Conversation, Reply, Request, Setup, Transport
from .errors import (
    BotCrashedError,
    BotError,
    BotTimeoutError,
    Fault,
    FaultOutcome,
    SeatStartError,
)
from .limits import Limits
from .process import BotProcess, PipeTransport


# Compiled (setup.py), yet subclassed by seats of Python code (a person's, the SDK's, tests').
@mypyc_attr(allow_interpreted_subclasses=True)
class Seat(ABC):
    """A player as the referee sees it. Use as a context manager, or call `close()`."""

    name: str = "seat"
    # What the bot said of itself in the handshake (`id name ...`, `id author ...`); nothing
    # before it connects, and nothing ever from an in-process bot.
    ids: Mapping[str, str] = MappingProxyType({})

    def connect(self, startup_time: float) -> None:  # noqa: B027 (optional hook)
        """Be ready to play (start the program and shake hands); BotError if it cannot."""

    @abstractmethod
    def start(self, setup: Setup) -> None:
        """A game begins."""

    @abstractmethod
    def decide(self, request: Request) -> Reply:
        """The seat's action; BotError (with its `fault`) when the bot fails to give one."""

    def notify(self, events: Sequence[Mapping[str, JSON]]) -> None:  # noqa: B027
        """Public events, as this seat may see them (`Event.for_seat`). They may wait for the
        next `flush`, `decide` or `finish` (the referee flushes at the end of every turn)."""

    def flush(self) -> None:  # noqa: B027
        """Deliver the events `notify` queued."""

    def reject(self, request_id: int | None, reason: str) -> None:  # noqa: B027
        """The last answer was not accepted: illegal or malformed, and why."""

    def finish(self, result: Mapping[str, JSON]) -> None:  # noqa: B027
        """The game is over (`Outcome.to_json()`)."""

    def close(self) -> None:  # noqa: B027
        """Stop the bot for good; safe to call twice."""

    def take_notes(self) -> list[Fault]:
        """Non-fatal faults seen since the last call (late answers, stray lines)."""
        return []

    @property
    def alive(self) -> bool:
        return True

    def __enter__(self) -> Seat:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# ----------------------------------------------------------------------------------------------
# In-process bots


@mypyc_attr(allow_interpreted_subclasses=True)
class InProcessSeat(Seat):
    """An engine bot (`engine.game.Bot`) called directly; trusted code, so no deadline unless
    `enforce_time` (it cannot be interrupted, only judged late afterwards)."""

    def __init__(self, bot: Bot, name: str | None = None, enforce_time: bool = False) -> None:
        self.bot = bot
        self.name = name or str(getattr(bot, "name", type(bot).__name__))
        self.enforce_time = enforce_time

    def start(self, setup: Setup) -> None:
        reset = getattr(self.bot, "reset", None)
        if callable(reset):
            reset()

    def decide(self, request: Request) -> Reply:
        # A bot that plans by the clock is told it first, as a program reads `go`'s `time`.
        think_within = getattr(self.bot, "think_within", None)
        if callable(think_within):
            think_within(request.time, request.bank)
        began = time.perf_counter()
        try:
            action = self.bot.act(request.observation)
        except Exception as exc:
            elapsed = time.perf_counter() - began
            where = traceback.format_exception_only(exc)[-1].strip()
            fault = Fault(FaultOutcome.CRASHED, f"bot raised {where}", fatal=True)
            raise BotCrashedError(fault, elapsed) from exc
        elapsed = time.perf_counter() - began
        if self.enforce_time and elapsed > request.deadline:
            detail = f"answered after {elapsed:.3f} s, allowed {request.deadline:.3f} s"
            raise BotTimeoutError(Fault(FaultOutcome.TIMEOUT, detail, fatal=True), elapsed)
        # A bot may answer with the action's text instead of its value: the referee parses it.
        value = None if isinstance(action, str) else action
        return Reply(str(action), elapsed, action=value)


# ----------------------------------------------------------------------------------------------
# Bot programs


class LineSeat(Seat):
    """A seat that speaks the protocol in lines (`Conversation`): what a bot program on pipes
    and a stream (a person, a harness) share. Subclasses say how the conversation begins
    (`connect`) and ends (`close`)."""

    _conn: Conversation | None = None

    def _live(self) -> Conversation:
        if self._conn is None:
            raise BotCrashedError(Fault(FaultOutcome.CRASHED, "the bot is not running", fatal=True))
        return self._conn

    def start(self, setup: Setup) -> None:
        self._live().start(setup)

    def decide(self, request: Request) -> Reply:
        return self._live().decide(request)

    def notify(self, events: Sequence[Mapping[str, JSON]]) -> None:
        if self._conn is not None:
            self._conn.notify(events)

    def flush(self) -> None:
        if self._conn is not None:
            self._conn.flush()

    def reject(self, request_id: int | None, reason: str) -> None:
        if self._conn is not None:
            self._conn.reject(request_id, reason)

    def finish(self, result: Mapping[str, JSON]) -> None:
        if self._conn is not None:
            self._conn.finish(result)

    def take_notes(self) -> list[Fault]:
        return self._conn.take_notes() if self._conn is not None else []


class ProcessSeat(LineSeat):
    """A bot program speaking the protocol on stdin/stdout, in its own process group.

    The program starts at `connect` (or the first `start`) and may play several games; it is
    restarted by the next `connect` after it failed. `on_line(direction, text)` sees every
    line, for transcripts and leak checks.
    """

    def __init__(
        self,
        command: BotCommand,
        limits: Limits | None = None,
        log_path: Path | str | None = None,
        game: str = "",
        on_line: LineHook | None = None,
        name: str | None = None,
    ) -> None:
        self.command = command
        self.limits = limits or Limits()
        self.log_path = Path(log_path) if log_path else None
        self.game = game
        self.on_line = on_line
        self.name = name or str(command)
        self._fixed_name = name is not None
        self.ids = {}  # from `id key value` in the handshake
        self.process: BotProcess | None = None
        self.last_process: BotProcess | None = None  # kept after close, for its stderr tail
        self.pids: list[int] = []  # every process started for this seat (tests check them)
        self.channel: PipeTransport | None = None
        self._between_games = False  # a game ended on this process since its handshake

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    @property
    def ready(self) -> bool:
        """Started, through its handshake, still running, and its pipes open both ways: fit to
        play another game as it is."""
        channel = self.channel
        return (self._conn is not None and self.alive and channel is not None
                and not (channel.eof or channel.exited or channel.write_error))

    def cpu_time(self) -> float | None:
        """CPU seconds the running program's group used so far (None: none running, or no
        figures here)."""
        return self.process.cpu_time() if self.process is not None else None

    def log_to(self, path: Path | str | None) -> None:
        """The bot's stderr goes to `path` from now on (None: nowhere), also after a restart:
        the log of the next game of a bot kept from game to game."""
        self.log_path = Path(path) if path else None
        if self.process is not None:
            self.process.log_to(self.log_path)

    def hold_log(self) -> None:
        """Between two games: what the bot writes to stderr waits for the next `log_to`."""
        if self.process is not None:
            self.process.hold_log()

    def connect(self, startup_time: float = 10.0) -> None:
        if self._conn is not None and self.alive and self._plays_on():
            return
        self.close()
        self.last_process = None
        try:
            self.process = BotProcess(self.command, self.log_path, self.limits.stderr_limit,
                                      self.limits.rlimits(), self.limits.no_network,
                                      self.limits.sandbox_plan())
        except OSError as exc:
            raise BotCrashedError(Fault(FaultOutcome.CRASHED, str(exc), fatal=True)) from exc
        self.pids.append(self.process.pid)
        self.last_process = self.process
        self.channel = PipeTransport.to(self.process, self.limits.max_pending, self.on_line)
        self._conn = Conversation(self.channel, self.limits)
        try:
            self.ids = self._conn.handshake(self.game, startup_time)
        except BotError:
            self.close()
            raise
        self._refuse_missing_limits()
        if not self._fixed_name and self.ids.get("name"):
            self.name = self.ids["name"]

    def _plays_on(self) -> bool:
        """Whether a process that played a game plays the next as it is: it answers a ping
        (section 3 of spec/PROTOCOL.md). A bot that exits on `gameover` may not have ended
        yet when the next game begins; asking, not guessing, tells it from one that plays on,
        so it is restarted, not forfeited."""
        if not self._between_games:
            return True
        self._between_games = False
        assert self._conn is not None
        return self._conn.still_there(self.limits.ping_grace)

    def finish(self, result: Mapping[str, JSON]) -> None:
        super().finish(result)
        self._between_games = self._conn is not None

    def _refuse_missing_limits(self) -> None:
        """A bot whose processes lack a limit asked for does not play: the program its
        wrapper finally runs is checked once it said ready."""
        missed = self.process.limits_not_in_force() if self.process is not None else []
        if missed:
            self.close()
            raise BotCrashedError(Fault(
                FaultOutcome.CRASHED, "limits not in force in the bot, so it may not play: "
                f"{'; '.join(missed)} (a wrapper that resets limits, such as sudo or a "
                "login shell with pam_limits?)", fatal=True))

    def start(self, setup: Setup) -> None:
        self.connect()
        self.game = setup.game
        super().start(setup)

    def close(self) -> None:
        conn, process = self._conn, self.process
        try:
            if conn is not None:
                conn.say_goodbye()
            if process is not None:
                process.shutdown(self.limits.quit_grace, self.limits.term_grace)
        except BaseException:  # interrupted while saying goodbye: no grace any more
            if process is not None:
                process.kill()
            raise
        finally:
            # Forgotten only once stopped: an interruption above must not lose the process.
            self._conn = None
            self.process = None
            if self.channel is not None:
                self.channel.close()
                self.channel = None


class TransportSeat(LineSeat):
    """A seat over a transport already open (`Transport`: lines both ways, reads with
    deadlines), the protocol spoken as with a program but no process started or stopped: a
    bot in memory for tests and benchmarks (bench/run.py's loopback), a stream, a socket."""

    def __init__(self, transport: Transport, name: str = "stream", game: str = "",
                 limits: Limits | None = None) -> None:
        self.name = name
        self.game = game
        self._conn = self._stream = Conversation(transport, limits or Limits())
        self._connected = False

    def connect(self, startup_time: float = 10.0) -> None:
        if not self._connected:
            self.ids = self._stream.handshake(self.game, startup_time)
            self.name = self.ids.get("name") or self.name
            self._connected = True

    def close(self) -> None:
        self._stream.say_goodbye()


class StreamSeat(TransportSeat):
    """A seat on two already open file descriptors (no process): e.g. the referee's own
    stdin/stdout, so a person or a test harness can play one seat by hand."""

    def __init__(self, read_fd: int, write_fd: int, name: str = "stdio", game: str = "",
                 limits: Limits | None = None, on_line: LineHook | None = None) -> None:
        self.channel = PipeTransport(read_fd, write_fd, on_line=on_line)
        super().__init__(self.channel, name, game, limits)


@dataclass(frozen=True, slots=True)
class BotSpec:
    """How a seat is filled, as the user wrote it: ``builtin:NAME`` (a bot of `meldref.bots`,
    played in this process) or a bot program's command line (split like a shell, no shell).
    `BotSpec.parse` checks the text once; `str()` gives it back. A program's command is
    split once, here, and kept (`command`): the seats made from the spec start it as split."""

    text: str
    # The program's command (None for a built-in bot), made from `text`: not compared.
    command: BotCommand | None = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        command = None if self.builtin is not None else BotCommand.parse(self.text)
        object.__setattr__(self, "command", command)  # ValueError: empty, or quotes left open

    @staticmethod
    def parse(text: str) -> BotSpec:
        """The spec written as `text` (stripped); `ValueError` saying what is wrong."""
        try:
            return BotSpec(" ".join(text.split()) if text.strip().startswith(BUILTIN_PREFIX)
                           else text.strip())
        except ValueError as exc:
            raise ValueError(f"bot {text!r}: {exc}") from None

    @property
    def builtin(self) -> str | None:
        """NAME for ``builtin:NAME``; None for a program."""
        if not self.text.startswith(BUILTIN_PREFIX):
            return None
        return self.text.removeprefix(BUILTIN_PREFIX).strip()

    def __str__(self) -> str:
        return self.text

    def __reduce__(self) -> Rebuilt:
        # Compiled (setup.py): rebuilt through the constructor, which splits `text` again
        # (tournaments pickle their bots' specs to the workers), not field by field through
        # the frozen `__setattr__`.
        return by_init(self)


def seat_from_spec(
    spec: BotSpec | str,
    game: GameInfo,
    seed: int = 0,
    limits: Limits | None = None,
    log_path: Path | str | None = None,
    cwd: str | None = None,
    on_line: LineHook | None = None,
) -> Seat:
    """A seat for `spec`: an `InProcessSeat` of a built-in bot or a `ProcessSeat`."""
    spec = spec if isinstance(spec, BotSpec) else BotSpec.parse(spec)
    if spec.builtin is not None:
        return InProcessSeat(builtin_bot(game.name, spec.builtin, seed), name=spec.builtin)
    assert spec.command is not None
    return ProcessSeat(replace(spec.command, cwd=cwd), limits, log_path, game.name, on_line)


def connect_all(seats: Sequence[Seat], startup_time: float = 10.0) -> None:
    """Start every seat (each program, up to its `ready`) before any game, so a wrong command
    fails loudly at once instead of forfeiting games. On the first failure every seat is
    closed and `SeatStartError` says which seat failed and why (with the end of its stderr)."""
    for index, seat in enumerate(seats):
        try:
            seat.connect(startup_time)
        except BotError as exc:
            tail = stderr_tail(seat)
            for other in seats:
                other.close()
            raise SeatStartError(index, seat.name, exc.fault, tail) from exc


def stderr_tail(seat: Seat, lines: int = 2) -> str:
    """The last lines a program seat wrote to stderr, joined by " / " (empty if none)."""
    process = getattr(seat, "last_process", None)
    if process is None:
        return ""
    text = process.stderr_tail.decode("utf-8", "replace").strip()
    return " / ".join(text.splitlines()[-lines:])


__all__ = [
    "BotCommand",
    "BotError",
    "BotSpec",
    "InProcessSeat",
    "Limits",
    "ProcessSeat",
    "Reply",
    "Request",
    "Seat",
    "SeatStartError",
    "Setup",
    "StreamSeat",
    "TransportSeat",
    "connect_all",
    "seat_from_spec",
]
