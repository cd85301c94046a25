"""A bot program's process, from start to reaping: launching, limits, and the sweep.

`BotProcess` starts a command in its own session (so its whole process group can be
signalled), under `setpriv --pdeathsig KILL` (it dies with the referee) and, when asked, in a
network namespace of its own; sets its rlimits; drains stderr into a capped log file on a thread
(stderr is never parsed); and shuts everything down: quit, grace, SIGTERM, SIGKILL, then
whatever escaped the group, found through /proc by ancestry or by the `MELDREF_BOT` cookie.
`PipeTransport` is its stdin/stdout as a conversation's transport (`conversation.Transport`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import typing
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final

from .channel import LineChannel, LineHook
from .sandbox import Jail, Plan, exit_code
from .sandbox import plan as sandbox_plan


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
    # Every bot program in a container of its own (protocol/sandbox.py): namespaces, a uid of
    # its own, a file system of the system's folders and its own, cgroup limits.
    sandbox: bool = False
    # A process of its own for every game, instead of one kept across the games of a match or
    # a tournament worker (for the runners that seat bots game after game; a seat itself plays
    # as many games as it is given).
    fresh_bots: bool = False

    def rlimits(self) -> dict[int, int]:
        return resource_limits(self.memory_mb, self.max_processes, self.file_size_mb,
                               self.cpu_seconds)

    def sandbox_plan(self) -> Plan | None:
        """How a sandboxed bot gets these limits (None: no sandbox)."""
        return sandbox_plan(self.memory_mb, self.max_processes) if self.sandbox else None


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


def _limit_names() -> dict[int, str]:
    import resource

    return {resource.RLIMIT_CORE: "core dumps off", resource.RLIMIT_AS: "memory-mb",
            resource.RLIMIT_NPROC: "max-processes", resource.RLIMIT_FSIZE: "file-size-mb",
            resource.RLIMIT_CPU: "cpu-seconds"}


# Each rlimit a bot may get, by the name of its flag.
LIMIT_NAMES: Final = _limit_names() if sys.platform != "win32" else {}
UNLIMITED: Final = 1 << 64
_PROC_LIMITS: Final = {"Max core file size": "core dumps off", "Max address space": "memory-mb",
                       "Max processes": "max-processes", "Max file size": "file-size-mb",
                       "Max cpu time": "cpu-seconds"}


def limits_in_force(pid: int) -> dict[int, tuple[int, int]]:
    """The (soft, hard) rlimits of process `pid` that a bot may be given, from
    /proc/PID/limits (unlimited: `UNLIMITED`); empty once it is gone."""
    keys = {name: key for key, name in LIMIT_NAMES.items()}
    try:
        text = _read_proc(f"/proc/{pid}/limits").decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines()[1:]:
        label, values = line[:26].strip(), line[26:].split()
        if label in _PROC_LIMITS and len(values) >= 2:
            soft, hard = (UNLIMITED if v == "unlimited" else int(v) for v in values[:2])
            out[keys[_PROC_LIMITS[label]]] = (soft, hard)
    return out


def process_name(pid: int) -> str:
    """The command name of process `pid` (its `comm`), or "?" once it is gone."""
    try:
        return _read_proc(f"/proc/{pid}/comm").decode("utf-8", "replace").strip()
    except OSError:
        return "?"


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

# The guard (protocol/guard.py) runs in the referee's own interpreter, isolated from the
# environment (-I) and without site packages (-S): a few milliseconds, nothing imported.
GUARD: Final = Path(__file__).with_name("guard.py")
GUARDED: Final = sys.platform.startswith("linux") and os.path.isdir("/proc")


def program_found(command: BotCommand) -> bool:
    """Whether the command's program exists as an executable (through PATH, or from its
    working directory when it names a path)."""
    program = command.argv[0]
    if "/" in program:
        path = os.path.join(command.cwd or ".", program)
        return os.path.isfile(path) and os.access(path, os.X_OK)
    return shutil.which(program) is not None


def launch_argv(command: BotCommand, no_network: bool = False,
                rlimits: Mapping[int, int] | None = None) -> list[str]:
    """The argv that starts `command` outside a sandbox: under the guard (protocol/guard.py:
    every process the bot starts dies with it and with the referee, even after a `kill -9` of
    the referee, its process group or a tournament; the `rlimits` are set before the program
    is executed, so a user-switch wrapper's program has them too) and, with `no_network`, in a
    network namespace of its own (`unshare --net`: no interface but a loopback that is down,
    so no connection anywhere, the referee's machine included). Without the guard (no /proc):
    `setpriv --pdeathsig KILL`, the bot alone dying with the referee. A program that cannot
    be found is started as it is, so that the error names it."""
    argv = list(command.argv)
    if no_network:
        argv = [*unshare_net(), "--", *argv]
    if not program_found(command):
        return argv
    if GUARDED:
        limits = ",".join(f"{k}={v}" for k, v in (rlimits or {}).items())
        return [sys.executable, "-I", "-S", str(GUARD), str(os.getpid()), limits, "--", *argv]
    if SETPRIV is None:
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


class StderrLog:
    """A bot's stderr, drained on a thread into the log of the game it is playing (never
    parsed): the first `limit` bytes of each log are kept, then a note of how many were
    dropped. A kept bot moves on to the next game's log with `switch`; everything it wrote
    before goes to the log it was writing to (the pipe is emptied first, under the lock the
    thread reads with), and what it writes between two games (`hold`) opens the next log."""

    def __init__(self, fd: int, path: Path | None, limit: int, name: str) -> None:
        self.fd, self.limit = fd, limit
        self.bytes = 0
        self.tail = b""
        self._lock = threading.Lock()
        self._file: BinaryIO | None = None
        self._offered = 0  # bytes offered to the current log, kept or not
        self._held: bytearray | None = None  # between games: for the next log
        self._open(path)
        os.set_blocking(fd, False)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        try:
            while True:
                poller.poll()
                with self._lock:
                    if not self._pump():
                        break
        finally:
            with self._lock:
                self._close()

    def _pump(self) -> bool:
        """Take what the pipe holds now; False once it is closed for good."""
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self.bytes += len(chunk)
            self.tail = (self.tail + chunk)[-STDERR_TAIL:]
            self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        if self._held is not None:
            self._held += chunk[: max(0, self.limit - len(self._held))]
            return
        kept = max(0, min(len(chunk), self.limit - self._offered))
        self._offered += len(chunk)
        if self._file is not None and kept:
            try:
                self._file.write(chunk[:kept])
                self._file.flush()
            except (OSError, ValueError):  # a full disk must not stop the drain
                self._file = None

    def _open(self, path: Path | None) -> None:
        self._offered = 0
        try:
            self._file = open(path, "ab") if path else None  # noqa: SIM115 (see _close)
        except OSError:
            self._file = None

    def _close(self) -> None:
        if self._file is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if self._offered > self.limit:
                self._file.write(f"\n[meldref: {self._offered - self.limit} more bytes of "
                                 "stderr dropped]\n".encode())
            self._file.close()
        self._file = None

    def switch(self, path: Path | None) -> None:
        """Write to `path` from now on (None: nowhere); what came before went where it was
        going, what was held since `hold` opens the new log."""
        with self._lock:
            self._pump()
            self._close()
            held, self._held = self._held, None
            self._open(path)
            if held:
                self._take(bytes(held))

    def hold(self) -> None:
        """Close the current log (after what came so far) and keep what comes next, up to
        `limit` bytes, for the next `switch`."""
        with self._lock:
            self._pump()
            self._close()
            self._held = bytearray()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


class BotProcess:
    """A running bot: its own process group, stdin/stdout pipes, stderr drained to a log."""

    def __init__(
        self, command: BotCommand, log_path: Path | None = None, stderr_limit: int = 1 << 20,
        rlimits: Mapping[int, int] | None = None, no_network: bool = False,
        sandbox: Plan | None = None,
    ) -> None:
        self.command = command
        self.cookie = uuid.uuid4().hex
        become_subreaper()
        self.rlimits = dict(rlimits or resource_limits())
        self.jail: Jail | None = None
        if sandbox is not None:
            self.rlimits = sandbox.rlimits(self.rlimits)
            self.proc, stdout = self._start_sandboxed(command, sandbox)
            self.guarded = True  # bwrap is meldref's own, like the guard
        else:
            self.proc, stdout = self._start(command, no_network)
        self.pid = self.proc.pid  # == its process group id (start_new_session)
        _LIVE.add(self)
        self.pidfd = open_pidfd(self.pid)  # readable once the process ends; None: no pidfds
        self.limits_missed = [] if self.guarded else [
            LIMIT_NAMES.get(int(k), k) for k in apply_limits(self.pid, self.rlimits)]
        assert self.proc.stdin and self.proc.stderr
        self._stdout = stdout
        self.stdin_fd, self.stdout_fd = self.proc.stdin.fileno(), stdout.fileno()
        self.stderr = StderrLog(self.proc.stderr.fileno(), log_path, stderr_limit,
                                f"stderr-{self.pid}")

    def _start(self, command: BotCommand, no_network: bool
               ) -> tuple[subprocess.Popen[bytes], BinaryIO]:
        env = {**os.environ, **command.env, COOKIE: self.cookie}
        # Under the guard the limits are set before the program runs; else right after.
        self.guarded = GUARDED and program_found(command)
        try:
            proc = subprocess.Popen(
                launch_argv(command, no_network, self.rlimits), cwd=command.cwd, env=env,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True, bufsize=0, close_fds=True,
            )
        except OSError as exc:
            raise OSError(f"cannot start bot {command}: {why_not_started(command, exc)}"
                          ) from exc
        assert proc.stdout is not None
        return proc, typing.cast(BinaryIO, proc.stdout)

    def _start_sandboxed(self, command: BotCommand, plan: Plan
                         ) -> tuple[subprocess.Popen[bytes], BinaryIO]:
        """bwrap in a session of its own, its stdout a pipe of ours that only the bot holds."""
        if command.cwd and not os.path.isdir(command.cwd):
            raise OSError(f"cannot start bot {command}: the working directory {command.cwd} "
                          "does not exist")
        read, write = os.pipe2(os.O_CLOEXEC)
        try:
            jail = Jail(command.argv, command.cwd, command.env, self.cookie, plan, write)
        except OSError:
            os.close(read)
            os.close(write)
            raise
        try:
            proc = subprocess.Popen(jail.argv, env=jail.outer_env, pass_fds=jail.pass_fds,
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, start_new_session=True, bufsize=0,
                                    umask=0o022)  # folders bwrap makes: the bot may enter
        except OSError as exc:
            jail.reap()
            os.close(read)
            raise OSError(f"cannot start bot {command}: bubblewrap: {exc}") from exc
        finally:
            os.close(write)
        try:
            jail.started(proc.pid, self.rlimits)
        except OSError as exc:
            proc.kill()
            said = proc.communicate()[1].decode("utf-8", "replace").strip().splitlines()
            jail.reap()
            os.close(read)
            why = said[-1] if said else str(exc)
            raise OSError(f"cannot start bot {command} in its sandbox: {why}") from exc
        self.jail = jail
        return proc, os.fdopen(read, "rb", buffering=0)

    def limits_not_in_force(self) -> list[str]:
        """The limits asked for that a process of the bot lacks (each named as its flag,
        with the process), read from /proc: call it once the program the user's wrapper
        finally runs has started (after the handshake). A wrapper that resets limits (`sudo`
        with `pam_limits`, a login shell) shows here; the guard itself is meldref's own and
        runs without them."""
        missed = list(self.limits_missed)
        pids = [pid for pid, _ in descendants(self.pid)]
        for pid in pids if self.guarded else [self.pid, *pids]:
            for key, (soft, hard) in limits_in_force(pid).items():
                wanted = self.rlimits.get(key)
                if wanted is not None and max(soft, hard) > wanted:
                    shown = "unlimited" if hard == UNLIMITED else str(hard)
                    missed.append(f"{LIMIT_NAMES[key]} (process {pid} {process_name(pid)}: "
                                  f"{shown})")
        return missed

    @property
    def stderr_tail(self) -> bytes:
        """The last bytes of stderr, to quote when the bot fails to start."""
        return self.stderr.tail

    def log_to(self, path: Path | None) -> None:
        """Send stderr to the log `path` from now on (None: nowhere): a kept bot's next game."""
        self.stderr.switch(path)

    def hold_log(self) -> None:
        """Keep stderr for the next `log_to` (a kept bot between two games)."""
        self.stderr.hold()

    @property
    def returncode(self) -> int | None:
        return self._code(self.proc.poll())

    def wait_exit(self, timeout: float) -> int | None:
        """The exit code once the process ended within `timeout` seconds, else None."""
        try:
            return self._code(self.proc.wait(timeout=max(0.0, timeout)))
        except subprocess.TimeoutExpired:
            return None

    def _code(self, raw: int | None) -> int | None:
        return raw if raw is None or self.jail is None else exit_code(raw)

    def close_input(self) -> None:
        """Close the bot's standard input (end of input: a bot should exit)."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close() if self.proc.stdin else None

    def signal_group(self, sig: int) -> None:
        if self.jail is not None and sig != signal.SIGKILL:
            # Not to bwrap and its init: bwrap would die of it, and the whole container with
            # it before the bot could act on the signal.
            wrappers = {self.pid, self.jail.init_pid}
            for pid in group_members(self.pid):
                if pid not in wrappers:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, sig)
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def shutdown(self, grace: float, term_grace: float) -> int:
        """Wait `grace` for the bot to exit by itself (after `quit`), then SIGTERM the group,
        then SIGKILL it; always reaps the process, whatever it does. Returns the exit code.

        Interrupted anywhere (Ctrl-C, a second signal during a grace period), it kills at
        once (`kill`) before the interruption goes on: no path leaves a bot running."""
        try:
            self.close_input()
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
            self._stdout.close()
        if self.jail is not None:
            self.jail.reap()
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = None
        self.stderr.join(timeout=1.0)
        _LIVE.discard(self)
        return code

    def group_alive(self) -> list[int]:
        """Pids still in this bot's process group (from /proc; zombies count as gone)."""
        return group_members(self.pid)

    def cpu_time(self) -> float | None:
        """CPU seconds used so far by the bot's process group (None where /proc is missing)."""
        return group_cpu_time(self.pid)


class PipeTransport(LineChannel):
    """A line channel that also answers for what runs at its other end, as a conversation
    needs (`conversation.Transport`): a bot program's stdin/stdout with its `BotProcess`, or,
    with no process, any two open descriptors (a person's terminal, a test harness)."""

    def __init__(self, read_fd: int, write_fd: int, process: BotProcess | None = None,
                 max_pending: int = 8 << 20, on_line: LineHook | None = None) -> None:
        super().__init__(read_fd, write_fd, max_pending=max_pending, on_line=on_line)
        self.process = process
        if process is not None:  # a crash is a crash even if a child holds the pipe open
            self.watch_exit(lambda: process.returncode is not None, process.pidfd)

    @staticmethod
    def to(process: BotProcess, max_pending: int = 8 << 20,
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


def open_pidfd(pid: int) -> int | None:
    """A descriptor that turns readable when process `pid` ends (Linux 5.3+), else None."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        return int(pidfd_open(pid))
    except OSError:  # an older kernel, or a seccomp filter
        return None


# Every bot process started and not yet swept, so that a process about to end abruptly (a
# tournament worker told to stop) can kill them all first.
_LIVE: set[BotProcess] = set()


def kill_all_bots() -> None:
    """SIGKILL every bot program this process started and has not shut down yet, and what
    escaped their groups, for a process about to exit. Signal-safe: it takes no lock and waits
    for nothing, as a signal handler may run while the code it interrupted holds a lock (a
    worker blocked in `Popen.wait` holds that Popen's: `kill`'s reaping would wait for it for
    ever). The exiting process leaves the reaping to the kernel."""
    for bot in list(_LIVE):
        with contextlib.suppress(Exception):
            strays = descendants(bot.pid) | carriers(COOKIE, bot.cookie)
            bot.signal_group(signal.SIGKILL)
            kill_strays(strays, bot.pid, reap_wait=0.0)


def _read_proc(path: str) -> bytes:
    """A file of /proc, read without `pathlib`: a `Path` interns every part of its name, and
    the process ids of every bot and every scan would pile up in memory for good."""
    with open(path, "rb") as f:
        return f.read()


def _proc_stats() -> Iterator[tuple[int, list[str]]]:
    """(pid, fields after the command name) of every process in /proc."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat_of(int(entry))) is not None:
            yield int(entry), fields


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
            env = _read_proc(f"/proc/{pid}/environ")
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
        return _read_proc(f"/proc/{pid}/stat").decode().rsplit(")", 1)[1].split()
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
