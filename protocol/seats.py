"""Seats: what the referee talks to, a bot in this process or a bot program on pipes.

The referee sees one interface (`Seat`) for both, so a match can mix ``builtin:greedy`` with
``python3 bots/random_bot.py``. A seat only moves messages and measures time; legality is the
referee's question to the game, and failures come back as `BotError`s carrying a `Fault`.
"""

from __future__ import annotations

import itertools
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Final, NoReturn

from ..bots import BUILTIN_PREFIX, builtin_bot
from ..engine.game import GameInfo
from .channel import (
    EOF,
    TOO_LONG,
    BotCommand,
    BotProcess,
    Incoming,
    LineChannel,
    LineHook,
    resource_limits,
)
from .channel import describe_exit as describe_exit
from .errors import (
    BotCrashedError,
    BotError,
    BotFloodError,
    BotProtocolError,
    BotTimeoutError,
    Fault,
    SeatStartError,
)
from .wire import (
    BotLine,
    error_line,
    event_line,
    gameover_line,
    hello_line,
    parse_bot_line,
    quote,
    request_lines,
    setup_lines,
)

JSON = Any
# A silent bot using at least this share of one CPU while waited for is computing, not hung.
BUSY_SHARE: Final = 0.05


@dataclass(frozen=True, slots=True)
class Setup:
    """What a seat is told when a game starts."""

    game: str
    rules: Mapping[str, JSON]  # every option by its public name (engine.game.rules_to_json)
    seat: int
    names: tuple[str, ...]  # every seat's name, in seat order

    @property
    def players(self) -> int:
        return len(self.names)


@dataclass(frozen=True, slots=True)
class Request:
    """One decision to make: the seat's observation and its clock (seconds)."""

    decision: str
    observation: Any  # state.observation(seat); in-process bots get this object
    time: float  # this decision's own allowance
    bank: float  # the time bank left; the deadline is time + bank
    hints: Callable[[], Sequence[str]] | None = None  # legal action texts, computed on demand
    # For in-process seats only (never sent): why the referee would refuse an action text now,
    # or None; a person's seat uses it to explain a mistake before answering.
    check: Callable[[str], str | None] | None = None

    @property
    def deadline(self) -> float:
        return self.time + self.bank


@dataclass(frozen=True, slots=True)
class Reply:
    """A bot's answer: the action text (and the value, for in-process bots) and time taken."""

    text: str
    elapsed: float
    request_id: int | None = None
    action: Any = None


class Seat(ABC):
    """A player as the referee sees it. Use as a context manager, or call `close()`."""

    name: str = "seat"

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


class InProcessSeat(Seat):
    """An engine bot (`engine.game.Bot`) called directly; trusted code, so no deadline unless
    `enforce_time` (it cannot be interrupted, only judged late afterwards)."""

    def __init__(self, bot: Any, name: str | None = None, enforce_time: bool = False) -> None:
        self.bot = bot
        self.name = name or str(getattr(bot, "name", type(bot).__name__))
        self.enforce_time = enforce_time

    def start(self, setup: Setup) -> None:
        reset = getattr(self.bot, "reset", None)
        if callable(reset):
            reset()

    def decide(self, request: Request) -> Reply:
        began = time.perf_counter()
        try:
            action = self.bot.act(request.observation)
        except Exception as exc:
            elapsed = time.perf_counter() - began
            where = traceback.format_exception_only(exc)[-1].strip()
            fault = Fault("crashed", f"bot raised {where}", fatal=True)
            raise BotCrashedError(fault, elapsed) from exc
        elapsed = time.perf_counter() - began
        if self.enforce_time and elapsed > request.deadline:
            detail = f"answered after {elapsed:.3f} s, allowed {request.deadline:.3f} s"
            raise BotTimeoutError(Fault("timeout", detail, fatal=True), elapsed)
        # A bot may answer with the action's text instead of its value: the referee parses it.
        value = None if isinstance(action, str) else action
        return Reply(str(action), elapsed, action=value)


# ----------------------------------------------------------------------------------------------
# Bot programs


@dataclass(frozen=True, slots=True)
class Limits:
    """The process side of a seat's deadlines, in seconds (decision times come per request)."""

    # After a missed deadline the bot gets a `ping`; any line from it within `ping_grace`
    # makes the fault "timeout". A bot that is silent but using the CPU (a single-threaded bot
    # still computing cannot read the ping) is waited for up to `busy_grace`.
    ping_grace: float = 1.0
    busy_grace: float = 10.0
    exit_wait: float = 0.5  # after stdout closed: time to exit before it counts as "closed"
    quit_grace: float = 1.0  # after `quit`: time to exit by itself before SIGTERM
    term_grace: float = 1.0  # after SIGTERM: time before SIGKILL
    stderr_limit: int = 1 << 20  # bytes of stderr kept in the log file
    max_pending: int = 8 << 20  # bytes written to a bot that stops reading before it fails
    # Lines a bot may send unasked (late or unknown-id answers, malformed lines between
    # requests, chatter before `ready`, unasked pongs; not `info`) in one request, one wait
    # between requests, or the handshake; one more is a final "malformed" (flooding).
    max_stray_lines: int = 100
    # Resource limits of the bot process (rlimits; None: none). Core dumps are always off.
    memory_mb: int | None = None  # address space (RLIMIT_AS)
    max_processes: int | None = None  # RLIMIT_NPROC: counts ALL processes of the user
    file_size_mb: int | None = None  # the largest file it may write (RLIMIT_FSIZE)
    cpu_seconds: int | None = None  # CPU time of the process's whole life (RLIMIT_CPU)
    no_network: bool = False  # a network namespace of its own: no connection anywhere

    def rlimits(self) -> dict[int, int]:
        return resource_limits(self.memory_mb, self.max_processes, self.file_size_mb,
                               self.cpu_seconds)


class ProcessSeat(Seat):
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
        self.ids: dict[str, str] = {}  # from `id key value` in the handshake
        self.process: BotProcess | None = None
        self.last_process: BotProcess | None = None  # kept after close, for its stderr tail
        self.pids: list[int] = []  # every process started for this seat (tests check them)
        self.channel: LineChannel | None = None
        self._conn: _Conversation | None = None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def connect(self, startup_time: float = 10.0) -> None:
        if self._conn is not None and self.alive:
            return
        self.close()
        self.last_process = None
        try:
            self.process = BotProcess(self.command, self.log_path, self.limits.stderr_limit,
                                      self.limits.rlimits(), self.limits.no_network)
        except OSError as exc:
            raise BotCrashedError(Fault("crashed", str(exc), fatal=True)) from exc
        self.pids.append(self.process.pid)
        self.last_process = self.process
        self.channel = LineChannel(
            self.process.stdout_fd, self.process.stdin_fd,
            max_pending=self.limits.max_pending, on_line=self.on_line,
        )
        self._conn = _Conversation(self.channel, self.limits, self.process)
        try:
            self.ids = self._conn.handshake(self.game, startup_time)
        except BotError:
            self.close()
            raise
        if not self._fixed_name and self.ids.get("name"):
            self.name = self.ids["name"]

    def _live(self) -> _Conversation:
        if self._conn is None:
            raise BotCrashedError(Fault("crashed", "the bot is not running", fatal=True))
        return self._conn

    def start(self, setup: Setup) -> None:
        self.connect()
        self.game = setup.game
        self._live().send(*setup_lines(setup.game, setup.seat, setup.rules, setup.names))

    def decide(self, request: Request) -> Reply:
        return self._live().decide(request)

    def notify(self, events: Sequence[Mapping[str, JSON]]) -> None:
        if self._conn is not None:
            self._conn.channel.send(*(event_line(e) for e in events), now=False)

    def flush(self) -> None:
        if self._conn is not None:
            self._conn.channel.flush()
            self._conn.channel.poll()

    def reject(self, request_id: int | None, reason: str) -> None:
        if self._conn is not None:
            self._conn.send(error_line(request_id, reason))

    def finish(self, result: Mapping[str, JSON]) -> None:
        if self._conn is not None:
            self._conn.send(gameover_line(result))
            self._conn.channel.poll()

    def take_notes(self) -> list[Fault]:
        return self._conn.take_notes() if self._conn is not None else []

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


class StreamSeat(Seat):
    """A seat on two already open file descriptors (no process): e.g. the referee's own
    stdin/stdout, so a person or a test harness can play one seat by hand."""

    def __init__(self, read_fd: int, write_fd: int, name: str = "stdio", game: str = "",
                 limits: Limits | None = None, on_line: LineHook | None = None) -> None:
        self.name = name
        self.game = game
        self.channel = LineChannel(read_fd, write_fd, on_line=on_line)
        self._conn = _Conversation(self.channel, limits or Limits(), None)
        self._connected = False

    def connect(self, startup_time: float = 10.0) -> None:
        if not self._connected:
            ids = self._conn.handshake(self.game, startup_time)
            self.name = ids.get("name") or self.name
            self._connected = True

    def start(self, setup: Setup) -> None:
        self._conn.send(*setup_lines(setup.game, setup.seat, setup.rules, setup.names))

    def decide(self, request: Request) -> Reply:
        return self._conn.decide(request)

    def notify(self, events: Sequence[Mapping[str, JSON]]) -> None:
        self._conn.channel.send(*(event_line(e) for e in events), now=False)

    def flush(self) -> None:
        self._conn.channel.flush()

    def reject(self, request_id: int | None, reason: str) -> None:
        self._conn.send(error_line(request_id, reason))

    def finish(self, result: Mapping[str, JSON]) -> None:
        self._conn.send(gameover_line(result))

    def take_notes(self) -> list[Fault]:
        return self._conn.take_notes()

    def close(self) -> None:
        self._conn.say_goodbye()


@dataclass
class _Conversation:
    """The protocol with one bot over a channel: handshake, requests with ids, ping on silence."""

    channel: LineChannel
    limits: Limits
    process: BotProcess | None
    notes: list[Fault] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: itertools.count(1))
    _pings: Any = field(default_factory=lambda: itertools.count(1))
    _game: str = ""
    _closed: bool = False
    _stray: int = 0  # unsolicited lines in the current period (request, idle, handshake)

    def send(self, *lines: str) -> None:
        self.channel.send(*lines)

    def take_notes(self) -> list[Fault]:
        notes, self.notes = self.notes, []
        return notes

    # -- handshake -------------------------------------------------------------------------

    def handshake(self, game: str, startup_time: float) -> dict[str, str]:
        """Send `meldref 1 <game>`, collect `id` lines until `ready`; BotError on failure."""
        self.send(hello_line(game or "-"))
        self._stray = 0
        began = time.monotonic()
        deadline = began + startup_time
        ids: dict[str, str] = {}
        while True:
            got = self.channel.read(deadline)
            if got is None:
                self._diagnose_silence(None, began, "`ready`", startup_time)
            elif got.kind == EOF:
                raise self._gone("during the handshake", time.monotonic() - began)
            else:
                msg = self._parse(got)
                if msg is None:
                    continue
                if msg.kind == "ready":
                    return ids
                if msg.kind == "id" and msg.key:
                    ids[msg.key] = msg.text
                elif msg.kind != "info":  # banners and chatter are forgiven, up to a flood
                    self._stray_line("before `ready`")
                    if msg.malformed:
                        self.notes.append(Fault("malformed", f"before ready: {msg.text}"))

    # -- decisions -------------------------------------------------------------------------

    def decide(self, request: Request) -> Reply:
        self._stray = 0
        self._absorb_idle_lines()
        self._stray = 0
        if self.channel.write_error is not None:
            raise self._gone(f"({self.channel.write_error})", 0.0)
        request_id = next(self._ids)
        view = request.observation.to_json()
        hints = list(request.hints()) if request.hints is not None else None
        self.send(*request_lines(request_id, request.decision, view, hints,
                                 int(request.time * 1000), int(request.bank * 1000)))
        began = time.monotonic()
        deadline = began + request.deadline
        while True:
            got = self.channel.read(deadline)
            if got is None:  # past the deadline: always raises, naming how it failed
                self._diagnose_silence(request_id, began, "answer", request.deadline)
            if got.kind == EOF:
                raise self._gone(f"before answering request {request_id}",
                                 time.monotonic() - began, request_id)
            reply = self._answer(got, request_id, began)
            if reply is not None:
                return reply

    def _answer(self, got: Incoming, request_id: int, began: float) -> Reply | None:
        msg = self._parse(got)
        elapsed = got.at - began
        if msg is None or msg.kind == "info":
            return None
        if msg.kind in ("pong", "id", "ready"):
            self._stray_line(f"during request {request_id}", request_id, elapsed)
            return None
        if msg.malformed:
            raise BotProtocolError(Fault("malformed", msg.text, request_id), elapsed)
        if msg.request_id != request_id:
            self._late(msg, request_id, elapsed)
            return None
        return Reply(msg.text, elapsed, request_id)

    def _late(self, msg: BotLine, current: int | None, elapsed: float = 0.0) -> None:
        self._stray_line("" if current is None else f"during request {current}", current,
                         elapsed)
        if msg.request_id is not None and current is not None and msg.request_id > current:
            detail = (f"answer to request {msg.request_id}, which was never sent: "
                      f"{quote(msg.text)}")
            self.notes.append(Fault("malformed", detail, msg.request_id))
            return
        detail = f"late answer to request {msg.request_id} ignored: {quote(msg.text)}"
        self.notes.append(Fault("late", detail, msg.request_id))

    def _absorb_idle_lines(self) -> None:
        for got in self.channel.pending():
            msg = self._parse(got)
            if msg is None or msg.kind == "info":
                continue
            if msg.malformed or msg.kind != "action":
                self._stray_line("")
                if msg.malformed:
                    self.notes.append(Fault("malformed", f"between requests: {msg.text}"))
            else:
                self._late(msg, None)

    def _stray_line(self, where: str, request_id: int | None = None,
                    elapsed: float = 0.0) -> None:
        """Count one unsolicited line; past `max_stray_lines` in this period the bot is
        flooding, a final fault (its lines would cost the referee time and the replay space)."""
        self._stray += 1
        limit = self.limits.max_stray_lines
        if self._stray > limit:
            where = where or "between requests"
            fault = Fault("malformed", f"flooding: more than {limit} unsolicited lines {where}",
                          request_id, True)
            raise BotFloodError(fault, elapsed)

    def _parse(self, got: Incoming) -> BotLine | None:
        if got.kind == TOO_LONG:
            return BotLine("malformed", text="line too long")
        return parse_bot_line(got.data)

    # -- silence and death -----------------------------------------------------------------

    def _diagnose_silence(
        self, request_id: int | None, began: float, what: str, allowed: float
    ) -> NoReturn:
        """Past the deadline: tell a slow bot from a hung one and a dead one. Always raises.

        - the process died (or closed its output): "crashed" (or "closed");
        - alive and not answering in time: "timeout". It is alive if any line comes within
          `ping_grace` of the ping sent now (its late answer, the pong, an info line), or, when
          it stays silent, for as long as it keeps using the CPU (it is still computing), up
          to `busy_grace` after the deadline;
        - alive but silent through that grace: "stalled" (idle: hung, waiting for input that
          will not come, or its output stuck in a buffer; busy: an endless loop).
        """
        elapsed = time.monotonic() - began
        if self.process is not None and self.process.returncode is not None:
            raise self._gone(f"before sending {what}", elapsed, request_id)
        limit = f"no {what} within {allowed * 1000:.0f} ms"
        self.send(f"ping {next(self._pings)}")
        sign, busy = self._wait_for_life(request_id, what, elapsed, began + allowed)
        if sign is not None:
            still = "still computing, then " if busy else ""
            fault = Fault("timeout", f"{limit} (alive: {still}{sign})", request_id, True)
            raise BotTimeoutError(fault, elapsed)
        if busy:
            grace = max(self.limits.busy_grace, self.limits.ping_grace)
            detail = (f"{limit}, then silent for {grace * 1000:.0f} ms more while using the "
                      "CPU (an endless loop?)")
        else:
            detail = (f"{limit} and no pong within {self.limits.ping_grace * 1000:.0f} ms; "
                      "idle (no CPU used): hung, or its output was not flushed")
        raise BotTimeoutError(Fault("stalled", detail, request_id, True), elapsed)

    def _wait_for_life(
        self, request_id: int | None, what: str, elapsed: float, deadline: float
    ) -> tuple[str | None, bool]:
        """(a sign of life in words, or None; whether the bot was seen using the CPU)."""
        limits = self.limits
        start = time.monotonic()
        last_resort = start + max(limits.busy_grace, limits.ping_grace)
        since, cpu = start, self._cpu_time()
        while True:
            got = self.channel.read(min(since + limits.ping_grace, last_resort))
            if got is not None:
                if got.kind == EOF:
                    raise self._gone(f"before sending {what}", elapsed, request_id)
                msg = self._parse(got)
                if msg is None:
                    continue
                if msg.kind == "action":
                    self._late(msg, (request_id or 0) + 1)
                late = (got.at - deadline) * 1000
                return f"sent `{msg.kind}` {late:.0f} ms after the deadline", since > start
            if self.process is not None and self.process.returncode is not None:
                raise self._gone(f"before sending {what}", elapsed, request_id)
            now, used = time.monotonic(), self._cpu_time()
            # No CPU figures for a process (no /proc): assume busy rather than misjudge.
            busy = used is None or cpu is None or used - cpu >= BUSY_SHARE * (now - since)
            if not busy or now >= last_resort:
                return None, busy
            since, cpu = now, used

    def _cpu_time(self) -> float | None:
        # A stream with no process of ours (a person, a harness) shows no CPU use: its pong is
        # the only sign of life.
        return self.process.cpu_time() if self.process is not None else 0.0

    def _gone(self, when: str, elapsed: float, request_id: int | None = None) -> BotCrashedError:
        """The error for a bot whose output closed: it exited, or it only closed stdout."""
        code = None
        if self.process is not None:
            code = self.process.wait_exit(self.limits.exit_wait)
        if code is not None:
            fault = Fault("crashed", f"{describe_exit(code)} {when}", request_id, True)
        elif self.channel.eof:
            fault = Fault("closed", f"closed its output {when} but is still running",
                          request_id, True)
        else:
            fault = Fault("closed", f"{self.channel.write_error} {when}", request_id, True)
        return BotCrashedError(fault, elapsed)

    def say_goodbye(self) -> None:
        """Send `quit` and give the pipe a moment to take it (the process is shut down after)."""
        if self._closed:
            return
        self._closed = True
        self.send("quit")
        self.channel.drain(self.limits.quit_grace / 2)


# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BotSpec:
    """How a seat is filled, as the user wrote it: ``builtin:NAME`` (a bot of `meldref.bots`,
    played in this process) or a bot program's command line (split like a shell, no shell).
    `BotSpec.parse` checks the text once; `str()` gives it back."""

    text: str

    def __post_init__(self) -> None:
        if self.builtin is None:
            BotCommand.parse(self.text)  # ValueError: empty, or quotes left open

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

    @property
    def command(self) -> BotCommand | None:
        """The program's command; None for a built-in bot."""
        return None if self.builtin is not None else BotCommand.parse(self.text)

    def __str__(self) -> str:
        return self.text


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
    return ProcessSeat(BotCommand.parse(spec.text, cwd=cwd), limits, log_path, game.name,
                       on_line)


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
    "connect_all",
    "seat_from_spec",
]
