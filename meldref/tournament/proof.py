"""What a cluster's worker must prove it runs: the same meldref code and the same bot programs
as the tournament's machine, by digest, whatever version number either reports.

- `code_digest()`: SHA-256 over every file of the installed `meldref` package (the engine, the
  protocol and the bots included, through their links), by relative path. A checkout with one
  rule changed (a wild worth 50 points) still says meldref 0.1.0, but not the same digest.
- `program_digests(bots, folder)`: for each bot program, the digest of its program: the
  command's first word when it names a regular file, relative to `folder` or absolute, and the
  first later word that does (the script an interpreter runs: `python3 bots/x.py` -> bots/x.py;
  `java -jar bot.jar` -> bot.jar; `./mybot` -> mybot). An interpreter found on PATH (`python3`)
  names no file here and is not digested, as machines of a cluster may carry different builds
  of one Python; one named by its absolute path is. Files named after the script are the bot's
  arguments, not its program: a log or a record the bot writes as it plays (`bot.py
  games.log`) changes between the tournament's check and a worker's.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

from .schedule import BotEntry

PACKAGE: Final = Path(__file__).resolve().parents[1]  # the meldref package
_SKIP: Final = ("__pycache__",)
_KINDS: Final = (".py", ".html", ".css", ".js")


@functools.cache
def code_digest() -> str:
    """The digest of this process's meldref code (computed once a process)."""
    h = hashlib.sha256()
    for path in sorted(_code_files(PACKAGE)):
        rel = path.relative_to(PACKAGE).as_posix()
        h.update(rel.encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _code_files(root: Path) -> Iterable[Path]:
    # The engine, protocol and bots are links to the top-level folders: followed, by name.
    for path in root.iterdir():
        if path.name in _SKIP:
            continue
        if path.is_dir():
            yield from _code_files_under(path, root)
        elif path.suffix in _KINDS:
            yield path


def _code_files_under(folder: Path, root: Path) -> Iterable[Path]:
    for path in folder.iterdir():
        if path.name in _SKIP or path.name == "examples":
            continue  # the example bots are not the referee's code
        if path.is_dir():
            yield from _code_files_under(path, root)
        elif path.suffix in _KINDS:
            yield path


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def program_files(entry: BotEntry, folder: Path) -> list[tuple[str, Path]]:
    """The words of `entry`'s command that name its program: the first word if it names a
    regular file (in `folder`, or absolute), and the first later word that does."""
    command = entry.spec.command
    if command is None:
        return []
    paths = [(word, Path(word) if Path(word).is_absolute() else folder / word)
             for word in command.argv]
    files = [(word, path) for word, path in paths[:1] if path.is_file()]
    return files + [(word, path) for word, path in paths[1:] if path.is_file()][:1]


def program_digests(bots: Iterable[BotEntry], folder: Path
                    ) -> dict[str, tuple[tuple[str, str], ...]]:
    """Each bot program's files and their digests, by spec."""
    return {str(b.spec): tuple((w, file_digest(p)) for w, p in program_files(b, folder))
            for b in bots if b.spec.command is not None}


Digests = Mapping[str, tuple[tuple[str, str], ...]]


def program_mismatch(expected: Digests, bots: Iterable[BotEntry], folder: Path) -> str | None:
    """What differs between the programs here (in `folder`) and `expected`; None: nothing."""
    here = program_digests(bots, folder)
    for spec, files in expected.items():
        mine = dict(here.get(spec, ()))
        for word, wanted in files:
            got = mine.get(word)
            if got is None:
                return f"bot {spec!r}: its file {word} is not here"
            if got != wanted:
                return (f"bot {spec!r}: its file {word} differs from the tournament machine's "
                        f"(digest {got[:12]}, there {wanted[:12]})")
    return None
