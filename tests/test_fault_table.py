"""The table of faults (docs/faults.md) is true to the code: every row
names a test that exists, and bench/faults.py provokes exactly the faults listed, expecting the
classification the table gives."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from types import ModuleType

from support import ROOT, TESTS


def table() -> list[list[str]]:
    text = (ROOT / "docs" / "faults.md").read_text()
    body = text.split("<!-- fault-table -->", 1)[1].split("<!-- /fault-table -->", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in body.strip().splitlines()]
    return [[cell.strip() for cell in row] for row in rows[2:]]  # after the head and rule


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_faults", ROOT / "bench" / "faults.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _tested(fault: str, tested_by: str) -> None:
    file, _, name = tested_by.partition("::")
    path = TESTS / file
    assert path.is_file(), f"{fault}: no {file}"
    tests = {node.name for node in ast.parse(path.read_text()).body
             if isinstance(node, ast.FunctionDef)}
    assert name in tests, f"{fault}: {file} has no {name}"


def test_every_row_names_a_test_that_exists() -> None:
    rows = table()
    assert len(rows) >= 25
    for fault, *_, tested_by in rows:
        _tested(fault, tested_by)
    for row in bench().ROWS:  # the rows the README is generated from, new ones too
        _tested(row.fault, row.tested_by)


def test_the_bench_provokes_every_row_as_classified() -> None:
    # `bench/faults.py --markdown` writes docs/faults.md's rows: the table is the bench's,
    # row for row, with its classification, its words and its test.
    rows = {row[0]: (row[1].strip("`"), row[2], row[4]) for row in table()}
    provoked = {row.fault: (row.expected, row.does, row.tested_by) for row in bench().ROWS}
    assert provoked == rows


def test_every_row_has_a_measured_time() -> None:
    for fault, _, _, seconds, _ in table():
        assert seconds == "none" or re.search(r"\d+(\.\d+)? s", seconds), (fault, seconds)
