"""The conversation with one bot: the protocol's exchanges over an injectable transport.

A `Conversation` speaks spec/PROTOCOL.md with one bot: the handshake, each decision request
with its id and deadline, the lines that come late or unasked, the diagnosis of a silence (a
slow bot, a hung one, a dead one) and the goodbye. It needs only a `Transport`: lines both ways
with deadlines, and a few facts about the program behind them (has it exited, how much CPU has
it used). `channel.PipeTransport` is a bot program's pipes; tests drive a conversation through a
scripted fake (as python-chess's `MockTransport`), with no process and a clock of their own.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NoReturn, Protocol

from ..engine.game import JSON, Action, Observation, Rebuilt, by_init
from .channel import EOF, EXITED, TOO_LONG, Incoming, PipeTransport
from .command import describe_exit
from .errors import (
    BotCrashedError,
    BotFloodError,
    BotProtocolError,
    BotTimeoutError,
    Fault,
    FaultOutcome,
)
from .limits import Limits
from .viewtext import request_lines
from .wire import (
    BotLine,
    error_line,
    event_line,
    gameover_line,
    go_line,
    hello_line,
    parse_bot_line,
    quote,
    setup_lines,
)

Clock = Callable[[], float]
# A silent bot using at least this share of one CPU while waited for is computing, not hung.
BUSY_SHARE: Final = 0.05
# The marks that end a conversation: the output closed, or the program ended (a child of it may
# hold the output open: the bot is gone all the same, and judged at once, not at the deadline).
GONE: Final = (EOF, EXITED)


@dataclass(frozen=True, slots=True)
class Setup:
    """What a seat is told when a game starts."""

    game: str
    rules: Mapping[str, JSON]  # every option by its public name (engine.game.rules_to_json)
    seat: int
    names: tuple[str, ...]  # every seat's name, in seat order

    def __init__(self, game: str, rules: Mapping[str, JSON], seat: int, names: tuple[str,
                 ...]) -> None:
        object.__setattr__(self, "game", game)
        object.__setattr__(self, "rules", rules)
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "names", names)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    @property
    def players(self) -> int:
        return len(self.names)


@dataclass(frozen=True, slots=True)
class Request:
    """One decision to make: the seat's observation and its clock (seconds)."""

    decision: str
    observation: Observation  # state.observation(seat); in-process bots get this object
    time: float  # this decision's own allowance
    bank: float  # the time bank left; the deadline is time + bank
    hints: Callable[[], Sequence[str]] | None = None  # legal action texts, computed on demand
    # For in-process seats only (never sent): why the referee would refuse an action text now,
    # or None; a person's seat uses it to explain a mistake before answering.
    check: Callable[[str], str | None] | None = None

    def __init__(self, decision: str, observation: object, time: float, bank: float,
                 hints: Callable[[], Sequence[str]] | None = None,
                 check: Callable[[str], str | None] | None = None) -> None:
        object.__setattr__(self, "decision", decision)
        object.__setattr__(self, "observation", observation)
        object.__setattr__(self, "time", time)
        object.__setattr__(self, "bank", bank)
        object.__setattr__(self, "hints", hints)
        object.__setattr__(self, "check", check)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    @property
    def deadline(self) -> float:
        return self.time + self.bank


@dataclass(frozen=True, slots=True)
class Reply:
    """A bot's answer: the action text (and the value, for in-process bots) and time taken."""

    text: str
    elapsed: float
    request_id: int | None = None
    action: Action | None = None  # an in-process bot's own value, judged without parsing

    def __init__(self, text: str, elapsed: float, request_id: int | None = None,
                 action: Action | None = None) -> None:
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "elapsed", elapsed)
        object.__setattr__(self, "request_id", request_id)
        object.__setattr__(self, "action", action)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)


class Transport(Protocol):
    """What a conversation needs of the other end: lines both ways, reads with deadlines (on
    the conversation's clock), and the state of the program behind them."""

    @property
    def eof(self) -> bool:
        """The bot closed its output."""

    @property
    def write_error(self) -> str | None:
        """Why lines can no longer reach the bot (it stopped reading, or closed its input)."""

    def send(self, *lines: str, now: bool = True) -> None:
        """Queue `lines`; write what the bot takes now unless `now` is False. Never blocks."""

    def flush(self) -> None:
        """Write what the bot takes of the queued lines now."""

    def poll(self) -> None:
        """Move whatever is ready both ways without waiting."""

    def read(self, deadline: float) -> Incoming | None:
        """The next line, or a mark (`EOF`, `EXITED`, `TOO_LONG`), or None once `deadline`
        has passed. `EXITED` (the program ended, its output still open) comes as soon as it
        ended and every line it wrote before was read, not at the deadline."""

    def pending(self) -> list[Incoming]:
        """The lines already received, taken off the queue (marks not included)."""

    def drain(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the queued lines to be taken; True if they were."""

    def exit_code(self, wait: float = 0.0) -> int | None:
        """The program's exit code once it ended (waiting up to `wait`); None while it runs."""

    def cpu_time(self) -> float | None:
        """CPU seconds the program used so far; None where that cannot be known."""


def send(transport: Transport, lines: list[str], now: bool = True) -> None:
    """`transport.send(*lines, now=now)`: for a bot's pipes, a direct compiled call (through
    the protocol, the call goes by the interpreter, which parses its arguments by name)."""
    if isinstance(transport, PipeTransport):
        transport.send_lines(lines, now)
    else:
        transport.send(*lines, now=now)


def read(transport: Transport, deadline: float) -> Incoming | None:
    """`transport.read(deadline)`, compiled straight for a bot's pipes (as `send`): the two
    branches read alike, but in the first the type is known, so the compiled method is called
    directly instead of through the protocol's lookup by name."""
    if isinstance(transport, PipeTransport):
        return transport.read(deadline)
    return transport.read(deadline)


def pending(transport: Transport) -> list[Incoming]:
    """`transport.pending()`, compiled straight for a bot's pipes (as `read`)."""
    if isinstance(transport, PipeTransport):
        return transport.pending()
    return transport.pending()


def request_text(request_id: int, request: Request) -> list[str]:
    """The lines of one decision request to a bot program: view, items, legal, `go`."""
    lines = request_lines(request.observation, request.hints)
    lines.append(go_line(request_id, request.decision, int(request.time * 1000),
                         int(request.bank * 1000)))
    return lines


@dataclass
class Conversation:
    """The protocol with one bot over a transport: handshake, requests with ids, ping on
    silence, goodbye. Failures raise `BotError`s carrying the `Fault` to record; faults that
    cost the bot nothing (late answers, stray lines) wait in `take_notes`."""

    transport: Transport
    limits: Limits = field(default_factory=Limits)
    clock: Clock = time.monotonic  # the transport's clock: `Incoming.at` and deadlines
    notes: list[Fault] = field(default_factory=list)
    _last_id: int = 0  # the id of the last request sent (ids count from 1)
    _pings: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _closed: bool = False
    _stray: int = 0  # unsolicited lines in the current period (request, idle, handshake)
    _fallback_noted: int | None = None  # the last request the bot said it answered by fallback
    _wrong_id: int | None = None  # the id of an answer to the current request that had another
    # Events' lines told since the last send: they go out with the next one (a request, the
    # turn's flush, an error line, the gameover), joined and encoded once with it, where
    # queueing them in the transport at each `notify` joined and encoded them there too.
    _events: list[str] = field(default_factory=list)

    def send(self, *lines: str) -> None:
        self._send(list(lines))

    def _send(self, lines: list[str]) -> None:
        """Write the events told so far and then `lines`, in one send."""
        queued = self._events
        if queued:
            self._events = []
            queued += lines
            lines = queued
        send(self.transport, lines)

    def take_notes(self) -> list[Fault]:
        if not self.notes:  # the usual case, after every decision
            return []
        notes, self.notes = self.notes, []
        return notes

    # -- the game's messages ---------------------------------------------------------------

    def start(self, setup: Setup) -> None:
        """A game begins: `game`, `rule` and `player` lines."""
        self.send(*setup_lines(setup.game, setup.seat, setup.rules, setup.names))

    def notify(self, events: Sequence[Mapping[str, JSON]]) -> None:
        """Events, written with the next flush, request or `send`."""
        transport = self.transport
        if isinstance(transport, PipeTransport) and transport.on_line is not None:
            # Its lines are watched (a transcript, a debug log): each is shown when told, as
            # the channel shows what it queues, so the watcher sees it beside its action.
            send(transport, [event_line(e) for e in events], now=False)
            return
        queued = self._events
        for e in events:
            queued.append(event_line(e))

    def flush(self) -> None:
        # Only the write: lines the bot sent meanwhile wait for its next request (which counts
        # them as idle lines) and one poll less per turn is one system call less.
        if self._events:
            self._send([])
        else:
            self.transport.flush()

    def reject(self, request_id: int | None, reason: str) -> None:
        self.send(error_line(request_id, reason))

    def finish(self, result: Mapping[str, JSON]) -> None:
        self.send(gameover_line(result))
        self.transport.poll()

    # -- handshake -------------------------------------------------------------------------

    def handshake(self, game: str, startup_time: float) -> dict[str, str]:
        """Send `meldref 1 <game>`, collect `id` lines until `ready`; BotError on failure."""
        self.send(hello_line(game or "-"))
        self._stray = 0
        began = self.clock()
        deadline = began + startup_time
        ids: dict[str, str] = {}
        while True:
            got = self.transport.read(deadline)
            if got is None:
                self._diagnose_silence(None, began, "`ready`", startup_time)
            elif got.kind in GONE:
                raise self._gone("during the handshake", self.clock() - began)
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
                        self.notes.append(Fault(FaultOutcome.MALFORMED,
                                                f"before ready: {msg.text}"))

    # -- between games ---------------------------------------------------------------------

    def still_there(self, grace: float) -> bool:
        """Between two games: does the bot play on? It is sent `ping` and its `pong` awaited
        up to `grace` seconds. False when it ended, closed its output or stopped reading (a bot
        that exits on `gameover`: it reads lines in order, so it is gone before the ping);
        True on the pong, and for a bot that runs on but stays silent (it keeps its process:
        silence between games costs nothing). Lines that come meanwhile count as idle lines."""
        if self.transport.write_error is not None or self.transport.eof:
            return False
        token = str(next(self._pings))
        self.send(f"ping {token}")
        deadline = self.clock() + grace
        while (got := self.transport.read(deadline)) is not None:
            if got.kind in GONE:
                return False
            msg = self._parse(got)
            if msg is not None and msg.kind == "pong" and msg.text == token:
                return self.transport.write_error is None
            if msg is not None and msg.kind == "action":
                self._late(msg, None)
            elif msg is not None and msg.kind != "info":
                self._stray_line("")
        return self.transport.exit_code() is None and self.transport.write_error is None

    # -- decisions -------------------------------------------------------------------------

    def decide(self, request: Request) -> Reply:
        """Ask for one decision and wait for its answer; BotError when none comes."""
        self._stray = 0
        self._absorb_idle_lines()
        self._stray = 0
        if self.transport.write_error is not None:
            raise self._gone(f"({self.transport.write_error})", 0.0)
        self._last_id = request_id = self._last_id + 1  # an int, not a counter: no call
        self._wrong_id = None
        self._send(request_text(request_id, request))
        began = self.clock()
        deadline = began + request.deadline
        while True:
            got = read(self.transport, deadline)
            if got is None:  # past the deadline: always raises, naming how it failed
                self._diagnose_silence(request_id, began, "answer", request.deadline)
            if got.kind in GONE:
                raise self._gone(f"before answering request {request_id}",
                                 self.clock() - began, request_id)
            reply = self._answer(got, request_id, began)
            if reply is not None:
                return reply

    def _answer(self, got: Incoming, request_id: int, began: float) -> Reply | None:
        msg = self._parse(got)
        elapsed = got.at - began
        if msg is not None and msg.kind == "info":
            self._fallback_said(msg.text, request_id)
            return None
        if msg is None:
            return None
        if msg.kind in ("pong", "id", "ready"):
            self._stray_line(f"during request {request_id}", request_id, elapsed)
            return None
        if msg.malformed:
            raise BotProtocolError(Fault(FaultOutcome.MALFORMED, msg.text, request_id), elapsed)
        if msg.request_id != request_id:
            self._late(msg, request_id, elapsed)
            return None
        return Reply(msg.text, elapsed, request_id)

    def _fallback_said(self, text: str, request_id: int) -> None:
        """`info fallback <id> <why>`: the bot answers this request with its fallback (its
        thinking raised or ran out of time): noted, so that it is never played unseen."""
        words = text.split(maxsplit=2)
        if words[:2] == ["fallback", str(request_id)] and self._fallback_noted != request_id:
            self._fallback_noted = request_id  # once a request, however often it is said
            why = words[2] if len(words) > 2 else "no reason given"
            self.notes.append(Fault(FaultOutcome.FALLBACK, f"answered request {request_id} "
                                    f"with its fallback: {why}", request_id))

    def _late(self, msg: BotLine, current: int | None, elapsed: float = 0.0) -> None:
        self._stray_line("" if current is None else f"during request {current}", current,
                         elapsed)
        if current is not None and self._wrong_id is None:
            self._wrong_id = msg.request_id
        if msg.request_id is not None and current is not None and msg.request_id > current:
            detail = (f"answer to request {msg.request_id}, which was never sent: "
                      f"{quote(msg.text)}")
            self.notes.append(Fault(FaultOutcome.MALFORMED, detail, msg.request_id))
            return
        detail = f"late answer to request {msg.request_id} ignored: {quote(msg.text)}"
        self.notes.append(Fault(FaultOutcome.LATE, detail, msg.request_id))

    def _absorb_idle_lines(self) -> None:
        for got in pending(self.transport):
            msg = self._parse(got)
            if msg is None or msg.kind == "info":
                continue
            if msg.malformed or msg.kind != "action":
                self._stray_line("")
                if msg.malformed:
                    self.notes.append(Fault(FaultOutcome.MALFORMED,
                                            f"between requests: {msg.text}"))
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
            fault = Fault(FaultOutcome.MALFORMED,
                          f"flooding: more than {limit} unsolicited lines {where}", request_id,
                          True)
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
        elapsed = self.clock() - began
        if self.transport.exit_code() is not None:
            raise self._gone(f"before sending {what}", elapsed, request_id)
        limit = f"no {what} within {allowed * 1000:.0f} ms"
        if request_id is not None and self._wrong_id is not None:  # the likely reason why
            limit += (f" (it answered with id {self._wrong_id} instead: an answer repeats "
                      "the id of its `go` line)")
        self.send(f"ping {next(self._pings)}")
        sign, busy = self._wait_for_life(request_id, what, elapsed, began + allowed)
        if sign is not None:
            still = "still computing, then " if busy else ""
            fault = Fault(FaultOutcome.TIMEOUT, f"{limit} (alive: {still}{sign})", request_id, True)
            raise BotTimeoutError(fault, elapsed)
        if busy:
            grace = max(self.limits.busy_grace, self.limits.ping_grace)
            detail = (f"{limit}, then silent for {grace * 1000:.0f} ms more while using the "
                      "CPU (an endless loop?)")
        else:
            detail = (f"{limit} and no pong within {self.limits.ping_grace * 1000:.0f} ms; "
                      "idle (no CPU used): hung, or its output was not flushed")
        raise BotTimeoutError(Fault(FaultOutcome.STALLED, detail, request_id, True), elapsed)

    def _wait_for_life(
        self, request_id: int | None, what: str, elapsed: float, deadline: float
    ) -> tuple[str | None, bool]:
        """(a sign of life in words, or None; whether the bot was seen using the CPU)."""
        limits = self.limits
        start = self.clock()
        last_resort = start + max(limits.busy_grace, limits.ping_grace)
        since, cpu = start, self.transport.cpu_time()
        while True:
            got = self.transport.read(min(since + limits.ping_grace, last_resort))
            if got is not None:
                if got.kind in GONE:
                    raise self._gone(f"before sending {what}", elapsed, request_id)
                msg = self._parse(got)
                if msg is None:
                    continue
                if msg.kind == "action":
                    self._late(msg, (request_id or 0) + 1)
                late = (got.at - deadline) * 1000
                return f"sent `{msg.kind}` {late:.0f} ms after the deadline", since > start
            if self.transport.exit_code() is not None:
                raise self._gone(f"before sending {what}", elapsed, request_id)
            now, used = self.clock(), self.transport.cpu_time()
            # No CPU figures for a process (no /proc): assume busy rather than misjudge.
            busy = used is None or cpu is None or used - cpu >= BUSY_SHARE * (now - since)
            if not busy or now >= last_resort:
                return None, busy
            since, cpu = now, used

    def _gone(self, when: str, elapsed: float, request_id: int | None = None) -> BotCrashedError:
        """The error for a bot whose output closed: it exited, or it only closed stdout."""
        code = self.transport.exit_code(self.limits.exit_wait)
        if code is not None:
            fault = Fault(FaultOutcome.CRASHED, f"{describe_exit(code)} {when}", request_id, True)
        elif self.transport.eof:
            fault = Fault(FaultOutcome.CLOSED, f"closed its output {when} but is still running",
                          request_id, True)
        elif self.transport.write_error is not None:
            fault = Fault(FaultOutcome.CLOSED, f"{self.transport.write_error} {when}",
                          request_id, True)
        else:  # seen to end (its pidfd), its exit code not there within the wait
            fault = Fault(FaultOutcome.CRASHED, f"ended {when} (its exit code unknown)",
                          request_id, True)
        return BotCrashedError(fault, elapsed)

    def say_goodbye(self) -> None:
        """Send `quit` and give the pipe a moment to take it (the process is shut down after)."""
        if self._closed:
            return
        self._closed = True
        self.send("quit")
        self.transport.drain(self.limits.quit_grace / 2)


__all__ = ["Conversation", "Reply", "Request", "Setup", "Transport", "request_text"]
