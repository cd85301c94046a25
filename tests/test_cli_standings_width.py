"""Standings that fit the terminal: in an 80-column terminal every bot stays told apart (whole
names, or short labels with a legend naming each), and no figure is cut to an ellipsis."""

from __future__ import annotations

import re
from pathlib import Path

import pexpect
from support import PYTHON, ROOT

# The command: three bots whose names all began `rand` printed as `rand…`.
BOTS = ["builtin:greedy", "builtin:random", f"{PYTHON} {ROOT}/bots/random_bot.py --seed 1",
        f"{PYTHON} {ROOT}/bots/random_bot.py --seed 2"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def test_four_bots_in_an_80_column_terminal_are_all_told_apart_and_nothing_is_cut(
        tmp_path: Path) -> None:
    args = ["-m", "meldref", "tournament", *(w for b in BOTS for w in ("--bot", b)),
            "--players", "4", "--games", "12", "--rules", "phases-to-win=2", "-o",
            str(tmp_path / "t"), "--no-progress", "--seed", "1"]
    child = pexpect.spawn(PYTHON, args, cwd=str(ROOT), timeout=120, encoding="utf-8",
                          dimensions=(50, 80))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    shown = ANSI.sub("", child.before).replace("\r\n", "\n")
    shown = shown[shown.index("standings"):]
    lines = [line for line in shown.splitlines() if str(tmp_path) not in line]
    assert max(map(len, lines)) <= 80, "\n".join(lines)
    assert "…" not in shown, shown
    # Every head whole: thirteen columns folded "faults" into "fault" and "s" (issue 47).
    assert re.search(r"(?m)^#\s+bot\s+rating\s.*\sfaults$", shown), shown
    names = ["greedy", "random", "random_bot#1", "random_bot#2"]
    legend = dict(re.findall(r"(?m)^\s*([A-Z])\s+=\s+(\S+)", shown))
    if legend:  # short labels: each bot's label in the table, its name in the legend
        assert sorted(legend.values()) == sorted(names), shown
        assert all(re.search(rf"(?m)^\d+\s+{label}\s", shown) for label in legend), shown
    else:
        assert all(name in shown for name in names), shown
