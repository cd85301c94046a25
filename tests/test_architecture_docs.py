"""What the maintainers' docs say of the code's layout is true: docs/architecture.md's layers
table names every module of every layer (was: no `verdicts/`, half of `replay/`), and
protocol/__init__.py's list of modules names each module with what it really holds (was:
`BotProcess` under `channel`, which holds none); and the table's rows are the layers of the
import contract, in its order (was: four layers drawn, the app one of them, against the ten
the code shows)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from support import ROOT
from test_import_layers import layers_contract

import meldref.protocol

# The packages whose modules the layers table names one by one (the command line is "one module
# per command", the built-in bots "one module per game and rung").
LISTED = ["engine", "engine/phase10", "engine/fivecrowns", "engine/solitaire", "protocol",
          "tournament", "verdicts", "replay", "tools", "."]


def modules(package: str) -> list[str]:
    folder = ROOT / "meldref" / package
    return sorted(path.stem for path in folder.glob("*.py")
                  if path.stem not in {"__init__", "__main__"})


def named_in(text: str) -> set[str]:
    return set(re.findall(r"`([a-z_0-9]+)`", text))


@pytest.mark.parametrize("package", LISTED)
def test_the_layers_table_names_every_module(package: str) -> None:
    table = (ROOT / "docs" / "architecture.md").read_text()
    missing = [name for name in modules(package) if name not in named_in(table)]
    assert not missing, f"docs/architecture.md does not name meldref/{package}: {missing}"


def test_the_layers_table_names_every_package_of_the_app() -> None:
    table = (ROOT / "docs" / "architecture.md").read_text()
    packages = sorted(path.name for path in (ROOT / "meldref").iterdir()
                      if (path / "__init__.py").is_file() and not path.is_symlink())
    assert {"tournament", "verdicts", "replay", "tools", "cli"} <= set(packages)
    missing = [name for name in packages if f"`{name}/`" not in table]
    assert not missing, f"docs/architecture.md does not name {missing}"


def defined(module: Path) -> set[str]:
    tree = ast.parse(module.read_text())
    return {node.name for node in tree.body
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)}


def test_the_protocol_docstring_names_each_module_with_what_it_holds() -> None:
    doc = meldref.protocol.__doc__ or ""
    entries = re.findall(r"^- `(\w+)`: (.*?)(?=^- |\Z)", doc, re.M | re.S)
    listed = {module for module, _ in entries}
    assert listed == set(modules("protocol")), "protocol/__init__.py lists other modules"
    for module, text in entries:
        # Classes and functions (`BotProcess`, `play_game`), not protocol words (`view`).
        names = {name for name in re.findall(r"`([A-Za-z_]\w*)`", text)
                 if name[0].isupper() or "_" in name}
        here = defined(ROOT / "protocol" / f"{module}.py")
        assert names <= here, f"{module} does not define {sorted(names - here)}"


def where(cell: str) -> list[str]:
    """`cli/`, `settings.py` -> meldref.cli, meldref.settings."""
    return [f"meldref.{name.rstrip('/').removesuffix('.py')}"
            for name in re.findall(r"`([a-z_]+(?:/|\.py))`", cell)]


def test_the_layers_table_draws_the_contract_top_to_bottom() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[2] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| layer ")]
    assert [where(cell) for cell in rows] == layers_contract()
