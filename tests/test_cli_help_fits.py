"""Help that fits (issue 47): `tournament --help` was 217-240 lines at 80 columns (rich's boxes
gave the `--no-...` forms a column of their own and left the words a third of the width), and
`replay --help` said neither what html, serve and export do nor that they exist."""

from __future__ import annotations

import os
import re
import subprocess

from support import PYTHON, ROOT


def help_at_80(*command: str) -> str:
    done = subprocess.run([PYTHON, "-m", "meldref", *command, "--help"], cwd=ROOT,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "COLUMNS": "80", "TERM": "dumb"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_tournament_help_fits_80_columns_in_under_80_lines() -> None:
    shown = help_at_80("tournament")
    lines = shown.splitlines()
    assert len(lines) <= 80, f"{len(lines)} lines"
    assert max(map(len, lines)) <= 80
    assert "docs/commands.md" in shown  # where each option is said in full


def test_replay_help_says_what_each_command_does_on_one_line() -> None:
    shown = help_at_80("replay")
    listed = dict(re.findall(r"(?m)^  (\w+)\s{2,}(\S.*)$", shown.split("Commands:")[1]))
    assert set(listed) == {"show", "verify", "stats", "resume", "position", "html", "serve",
                           "export"}, shown
    assert not any(words.endswith("...") for words in listed.values()), shown


def test_the_top_help_names_every_replay_command_kind() -> None:
    line = next(line for line in help_at_80().splitlines() if line.startswith("  replay "))
    assert not line.endswith("...") and all(w in line for w in ("serve", "export", "view"))
