"""The import contract covers the whole app (issue 25: no contract held the app's folders, and
`tournament/match.py` imported `tools/`, `replay/resume.py` and `tournament/runner.py` each
other's folders). `lint-imports` (run by `.ci/run`) holds the layers; this holds the contract
to every package and module of `meldref`, so a new folder cannot stand outside it."""

from __future__ import annotations

import tomllib
from typing import Any

from support import ROOT


def layers_contract() -> list[list[str]]:
    """The layers of pyproject.toml's layers contract of the whole app (the one whose top is
    the command line; others layer a room inside it), top first, each a list of siblings."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    layered = [c for c in contracts if c["type"] == "layers" and c["layers"][0] == "meldref.cli"]
    assert len(layered) == 1, "pyproject.toml holds no layers contract of the app (or several)"
    return [[name.strip() for name in layer.split("|")] for layer in layered[0]["layers"]]


def app_modules() -> set[str]:
    """Every package and module directly in meldref/ (the entry points aside)."""
    out = set()
    for path in (ROOT / "meldref").iterdir():
        if (path / "__init__.py").is_file() or (
                path.suffix == ".py" and path.stem not in {"__init__", "__main__"}):
            out.add(f"meldref.{path.stem}")
    return out


def test_every_package_of_meldref_has_its_layer() -> None:
    layered = {name for layer in layers_contract() for name in layer}
    assert app_modules() - layered == set(), "packages outside the layers contract"
    assert layered - app_modules() == set(), "the layers contract names what is not there"


def test_the_layers_run_from_the_command_line_down_to_the_rules() -> None:
    layers = layers_contract()
    assert layers[0] == ["meldref.cli"] and layers[-1] == ["meldref.engine"]
    assert len({name for layer in layers for name in layer}) == sum(map(len, layers))
