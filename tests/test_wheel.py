"""A release a user can install (issue 45): `python -m build` makes an sdist and a wheel from a
copy of the repository; each installs into a fresh venv (no system site-packages: dependencies
from the package index) and passes the smoke test, `meldref --version`, a match of two built-in
bots and the SDK's import. The wheel is compiled where a C compiler is present (and says so);
the sdist, installed where no compiler is found, installs pure Python (as MELDREF_PURE=1 asks).
Building the wheel twice compiles once: the second copies the build kept in build/mypyc-cache/
(the README's two set-up lines, one after the other). Marked slow: it downloads and compiles
(minutes); .ci/run runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from support import PYTHON, ROOT

import meldref

pytestmark = pytest.mark.slow
LEFT_OUT = shutil.ignore_patterns(".git", "build", "dist", "site", "out", "runs", "*.so",
                                  "__pycache__", "*.egg-info", ".venv", "venv", ".*_cache",
                                  ".hypothesis", meldref.BUILD_RECORD)
SMOKE_SDK = "import meldref.bots.sdk, meldref.envs, meldref.tools.arena; print('ok')"


def compiler_present() -> bool:
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(str(command).split()[0]) is not None


def run(argv: list[str | Path], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A command as a user runs it: meldref's variables only as given."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith("MELDREF_") and k != "PYTHONPATH"}
    done = subprocess.run([str(a) for a in argv], cwd=cwd, env={**clean, **env},
                          capture_output=True, text=True, timeout=3000, check=False)
    assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def output(done: subprocess.CompletedProcess[str]) -> str:
    return done.stdout + done.stderr


def compiler_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    """The compiler's command lines a build printed (setuptools prints each it runs)."""
    compiler = Path(str(sysconfig.get_config_var("CC") or "cc").split()[0]).name
    return [line for line in output(done).splitlines() if line.lstrip().startswith(compiler)]


def fresh_venv(where: Path) -> Path:
    run([PYTHON, "-m", "venv", where], cwd=where.parent)  # no --system-site-packages
    return where / "bin"


def smoke(bin: Path, build: str) -> None:
    version = run([bin / "meldref", "--version"], cwd=bin).stdout
    assert version.startswith(f"meldref {meldref.__version__} (") and f"{build})" in version
    match = run([bin / "meldref", "match", "phase10", "--bot", "builtin:greedy",
                 "--bot", "builtin:random", "--seed", "1", "-r", "phases-to-win=1"], cwd=bin)
    assert "greedy" in match.stdout, match.stdout
    assert run([bin / "python", "-c", SMOKE_SDK], cwd=bin).stdout.strip() == "ok"
    typed = run([bin / "python", "-c", "import meldref, pathlib; "
                 "print((pathlib.Path(meldref.__file__).parent / 'py.typed').is_file())"],
                cwd=bin)
    assert typed.stdout.strip() == "True"


def test_the_wheel_and_the_sdist_install_and_play(tmp_path: Path) -> None:
    source = tmp_path / "meldref"
    shutil.copytree(ROOT, source, symlinks=True, ignore=LEFT_OUT)
    dist = tmp_path / "dist"
    compiled = compiler_present()
    pure = {} if compiled else {"MELDREF_PURE": "1"}
    run([PYTHON, "-m", "build", "--sdist", "--outdir", dist, source], cwd=tmp_path)
    first = run([PYTHON, "-m", "build", "--wheel", "--outdir", dist, source], cwd=tmp_path,
                **pure)
    again = run([PYTHON, "-m", "build", "--wheel", "--outdir", dist, source], cwd=tmp_path,
                **pure)
    (sdist,) = dist.glob("meldref-*.tar.gz")
    (wheel,) = dist.glob("meldref-*.whl")
    assert sdist.name == f"meldref-{meldref.__version__}.tar.gz"
    if compiled:
        assert "py3-none-any" not in wheel.name, wheel.name  # a platform wheel
        assert compiler_lines(first) and "kept from" not in output(first)
        # the second build copies every extension module the first compiled, and compiles none
        kept = [line for line in output(again).splitlines() if ": kept from build" in line]
        assert len(kept) == len(list(source.glob("build/mypyc-cache/*/**/*.so"))) > 1
        assert not compiler_lines(again)
    bin = fresh_venv(tmp_path / "wheel-venv")
    run([bin / "pip", "install", wheel], cwd=tmp_path)
    smoke(bin, "compiled with mypyc" if compiled else "pure Python")
    # where no C compiler is found, the sdist installs as pure Python (and says so)
    bin = fresh_venv(tmp_path / "sdist-venv")
    run([bin / "pip", "install", sdist], cwd=tmp_path, CC="no-such-compiler")
    smoke(bin, "pure Python")
