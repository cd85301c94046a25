"""Owner-only files and folders for what holds private cards or seeds.

Replays hold every hand and the seed, results and tournament files hold seeds, bot logs may hold
a bot's own hand; a bot program running as another user on the same machine must not read them
while the game runs (see docs/untrusted-bots.md). Files are created 0600 and folders
0700 whatever the umask; a file that already exists is tightened when opened. This protects
nothing against bots running as the referee's own user.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from pathlib import Path
from typing import IO, Any

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path, tighten: bool = True) -> Path:
    """Create `path` (and missing parents) owner-only; with `tighten`, an existing `path` of
    ours becomes owner-only too (a folder we were given to write private files in)."""
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another worker made it first
            folder.mkdir(mode=DIR_MODE)
            os.chmod(folder, DIR_MODE)  # the umask could have taken bits off
    if tighten and path not in missing:
        _chmod_if_ours(path, DIR_MODE)
    return path


def folder_problem(path: Path, create: bool = False, tighten: bool = True) -> str | None:
    """Why files cannot be written in the folder `path`, or None if they can: it, or the
    nearest of its parents that exists, is a file, or that one is not writable. With `create`
    the folder is also made (owner-only, as `private_dir`), so what only trying finds is found
    too (`/proc/x`, a full or read-only disk)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        if probe.is_symlink():  # a dangling link: mkdir would fail on it
            return f"{probe} is a broken link"
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"cannot write {probe}: {os.strerror(errno.EACCES)}"
    if create:
        try:
            private_dir(path, tighten)
        except OSError as exc:
            return f"cannot write {path}: {exc.strerror or exc}"
    return None


class SpecialFileError(OSError):
    """An output path that exists and is not a regular file (a device, FIFO or socket):
    writing there would change or block on something that is not ours."""


def file_problem(path: Path) -> str | None:
    """Why `path` cannot take an output file, or None: it exists and is not a regular file
    (after links: `--replay /dev/null` must not turn /dev/null owner-only), or its folder
    cannot be written."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return folder_problem(path.parent)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if stat.S_ISDIR(mode):
        return f"{path} is a folder, not a file"
    if not stat.S_ISREG(mode):
        return f"{path} is not a regular file (a device, FIFO or socket)"
    return None


def open_private(path: Path, mode: str = "w", **kwargs: Any) -> IO[Any]:
    """`open(path, mode)` for "w", "a", "r+" (text or "b"), the file owner-only;
    `SpecialFileError` (nothing written, no mode changed) if `path` is not a regular file."""
    flags = {"w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "a": os.O_WRONLY | os.O_CREAT |
             os.O_APPEND, "r+": os.O_RDWR}[mode.replace("b", "")]
    problem = file_problem(path)
    if problem is not None and not problem.startswith("cannot write"):
        raise SpecialFileError(errno.EINVAL, problem)
    # O_NONBLOCK: a FIFO put there meanwhile must not block the open; checked just after.
    fd = os.open(path, flags | os.O_CLOEXEC | os.O_NONBLOCK, FILE_MODE)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SpecialFileError(errno.EINVAL, f"{path} is not a regular file")
        os.set_blocking(fd, True)
        os.fchmod(fd, FILE_MODE)  # an older file, or a umask that took bits off
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def write_private_text(path: Path, text: str) -> None:
    with open_private(path, "w", encoding="utf-8") as f:
        f.write(text)


def create_private(path: Path) -> None:
    """An empty owner-only file at `path` (emptied if it exists): a log another part appends to
    keeps this mode."""
    open_private(path, "wb").close()


def copy_private(source: Path, target: Path) -> None:
    with source.open("rb") as src, open_private(target, "wb") as dst:
        shutil.copyfileobj(src, dst)


def _chmod_if_ours(path: Path, mode: int) -> None:
    with contextlib.suppress(OSError):
        if not hasattr(os, "getuid") or path.stat().st_uid == os.getuid():
            os.chmod(path, mode)
