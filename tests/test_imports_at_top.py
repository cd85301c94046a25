"""Imports at the top of a module (issue 45): an import inside a function hides what a module
depends on, and the import cycles it breaks, from the reader and from lint-imports. ruff's
PLC0415 (pyproject.toml) finds them; the only ones kept are start-up deferrals (a module that
keeps `meldref --help` or a command's help from loading a heavy library: scipy, starlette,
pydantic, dask), each marked `# noqa: PLC0415 <why>`. Those noqa comments are the allow-list,
and each must say why."""

from __future__ import annotations

import fnmatch
import functools
import io
import json
import re
import subprocess
import sys
import tokenize
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from support import ROOT

SOURCE_FOLDERS = ("engine", "protocol", "bots", "meldref")  # meldref/{engine,...} link to these
# A noqa comment (other codes beside PLC0415 too): the why is what follows the codes.
NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)(?P<why>.*)$")
FEWEST_WORDS = 2  # "start-up: scipy" says what is deferred and that it is for start-up


def function_level_imports(paths: Sequence[Path]) -> list[str]:
    """ruff's PLC0415 findings under `paths`, with the project's configuration (its
    per-file-ignores too), as `path:line`."""
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
         str(ROOT / "pyproject.toml"), "--select", "PLC0415", "--output-format", "json",
         *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode in (0, 1), done.stderr
    return [f"{f['filename']}:{f['location']['row']}" for f in json.loads(done.stdout)]


@functools.cache
def per_file_ignores() -> dict[str, list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(config["tool"]["ruff"]["lint"].get("per-file-ignores", {}))


def exempt(path: Path) -> bool:
    """Whether pyproject.toml's per-file-ignores exempt `path` from PLC0415 (tests, the
    build script, and files whose owners are moving their imports this session)."""
    name = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else ""
    return any("PLC0415" in codes and fnmatch.fnmatch(name, pattern)
               for pattern, codes in per_file_ignores().items())


def python_files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        for each in [path] if path.is_file() else sorted(path.rglob("*.py")):
            if not exempt(each):
                yield each


def deferrals_without_reason(paths: Sequence[Path]) -> list[str]:
    """Each `noqa` naming PLC0415 in a comment under `paths` that gives no reason after its
    codes, as `path:line`."""
    bare = []
    for path in python_files(paths):
        source = path.read_text(encoding="utf-8")
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            found = NOQA.search(token.string) if token.type == tokenize.COMMENT else None
            if found and "PLC0415" in found["codes"] and (
                    len(found["why"].split()) < FEWEST_WORDS):
                bare.append(f"{path}:{token.start[0]}")
    return bare


def test_no_import_inside_a_function_but_the_allowed_deferrals() -> None:
    found = function_level_imports([ROOT / folder for folder in SOURCE_FOLDERS])
    assert not found, ("imports inside functions: move them to the top of the module, or, for "
                       "a start-up deferral, mark `# noqa: PLC0415 <why>`:\n" + "\n".join(found))


def test_every_allowed_deferral_says_why() -> None:
    bare = deferrals_without_reason([ROOT / folder for folder in SOURCE_FOLDERS])
    assert not bare, "a `noqa: PLC0415` without its reason:\n" + "\n".join(bare)


# ----------------------------------------------------------------------------------------------
# The two checks catch what they are for


@pytest.mark.parametrize(("line", "caught"), [
    ("    import json", True),
    ("    import json  # noqa: PLC0415 start-up: json, for this only", False),
])
def test_a_new_function_level_import_is_found(line: str, caught: bool, tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(f"def f() -> object:\n{line}\n\n    return json\n", encoding="utf-8")
    assert bool(function_level_imports([sample])) is caught


@pytest.mark.parametrize(("comment", "caught"), [
    ("# noqa: PLC0415", True),
    ("# noqa: E501, PLC0415", True),
    ("# noqa: PLC0415 scipy", True),
    ("# noqa: PLC0415 start-up: scipy, not for a match", False),
    ("# noqa: E501, PLC0415 start-up: scipy", False),
    ("# noqa: E501", False),
])
def test_a_deferral_without_its_reason_is_found(comment: str, caught: bool,
                                                 tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(f'def f() -> object:\n    import json  {comment}\n\n    return "{comment}"\n',
                      encoding="utf-8")
    assert bool(deferrals_without_reason([sample])) is caught
