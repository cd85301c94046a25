"""Lines to and from a bot with deadlines: the byte-level line transport.

`LineChannel` never blocks the referee: both pipe ends are non-blocking, output that the bot does
not read waits in a bounded buffer, and every read takes a deadline. One `poll` loop, no
threads, since only one seat is ever waited on at a time. What runs at the other end (a bot
program, a person's terminal) is not its business: `process.py` starts and stops programs.
"""

from __future__ import annotations

import math
import os
import select
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from ..engine.game import Rebuilt, by_init
from .wire import MAX_LINE, fit_line

LineHook = Callable[[str, str], None]  # (direction ">" to bot / "<" from bot, text)

LINE: Final = "line"
TOO_LONG: Final = "too-long"  # an over-long line, discarded up to its newline
EOF: Final = "eof"  # the bot closed its output
# The program at the other end ended, though its output may still be open: a child it started
# holds the pipe. Without a pidfd to wake the poll, the program is asked this often in a wait.
EXITED: Final = "exited"
EXIT_CHECK: Final = 0.05
READ_SIZE: Final = 1 << 16  # bytes taken from the pipe by one read at most
FULL: Final = -1  # `LineChannel._write`: the pipe took nothing now
BROKEN: Final = -2  # ... and never will: the bot closed its input or died
# How long a read looks for an answer before it sleeps, while the bot's answers come within it.
# A round trip through a sleep costs the referee more than this much looking (waking, and its
# work running slower after the switch to the bot and back); a bot slower than this is never
# looked for, so a thinking bot's moves cost nothing more (`LineChannel.read`).
SPIN: Final = 0.0001
# A yield that kept the referee off its core longer than this says the machine is crowded:
# there a look's yield gave the core to other work for a time slice (2.5 to 7.8 ms, four busy
# processes beside a game on 2 cores: 2,023 us a decision against 108 with reads that sleep at
# once), where on a quiet machine the longest of 110,000 yields took 91 us. The channel then
# stops looking for CROWDED_PAUSE; after it, one look tells again, at one slice's cost.
CROWDED_YIELD: Final = 2 * SPIN
CROWDED_PAUSE: Final = 1.0
# Off where games run side by side on every core (a pool of as many workers or more): there a
# core spent looking is taken from another game's bots (`look_before_sleeping`).
_looking = True
NEWLINE: Final = 10  # b"\n"[0]: a byte compared as an int, natively when compiled
CARRIAGE_RETURN: Final = 13  # b"\r"[0]


@dataclass(frozen=True, slots=True)
class Incoming:
    """One line read from the bot (without its newline), or the `EOF` / `TOO_LONG` marks."""

    data: bytes
    at: float
    kind: str = LINE
    ended: bool = True  # False: the last bytes before the bot closed its output, no newline

    def __init__(self, data: bytes, at: float, kind: str = LINE, ended: bool = True) -> None:
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "at", at)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "ended", ended)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)


# Compiled (setup.py), and no Python class derives from it: its methods call each other
# straight, not through a lookup by name (a Python subclass would make every call one).
class LineChannel:
    """Newline-terminated lines over a pair of pipe ends, with deadlines and no blocking."""

    def __init__(
        self,
        read_fd: int,
        write_fd: int,
        max_line: int = MAX_LINE,
        max_pending: int = 8 << 20,
        on_line: LineHook | None = None,
    ) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd
        self.max_line, self.max_pending = max_line, max_pending
        self.on_line = on_line
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._inbuf = bytearray()
        # Reads land here (`os.readv`): one buffer for the channel's life, where `os.read`
        # would allocate 64 KiB for every line the bot sends and shrink it to the line.
        self._chunk = bytearray(READ_SIZE)
        self._skipping = False  # inside an over-long line, dropping bytes up to its newline
        self._lines: deque[Incoming] = deque()
        self._out = bytearray()
        self.eof = False
        self.write_error: str | None = None
        # `select.poll` itself, not `selectors`: the waits of every decision pass here, and
        # the wrapper's bookkeeping cost more than the system call.
        self._poller = select.poll()
        self._poller.register(read_fd, select.POLLIN)
        self._writing = False
        self.exited = False  # the program at the other end ended (`watch_exit`)
        self._exit_fd: int | None = None
        self._has_exited: Callable[[], bool] | None = None
        self._spinning = False  # the last answer came within SPIN of the wait's start
        # Pinned to one core (`taskset -c 0`, a container's single CPU), the bot, which
        # inherits that, cannot answer while the referee looks: a look is then only a poll
        # and a yield more than the sleep it would spare (two system calls a decision).
        self._one_core = one_core()
        self._calm_at = 0.0  # no look before this time (`CROWDED_PAUSE`)

    # -- output ----------------------------------------------------------------------------

    def send(self, *lines: str, now: bool = True) -> None:
        """Queue `lines` and write as much as the pipe takes now (one write); never blocks.
        With `now=False` they wait for the next send or `flush` (fewer writes, fewer wake-ups
        of the bot)."""
        self.send_lines(lines, now)

    def send_lines(self, lines: Sequence[str], now: bool = True) -> None:
        """`send(*lines, now=now)`: compiled code calls this one directly (a call with `*`
        goes through the interpreter, which parses its arguments by name)."""
        data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
        if len(data) > self.max_line or self.on_line is not None:
            # No line longer than the protocol's maximum ever leaves, whoever built it (a
            # batch no longer than the maximum cannot hold one: one encoding checks them all).
            lines = tuple(fit_line(line, self.max_line) for line in lines)
            if self.on_line is not None:
                for line in lines:
                    self.on_line(">", line)
            data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
        if self.write_error is not None:
            return
        if now and data and not self._out and len(data) <= self.max_pending:
            # The usual case, nothing queued: the bytes go to the pipe as they are, and only
            # what it does not take now is queued (no copy in and out of the queue).
            taken = self._write(data)
            if taken == FULL or 0 < taken < len(data):
                self._out += data[max(taken, 0):]  # what the pipe did not take waits
                if taken > 0:  # as the queue's own writes: one more try at once
                    self._flush()
                    return
            self._watch_writes(bool(self._out))
            return
        self._out += data
        if len(self._out) > self.max_pending:
            self.write_error = f"stopped reading: over {self.max_pending} bytes unread"
            self._out.clear()
            return
        if now:
            self._flush()

    def flush(self) -> None:
        """Write what the pipe takes of the queued output now; never blocks."""
        if self._out and self.write_error is None:
            self._flush()

    def _flush(self) -> None:
        while self._out:
            n = self._write(self._out)
            if n < 0:  # FULL or BROKEN
                break
            del self._out[:n]
        self._watch_writes(bool(self._out))

    def _write(self, data: bytes | bytearray) -> int:
        """One write of `data`: the bytes the pipe took, `FULL` when it took none now, or
        `BROKEN` when it never will (`write_error` set, the queue emptied)."""
        try:
            return os.write(self.write_fd, data)
        except BlockingIOError:
            return FULL
        except OSError as exc:  # EPIPE: the bot closed its stdin or died
            self.write_error = f"cannot write to the bot: {exc.strerror or exc}"
            self._out.clear()
            return BROKEN

    def _watch_writes(self, pending: bool) -> None:
        if pending == self._writing:
            return
        if self.write_fd == self.read_fd:  # one descriptor both ways (a socket, a tty)
            mask = (0 if self.eof else select.POLLIN) | (select.POLLOUT if pending else 0)
            self._poller.register(self.write_fd, mask)
        elif pending:
            self._poller.register(self.write_fd, select.POLLOUT)
        else:
            self._poller.unregister(self.write_fd)
        self._writing = pending

    def drain(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for queued output to reach the pipe; True if it did."""
        deadline = time.monotonic() + timeout
        while self._out and self.write_error is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._pump(left)
        return not self._out

    # -- input -----------------------------------------------------------------------------

    def read(self, deadline: float) -> Incoming | None:
        """The next line, `EOF` once the bot closed its output, `EXITED` once the program
        ended (`watch_exit`) and every line it wrote before was read, or None at `deadline`.
        A read that must wait first looks for the line without sleeping, up to `SPIN`, when
        the last line it waited for came that soon."""
        if not self._lines:
            if self._one_core:  # never looks (`one_core`): no clock to read for it
                self._wait(deadline)
                return self._lines.popleft() if self._lines else self._mark()
            began = time.monotonic()
            if self._spinning and _looking and began >= self._calm_at:
                self._spin(min(began + SPIN, deadline))
            self._wait(deadline)
            if self._lines:
                self._spinning = self._lines[0].at - began <= SPIN
        return self._lines.popleft() if self._lines else self._mark()

    def _spin(self, until: float) -> None:
        while not self._lines and not self.eof and not self.exited:
            self._pump(0)
            now = time.monotonic()
            if now >= until:
                return
            # A bot woken onto this very core runs now, not after the look.
            os.sched_yield()
            if time.monotonic() - now > CROWDED_YIELD:  # other work had the core meanwhile
                self._calm_at = now + CROWDED_PAUSE
                return

    def _mark(self) -> Incoming | None:
        """What `read` returns when no line came: `EOF`, `EXITED`, or None at the deadline."""
        if self.eof:
            return Incoming(b"", time.monotonic(), EOF)
        if self.exited:
            return Incoming(b"", time.monotonic(), EXITED)
        return None

    def _wait(self, deadline: float) -> None:
        """Sleep in `poll` until a line comes, the bot's output closes, the program ends, or
        `deadline`."""
        while not self._lines:
            if self.eof or self.exited:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self._has_exited is not None and self._exit_fd is None:
                self._pump(min(left, EXIT_CHECK))
                if self._has_exited():
                    self._ended()
            else:
                self._pump(min(left, 3600.0))

    def watch_exit(self, has_exited: Callable[[], bool], pidfd: int | None = None) -> None:
        """Make reads wake when the program at the other end ends, not only when its output
        closes (a child it started may hold that open for ever): `pidfd` (Linux's
        `os.pidfd_open`) turns readable then; without one, `has_exited` is asked every
        `EXIT_CHECK` seconds of a wait."""
        self._has_exited, self._exit_fd = has_exited, pidfd
        if pidfd is not None:
            self._poller.register(pidfd, select.POLLIN)

    def _ended(self) -> None:
        self.exited = True
        if self._exit_fd is not None:
            self._poller.unregister(self._exit_fd)
            self._exit_fd = None
        self._has_exited = None
        # What the program wrote before it ended is in the pipe already: it is read first.
        # (Bounded: a child left behind may go on writing.)
        for _ in range(64):
            if self.eof or not self._read_chunk():
                break

    def poll(self) -> None:
        """Move whatever is ready through the pipes without waiting."""
        self._pump(0)

    def pending(self) -> list[Incoming]:
        """Every line already received, removed from the queue (EOF not included)."""
        self.poll()
        out = list(self._lines)
        self._lines.clear()
        return out

    def _pump(self, timeout: float) -> None:
        if self.eof and not self._writing:
            if timeout > 0:
                time.sleep(min(timeout, 0.01))
            return
        # poll takes milliseconds; round up, so a wait never ends before its deadline.
        for fd, _ in self._poller.poll(math.ceil(timeout * 1000) if timeout > 0 else 0):
            if fd == self.write_fd and self._writing:
                self._flush()
            elif fd == self.read_fd and not self.eof:
                self._read_chunk()
            elif fd == self._exit_fd:
                self._ended()

    def _read_chunk(self) -> bool:
        """Read what the pipe holds (up to 64 KiB); False when it held nothing yet."""
        try:
            size = os.readv(self.read_fd, [self._chunk])
        except BlockingIOError:
            return False
        except OSError:
            size = 0
        if not size:
            self.eof = True
            if self.read_fd == self.write_fd and self._writing:
                self._poller.register(self.read_fd, select.POLLOUT)
            else:
                self._poller.unregister(self.read_fd)
            if self._inbuf and not self._skipping:  # a last line without its newline
                self._add(bytes(self._inbuf), ended=False)
            self._inbuf.clear()
            return True
        self._split(self._chunk, size)
        return True

    def _split(self, chunk: bytearray, size: int) -> None:
        """The lines of `chunk[:size]`, the bytes just read (after those of `_inbuf`)."""
        if size and chunk[size - 1] == NEWLINE and not self._inbuf and not self._skipping:
            # The usual read: one whole answer line, nothing before it. No second search,
            # and no empty remainder to keep.
            nl = chunk.find(b"\n", 0, size)
            if nl == size - 1:
                self._add(bytes(chunk[:nl]))
                return
        start = 0
        while True:
            nl = chunk.find(b"\n", start, size)
            if nl < 0:
                break
            if self._skipping:
                self._skipping = False
            elif self._inbuf:
                self._inbuf += chunk[start:nl]
                self._add(bytes(self._inbuf))
            else:  # the usual case: the whole line came in this read
                self._add(bytes(chunk[start:nl]))
            self._inbuf.clear()
            start = nl + 1
        if not self._skipping:
            self._inbuf += chunk[start:size]
            if len(self._inbuf) > self.max_line + 1:  # +1: a '\r' before the newline
                self._inbuf.clear()
                self._skipping = True
                self._lines.append(Incoming(b"", time.monotonic(), TOO_LONG))

    def _add(self, data: bytes, ended: bool = True) -> None:
        if data and data[-1] == CARRIAGE_RETURN:  # `endswith`, without a method call
            data = data[:-1]
        if len(data) > self.max_line:
            self._lines.append(Incoming(b"", time.monotonic(), TOO_LONG))
            return
        if self.on_line is not None:
            self.on_line("<", data.decode("utf-8", "replace"))
        self._lines.append(Incoming(data, time.monotonic(), LINE, ended))

    @property
    def unfinished(self) -> bytes:
        """The bytes of a line the bot has begun and not ended yet (no newline so far)."""
        return b"" if self._skipping else bytes(self._inbuf)

    def close(self) -> None:
        """Stop watching; nothing to release: the descriptors belong to the process or the
        caller."""
        if self._exit_fd is not None:
            self._poller.unregister(self._exit_fd)
            self._exit_fd = None


def one_core() -> bool:
    """Whether this process may run on one core only (its affinity; False where unknown)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return affinity is not None and len(affinity(0)) == 1


def look_before_sleeping(on: bool) -> None:
    """Whether this process's reads look for a quick answer before they sleep (`SPIN`): on by
    default, for a game that has the machine's other cores to itself; off where games are
    played side by side on every core, where looking would take a core from another game's
    bots (measured: a contest at -j 2 on 2 cores played 8% fewer games a second)."""
    global _looking
    _looking = on


class Program(Protocol):
    """What a transport asks of the program at its other end (`process.BotProcess`)."""

    @property
    def stdout_fd(self) -> int: ...
    @property
    def stdin_fd(self) -> int: ...
    @property
    def pidfd(self) -> int | None: ...  # readable once the program ends; None: no pidfds
    @property
    def returncode(self) -> int | None: ...
    def wait_exit(self, timeout: float) -> int | None: ...
    def cpu_time(self) -> float | None: ...


class PipeTransport(LineChannel):
    """A line channel that also answers for what runs at its other end, as a conversation
    needs (`conversation.Transport`): a bot program's stdin/stdout with its `BotProcess`, or,
    with no process, any two open descriptors (a person's terminal, a test harness). Here,
    compiled with the channel, rather than in process.py: every line of every decision passes
    through it."""

    def __init__(self, read_fd: int, write_fd: int, process: Program | None = None,
                 max_pending: int = 8 << 20, on_line: LineHook | None = None) -> None:
        super().__init__(read_fd, write_fd, max_pending=max_pending, on_line=on_line)
        self.process = process
        if process is not None:  # a crash is a crash even if a child holds the pipe open
            self.watch_exit(lambda: process.returncode is not None, process.pidfd)

    @staticmethod
    def to(process: Program, max_pending: int = 8 << 20,
           on_line: LineHook | None = None) -> PipeTransport:
        """The pipes of a started bot program."""
        return PipeTransport(process.stdout_fd, process.stdin_fd, process, max_pending, on_line)

    def exit_code(self, wait: float = 0.0) -> int | None:
        """The program's exit code once it ended (waiting up to `wait` seconds for it); None
        while it runs, and always when no program of ours is at the other end."""
        if self.process is None:
            return None
        return self.process.returncode if wait <= 0 else self.process.wait_exit(wait)

    def cpu_time(self) -> float | None:
        """CPU seconds the program's group used so far (None: cannot be read here). A stream
        with no program of ours (a person, a harness) shows no CPU use: only its lines are
        signs of life."""
        return self.process.cpu_time() if self.process is not None else 0.0
