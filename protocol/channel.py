"""Lines to and from a bot with deadlines, and the bot's process group from start to reaping.

`LineChannel` never blocks the referee: both pipe ends are non-blocking, output that the bot does
not read waits in a bounded buffer, and every read takes a deadline. One `selectors` loop, no
threads, since only one seat is ever waited on at a time. `BotProcess` starts a command in its
own session (so its whole process group can be signalled), drains stderr into a capped log file
on a thread (stderr is never parsed), and shuts everything down: quit, grace, SIGTERM, SIGKILL.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

from .wire import MAX_LINE, fit_line

LineHook = Callable[[str, str], None]  # (direction ">" to bot / "<" from bot, text)

LINE: Final = "line"
TOO_LONG: Final = "too-long"  # an over-long line, discarded up to its newline
EOF: Final = "eof"  # the bot closed its output


@dataclass(frozen=True, slots=True)
class Incoming:
    """One line read from the bot (without its newline), or the `EOF` / `TOO_LONG` marks."""

    data: bytes
    at: float
    kind: str = LINE


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
        self._skipping = False  # inside an over-long line, dropping bytes up to its newline
        self._lines: deque[Incoming] = deque()
        self._out = bytearray()
        self.eof = False
        self.write_error: str | None = None
        self._selector = selectors.DefaultSelector()
        self._selector.register(read_fd, selectors.EVENT_READ)
        self._writing = False

    # -- output ----------------------------------------------------------------------------

    def send(self, *lines: str, now: bool = True) -> None:
        """Queue `lines` and write as much as the pipe takes now (one write); never blocks.
        With `now=False` they wait for the next send or `flush` (fewer writes, fewer wake-ups
        of the bot)."""
        # No line longer than the protocol's maximum ever leaves, whoever built it.
        lines = tuple(fit_line(line, self.max_line) for line in lines)
        if self.on_line is not None:
            for line in lines:
                self.on_line(">", line)
        if self.write_error is not None:
            return
        self._out += "".join(line + "\n" for line in lines).encode("utf-8")
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
            try:
                n = os.write(self.write_fd, self._out)
            except BlockingIOError:
                break
            except OSError as exc:  # EPIPE: the bot closed its stdin or died
                self.write_error = f"cannot write to the bot: {exc.strerror or exc}"
                self._out.clear()
                break
            del self._out[:n]
        self._watch_writes(bool(self._out))

    def _watch_writes(self, pending: bool) -> None:
        if pending == self._writing:
            return
        if pending:
            self._selector.register(self.write_fd, selectors.EVENT_WRITE)
        else:
            self._selector.unregister(self.write_fd)
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

    @property
    def unsent(self) -> int:
        """Bytes written by the referee that the bot has not read yet."""
        return len(self._out)

    # -- input -----------------------------------------------------------------------------

    def read(self, deadline: float) -> Incoming | None:
        """The next line, `EOF` once the bot closed its output, or None at `deadline`."""
        while not self._lines:
            if self.eof:
                return Incoming(b"", time.monotonic(), EOF)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._pump(min(left, 3600.0))
        return self._lines.popleft()

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
        for key, _ in self._selector.select(timeout):
            if key.fd == self.write_fd and key.events & selectors.EVENT_WRITE and self._writing:
                self._flush()
            elif key.fd == self.read_fd and not self.eof:
                self._read_chunk()

    def _read_chunk(self) -> None:
        try:
            chunk = os.read(self.read_fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self.eof = True
            self._selector.unregister(self.read_fd)
            if self._inbuf and not self._skipping:  # a last line without its newline
                self._add(bytes(self._inbuf))
            self._inbuf.clear()
            return
        self._split(chunk)

    def _split(self, chunk: bytes) -> None:
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            if nl < 0:
                break
            piece = chunk[start:nl]
            if self._skipping:
                self._skipping = False
            else:
                self._inbuf += piece
                self._add(bytes(self._inbuf))
            self._inbuf.clear()
            start = nl + 1
        if not self._skipping:
            self._inbuf += chunk[start:]
            if len(self._inbuf) > self.max_line + 1:  # +1: a '\r' before the newline
                self._inbuf.clear()
                self._skipping = True
                self._lines.append(Incoming(b"", time.monotonic(), TOO_LONG))

    def _add(self, data: bytes) -> None:
        if data.endswith(b"\r"):
            data = data[:-1]
        if len(data) > self.max_line:
            self._lines.append(Incoming(b"", time.monotonic(), TOO_LONG))
            return
        if self.on_line is not None:
            self.on_line("<", data.decode("utf-8", "replace"))
        self._lines.append(Incoming(data, time.monotonic()))

    def close(self) -> None:
        self._selector.close()


# ----------------------------------------------------------------------------------------------
# Bot processes


@dataclass(frozen=True, slots=True)
class BotCommand:
    """How to start a bot: argv (no shell), working directory, extra environment."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def parse(
        text: str, cwd: str | None = None, env: Mapping[str, str] | None = None
    ) -> BotCommand:
        """A command line split like a POSIX shell would (`shlex`), without running a shell."""
        argv = tuple(shlex.split(text))
        if not argv:
            raise ValueError("empty bot command")
        return BotCommand(argv, cwd, dict(env or {}))

    def __str__(self) -> str:
        return shlex.join(self.argv)


STDERR_TAIL: Final = 400


def why_not_started(command: BotCommand, exc: OSError) -> str:
    """The reason a command could not be started, in words that name the program."""
    program = command.argv[0]
    if isinstance(exc, FileNotFoundError):
        if command.cwd and not os.path.isdir(command.cwd):
            return f"the working directory {command.cwd} does not exist"
        if "/" in program:
            where = f" (from {command.cwd})" if command.cwd else ""
            return f"{program} does not exist{where}"
        return f"{program!r} is not on PATH"
    if isinstance(exc, PermissionError):
        if "/" in program and os.path.isdir(os.path.join(command.cwd or ".", program)):
            return f"{program} is a directory, not a program"
        return f"{program} is not executable (chmod +x {program}?)"
    return f"{program}: {exc.strerror or exc}"


def describe_exit(code: int) -> str:
    """`Popen.returncode` in words: "exited with code 3" or "killed by signal SIGSEGV"."""
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = str(-code)
    return f"killed by signal {name}"


# Every process a bot starts inherits this variable (a value unique to the bot), so its
# descendants can be found and killed at shutdown even after they left its process group and
# session (`setsid`) and lost their parent (Jenkins' process tree killer uses the same cookie).
COOKIE: Final = "MELDREF_BOT"
PR_SET_CHILD_SUBREAPER: Final = 36
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make this process the Linux child subreaper of its descendants (best effort, once):
    orphans of a bot are then reparented to the referee, not to init, and stay visible."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def resource_limits(
    memory_mb: int | None = None, processes: int | None = None, file_mb: int | None = None,
    cpu_seconds: int | None = None,
) -> dict[int, int]:
    """The rlimits of a bot: never a core dump; address space, processes (RLIMIT_NPROC counts
    all the user's processes), file size and CPU time (the process's whole life, SIGKILL at
    the limit) only when given."""
    import resource

    out = {resource.RLIMIT_CORE: 0}
    if memory_mb is not None:
        out[resource.RLIMIT_AS] = memory_mb << 20
    if processes is not None:
        out[resource.RLIMIT_NPROC] = processes
    if file_mb is not None:
        out[resource.RLIMIT_FSIZE] = file_mb << 20
    if cpu_seconds is not None:
        out[resource.RLIMIT_CPU] = cpu_seconds
    return out


def apply_limits(pid: int, limits: Mapping[int, int]) -> list[str]:
    """Set `limits` on a running process (`prlimit`, soft and hard); the names not applied.

    Done right after the start, so a bot has a few microseconds of its own start-up before
    them (no `preexec_fn`: it is unsafe with threads, and the referee has stderr threads)."""
    try:
        import resource

        prlimit = resource.prlimit
    except (ImportError, AttributeError):  # not Linux
        return [str(k) for k in limits]
    missed = []
    for key, value in limits.items():
        try:
            prlimit(pid, key, (value, value))
        except (OSError, ValueError):
            missed.append(str(key))
    return missed


SETPRIV: Final = shutil.which("setpriv")  # util-linux


UNSHARE: Final = shutil.which("unshare")  # util-linux


def launch_argv(command: BotCommand, no_network: bool = False) -> list[str]:
    """The argv that starts `command`: so that it dies with the referee (`setpriv --pdeathsig
    KILL`: the kernel SIGKILLs the bot when the process that started it dies, even by `kill
    -9`, when nothing of the referee runs any more to stop it; not across a set-user-ID
    program such as `sudo`, for which the kernel clears it; nor without setpriv), and, with
    `no_network`, in a network namespace of its own (`unshare --net`: no interface but a
    loopback that is down, so no connection anywhere, the referee's machine included). A
    program that cannot be found is started as it is, so that the error names it."""
    program = command.argv[0]
    base = command.cwd or "."
    path = os.path.join(base, program)
    found = (os.path.isfile(path) and os.access(path, os.X_OK) if "/" in program
             else shutil.which(program) is not None)
    argv = list(command.argv)
    if no_network:
        argv = [*unshare_net(), "--", *argv]
    if SETPRIV is None or not found:
        return argv
    return [SETPRIV, "--pdeathsig", "KILL", "--", *argv]


def unshare_net() -> list[str]:
    """`unshare --net`, with a user namespace of its own when not root (as an unprivileged
    user may where the kernel allows user namespaces)."""
    if UNSHARE is None:
        raise OSError("no network namespace without util-linux's `unshare`")
    return [UNSHARE, "--net"] + ([] if os.geteuid() == 0 else ["--map-root-user"])


def network_isolation_problem() -> str | None:
    """Why bots cannot be given a network namespace of their own here, or None if they can."""
    try:
        done = subprocess.run([*unshare_net(), "--", "true"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return f"`unshare --net` fails here: {said[0]} (run as root, or allow user namespaces)"
    return None


class BotProcess:
    """A running bot: its own process group, stdin/stdout pipes, stderr drained to a log."""

    def __init__(
        self, command: BotCommand, log_path: Path | None = None, stderr_limit: int = 1 << 20,
        rlimits: Mapping[int, int] | None = None, no_network: bool = False,
    ) -> None:
        self.command = command
        self.cookie = uuid.uuid4().hex
        become_subreaper()
        env = {**os.environ, **command.env, COOKIE: self.cookie}
        try:
            self.proc = subprocess.Popen(
                launch_argv(command, no_network), cwd=command.cwd, env=env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                bufsize=0, close_fds=True,
            )
        except OSError as exc:
            raise OSError(f"cannot start bot {command}: {why_not_started(command, exc)}"
                          ) from exc
        self.pid = self.proc.pid  # == its process group id (start_new_session)
        _LIVE.add(self)
        self.limits_missed = apply_limits(self.pid, rlimits or resource_limits())
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.stdin_fd, self.stdout_fd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self.stderr_bytes = 0
        self.stderr_tail = b""  # the last bytes of stderr, to quote when the bot fails to start
        self._drain = threading.Thread(
            target=self._drain_stderr, args=(self.proc.stderr, log_path, stderr_limit),
            name=f"stderr-{self.pid}", daemon=True,
        )
        self._drain.start()

    def _drain_stderr(self, pipe: BinaryIO, log_path: Path | None, limit: int) -> None:
        log = open(log_path, "ab") if log_path else None  # noqa: SIM115 (closed below)
        try:
            while chunk := os.read(pipe.fileno(), 1 << 16):
                kept = max(0, min(len(chunk), limit - self.stderr_bytes))
                if log and kept:
                    log.write(chunk[:kept])
                    log.flush()
                self.stderr_bytes += len(chunk)
                self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_TAIL:]
            if log and self.stderr_bytes > limit:
                log.write(f"\n[meldref: {self.stderr_bytes - limit} more bytes of stderr "
                          f"dropped]\n".encode())
        except (OSError, ValueError):
            pass
        finally:
            if log:
                log.close()

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def wait_exit(self, timeout: float) -> int | None:
        """The exit code once the process ended within `timeout` seconds, else None."""
        try:
            return self.proc.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return None

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def shutdown(self, grace: float, term_grace: float) -> int:
        """Wait `grace` for the bot to exit by itself (after `quit`), then SIGTERM the group,
        then SIGKILL it; always reaps the process, whatever it does. Returns the exit code.

        Interrupted anywhere (Ctrl-C, a second signal during a grace period), it kills at
        once (`kill`) before the interruption goes on: no path leaves a bot running."""
        try:
            with contextlib.suppress(OSError):
                self.proc.stdin.close() if self.proc.stdin else None
            # While the bot lives its children are still its own; the cookie finds the others.
            strays = descendants(self.pid) | carriers(COOKIE, self.cookie)
            code = self.wait_exit(grace)
            if code is None:
                self.signal_group(signal.SIGTERM)
                code = self.wait_exit(term_grace)
        except BaseException:
            self.kill()
            raise
        return self._sweep(code, strays)

    def kill(self) -> int:
        """SIGKILL the bot's group and whatever escaped it, now; reap it. Returns its code."""
        return self._sweep(None, descendants(self.pid))

    def _sweep(self, code: int | None, strays: set[tuple[int, str]]) -> int:
        # Always sweep the group: children the bot left behind die with it.
        self.signal_group(signal.SIGKILL)
        if code is None:
            code = self.proc.wait()
        # Then what escaped the group (`setsid`, double forks): by ancestry or by cookie.
        kill_strays(strays | carriers(COOKIE, self.cookie), self.pid)
        with contextlib.suppress(OSError):
            self.proc.stdout.close() if self.proc.stdout else None
        self._drain.join(timeout=1.0)
        _LIVE.discard(self)
        return code

    def group_alive(self) -> list[int]:
        """Pids still in this bot's process group (from /proc; zombies count as gone)."""
        return group_members(self.pid)

    def cpu_time(self) -> float | None:
        """CPU seconds used so far by the bot's process group (None where /proc is missing)."""
        return group_cpu_time(self.pid)


# Every bot process started and not yet swept, so that a process about to end abruptly (a
# tournament worker told to stop) can kill them all first.
_LIVE: set[BotProcess] = set()


def kill_all_bots() -> None:
    """Kill every bot program this process started and has not shut down yet."""
    for bot in list(_LIVE):
        with contextlib.suppress(Exception):
            bot.kill()


def _proc_stats() -> Iterator[tuple[int, list[str]]]:
    """(pid, fields after the command name) of every process in /proc."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        yield int(entry), stat.rsplit(")", 1)[1].split()


def descendants(pid: int) -> set[tuple[int, str]]:
    """(pid, start time) of every live descendant of `pid`, by the parent links in /proc."""
    children: dict[int, list[tuple[int, str]]] = {}
    for child, f in _proc_stats():
        if f[0] != "Z":
            children.setdefault(int(f[1]), []).append((child, f[19]))
    out: set[tuple[int, str]] = set()
    todo = [pid]
    while todo:
        for entry in children.get(todo.pop(), []):
            if entry not in out:
                out.add(entry)
                todo.append(entry[0])
    return out


def carriers(name: str, value: str) -> set[tuple[int, str]]:
    """(pid, start time) of the live processes whose environment holds `name=value` (those
    this user may read)."""
    mark = f"{name}={value}".encode()
    out = set()
    for pid, f in _proc_stats():
        if f[0] == "Z" or pid == os.getpid():
            continue
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if mark in env.split(b"\0"):
            out.add((pid, f[19]))
    return out


def kill_strays(strays: set[tuple[int, str]], bot: int, reap_wait: float = 1.0) -> None:
    """SIGKILL each (pid, start time) still running as that same process (not a reused pid),
    then reap those that were reparented to us (the subreaper), so no zombie stays."""
    me = os.getpid()
    ours = []
    for pid, started in strays:
        if pid in (me, bot):
            continue
        stat = _stat_of(pid)
        if stat is None or stat[19] != started:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        if int(stat[1]) == me:
            ours.append(pid)
    deadline = time.monotonic() + reap_wait
    while ours and time.monotonic() < deadline:
        for pid in list(ours):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                ours.remove(pid)
        if ours:
            time.sleep(0.005)


def _stat_of(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`, read from /proc."""
    return [pid for pid, f in _proc_stats() if int(f[2]) == pgid and f[0] != "Z"]


_TICKS: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def group_cpu_time(pgid: int) -> float | None:
    """CPU seconds (user + system, reaped children included) of the processes in group `pgid`;
    None where there is no /proc to read. Tells a bot that computes from one that sleeps."""
    if not os.path.isdir("/proc/self"):
        return None
    ticks = 0
    for _, f in _proc_stats():
        if int(f[2]) == pgid:  # utime stime cutime cstime: fields 14-17 of proc(5)
            ticks += sum(int(x) for x in f[11:15])
    return ticks / _TICKS


def argv_of(words: Sequence[str]) -> str:
    return shlex.join(words)
