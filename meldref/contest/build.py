"""A submission's build step (`--build "make"`, the upload's `build` field): run once in the
copy's folder, before the checks, with limits of its own, its output (stdout and stderr)
kept as the build log.

In the sandbox (the contest's default) the build runs as the games do (a container of its
own: the system's folders read-only, no network, a uid of its own, its cgroup), with three
differences: its folder, the submission's copy, is writable (it is the copy's, and a build
writes there); its memory is `build-memory-mb` and its time `build-seconds` (wall clock,
and the CPU of each process); and it runs `sh -c BUILD`, so a build is a shell line
(`gcc -O2 -o bot bot.c && strip bot`). The copy is the build's uid's while it runs and root's
again once it ended, its modes reduced to 0644/0755; then the copy is judged again as a
submission is (`command.Confinement`: a link the build made that leads out of it refuses
it; `regular`: a FIFO or socket it made refuses it; its size within `expanded-mb`).

Without the sandbox (`init --no-sandbox`, a contest of trusted authors) the build runs as
this user in the copy's folder, under the same time and memory rlimits.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..protocol.descriptors import Descriptor
from ..protocol.limits import resource_limits
from ..protocol.sandbox import Jail, plan, sandbox_problem
from .settings import ContestError
from .store import Build
from .uploads import ServiceSettings

BUILD_LOG: Final = "build.log"  # beside the copy while it builds (the build cannot reach it)
LOG_KEPT: Final = 64 << 10  # bytes of a build's log kept in the database (its end)
TAIL: Final = 2000  # bytes of a failed build's log quoted in its refusal
BUILD_PROCESSES: Final = 256  # compilers start many: a cap on a fork bomb, not on a build


class BuildFailed(ContestError):
    """A build that failed (its exit code, or its time ran out): the message ends with its
    log's tail; `log` is the log's end as kept."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


@dataclass(frozen=True, slots=True)
class BuildLimits:
    seconds: int
    memory_mb: int
    file_size_mb: int | None
    tmp_mb: int | None

    @staticmethod
    def of(service: ServiceSettings, file_size_mb: int | None,
           tmp_mb: int | None) -> BuildLimits:
        return BuildLimits(service.build_seconds, service.build_memory_mb, file_size_mb, tmp_mb)


def run_build(command: str, folder: Path, limits: BuildLimits, sandbox: bool) -> Build:
    """`sh -c command` run in `folder` (the submission's copy); the build with its log's end,
    or `BuildFailed` saying why with the log's tail."""
    log_path = folder.parent / f"{folder.name}.{BUILD_LOG}"
    started = time.monotonic()
    try:
        with open(log_path, "wb") as log:
            code = (_sandboxed if sandbox else _plain)(command, folder, limits, log.fileno())
        text = _log_end(log_path)
    finally:
        log_path.unlink(missing_ok=True)
    seconds = time.monotonic() - started
    if code is None:
        raise BuildFailed(f"the build ran out of its {limits.seconds} s{_tail(text)}", text)
    if code != 0:
        raise BuildFailed(f"the build failed (exit code {code}){_tail(text)}", text)
    return Build(command, seconds, text)


def _tail(text: str) -> str:
    shown = text[-TAIL:].strip()
    return f"; its log ends: {shown}" if shown else "; its log is empty"


def _log_end(path: Path) -> str:
    with path.open("rb") as f:
        f.seek(max(0, path.stat().st_size - LOG_KEPT))
        return f.read().decode("utf-8", "replace")


def _rlimits(limits: BuildLimits) -> dict[int, int]:
    return resource_limits(limits.memory_mb, BUILD_PROCESSES, limits.file_size_mb,
                           limits.seconds)


def _plain(command: str, folder: Path, limits: BuildLimits, log: int) -> int | None:
    rlimits = _rlimits(limits)

    def limited() -> None:
        for key, value in rlimits.items():
            if key != resource.RLIMIT_NPROC:  # counts all this user's processes
                resource.setrlimit(key, (value, value))

    proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=folder, stdin=subprocess.DEVNULL,
                            stdout=log, stderr=log, start_new_session=True,
                            preexec_fn=limited)
    return _wait(proc, limits.seconds)


def _sandboxed(command: str, folder: Path, limits: BuildLimits, log: int) -> int | None:
    problem = sandbox_problem()
    if problem is not None:
        raise ContestError(f"the build cannot run in the sandbox here: {problem}")
    box = plan(limits.memory_mb, BUILD_PROCESSES, limits.tmp_mb)
    folder = folder.resolve()  # the sandbox binds it by its real path
    argv = ["env", "-C", str(folder), "/bin/sh", "-c", command]
    jail = _WritableJail(argv, str(folder), {}, f"build-{os.getpid()}-{folder.name}", box,
                         Descriptor(os.dup(log)))
    try:
        _own(folder, jail.uid)
        proc = subprocess.Popen(jail.argv, env=jail.outer_env, pass_fds=jail.pass_fds,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=log, start_new_session=True, umask=0o022)
        try:
            jail.started(proc.pid, box.rlimits(_rlimits(limits)))
        except OSError:
            _kill(proc)
            raise
        return _wait(proc, limits.seconds)
    finally:
        jail.reap()
        _own(folder, 0)


class _WritableJail(Jail):
    """The games' jail, its own folder bound writable: the build writes its program there."""

    @property
    def argv(self) -> list[str]:
        words = list(super().argv)
        folder = os.path.abspath(self.cwd or ".")
        for k in range(len(words) - 2):
            if words[k:k + 3] == ["--ro-bind", folder, folder]:
                words[k] = "--bind"
                return words
        raise ContestError(f"the build's folder {folder} is not in its sandbox")


def _wait(proc: subprocess.Popen[bytes], seconds: int) -> int | None:
    """The build's exit code, or None when its time ran out (it is killed, with every
    process of its session)."""
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return None
    finally:
        _kill(proc)  # what it left running in its session goes with it


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _own(folder: Path, uid: int) -> None:
    """Every entry of `folder` (itself too) owned by `uid`, links themselves not followed;
    given back to root (0), every mode reduced to 0755 (folders, executables) or 0644."""
    for path in [folder, *folder.rglob("*")]:
        os.lchown(path, uid, uid)
        if uid == 0 and not path.is_symlink():
            mode = path.lstat().st_mode
            path.chmod(0o755 if stat.S_ISDIR(mode) or mode & 0o100 else 0o644)


def regular(folder: Path, limit_bytes: int) -> None:
    """`ContestError` for an entry of the built copy that is no file, folder or link (a
    FIFO, a socket), or a copy larger than `limit_bytes`."""
    total = 0
    for path in folder.rglob("*"):
        mode = path.lstat().st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            raise ContestError(f"the build made {path.relative_to(folder)}, not a file, a "
                               "folder or a link")
        total += path.lstat().st_size if stat.S_ISREG(mode) else 0
        if total > limit_bytes:
            raise ContestError(f"the built program's folder holds more than "
                               f"{limit_bytes >> 20} MiB (expanded-mb): remove what the build "
                               "leaves behind")
