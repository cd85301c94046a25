"""A bot program's process, from start to reaping (`BotProcess`), and its pipes as a
conversation's transport (`PipeTransport`, `conversation.Transport`, compiled in channel.py
and named here too).

`BotProcess` starts a command (`command`) in its own session, so its whole process group can be
signalled, as `launch` says (under the guard, in a network namespace of its own when asked);
gives it its rlimits (`limits`); drains its stderr into a capped log (`stderrlog`); and shuts
everything down: quit, grace, SIGTERM, SIGKILL, then whatever escaped the group (`sweep`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import typing
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from . import launch
from .channel import PipeTransport as PipeTransport
from .command import BotCommand, program_found, why_not_started
from .descriptors import Descriptor
from .launch import become_subreaper, launch_argv
from .limits import LIMIT_NAMES, UNLIMITED, apply_limits, limits_in_force, resource_limits
from .sandbox import Jail, Plan, exit_code, sandbox_problem
from .stderrlog import StderrLog
from .sweep import (
    COOKIE,
    LIVE,
    STARTING,
    adopted,
    carriers,
    descendants,
    group_cpu_time,
    group_members,
    kill_strays,
    process_name,
    start_time,
)


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
        self._swept: Descriptor | None = None  # the guard's word that it swept (`_start`)
        with STARTING:  # in LIVE before another thread sweeps what this process adopted
            if sandbox is not None:
                self.rlimits = sandbox.rlimits(self.rlimits)
                self.proc, stdout = self._start_sandboxed(command, sandbox)
                self.guarded = True  # bwrap is meldref's own, like the guard
            else:
                self.proc, stdout = self._start(command, no_network)
            self.pid = self.proc.pid  # == its process group id (start_new_session)
            LIVE.add(self)
        self.started = start_time(self.pid) or "0"
        self.pidfd = open_pidfd(self.pid)  # readable once the process ends; None: no pidfds
        self.limits_missed = [] if self.guarded else [
            LIMIT_NAMES.get(int(k), k) for k in apply_limits(self.pid, self.rlimits)]
        assert self.proc.stdin and self.proc.stderr
        self._stdout = stdout
        self.stdin_fd, self.stdout_fd = self.proc.stdin.fileno(), stdout.fileno()
        # The log owns its copy of the stderr pipe and closes it when the drain ends; the
        # Popen's own is closed now, so no number of it is left to be closed twice.
        stderr = Descriptor(os.dup(self.proc.stderr.fileno()))
        self.proc.stderr.close()
        self.stderr = StderrLog(stderr, log_path, stderr_limit, f"stderr-{self.pid}")

    def _start(self, command: BotCommand, no_network: bool
               ) -> tuple[subprocess.Popen[bytes], BinaryIO]:
        env = {**os.environ, **command.env, COOKIE: self.cookie}
        # Under the guard the limits are set before the program runs; else right after.
        self.guarded = launch.GUARDED and program_found(command)
        swept = Descriptor.pipe() if self.guarded else None
        try:
            proc = subprocess.Popen(
                launch_argv(command, no_network, self.rlimits,
                            swept[1].fileno() if swept else -1),
                cwd=command.cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, bufsize=0, close_fds=True,
                pass_fds=(swept[1].fileno(),) if swept else (),
            )
        except OSError as exc:
            raise OSError(f"cannot start bot {command}: {why_not_started(command, exc)}"
                          ) from exc
        finally:
            if swept is not None:  # the guard has its end; ours would hide the guard's end
                swept[1].close()
        self._swept = swept[0] if swept else None
        assert proc.stdout is not None
        return proc, typing.cast(BinaryIO, proc.stdout)

    def _start_sandboxed(self, command: BotCommand, plan: Plan
                         ) -> tuple[subprocess.Popen[bytes], BinaryIO]:
        """bwrap in a session of its own, its stdout a pipe of ours that only the bot holds."""
        problem = sandbox_problem()  # tried once a process
        if problem is not None:
            raise OSError(f"cannot start bot {command} in its sandbox: {problem}")
        if command.cwd and not os.path.isdir(command.cwd):
            raise OSError(f"cannot start bot {command}: the working directory {command.cwd} "
                          "does not exist")
        read, write = Descriptor.pipe()
        try:
            jail = Jail(command.argv, command.cwd, command.env, self.cookie, plan, write)
        except OSError:
            read.close()
            write.close()
            raise
        # From here the jail owns the write end (it closes it once bwrap has it), and the
        # read end is ours until it becomes the stdout file object.
        try:
            proc = subprocess.Popen(jail.argv, env=jail.outer_env, pass_fds=jail.pass_fds,
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, start_new_session=True, bufsize=0,
                                    umask=0o022)  # folders bwrap makes: the bot may enter
        except OSError as exc:
            jail.reap()
            read.close()
            raise OSError(f"cannot start bot {command}: bubblewrap: {exc}") from exc
        try:
            jail.started(proc.pid, self.rlimits)
        except OSError as exc:
            jail.abandon()
            proc.kill()
            try:
                said = proc.communicate(timeout=5)[1].decode("utf-8", "replace").strip()
            except subprocess.TimeoutExpired:
                proc.kill()
                said = ""
            jail.reap()
            read.close()
            why = said.splitlines()[-1] if said else str(exc)
            raise OSError(f"cannot start bot {command} in its sandbox: {why}") from exc
        self.jail = jail
        return proc, os.fdopen(read.give_up(), "rb", buffering=0)

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
        # Then what escaped the group (`setsid`, double forks): by ancestry or by cookie, and
        # what a guard killed before its own sweep handed up to this process.
        kill_strays(strays | carriers(COOKIE, self.cookie) | self._handed_up(), self.pid)
        with contextlib.suppress(OSError):
            self._stdout.close()
        if self.jail is not None:
            self.jail.reap()
        if self.pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self.pidfd)
            self.pidfd = None
        self.stderr.join(timeout=1.0)
        LIVE.discard(self)
        return code

    def _handed_up(self) -> set[tuple[int, str]]:
        """The bot's processes reparented to this process (the child subreaper) because its
        guard was killed before it swept them: the guard's pipe ended without its byte. Its
        descendants then had no cookie to be found by, and no ancestor but us."""
        if self._swept is None or self._swept.closed:
            return set()
        with self._swept:
            try:
                said = os.read(self._swept.fileno(), 1)
            except OSError:
                said = b""
        if said:
            return set()
        with STARTING:
            known = {bot.pid for bot in LIVE} | {bot.jail.init_pid for bot in LIVE
                                                  if bot.jail is not None and bot.jail.init_pid}
            return adopted(self.started, known)

    def group_alive(self) -> list[int]:
        """Pids still in this bot's process group (from /proc; zombies count as gone)."""
        return group_members(self.pid)

    def cpu_time(self) -> float | None:
        """CPU seconds used so far by the bot's process group (None where /proc is missing)."""
        return group_cpu_time(self.pid)


def open_pidfd(pid: int) -> int | None:
    """A descriptor that turns readable when process `pid` ends (Linux 5.3+), else None."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        return int(pidfd_open(pid))
    except OSError:  # an older kernel, or a seccomp filter
        return None
