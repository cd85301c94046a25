"""The compiled build: the referee's hot path compiled with mypyc from the same typed Python.

`pip install -e .` (or `pip install .`) compiles the modules of `HOT` into one C extension
(`meldref/_hot__mypyc`, with a small extension module beside each source file): it needs a C
compiler. With `MELDREF_PURE=1` in the environment it installs pure Python, no compiler needed.
Either way the extensions of an earlier build are removed first (Python would import them
before the sources). Everything else is in pyproject.toml; `meldref --version` says which
build runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
# The engine's states and meld checks, the three games and the Five Crowns solver, and the
# referee's side of a conversation: what runs for every decision. The rest of meldref (the
# command line, tournaments, replays, the bots) stays Python, and so do the games' rules.py:
# their option dataclasses are read by reflection (their annotations check option values and
# write the command line's help), and a compiled class keeps no Literal in its annotations.
# mypyc compiles no dataclass's generated __init__ (it stays Python, ten times slower): the
# values made per decision write their own, and copy and pickle through it (engine.game.by_init).
HOT = [
    *(f"meldref/engine/{name}.py" for name in (
        "cards", "common", "game", "meld_check", "meld_search", "melds", "numbers",
        "position")),
    *(f"meldref/engine/{game}/{name}.py" for game in ("phase10", "fivecrowns", "solitaire")
      for name in ("actions", "position", "state", "view")),
    "meldref/engine/fivecrowns/solver.py",
    *(f"meldref/protocol/{name}.py" for name in (
        "channel", "conversation", "referee", "seats", "viewtext", "wire")),
]


def remove_compiled(root: Path = ROOT) -> list[Path]:
    """The extension modules of an earlier build, removed from beside the sources they would
    shadow (Python imports an extension module before a source of the same name), those of
    modules no longer compiled too."""
    folders = sorted({(root / source).parent for source in HOT} | {root / "meldref"})
    built = [path for folder in folders for path in folder.glob("*.so")]
    for path in built:
        path.unlink()
    return built


def extensions() -> list:  # type: ignore[type-arg]
    from meldref.build import pure_asked

    remove_compiled()
    if pure_asked():
        return []
    from mypyc.build import mypycify

    os.chdir(ROOT)  # mypyc names the modules by their paths from here
    return mypycify(HOT, group_name="meldref._hot", opt_level="3", debug_level="0",
                    target_dir="build/mypyc")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    setup(ext_modules=extensions())
