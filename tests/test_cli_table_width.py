"""Tables that fit an 80-column terminal (issue 47): every line at most 80 columns, nothing cut
to an ellipsis, every game id whole, every bot told apart (whole names, or labels with a
legend naming each) -- for `match`, `replay stats`, `bot test` and `bot check`."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pexpect
from rich.console import Console
from support import PYTHON, ROOT
from support import RANDOM_BOT as RANDOM_PROGRAM

from meldref.cli.report import answers_table, checks_table
from meldref.protocol.referee import MatchPolicy
from meldref.protocol.seats import BotSpec
from meldref.replay.positions import load_position, position_files
from meldref.tools.botcheck import Check
from meldref.tools.bottest import ask_all

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LONG = "a_bot_with_a_name_as_long_as_a_sentence_in_a_manual"  # two differing at the end


def at_80(*args: str) -> str:
    """What `meldref ARGS` shows in an 80-column terminal (exit 0), colours taken out."""
    child = pexpect.spawn(PYTHON, ["-m", "meldref", *args], cwd=str(ROOT), timeout=180,
                          encoding="utf-8", dimensions=(50, 80),
                          env={**os.environ, "COLUMNS": "80"})
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return ANSI.sub("", child.before).replace("\r\n", "\n")


def assert_fits(shown: str) -> None:
    assert max(map(len, shown.splitlines())) <= 80, shown
    assert "…" not in shown, shown


def assert_told_apart(shown: str, names: list[str]) -> None:
    """Each bot by its whole name, or by a label the legend names it by."""
    legend = dict(re.findall(r"(?m)^\s+([A-Z]\d*) = (\S+)$", shown))
    if legend:
        assert sorted(legend.values()) == sorted(names), shown
    else:
        assert all(re.search(rf"(?<![\w#]){re.escape(n)}(?![\w#])", shown) for n in names), shown


def test_a_match_of_three_bots_fits_80_columns_with_whole_ids() -> None:
    """Issue 47: ids printed `game-00…`, `random` and `random_bot` both `random_b…`."""
    shown = at_80("match", "--seed", "1", "--games", "3", "--bot", "builtin:random",
                  "--bot", f"{RANDOM_PROGRAM} --seed 1", "--bot", "builtin:greedy",
                  "--rules", "phases-to-win=1")
    assert_fits(shown)
    assert all(f"game-000{k}" in shown for k in (1, 2, 3)), shown
    assert_told_apart(shown, ["random", "random_bot", "greedy"])


def test_the_default_match_fits_80_columns_one_line_a_game() -> None:
    """Issue 47: the default match's seats cell took four lines."""
    shown = at_80("match", "--seed", "1")
    assert_fits(shown)
    row = next(line for line in shown.splitlines() if line.startswith("game-0001"))
    below = shown.splitlines()[shown.splitlines().index(row) + 1]
    assert not below.startswith(" "), shown  # no cell of the row wrapped onto a second line
    assert_told_apart(shown, [f"greedy#{k}" for k in range(1, 5)])


def test_replay_stats_of_long_bot_names_fits_80_columns(tmp_path: Path) -> None:
    """Two bots whose long names share their start were both cut to the same `a_bot_wi…`."""
    replays = tmp_path / "r"
    at_80("match", "--seed", "2", "--games", "2", "--rules", "phases-to-win=1",
          "--bot", f"{RANDOM_PROGRAM} --name {LONG}_one", "--bot",
          f"{RANDOM_PROGRAM} --name {LONG}_two", "--bot", "builtin:greedy",
          "--replay", str(replays))
    shown = at_80("replay", "stats", str(replays))
    assert_fits(shown)
    assert_told_apart(shown, [f"{LONG}_one", f"{LONG}_two", "greedy"])


def test_bot_test_answers_fit_80_columns_with_whole_position_names() -> None:
    """`bot test` cut position names and answers (`fivecrowns-go-out…`, `run:8D,9D,5S=10,J…`)."""
    folder = ROOT / "docs" / "positions"
    answers = ask_all(BotSpec.parse("builtin:greedy"),
                      [load_position(p) for p in position_files(folder)], MatchPolicy())
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(answers_table(answers, folder, "bot test: builtin:greedy"))
    shown = console.export_text()
    assert_fits(shown)
    for answer in answers:
        assert answer.path.name in shown, shown  # whole, on one line


def test_bot_test_command_fits_80_columns() -> None:
    shown = at_80("bot", "test", "builtin:greedy", str(ROOT / "docs" / "positions"))
    assert_fits(shown[shown.index("bot test"):])


def test_bot_check_table_folds_a_long_word_at_80_columns() -> None:
    """`bot check`'s `identifies itself` printed `games=phase10,fivecrowns,solita…`."""
    checks = [Check("identifies itself", "pass", "name=greedy, games=phase10,fivecrowns,"
                    "solitaire"), Check("starts", "pass", "pid 1")]
    console = Console(width=80, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(checks_table(checks, "bot check: builtin:greedy", {"pass": "PASS"}))
    shown = console.export_text()
    assert_fits(shown)
    why = "".join(line.split("│")[3].strip() for line in shown.splitlines()
                  if line.count("│") == 4)
    assert "games=phase10,fivecrowns,solitaire" in why, shown
