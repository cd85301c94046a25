"""`Any` is counted against a ceiling that only goes down (issue 25: 491 uses when it was set).

A use is the name `Any` (or `typing.Any`) in the code of the project's source: the engine, the
protocol, the bots and the app, each file once though `meldref/` links the first three in. An
import, a comment or a docstring is no use. Each alias of it (`JSON = Any`) is one use, its own
uses none: an alias says the value really is arbitrary JSON, which is where `Any` belongs.

The ceiling is the count: a change that adds a use fails here, and one that removes some fails
too until `ANY_CEILING` is lowered to the new count, so the ceiling never waits above the code
for the next `Any` to fill it.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from support import ROOT

# 355 once the search bots took their views through a protocol (bots/search.py's `TableView`)
# and their actions and guesses as type parameters of `SearchBot`; 244 (from 403) once rules
# were typed by a bound (`engine.game.Rules`), JSON records by the one alias, requests by the
# engine's `Observation`, the CLI's click, the tournament and dask's cluster by their own types;
# 10 (from 243) once the contest, the settings, the environments, the SDK and the searches were
# typed (issue 45): the engine's `JSON` alias, its method tables keyed by action type, `Field`,
# `Bot.act`, the SDK's `engine_view`, and pydantic's `create_model` fields are what is left.
ANY_CEILING = 10
SOURCE = ("engine", "protocol", "bots", "meldref")


def source_files() -> list[Path]:
    """Every Python file of the source, each once (by its real path), links followed."""
    seen: dict[str, Path] = {}
    for top in SOURCE:
        for folder, _, names in os.walk(ROOT / top, followlinks=True):
            for name in names:
                if name.endswith(".py"):
                    seen.setdefault(os.path.realpath(Path(folder) / name), Path(folder) / name)
    return sorted(seen.values())


def uses_of_any(text: str) -> int:
    """The uses of `Any` in a module's code: names and `typing.Any`, not imports or words."""
    return sum((isinstance(node, ast.Name) and node.id == "Any")
               or (isinstance(node, ast.Attribute) and node.attr == "Any")
               for node in ast.walk(ast.parse(text)))


def test_the_count_sees_code_not_words() -> None:
    text = '''
import typing
from typing import Any  # Any in a comment
JSON = Any
def f(x: dict[str, Any], y: typing.Any) -> JSON:
    """Any in a docstring."""
    return "Any"
'''
    assert uses_of_any(text) == 3


def test_each_file_is_counted_once_though_meldref_links_it() -> None:
    files = source_files()
    assert len({os.path.realpath(f) for f in files}) == len(files)
    assert ROOT / "engine" / "game.py" in files
    assert ROOT / "meldref" / "settings.py" in files


def test_any_stays_at_its_ceiling() -> None:
    count = sum(uses_of_any(path.read_text(encoding="utf-8")) for path in source_files())
    assert count <= ANY_CEILING, (
        f"{count} uses of Any, over the ceiling of {ANY_CEILING}: type the new values (Any only "
        "where a value really is arbitrary JSON)")
    assert count == ANY_CEILING, (
        f"{count} uses of Any, under the ceiling of {ANY_CEILING}: lower ANY_CEILING in "
        f"{Path(__file__).name} to {count}")
