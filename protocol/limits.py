"""A bot program's limits: the graces of its process (`Limits`), the rlimits it is given
(set by the guard before it runs, else with `prlimit` right after), and those a running
process has in force, read from /proc."""

from __future__ import annotations

import resource
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .sandbox import Plan
from .sandbox import plan as sandbox_plan
from .sweep import read_proc


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
    # its own, a file system of the system's folders and its own, cgroup limits. A sandboxed
    # bot is never uncapped: each cap not given takes its `SANDBOX_CAPS` value.
    sandbox: bool = False
    tmp_mb: int | None = None  # the sandbox's private /tmp, in MiB
    # A process of its own for every game, instead of one kept across the games of a match or
    # a tournament worker (for the runners that seat bots game after game; a seat itself plays
    # as many games as it is given).
    fresh_bots: bool = False

    def __post_init__(self) -> None:
        if self.sandbox:
            for name, value in SANDBOX_CAPS.items():
                if getattr(self, name) is None:
                    object.__setattr__(self, name, value)

    def caps(self) -> dict[str, int]:
        """The resource caps in force, by the names of their flags (`memory-mb`...)."""
        return {name.replace("_", "-"): getattr(self, name) for name in CAPS
                if getattr(self, name) is not None}

    def rlimits(self) -> dict[int, int]:
        return resource_limits(self.memory_mb, self.max_processes, self.file_size_mb,
                               self.cpu_seconds)

    def sandbox_plan(self) -> Plan | None:
        """How a sandboxed bot gets these limits (None: no sandbox)."""
        return sandbox_plan(self.memory_mb, self.max_processes,
                            self.tmp_mb) if self.sandbox else None


# A sandboxed bot's caps where none is given (docs/sandbox.md), in the spirit of IOI's isolate
# and CodinGame: a gigabyte of memory (CodinGame gives 768 MB), 64 processes (a JVM's or a
# node's threads count), an hour of CPU over a process's life (a kept process is replaced
# before a game once it used half: every game starts with at least 30 minutes), files of
# 64 MiB and a /tmp of 64 MiB. An organiser changes each with its flag or `[limits]` key.
SANDBOX_CAPS: Final = {"memory_mb": 1024, "max_processes": 64, "cpu_seconds": 3600,
                       "file_size_mb": 64, "tmp_mb": 64}
CAPS: Final = ("memory_mb", "max_processes", "cpu_seconds", "file_size_mb", "tmp_mb")


def resource_limits(
    memory_mb: int | None = None, processes: int | None = None, file_mb: int | None = None,
    cpu_seconds: int | None = None,
) -> dict[int, int]:
    """The rlimits of a bot: never a core dump; address space, processes (RLIMIT_NPROC counts
    all the user's processes), file size and CPU time (the process's whole life, SIGKILL at
    the limit) only when given."""
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
    return {resource.RLIMIT_CORE: "core dumps off", resource.RLIMIT_AS: "memory-mb",
            resource.RLIMIT_NPROC: "max-processes", resource.RLIMIT_FSIZE: "file-size-mb",
            resource.RLIMIT_CPU: "cpu-seconds"}


# Each rlimit a bot may get, by the name of its flag.
LIMIT_NAMES: Final = _limit_names()
UNLIMITED: Final = 1 << 64
_PROC_LIMITS: Final = {"Max core file size": "core dumps off", "Max address space": "memory-mb",
                       "Max processes": "max-processes", "Max file size": "file-size-mb",
                       "Max cpu time": "cpu-seconds"}


def limits_in_force(pid: int) -> dict[int, tuple[int, int]]:
    """The (soft, hard) rlimits of process `pid` that a bot may be given, from
    /proc/PID/limits (unlimited: `UNLIMITED`); empty once it is gone."""
    keys = {name: key for key, name in LIMIT_NAMES.items()}
    try:
        text = read_proc(f"/proc/{pid}/limits").decode()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines()[1:]:
        label, values = line[:26].strip(), line[26:].split()
        if label in _PROC_LIMITS and len(values) >= 2:
            soft, hard = (UNLIMITED if v == "unlimited" else int(v) for v in values[:2])
            out[keys[_PROC_LIMITS[label]]] = (soft, hard)
    return out


def apply_limits(pid: int, limits: Mapping[int, int]) -> list[str]:
    """Set `limits` on a running process (`prlimit`, soft and hard); the names not applied.

    Done right after the start, so a bot has a few microseconds of its own start-up before
    them (no `preexec_fn`: it is unsafe with threads, and the referee has stderr threads)."""
    prlimit = getattr(resource, "prlimit", None)
    if prlimit is None:  # not Linux
        return [str(k) for k in limits]
    missed = []
    for key, value in limits.items():
        try:
            prlimit(pid, key, (value, value))
        except (OSError, ValueError):
            missed.append(str(key))
    return missed
