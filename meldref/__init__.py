"""meldref: a referee for rummy-family card games played by bot programs."""

from __future__ import annotations

import os
import sys
import zlib

# The one place the version is written: pyproject.toml reads it from here (tool.setuptools.dynamic),
# and `meldref --version`, replay headers and the cluster's handshake print it. CHANGELOG.md
# says what each version changed.
__version__ = "0.2.0"

# The compiled build (setup.py) writes, beside its shared library, what it compiled: one line
# `<crc32 of the source> <the source's path from this folder>` for each module of its HOT list.
# Every start compares the sources with it (a read of about 30 files: well under a millisecond),
# here and not in meldref/build.py so that `meldref --help` imports nothing more of meldref.
BUILD_RECORD = "_hot_sources.txt"
COMPILED_LIBRARY = "_hot__mypyc"  # the shared library's name, before its ABI suffix
NO_RECORD = "(no record of the sources compiled)"
_HERE = os.path.dirname(os.path.abspath(__file__))


def fingerprint(data: bytes) -> str:
    """A source's fingerprint in the build record: its crc32 (it detects an edit, not an
    adversary, and is cheap enough for every start)."""
    return f"{zlib.crc32(data):08x}"


def _file_fingerprint(path: str) -> str:
    try:
        with open(path, "rb") as file:
            return fingerprint(file.read())
    except OSError:
        return "missing"


def stale_sources(folder: str = _HERE) -> list[str] | None:
    """The sources edited since the compiled build beside them was made (paths from `folder`,
    meldref's own): [] when it is current, None when there is no compiled build. A compiled
    library without a record (a build of meldref before 0.2.0) cannot be trusted: NO_RECORD."""
    try:
        with open(os.path.join(folder, BUILD_RECORD), encoding="utf-8") as file:
            lines = file.read().splitlines()
    except FileNotFoundError:
        built = any(name.startswith(COMPILED_LIBRARY) for name in os.listdir(folder))
        return [NO_RECORD] if built else None
    entries = (line.partition(" ") for line in lines if line and not line.startswith("#"))
    return [path or BUILD_RECORD for digest, _, path in entries
            if _file_fingerprint(os.path.join(folder, path)) != digest]


# MELDREF_PURE=1: the Python sources, even beside a compiled build (meldref/build.py; the test
# as `build.pure_asked`, written out so that a plain start imports nothing more). A stale
# compiled build is not used either: its modules would run the code of before the edit.
if os.environ.get("MELDREF_PURE", "") not in ("", "0"):
    from .build import SourceFirst

    sys.meta_path.insert(0, SourceFirst())
elif _stale := stale_sources():
    from .build import run_sources

    run_sources(_stale)
