"""Owner-only files and folders for what holds private cards or seeds, where no other local user
can send them.

Replays hold every hand and the seed, results and tournament files hold seeds, bot logs may hold
a bot's own hand; a bot program running as another user on the same machine must not read them
while the game runs (see docs/untrusted-bots.md). Files are created 0600 and folders
0700 whatever the umask; a file that already exists is tightened when opened.

Nor may another local user choose where they go (docs/untrusted-files.md). In a folder they can
write they could plant `results.jsonl -> a file of theirs` (every result and seed handed to
them) or `-> a file of the organiser's` (appended to). So meldref writes only in a folder of its
own user that no other user can write, whose every parent belongs to that user or root and, if
others can write it, is sticky like /tmp (no one else can rename what is ours in it): no one
else can plant a link in it or swap it for one (`folder_trust`). Files are opened without
following a link (O_NOFOLLOW), created exclusively (O_EXCL) when new, and one that exists is
used only if it is a regular file of our own.

This protects nothing against bots running as the referee's own user.
"""

from __future__ import annotations

import contextlib
import errno
import os
import pwd
import shutil
import stat
from pathlib import Path
from typing import IO, BinaryIO, Final, Literal, TextIO, overload

FILE_MODE = 0o600
DIR_MODE = 0o700
OTHERS_WRITE: Final = stat.S_IWGRP | stat.S_IWOTH
# Every open: never through a link; a FIFO put in place must not block it (checked just after).
NO_FOLLOW: Final = os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
OPEN_FLAGS: Final = {"w": os.O_WRONLY, "a": os.O_WRONLY | os.O_APPEND, "r+": os.O_RDWR,
                     "r": os.O_RDONLY}


class UnsafeOutputError(OSError):
    """An output path meldref must not use: a link, another user's file, or a folder another
    user can write or swap (`str` is the message to show, naming the path)."""

    def __init__(self, message: str, path: Path, code: int = errno.EPERM) -> None:
        super().__init__(code, message, str(path))

    def __str__(self) -> str:
        return str(self.strerror)


class SpecialFileError(UnsafeOutputError):
    """An output path that exists and is not a regular file (a device, FIFO or socket):
    writing there would change or block on something that is not ours."""


def private_dir(path: Path, tighten: bool = True) -> Path:
    """Create `path` (and missing parents) owner-only; with `tighten`, an existing `path` of
    ours becomes owner-only too (a folder we were given to write private files in).
    `UnsafeOutputError` if private files must not go there (`folder_trust`), checked before
    anything is made and again after (another user may have made it first)."""
    problem = folder_trust(path)
    if problem is not None:
        raise UnsafeOutputError(problem, path)
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another worker made it first
            folder.mkdir(mode=DIR_MODE)
            os.chmod(folder, DIR_MODE)  # the umask could have taken bits off
    problem = folder_trust(path)
    if problem is not None:
        raise UnsafeOutputError(problem, path)
    if tighten and path not in missing:
        _chmod_if_ours(path, DIR_MODE)
    return path


def folder_trust(folder: Path) -> str | None:
    """Why private files must not be written in `folder`, or None. Once it exists it must
    belong to the user running meldref and be writable by no one else; every folder above it
    must belong to that user or root and, if others can write it, be sticky (/tmp), so that
    no other user can plant a link in it or swap it, or a folder above it, for one of theirs.
    Links on the way are followed: what counts is the folder written in."""
    real = Path(os.path.realpath(folder))
    try:
        info = os.stat(real)
    except FileNotFoundError:
        pass  # made by us, owner-only, when written in
    except OSError as exc:
        return f"{folder}: {exc.strerror or exc}"
    else:
        if stat.S_ISDIR(info.st_mode) and (problem := _own_folder_problem(folder, info)):
            return problem
    for parent in real.parents:
        try:
            info = os.stat(parent)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"{parent}: {exc.strerror or exc}"
        if problem := _parent_problem(folder, parent, info):
            return problem
    return None


def _own_folder_problem(folder: Path, info: os.stat_result) -> str | None:
    if info.st_uid != os.geteuid():
        return (f"{folder} belongs to {owner_name(info.st_uid)}, not to you "
                f"({owner_name(os.geteuid())}): it could hold their links to files of theirs "
                "or yours; write into a folder of your own")
    if info.st_mode & OTHERS_WRITE:
        # A shared sticky folder (/tmp) stays shared: a folder made in it is the way out.
        mend = "" if info.st_mode & stat.S_ISVTX else f", or chmod go-w {folder}"
        return (f"{folder} can be written by other users (mode "
                f"{stat.S_IMODE(info.st_mode):04o}, owner {owner_name(info.st_uid)}): they "
                "could plant links in it; write into a folder of your own (one made inside "
                f"it is fine){mend}")
    return None


def _parent_problem(folder: Path, parent: Path, info: os.stat_result) -> str | None:
    swap = f"they could swap {folder} for a link of theirs; write into a folder elsewhere"
    if info.st_uid not in (0, os.geteuid()):
        return f"{folder} is inside {parent}, which belongs to {owner_name(info.st_uid)}: {swap}"
    if info.st_mode & OTHERS_WRITE and not info.st_mode & stat.S_ISVTX:
        return (f"{folder} is inside {parent}, which other users can write (mode "
                f"{stat.S_IMODE(info.st_mode):04o}, not sticky): {swap}")
    return None


def owner_name(uid: int) -> str:
    """`user NAME` for a uid, or `uid N` when it has no name here."""
    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"uid {uid}"


def folder_problem(path: Path, create: bool = False, tighten: bool = True) -> str | None:
    """Why files cannot be written in the folder `path`, or None if they can: it, or the
    nearest of its parents that exists, is a file, or that one is not writable, or private
    files must not go there (`folder_trust`). With `create` the folder is also made
    (owner-only, as `private_dir`), so what only trying finds is found too (`/proc/x`, a full
    or read-only disk)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        if probe.is_symlink():  # a dangling link: mkdir would fail on it
            return f"{probe} is a broken link"
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"cannot write {probe}: {os.strerror(errno.EACCES)}"
    problem = folder_trust(path)
    if problem is None and create:
        try:
            private_dir(path, tighten)
        except UnsafeOutputError as exc:
            return str(exc)
        except OSError as exc:
            return f"cannot write {path}: {exc.strerror or exc}"
    return problem


def existing_file_problem(path: Path, info: os.stat_result) -> str | None:
    """Why the file `path` (of `lstat` `info`) must not be written or read back as ours, or
    None: a link, a folder, a device, FIFO or socket, or another user's file."""
    if stat.S_ISLNK(info.st_mode):
        return (f"{path} is a symbolic link: meldref never writes through one (another user "
                "may have planted it); remove it, or name the file it points to")
    if stat.S_ISDIR(info.st_mode):
        return f"{path} is a folder, not a file"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file (a device, FIFO or socket)"
    if info.st_uid != os.geteuid():
        return (f"{path} belongs to {owner_name(info.st_uid)}, not to you "
                f"({owner_name(os.geteuid())}): meldref writes only files of its own")
    return None


TextMode = Literal["w", "a", "r+", "r"]
BinaryMode = Literal["wb", "ab", "r+b", "rb"]


@overload
def open_private(path: Path, mode: TextMode = "w", *, encoding: str | None = None,
                 newline: str | None = None) -> TextIO: ...
@overload
def open_private(path: Path, mode: BinaryMode, *, encoding: None = None,
                 newline: None = None) -> BinaryIO: ...
def open_private(path: Path, mode: TextMode | BinaryMode = "w", *, encoding: str | None = None,
                 newline: str | None = None) -> IO[str] | IO[bytes]:
    """`open(path, mode)` for "w", "a", "r+" and "r" (text or "b") of a file of our own, made
    owner-only (except by "r"). Never through a link (O_NOFOLLOW); a new file is created
    exclusively (O_EXCL, by "w" and "a"); one that exists must be a regular file of ours, in a
    folder that passes `folder_trust`: else `UnsafeOutputError` (`SpecialFileError` for a
    device, FIFO or socket), nothing written and no mode changed."""
    problem = folder_trust(path.parent)
    if problem is not None:
        raise UnsafeOutputError(problem, path)
    with contextlib.suppress(FileNotFoundError):
        _refuse_existing(path, path.lstat())
    # `open` owns the descriptor from the opener's return on, and closes it once if the file
    # object cannot be made (os.fdopen closed it too, and a second close here took whatever
    # another thread had opened under that number meanwhile).
    return open(path, mode, opener=lambda _, __: _open_fd(path, mode.replace("b", "")),
                encoding=encoding, newline=newline)


def _open_fd(path: Path, mode: str) -> int:
    flags = OPEN_FLAGS[mode] | NO_FOLLOW
    fd = None
    if mode in ("w", "a"):
        with contextlib.suppress(FileExistsError):
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
    if fd is None:
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a link put there since
                _refuse_existing(path, path.lstat())
            raise
    try:
        _refuse_existing(path, os.fstat(fd))
        os.set_blocking(fd, True)
        if mode == "w":
            os.ftruncate(fd, 0)  # only now: a file not ours is refused untouched
        if mode != "r":
            os.fchmod(fd, FILE_MODE)  # an older file, or a umask that took bits off
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refuse_existing(path: Path, info: os.stat_result) -> None:
    problem = existing_file_problem(path, info)
    if problem is None:
        return
    if stat.S_ISLNK(info.st_mode) or stat.S_ISREG(info.st_mode):
        raise UnsafeOutputError(problem, path)
    raise SpecialFileError(problem, path, errno.EINVAL)


def read_private_text(path: Path) -> str:
    """The text of a file of our own that meldref wrote (`open_private`'s checks: no link,
    ours, in a folder of ours): what it reads back decides what it does (a seed, a plan)."""
    with open_private(path, "r", encoding="utf-8") as f:
        return f.read()


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
        if path.stat().st_uid == os.geteuid():
            os.chmod(path, mode)
