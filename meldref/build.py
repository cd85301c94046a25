"""Which build of meldref runs: the hot path compiled with mypyc (setup.py), or pure Python.

The compiled modules are extension modules beside their sources (`engine/cards.py` and
`engine/cards.cpython-311-*.so`), which Python imports first. Two things send every meldref
module to its Python source instead (`SourceFirst`, installed by meldref/__init__.py):
- `MELDREF_PURE=1` in the environment, the pure path one variable away on any install, for the
  tests and for bench/run.py's comparison (and at install time: nothing compiled);
- a stale compiled build: one whose record of the sources it compiled (setup.py writes it,
  meldref/__init__.py checks it at every start) no longer matches them, after an edit in an
  editable install. Such a build would run the code of before the edit, silently: instead the
  sources run, with one warning, and `meldref --version` names the edited modules.

All or nothing: the compiled modules are one shared library whose modules call one another
directly (a compiled state calls the compiled `Card`), so a fresh module beside the one edited
would mix two `Card` classes in one process. An edit to any of them runs them all as Python
until `pip install -e .` compiles them again (in seconds when the sources match a build in
setup.py's cache).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from . import BUILD_RECORD, NO_RECORD, fingerprint, stale_sources

PURE_VARIABLE = "MELDREF_PURE"
# A module every compiled build compiles (setup.py's HOT): how it was loaded tells the build.
PROBE = "meldref.engine.cards"
# Set once a process has warned of a stale build: the processes it starts (bot programs of the
# built-in bots, pool workers) run the sources too, without saying it again.
WARNED_VARIABLE = "MELDREF_STALE_WARNED"
SHOWN = 3  # edited modules named in the warning (`meldref --version` names them all)


class StaleBuildWarning(UserWarning):
    """The compiled modules were built from other sources than those beside them."""


def pure_asked() -> bool:
    """Whether the environment asks for pure Python (`MELDREF_PURE` set, and not to 0)."""
    return os.environ.get(PURE_VARIABLE, "") not in ("", "0")


def compiled() -> bool:
    """Whether the engine and protocol running in this process are the compiled ones."""
    module = importlib.import_module(PROBE)
    return isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader)


def describe() -> str:
    """The build, for `meldref --version`: compiled, pure Python, or pure Python because the
    compiled modules are stale (naming the sources edited since)."""
    if compiled():
        return "compiled with mypyc"
    stale = None if pure_asked() else stale_sources()
    return f"pure Python; {stale_text(stale, len(stale))}" if stale else "pure Python"


def stale_text(stale: Sequence[str], shown: int) -> str:
    """Why the compiled modules are stale, naming `shown` of the sources edited since."""
    if list(stale) == [NO_RECORD]:
        return "the compiled modules keep no record of the sources they were built from"
    more = f" and {len(stale) - shown} more" if len(stale) > shown else ""
    return f"compiled modules stale, edited since built: {', '.join(stale[:shown])}{more}"


def run_sources(stale: Sequence[str]) -> None:
    """Runs every meldref module from its source (the compiled build is stale: `stale` names
    the sources edited since), and warns of it once for this process and those it starts."""
    sys.meta_path.insert(0, SourceFirst())
    if os.environ.get(WARNED_VARIABLE) == "1":
        return
    os.environ[WARNED_VARIABLE] = "1"
    warnings.warn(f"meldref: {stale_text(stale, SHOWN)}; running the Python sources instead "
                  "(slower) until `pip install -e .` compiles them again", StaleBuildWarning,
                  stacklevel=2)


def write_record(sources: dict[str, bytes], folder: Path) -> Path:
    """Writes the record of a compiled build into `folder` (meldref's folder, beside the shared
    library): each source compiled (its path from `folder`) with its fingerprint."""
    lines = ["# The sources the compiled modules beside them were built from (setup.py):",
             "# meldref/__init__.py runs the sources instead when one differs.",
             *(f"{fingerprint(data)} {path}" for path, data in sorted(sources.items()))]
    record = folder / BUILD_RECORD
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return record


class SourceFirst(importlib.abc.MetaPathFinder):
    """Finds a meldref module's Python source before the compiled module beside it."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if path is None or not fullname.startswith("meldref."):
            return None
        name = fullname.rpartition(".")[2]
        for folder in path:
            source = Path(folder, f"{name}.py")
            if source.is_file():
                return importlib.util.spec_from_file_location(fullname, source)
        return None  # a package, or not ours: the usual finders
