"""The two builds (issue 28): the hot path compiled with mypyc by setup.py, or pure Python, and
`meldref --version` saying which one runs. `MELDREF_PURE=1` asks for pure Python, at install
time (nothing compiled, and an earlier build's extension modules removed) and at run time (the
sources imported even beside compiled modules). A build that cannot lie (issue 45): a compiled
build whose sources were edited since is not run (the sources are, with one warning), and
`meldref --version` names the edited modules."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from support import PYTHON, ROOT

from meldref import BUILD_RECORD, COMPILED_LIBRARY, stale_sources
from meldref.build import stale_text, write_record
from meldref.engine.registry import GAMES


def installed_compiled() -> bool:
    """Whether the install is the compiled build (asked of a process without MELDREF_PURE:
    this one may run the sources, as CI's pure-Python pass does)."""
    return run_python("from meldref.build import compiled; print(compiled())", False) == "True"


def run_python(code: str, pure: bool) -> str:
    return python_output(code, pure).stdout.strip()


def python_output(code: str, pure: bool = False, tree: Path | None = None
                  ) -> subprocess.CompletedProcess[str]:
    """`python -c code` run as a user runs it (no MELDREF_PURE unless `pure`, no warning given
    yet), importing meldref from `tree` if given (a copy of the repository's)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MELDREF_PURE", "MELDREF_STALE_WARNED")}
    if pure:
        env["MELDREF_PURE"] = "1"
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120, check=True, cwd=tree)
    return done


def load_setup() -> ModuleType:
    spec = importlib.util.spec_from_file_location("meldref_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # `setup()` runs only as a script
    return module


VERSION = "from meldref.cli import main; main()"


def test_version_says_which_build_runs() -> None:
    stale = stale_sources()
    expected = ("compiled with mypyc" if installed_compiled()
                else f"pure Python; {stale_text(stale, len(stale))}" if stale else "pure Python")
    assert run_python(f"import sys; sys.argv = ['meldref', '--version']; {VERSION}",
                      pure=False).endswith(f", {expected})")
    assert run_python(f"import sys; sys.argv = ['meldref', '--version']; {VERSION}",
                      pure=True).endswith(", pure Python)")


def test_pure_at_run_time_imports_every_hot_module_from_its_source() -> None:
    hot = [source.removesuffix(".py").replace("/", ".") for source in load_setup().HOT]
    code = ("import importlib; "
            f"print('\\n'.join(importlib.import_module(m).__file__ for m in {hot!r}))")
    files = run_python(code, pure=True).splitlines()
    assert len(files) == len(hot) and all(f.endswith(".py") for f in files)


def test_the_compiled_build_compiles_every_hot_module() -> None:
    # On a compiled install, each module setup.py compiles loads as an extension module (a
    # module left out would run as Python, silently slower); on a pure one, none does.
    hot = [source.removesuffix(".py").replace("/", ".") for source in load_setup().HOT]
    code = ("import importlib; "
            f"print('\\n'.join(importlib.import_module(m).__file__ for m in {hot!r}))")
    files = run_python(code, pure=False).splitlines()
    assert [f.endswith(".so") for f in files] == [installed_compiled()] * len(hot)


def test_every_hot_module_exists() -> None:
    for source in load_setup().HOT:
        assert (ROOT / source).is_file(), source


def test_the_build_compiles_every_registered_games_state() -> None:
    # setup.py reads the games from engine/registry.py, not a list of its own
    hot = set(load_setup().HOT)
    assert {f"meldref/engine/{game}/state.py" for game in GAMES} <= hot


def test_a_pure_install_removes_an_earlier_build(tmp_path: Path) -> None:
    setup = load_setup()
    tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}-x86_64-linux-gnu"
    stale = [tmp_path / "meldref" / "engine" / f"cards.{tag}.so",
             tmp_path / "meldref" / "protocol" / f"wire.{tag}.so",
             tmp_path / "meldref" / f"_hot__mypyc.{tag}.so",
             tmp_path / "meldref" / BUILD_RECORD]
    kept = [tmp_path / "meldref" / "engine" / "cards.py",
            tmp_path / "meldref" / "cli" / f"other.{tag}.so"]  # not ours to remove
    for path in stale + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    assert sorted(setup.remove_compiled(tmp_path)) == sorted(stale)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in stale)


CARD_REPR = "import meldref.engine.cards as c; print(repr(c.Card.parse('R7')))"
WARNING = "StaleBuildWarning"


def copied_build(tmp_path: Path) -> Path:
    """A copy of meldref with its compiled modules if any (the links to engine/, protocol/ and
    bots/ followed), and the record of a build made from its sources as they are."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "meldref", tree / "meldref",
                    ignore=shutil.ignore_patterns("__pycache__", BUILD_RECORD))
    write_record(load_setup().read_sources(tree), tree / "meldref")
    return tree


def test_a_current_build_runs_compiled_without_a_word(tmp_path: Path) -> None:
    tree = copied_build(tmp_path)
    has_compiled = any((tree / "meldref").glob(f"{COMPILED_LIBRARY}*"))
    done = python_output("import meldref.engine.cards as c; print(c.__file__)", tree=tree)
    assert done.stdout.strip().endswith(".so") == has_compiled
    assert WARNING not in done.stderr


def test_an_edited_compiled_module_runs_from_its_source_with_one_warning(tmp_path: Path) -> None:
    # The case: `__repr__` of engine/cards.py edited in an editable install. The old
    # build printed the compiled repr, and said nothing.
    tree = copied_build(tmp_path)
    cards = tree / "meldref" / "engine" / "cards.py"
    old = 'return f"Card.parse({self.text!r})"'
    assert old in cards.read_text()
    cards.write_text(cards.read_text().replace(old, 'return f"edited {self.text}"'))
    done = python_output(CARD_REPR, tree=tree)
    assert done.stdout.strip() == "edited R7"
    assert done.stderr.count(WARNING) == 1 and "engine/cards.py" in done.stderr, done.stderr
    # one warning for a command, not one more for each process it starts (bot programs)
    parent = python_output("import subprocess, sys; import meldref; "
                           f"subprocess.run([sys.executable, '-c', {CARD_REPR!r}], check=True)",
                           tree=tree)
    assert parent.stdout.strip() == "edited R7"
    assert parent.stderr.count(WARNING) == 1, parent.stderr
    version = python_output(f"import sys; sys.argv = ['meldref', '--version']; {VERSION}",
                            tree=tree)
    assert version.stdout.strip().endswith(
        ", pure Python; compiled modules stale, edited since built: engine/cards.py)")
    # MELDREF_PURE=1 asked for the sources: no warning, and none needed
    assert WARNING not in python_output(CARD_REPR, pure=True, tree=tree).stderr


def test_a_compiled_build_without_a_record_is_not_trusted(tmp_path: Path) -> None:
    # A build of before the record (meldref 0.1.0) may be of any sources.
    tree = copied_build(tmp_path)
    (tree / "meldref" / BUILD_RECORD).unlink()
    (tree / "meldref" / f"{COMPILED_LIBRARY}.cpython-311-x86_64-linux-gnu.so").touch()
    done = python_output("import meldref.engine.cards as c; print(c.__file__)", tree=tree)
    assert done.stdout.strip().endswith("cards.py")
    assert done.stderr.count(WARNING) == 1 and "no record" in done.stderr


def test_a_pure_tree_is_neither_compiled_nor_stale(tmp_path: Path) -> None:
    (tmp_path / "meldref").mkdir()
    assert stale_sources(str(tmp_path / "meldref")) is None


def test_a_damaged_record_is_stale_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / BUILD_RECORD).write_text("# a comment\ngarbage\n\n0000abcd engine/gone.py\n")
    assert stale_sources(str(tmp_path)) == [BUILD_RECORD, "engine/gone.py"]


def test_the_cache_key_follows_every_source_compiled() -> None:
    setup = load_setup()
    sources = setup.read_sources()
    assert set(sources) == {path.removeprefix("meldref/") for path in setup.HOT}
    key = setup.cache_key(sources)
    assert setup.cache_key(dict(sources)) == key
    for path in sources:
        assert setup.cache_key({**sources, path: sources[path] + b"\n"}) != key, path
