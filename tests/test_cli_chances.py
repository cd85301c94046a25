"""Rank chances as the tables print them: "<1%" and ">99%" where the rank draws saw none or
all, never "0%" or "100%" (a rank the draws did not see is not impossible), in the command
line's `P first` column and in the viewer's list of games, as the contest board prints them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT
from test_viewer_browser import Tab, browser, tab  # noqa: F401 (fixtures)
from test_viewer_layout import list_page_of, tournament  # noqa: F401 (a fixture)

from meldref.contest.board import chance_text
from meldref.verdicts.elo import chance_percent


def test_the_tournament_table_prints_a_sure_first_as_more_than_99_percent(
        tmp_path: Path) -> None:
    # Was: "100%" and "0%" for greedy (20 wins of 20) and random over 10 deals.
    done = subprocess.run(
        [sys.executable, "-m", "meldref", "tournament", "--bot", "builtin:greedy", "--bot",
         "builtin:random", "--game", "fivecrowns", "--games", "20", "--rules", "turn-cap=3",
         "--seed", "1", "--no-progress", "--out", str(tmp_path / "t")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    rows = {m[1]: m[2] for m in re.finditer(r"^\d+\s+(greedy|random)\s.*?\s+1?\s*(\S+%)\s+20\s",
                                            done.stdout, re.M)}
    assert rows == {"greedy": ">99%", "random": "<1%"}, done.stdout


def test_the_command_line_prints_chances_as_the_contest_board_does() -> None:
    for p in (0.0, 0.004, 0.01, 0.2, 0.5, 0.734, 0.99, 0.995, 1.0):
        row = {"p_first": p, "p_top": p, "rank_ci95": [1, 2]}
        assert chance_text(row)[1] == chance_percent(p), p


@pytest.mark.browser
def test_the_list_of_games_prints_chances_as_the_command_line_does(
        tab: Tab, tournament: Path, tmp_path: Path) -> None:  # noqa: F811
    # Was: "0%" for p_first 0.0 and "100%" for 0.997.
    folder = tmp_path / "t"
    shutil.copytree(tournament, folder)
    data = json.loads((folder / "standings.json").read_text())
    chances = [0.997, 0.0, 0.734][:len(data["standings"])]
    for row, p in zip(data["standings"], chances, strict=True):
        row.update(rank_ci95=[1, 3], p_first=p)
    (folder / "standings.json").write_text(json.dumps(data))
    tab.open(list_page_of(folder, tmp_path / "pages").as_uri())
    shown = tab.page.locator("#standings td.p-first").all_text_contents()
    assert shown == [chance_percent(p) for p in chances] == [">99%", "<1%", "73%"][:len(shown)]
