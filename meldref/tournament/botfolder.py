"""A bot folder as one value: its digest, and an archive that unpacks to the same digest.

A tournament on a cluster names its bot programs relative to a bot folder, which every worker
must hold exactly as the tournament's machine does. The digest covers every file's path,
content and executable bit (and each link's target), in name order, so two folders with one
digest start the same programs; Python's `__pycache__` folders (written by the bots that
import modules, on one machine and not another) and `.git` are left out of both the digest
and the archive.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

SKIPPED: Final = frozenset({"__pycache__", ".git"})
MAX_ARCHIVE_BYTES: Final = 256 << 20  # larger bot folders belong on a shared filesystem


class BotFolderError(ValueError):
    """A bot folder that cannot be sent to the workers (too large, or unreadable)."""


def entries(folder: Path) -> Iterator[Path]:
    """Every file and link under `folder` (links not followed), in name order, skipping
    `SKIPPED` folders."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        base = Path(root)
        links = [d for d in dirs if (base / d).is_symlink()]  # walked as files, not entered
        dirs[:] = [d for d in dirs if d not in links]
        yield from (base / name for name in sorted([*files, *links]))


def digest(folder: Path) -> str:
    """The sha256 of the folder's paths, contents, executable bits and link targets."""
    total = hashlib.sha256()
    for path in entries(folder):
        rel = path.relative_to(folder).as_posix()
        if path.is_symlink():
            total.update(f"L {rel}\0{os.readlink(path)}\0".encode())
            continue
        executable = "x" if os.access(path, os.X_OK) else "-"
        total.update(f"F {rel}\0{executable}\0".encode())
        with path.open("rb") as f:
            total.update(hashlib.file_digest(f, "sha256").digest())
    return total.hexdigest()


def pack(folder: Path) -> bytes:
    """The folder as a gzipped tar (modes kept, so programs stay executable);
    `BotFolderError` if it is larger than `MAX_ARCHIVE_BYTES` or cannot be read."""
    buffer = io.BytesIO()
    try:
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for path in entries(folder):
                tar.add(path, arcname=path.relative_to(folder).as_posix(), recursive=False)
                if buffer.tell() > MAX_ARCHIVE_BYTES:
                    raise BotFolderError(f"{folder} is over {MAX_ARCHIVE_BYTES >> 20} MiB "
                                         "packed: put it on a shared filesystem instead")
    except OSError as exc:
        raise BotFolderError(f"cannot read {exc.filename or folder}: "
                             f"{exc.strerror or exc}") from None
    return buffer.getvalue()


def unpack(archive: bytes, target: Path, expected: str) -> None:
    """Unpack `archive` into the new folder `target` (made next to it, then renamed, so a
    half-unpacked folder is never used) and check that it has the digest `expected`;
    `BotFolderError` if not. Members that would land outside `target` (absolute paths, `..`,
    links out of it) are refused by tarfile's "data" filter."""
    if target.is_dir():
        found = digest(target)
        if found != expected:
            raise BotFolderError(f"{target} holds another bot folder (digest {found[:12]}, "
                                 f"wanted {expected[:12]})")
        return
    scratch = target.with_name(f"{target.name}.{os.getpid()}.part")
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            tar.extractall(scratch, filter="data")
        found = digest(scratch)
        if found != expected:
            raise BotFolderError(f"the bot folder unpacked with digest {found[:12]}, not "
                                 f"{expected[:12]} (damaged on the way?)")
        try:
            scratch.rename(target)
        except OSError:
            if not target.is_dir():  # else another task of this worker made it first
                raise
    except (OSError, tarfile.TarError) as exc:
        raise BotFolderError(f"cannot unpack the bot folder into {target}: {exc}") from None
    finally:
        _remove(scratch)


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
