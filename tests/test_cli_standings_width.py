"""Standings that fit the terminal: at 80 columns every bot stays told apart (whole names, or
short labels with a legend naming each), and no figure is cut to an ellipsis."""

from __future__ import annotations

import re

from support import PYTHON, ROOT
from typer.testing import CliRunner

from meldref.cli import app

runner = CliRunner()
# The command: three bots whose names all began `rand` printed as `rand…`.
BOTS = ["builtin:greedy", "builtin:random", f"{PYTHON} {ROOT}/bots/random_bot.py --seed 1",
        f"{PYTHON} {ROOT}/bots/random_bot.py --seed 2"]


def test_four_bots_at_80_columns_are_all_told_apart_and_nothing_is_cut(tmp_path) -> None:
    args = ["tournament", *(w for b in BOTS for w in ("--bot", b)), "--players", "4",
            "--games", "12", "--rules", "phases-to-win=2", "-o", str(tmp_path / "t"),
            "--no-progress", "--seed", "1"]
    result = runner.invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if str(tmp_path) not in line]
    assert max(map(len, lines)) <= 80, "\n".join(lines)
    assert "…" not in result.stdout, result.stdout
    names = ["greedy", "random", "random_bot#1", "random_bot#2"]
    shown = result.stdout
    legend = dict(re.findall(r"(?m)^\s*([A-Z])\s+=\s+(\S+)", shown))
    if legend:  # short labels: each bot's label in the table, its name in the legend
        assert sorted(legend.values()) == sorted(names), shown
    else:
        assert all(name in shown for name in names), shown
