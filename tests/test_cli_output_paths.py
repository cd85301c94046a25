"""No command writes over one of its own inputs: the output named as the input itself, through
a symbolic link, or as a hard link of it is refused with exit 2, and nothing is touched."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meldref.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("out") / "g.jsonl"
    result = runner.invoke(app, ["match", "phase10", "--seed", "3", "--players", "2",
                                 "--rules", "phases-to-win=1", "--replay", str(path)])
    assert result.exit_code == 0, result.output
    return path


def same(path: Path) -> Path:
    return path


def linked(path: Path) -> Path:
    link = path.with_name("link.jsonl")
    link.symlink_to(path.name)
    return link


def hard_linked(path: Path) -> Path:
    link = path.with_name("hard.jsonl")
    os.link(path, link)
    return link


def through_dots(path: Path) -> Path:
    (path.parent / "sub").mkdir()
    return path.parent / "sub" / ".." / path.name


# Each command with an input (first) and an output naming the same file.
COMMANDS = {
    "replay html": lambda g, o: ["replay", "html", str(g), "-o", str(o)],
    "replay position": lambda g, o: ["replay", "position", str(g), "--at", "3", "-o", str(o)],
    "replay resume": lambda g, o: ["replay", "resume", str(g), "--at", "3", "--replay", str(o),
                                   "--bot", "builtin:random", "--bot", "builtin:random"],
    "match --position": lambda g, o: ["match", "--position", str(g), "--replay", str(o)],
    "bot check --position": lambda g, o: ["bot", "check", "builtin:greedy", "--position",
                                          str(g), "--logs", str(o)],
    "tournament config": lambda g, o: ["tournament", str(g), "--out", str(o)],
}


@pytest.mark.parametrize("naming", [same, linked, hard_linked, through_dots],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_output_that_is_an_input_is_refused_and_nothing_is_touched(
        name: str, naming: Callable[[Path], Path], recorded: Path, tmp_path: Path) -> None:
    replay = tmp_path / "g.jsonl"
    replay.write_bytes(recorded.read_bytes())
    output = naming(replay)
    before = {p: (p.lstat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
              for p in tmp_path.rglob("*")}
    result = runner.invoke(app, COMMANDS[name](replay, output))
    assert result.exit_code == 2, (name, result.output)
    assert "is also an input" in " ".join(result.stderr.split()), result.stderr
    after = {p: (p.lstat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
             for p in tmp_path.rglob("*")}
    assert after == before
