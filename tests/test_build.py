"""The two builds (issue 28): the hot path compiled with mypyc by setup.py, or pure Python, and
`meldref --version` saying which one runs. `MELDREF_PURE=1` asks for pure Python, at install
time (nothing compiled, and an earlier build's extension modules removed) and at run time (the
sources imported even beside compiled modules)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from support import PYTHON, ROOT


def installed_compiled() -> bool:
    """Whether the install is the compiled build (asked of a process without MELDREF_PURE:
    this one may run the sources, as CI's pure-Python pass does)."""
    return run_python("from meldref.build import compiled; print(compiled())", False) == "True"


def run_python(code: str, pure: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k != "MELDREF_PURE"}
    if pure:
        env["MELDREF_PURE"] = "1"
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120, check=True)
    return done.stdout.strip()


def load_setup() -> ModuleType:
    spec = importlib.util.spec_from_file_location("meldref_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # `setup()` runs only as a script
    return module


VERSION = "from meldref.cli import main; main()"


def test_version_says_which_build_runs() -> None:
    expected = "compiled with mypyc" if installed_compiled() else "pure Python"
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


def test_a_pure_install_removes_an_earlier_build(tmp_path: Path) -> None:
    setup = load_setup()
    tag = f"cpython-{sys.version_info.major}{sys.version_info.minor}-x86_64-linux-gnu"
    stale = [tmp_path / "meldref" / "engine" / f"cards.{tag}.so",
             tmp_path / "meldref" / "protocol" / f"wire.{tag}.so",
             tmp_path / "meldref" / f"_hot__mypyc.{tag}.so"]
    kept = [tmp_path / "meldref" / "engine" / "cards.py",
            tmp_path / "meldref" / "cli" / f"other.{tag}.so"]  # not ours to remove
    for path in stale + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    assert sorted(setup.remove_compiled(tmp_path)) == sorted(stale)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in stale)
