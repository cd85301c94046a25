"""Issue 26: `meldref match` keeps every bot program's stderr as `tournament` does
(spec/PROTOCOL.md section 8): in `--logs DIR`, by default under the replay folder, and in a
temporary folder kept and named only when a bot failed; a failed bot's stderr tail is shown.

The bot is tests/bots/pid_bot.py: it writes `pid P game N ...` lines to stderr, and with a
second argument k it exits with code 3 at its first decision of its k-th game.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from pytest import MonkeyPatch
from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app

PID_BOT = ROOT / "tests" / "bots" / "pid_bot.py"
SHORT = ["--rules", "phases-to-win=1", "--seed", "5"]
runner = CliRunner()


def bot(pids: Path, *args: str) -> str:
    return " ".join([sys.executable, str(PID_BOT), str(pids), *args])


def test_match_logs_dir_keeps_each_bots_stderr_per_game(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    result = runner.invoke(app, ["match", "phase10", "--bot", bot(tmp_path / "p"),
                                 "--bot", "builtin:greedy", "--games", "2", *SHORT,
                                 "--logs", str(logs), "--json"])
    assert result.exit_code == 0, result.output
    kept = sorted(p.relative_to(logs).as_posix() for p in logs.rglob("*.stderr"))
    assert kept == ["game-0001/seat0-pidbot.stderr", "game-0002/seat1-pidbot.stderr"]
    assert " decides" in (logs / "game-0002" / "seat1-pidbot.stderr").read_text()
    games = json.loads(result.stdout)["games"]
    assert games[0]["logs"] == [str(logs / "game-0001" / "seat0-pidbot.stderr"), None]


def test_match_logs_go_under_the_replay_folder_by_default(tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    result = runner.invoke(app, ["match", "phase10", "--bot", bot(tmp_path / "p"),
                                 "--bot", "builtin:greedy", "--games", "2", *SHORT,
                                 "--replay", str(replays)])
    assert result.exit_code == 0, result.output
    assert (replays / "logs" / "game-0001" / "seat0-pidbot.stderr").read_text().count(
        " begins") == 1


def test_a_failed_bots_stderr_tail_is_shown_and_its_log_kept(tmp_path: Path) -> None:
    result = runner.invoke(app, ["match", "phase10", "--bot", bot(tmp_path / "p", "1"),
                                 "--bot", "builtin:greedy", *SHORT])
    assert result.exit_code == 0, result.output
    shown = [x for x in result.stderr.splitlines() if "crashed" in x]
    assert len(shown) == 1 and "game-0001 seat 0 pidbot" in shown[0], result.stderr
    assert "crashes" in shown[0].split("ends:")[1]  # the bot's last stderr line
    found = re.search(r"its stderr \((.+?)\) ends:", shown[0])
    assert found is not None, shown[0]
    log = Path(found.group(1))
    assert log.name == "seat0-pidbot.stderr" and "crashes" in log.read_text()
    shutil.rmtree(log.parent.parent)  # the temporary folder, kept for the user to read


def test_a_clean_match_without_replay_leaves_no_log_folder(tmp_path: Path,
                                                           monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tempfile.tempdir = None  # read TMPDIR again
    try:
        result = runner.invoke(app, ["match", "phase10", "--bot", bot(tmp_path / "p"),
                                     "--bot", "builtin:greedy", *SHORT])
    finally:
        tempfile.tempdir = None
    assert result.exit_code == 0, result.output
    assert list(tmp_path.glob("meldref-logs-*")) == []
