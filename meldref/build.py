"""Which build of meldref runs: the hot path compiled with mypyc (setup.py), or pure Python.

The compiled modules are extension modules beside their sources (`engine/cards.py` and
`engine/cards.cpython-311-*.so`), which Python imports first. `MELDREF_PURE=1` at install time
builds none; at run time it makes every meldref module load from its Python source even where a
compiled one sits beside it (meldref/__init__.py installs `SourceFirst`): the pure path stays
one variable away on any install, for the tests and for bench/run.py's comparison.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PURE_VARIABLE = "MELDREF_PURE"
# A module every compiled build compiles (setup.py's HOT): how it was loaded tells the build.
PROBE = "meldref.engine.cards"


def pure_asked() -> bool:
    """Whether the environment asks for pure Python (`MELDREF_PURE` set, and not to 0)."""
    return os.environ.get(PURE_VARIABLE, "") not in ("", "0")


def compiled() -> bool:
    """Whether the engine and protocol running in this process are the compiled ones."""
    module = importlib.import_module(PROBE)
    return isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader)


def describe() -> str:
    """The build, for `meldref --version`."""
    return "compiled with mypyc" if compiled() else "pure Python"


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
