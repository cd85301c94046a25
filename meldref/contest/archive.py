"""An uploaded program unpacked into a folder of our own, or refused: a single program file,
or a `.zip`, `.tar.gz` (`.tgz`) or `.tar` archive.

An archive comes from a stranger, so it is read as hostile (zip-slip and its kin): every
entry must be a regular file or a folder (no symbolic or hard link, device, FIFO), named by a
relative path with no `..` step, no backslash and no NUL (nothing lands outside the folder),
once (no entry written over another); the entries are counted and the bytes written summed
as they are written, so an archive that lies about its sizes stops at the limit too, whatever
its headers say. Files are created with O_EXCL | O_NOFOLLOW, so nothing is ever written
through a link. Modes are reduced to 0644 or 0755 (no set-uid); a single file is 0755 (a
compiled program uploaded alone starts as `./NAME`). An archive whose entries all lie in one
folder (`mybot/...`, as a zipped folder is) is unpacked from inside it.
"""

from __future__ import annotations

import os
import re
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Final

from .settings import ContestError

ARCHIVES: Final = (".zip", ".tar.gz", ".tgz", ".tar")
FILE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")
CHUNK: Final = 1 << 16


class ArchiveRefused(ContestError):
    """An upload that breaks a rule of what may be unpacked; the message names the entry."""


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """How many entries, and how many bytes in all, an archive may unpack to."""

    entries: int
    expanded_bytes: int


@dataclass(slots=True)
class _Budget:
    limits: ArchiveLimits
    entries: int = 0
    written: int = 0

    def entry(self, name: str) -> None:
        self.entries += 1
        if self.entries > self.limits.entries:
            raise ArchiveRefused(f"the archive holds more than {self.limits.entries} entries "
                                 "(files and folders): leave out what the bot does not need")

    def bytes(self, count: int) -> None:
        self.written += count
        if self.written > self.limits.expanded_bytes:
            raise ArchiveRefused(f"the archive expands to more than "
                                 f"{self.limits.expanded_bytes >> 20} MiB: leave out what the "
                                 "bot does not need")


def is_archive(filename: str) -> bool:
    return filename.lower().endswith(ARCHIVES)


def unpack(upload: Path, filename: str, target: Path, limits: ArchiveLimits) -> Path:
    """The program uploaded in the file `upload` (named `filename` by its author) put in the
    empty folder `target`: an archive unpacked there, a single file copied in under its
    name; what to submit (the folder, or the single file). `ArchiveRefused` saying what to
    fix."""
    name = PurePosixPath(filename.replace("\\", "/")).name
    if not FILE_NAME.fullmatch(name):
        raise ArchiveRefused(f"the file's name {filename!r}: 1 to 100 letters, digits, '_', "
                             "'.', '+' or '-', starting with a letter or digit")
    budget = _Budget(limits)
    if not is_archive(name):  # executable: with no known suffix it starts as ./NAME
        budget.entry(name)
        with upload.open("rb") as source:
            _write(source, target / name, 0o755, budget)
        return target / name
    try:
        if name.lower().endswith(".zip"):
            _unzip(upload, target, budget)
        else:
            _untar(upload, target, budget)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        if isinstance(exc, ArchiveRefused):
            raise
        raise ArchiveRefused(f"{name} cannot be read as the archive its name says "
                             f"({exc})") from None
    return _inner_root(target)


def _unzip(upload: Path, target: Path, budget: _Budget) -> None:
    with zipfile.ZipFile(upload) as archive:
        for info in archive.infolist():
            budget.entry(info.filename)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if info.is_dir():
                _folder(target, info.filename)
                continue
            if kind not in (0, stat.S_IFREG):
                raise ArchiveRefused(f"{info.filename}: {_kind(kind)}; an archive may hold "
                                     "only files and folders")
            with archive.open(info) as source:
                _write(source, _place(target, info.filename), _mode(mode), budget)


def _untar(upload: Path, target: Path, budget: _Budget) -> None:
    with tarfile.open(upload, "r:*") as archive:
        for member in _members(archive, budget):
            if member.isdir():
                _folder(target, member.name)
                continue
            if not member.isreg():
                raise ArchiveRefused(f"{member.name}: {_tar_kind(member)}; an archive may hold "
                                     "only files and folders")
            source = archive.extractfile(member)
            assert source is not None  # a regular member always has its data
            with source:
                _write(source, _place(target, member.name), _mode(member.mode), budget)


def _members(archive: tarfile.TarFile, budget: _Budget) -> Iterator[tarfile.TarInfo]:
    """The members one by one as the stream gives them, counted before the next is read
    (`getmembers` would read every header of an archive of a million entries first)."""
    while True:
        member = archive.next()
        if member is None:
            return
        budget.entry(member.name)
        yield member


def _kind(kind: int) -> str:
    names = {stat.S_IFLNK: "a symbolic link", stat.S_IFCHR: "a device",
             stat.S_IFBLK: "a device", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}
    return names.get(kind, "not a file or folder")


def _tar_kind(member: tarfile.TarInfo) -> str:
    if member.issym():
        return "a symbolic link"
    if member.islnk():
        return "a hard link"
    if member.ischr() or member.isblk():
        return "a device"
    return "a FIFO" if member.isfifo() else "not a file or folder"


def _mode(mode: int) -> int:
    return 0o755 if mode & 0o100 else 0o644


def _parts(name: str) -> list[str]:
    """The steps of the entry `name`; `ArchiveRefused` for a name that leads out of the
    archive's folder (absolute, a `..` step) or hides a step (a backslash, a NUL)."""
    if "\\" in name or "\0" in name:
        raise ArchiveRefused(f"{name!r}: a name with a backslash or NUL; name entries by "
                             "relative paths with '/'")
    path = PurePosixPath(name)
    parts = [p for p in path.parts if p not in ("", ".")]
    if path.is_absolute() or ".." in parts:
        raise ArchiveRefused(f"{name}: a path out of the archive's folder (absolute, or "
                             "with '..'); every entry must lie inside it")
    return parts


def _place(target: Path, name: str) -> Path:
    """Where the file entry `name` goes in `target`, the folders above it made."""
    parts = _parts(name)
    if not parts:
        raise ArchiveRefused(f"{name!r}: a file with no name")
    return _folders(target, parts[:-1], name) / parts[-1]


def _folder(target: Path, name: str) -> Path:
    return _folders(target, _parts(name), name)


def _folders(target: Path, parts: list[str], name: str) -> Path:
    """The folder `target/parts...` made step by step, through no link."""
    here = target
    for part in parts:
        here = here / part
        try:
            here.mkdir(mode=0o755)
        except FileExistsError:
            if not stat.S_ISDIR(here.lstat().st_mode):
                raise ArchiveRefused(f"{name}: a folder where a file was unpacked") from None
    return here


def _write(source: IO[bytes], path: Path, mode: int, budget: _Budget) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     mode)
    except FileExistsError:
        raise ArchiveRefused(f"{path.name}: an entry given twice") from None
    with open(fd, "wb") as out:
        while chunk := source.read(CHUNK):
            budget.bytes(len(chunk))
            out.write(chunk)
    os.chmod(path, mode)


def _inner_root(target: Path) -> Path:
    """`target`, or the one folder it holds when it holds nothing else."""
    entries = list(target.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        return entries[0]
    if not entries:
        raise ArchiveRefused("the archive is empty")
    return target

