"""Release habits (issue 45): the version written once and moving with a changelog entry, the
type information shipped (py.typed), an API reference made from the docstrings, and the working
loop CI and CONTRIBUTING.md agree on. The wheel and the sdist themselves: tests/test_wheel.py."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from support import PYTHON, ROOT

import meldref

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_version_is_written_once_and_printed() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "meldref.__version__"}
    done = subprocess.run([PYTHON, "-m", "meldref", "--version"], capture_output=True,
                          text=True, timeout=120, check=True, cwd=ROOT)
    assert done.stdout.startswith(f"meldref {meldref.__version__} (")


def test_the_version_has_its_changelog_entry() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## (\d+\.\d+\.\d+) - \d{4}-\d\d-\d\d$", changelog, re.MULTILINE)
    assert versions and versions[0] == meldref.__version__, versions
    assert meldref.__version__ != "0.1.0"  # the version moves (555 commits said 0.1.0)
    assert "## Unreleased" in changelog


def test_the_type_information_ships() -> None:
    assert (ROOT / "meldref" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["meldref"]


def test_contributing_lists_the_checks_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    for check in ("pytest -m long", "mypy", "lint-imports", "ruff check .", "tests/test_wheel.py",
                  "MELDREF_PURE=1"):
        assert check in ci and check in contributing, check


def test_the_commit_hooks_run_the_quick_checks_ci_runs() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())["repos"][0]["hooks"]
    entries = {hook["entry"] for hook in hooks}
    ci = (ROOT / ".ci" / "run").read_text()
    assert entries == {"ruff check .", "mypy", "lint-imports"}
    assert all(entry in ci for entry in entries)
    assert all(hook["language"] == "system" for hook in hooks)  # nothing downloaded


@pytest.mark.long
def test_the_api_reference_is_made_from_the_docstrings(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs") or str(Path(sys.executable).parent / "mkdocs")
    if not Path(mkdocs).exists():
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
                   cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    pages = {name: (tmp_path / "site" / "api" / name / "index.html").read_text()
             for name in ("sdk", "envs", "arena")}
    # a documented member of each, with its docstring's words
    assert 'id="meldref.bots.sdk.Bot"' in pages["sdk"] and "anytime" in pages["sdk"]
    assert 'id="meldref.envs.aec' in pages["envs"] and "PettingZoo" in pages["envs"]
    assert 'id="meldref.tools.arena.play"' in pages["arena"]
