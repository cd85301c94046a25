"""Progress where long work happens: off a terminal (a log file, a pipe) a tournament writes a
line per game as it finishes, as the chess runners do, and `replay html` over a folder a line
per page; in a terminal `replay html` over a folder shows a progress bar."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
import pytest
from support import PYTHON, ROOT
from typer.testing import CliRunner

from meldref.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("progress") / "t"
    result = runner.invoke(app, ["tournament", "phase10", "--bot", "builtin:greedy", "--bot",
                                 "builtin:random", "--players", "2", "--games", "4",
                                 "--rules", "phases-to-win=1", "-o", str(out), "--seed", "2"])
    assert result.exit_code == 0, result.output
    return out, result.stderr


def test_a_tournament_off_a_terminal_writes_a_line_per_game(
        tournament: tuple[Path, str]) -> None:
    _, stderr = tournament
    lines = re.findall(r"(?m)^game (\d+)/4 t\d\d-d\d{4}-s\d\d: .*won", stderr)
    assert sorted(map(int, lines)) == [1, 2, 3, 4], stderr


def test_replay_html_over_a_folder_off_a_terminal_writes_a_line_per_page(
        tournament: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = tournament
    result = runner.invoke(app, ["replay", "html", str(out), "-o", str(tmp_path / "v")])
    assert result.exit_code == 0, result.output
    pages = re.findall(r"(?m)^page (\d+)/4 \S+\.jsonl$", result.stderr)
    assert pages == ["1", "2", "3", "4"], result.stderr


def test_replay_html_over_a_folder_in_a_terminal_shows_a_bar(
        tournament: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = tournament
    child = pexpect.spawn(PYTHON, ["-m", "meldref", "replay", "html", str(out), "-o",
                                   str(tmp_path / "v")], cwd=str(ROOT), timeout=60,
                          encoding="utf-8", dimensions=(24, 100))
    child.expect("pages")
    child.expect("4/4")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "page 1/4" not in (child.before or "")  # the bar, not the lines
