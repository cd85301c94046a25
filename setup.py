"""The compiled build: the referee's hot path compiled with mypyc from the same typed Python.

`pip install -e .` (or `pip install .`, or `python -m build`) compiles the modules of `HOT` into
one C extension (`meldref/_hot__mypyc`, with a small extension module beside each source file)
where a C compiler is found. With `MELDREF_PURE=1` in the environment, or with no compiler, it
installs pure Python. Either way the extensions of an earlier build are removed first (Python
would import them before the sources). Everything else is in pyproject.toml; `meldref
--version` says which build runs.

Beside the shared library the build writes the record of the sources it compiled
(`meldref/_hot_sources.txt`): at every start meldref/__init__.py compares them, and runs the
sources instead of a stale build (meldref/build.py). The built extensions are kept in
build/mypyc-cache/, keyed by a hash of what they are built from (`cache_key`): an install of the
same sources again (the README's second set-up line, `pip install -e '.[test]'`) copies them
instead of compiling for minutes.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import sys
import sysconfig
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# meldref and mypyc are imported inside the functions that need them: meldref imports once the
# checkout is on sys.path (the __main__ block puts it there), mypyc only when compiling.

ROOT = Path(__file__).resolve().parent
# The engine's states and meld checks, the three games and the Five Crowns solver, the
# referee's side of a conversation, and the environments' codecs: what runs for every decision
# or environment step. The rest of meldref (the command line, tournaments, replays, the bots)
# stays Python, and so do the games' rules.py: their option dataclasses are read by reflection
# (their annotations check option values and write the command line's help), and a compiled
# class keeps no Literal in its annotations.
# mypyc compiles no dataclass's generated __init__ (it stays Python, ten times slower): the
# values made per decision write their own, and copy and pickle through it (engine.game.by_init).
def registered_games() -> tuple[str, ...]:
    """engine/registry.py's GAMES, read as data (this file runs before meldref imports)."""
    tree = ast.parse((ROOT / "meldref" / "engine" / "registry.py").read_text(encoding="utf-8"))
    return next(ast.literal_eval(node.value) for node in tree.body
                if isinstance(node, ast.AnnAssign) and node.value is not None
                and isinstance(node.target, ast.Name) and node.target.id == "GAMES")


# Of each game: the modules below that it has (a solver only where the game has one).
GAME_MODULES = ("actions", "position", "state", "view", "solver")
HOT = [
    *(f"meldref/engine/{name}.py" for name in (
        "cards", "common", "game", "meld_check", "meld_search", "melds", "numbers",
        "position")),
    *(path for game in registered_games() for name in GAME_MODULES
      if (ROOT / (path := f"meldref/engine/{game}/{name}.py")).is_file()),
    *(f"meldref/protocol/{name}.py" for name in (
        "channel", "conversation", "referee", "seats", "viewtext", "wire")),
    # The research environments' observation vectors and action indices, built at every
    # environment step: the shared codec, each game's codec (meldref/envs/<game>.py), the
    # rewards and the batched environment's loop over its games.
    *(f"meldref/envs/{name}.py" for name in ("codec", "rewards", "batch")),
    *(path for game in registered_games()
      if (ROOT / (path := f"meldref/envs/{game}.py")).is_file()),
]
GROUP = "meldref._hot"  # mypyc's shared library of them all: meldref._hot__mypyc
MYPYC_OPTIONS = {"opt_level": "3", "debug_level": "0"}
CACHE = ROOT / "build" / "mypyc-cache"
CACHE_KEPT = 3  # builds kept (a few branches' worth); the oldest go


def remove_compiled(root: Path = ROOT) -> list[Path]:
    """The extension modules of an earlier build, removed from beside the sources they would
    shadow (Python imports an extension module before a source of the same name), those of
    modules no longer compiled too, and the record of the sources they were built from."""
    from meldref import BUILD_RECORD

    folders = sorted({(root / source).parent for source in HOT} | {root / "meldref"})
    built = [path for folder in folders for path in folder.glob("*.so")]
    built += [path for path in [root / "meldref" / BUILD_RECORD] if path.exists()]
    for path in built:
        path.unlink()
    return built


def module_names() -> list[str]:
    """The extension modules a compiled build makes: the shared library, then one per source
    (setup() is given these names; `compile_with_mypyc` checks mypyc made the same)."""
    return [f"{GROUP}__mypyc", *(source.removesuffix(".py").replace("/", ".") for source in HOT)]


def read_sources(root: Path = ROOT) -> dict[str, bytes]:
    """The sources compiled, by their paths from meldref's folder (as the record names them)."""
    return {source.removeprefix("meldref/"): (root / source).read_bytes() for source in HOT}


def cache_key(sources: dict[str, bytes]) -> str:
    """What a build's extensions are made from: the sources, this file (the list and the
    options), mypyc's version and the Python they are built for."""
    digest = hashlib.sha256()
    for part in (Path(__file__).read_bytes(), mypyc_version().encode(),
                 str(sysconfig.get_config_var("EXT_SUFFIX")).encode(), sys.version.encode(),
                 *(path.encode() + b"\0" + data for path, data in sorted(sources.items()))):
        digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()[:32]


def mypyc_version() -> str:
    """mypy's version, which is mypyc's (a build has it; a test may not)."""
    try:
        return version("mypy")
    except PackageNotFoundError:
        return "none"


class CachedBuild(build_ext):
    """build_ext, with the compiled extensions copied from build/mypyc-cache/ when the sources
    are those of a build kept there, and the record of the sources written beside them.

    setup() is given placeholders of the right names (`module_names`): mypyc runs only here,
    when the cache has no build of these sources (not at every `setup.py` run, nor for the
    metadata pip asks for first)."""

    def run(self) -> None:
        from meldref.build import write_record

        sources = read_sources()
        self.cached = CACHE / cache_key(sources)
        self.staged = self.cached.with_name(f"{self.cached.name}.{os.getpid()}.partial")
        if not self.cached.is_dir():
            # The placeholders, finalized by setuptools, take on what mypyc made of each.
            made = {ext.name: ext for ext in compile_with_mypyc()}
            for ext in self.extensions:
                ext.__dict__.update({key: value for key, value in vars(made[ext.name]).items()
                                     if not key.startswith("_")})
        super().run()
        if self.staged.is_dir():
            self.staged.replace(self.cached)
            prune_cache()
        folders = {Path(self.build_lib, "meldref")}
        if self.inplace:  # an editable install: the extensions were copied beside the sources
            folders.add(Path(self.get_finalized_command("build_py").get_package_dir("meldref")))
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
            write_record(sources, folder)

    def build_extension(self, ext: Extension) -> None:
        filename = self.get_ext_filename(ext.name)
        built = Path(self.get_ext_fullpath(ext.name))
        if self.cached.is_dir():
            print(f"{ext.name}: kept from {self.cached.relative_to(ROOT)} (sources unchanged)")
            built.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.cached / filename, built)
            return
        super().build_extension(ext)
        (self.staged / filename).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, self.staged / filename)


def compile_with_mypyc() -> list[Extension]:
    """The extensions to build, as mypyc makes them (it writes their C under build/mypyc)."""
    from mypyc.build import mypycify

    os.chdir(ROOT)  # mypyc names the modules by their paths from here
    made: list[Extension] = mypycify(HOT, group_name=GROUP, target_dir="build/mypyc",
                                     **MYPYC_OPTIONS)
    if sorted(ext.name for ext in made) != sorted(module_names()):
        raise SystemExit(f"mypyc made {sorted(e.name for e in made)}, setup.py expected "
                         f"{sorted(module_names())}: correct module_names()")
    return made


def prune_cache() -> None:
    """Keeps the CACHE_KEPT newest builds in the cache."""
    builds = sorted((path for path in CACHE.iterdir() if path.is_dir()),
                    key=lambda path: path.stat().st_mtime, reverse=True)
    for old in builds[CACHE_KEPT:]:
        shutil.rmtree(old, ignore_errors=True)


def compiler_found() -> bool:
    """Whether the C compiler a build would run ($CC, or the one Python was built with) is
    there."""
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(str(command).split()[0]) is not None


def extensions() -> list[Extension]:
    # meldref is imported for its build module: no warning that the build being replaced is
    # stale (meldref/build.py)
    os.environ["MELDREF_STALE_WARNED"] = "1"
    from meldref.build import pure_asked

    remove_compiled()
    if pure_asked():
        return []
    if not compiler_found():  # an sdist installed where no compiler is: pure Python, said so
        print("meldref: no C compiler found ($CC or cc): installing pure Python, the referee "
              "slower (meldref --version says which build runs)", file=sys.stderr)
        return []
    return [Extension(name, sources=[]) for name in module_names()]


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    setup(ext_modules=extensions(), cmdclass={"build_ext": CachedBuild})
