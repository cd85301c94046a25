"""`--logs DIR` on a tournament, as on match and bot check (issue 47: the tournament said
`--keep-logs` for the same idea): every bot's stderr log kept in DIR, game by game. The old
`--keep-logs` (released in 0.2.0) still works, with a warning naming `--logs`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app

PID_BOT = ROOT / "tests" / "bots" / "pid_bot.py"  # writes to stderr in every game
runner = CliRunner()


def tournament(tmp_path: Path, *extra: str) -> tuple[int, str, Path]:
    out = tmp_path / "t"
    bot = f"{sys.executable} {PID_BOT} {tmp_path / 'pids'}"
    result = runner.invoke(app, ["tournament", "phase10", "--bot", bot, "--bot",
                                 "builtin:greedy", "--games", "2", "--seed", "3", "--rules",
                                 "phases-to-win=1", "--out", str(out), "--no-progress", *extra])
    return result.exit_code, result.output, out


def logs_named(out: Path) -> list[str]:
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return [log for line in lines for log in line["logs"] if log]


def test_logs_dir_keeps_every_games_log_there(tmp_path: Path) -> None:
    code, output, out = tournament(tmp_path, "--logs", str(tmp_path / "logs"))
    assert code == 0, output
    kept = sorted((tmp_path / "logs").glob("*/seat*-pidbot.stderr"))
    assert len(kept) == 2 and all("pid " in log.read_text() for log in kept)  # both games
    assert sorted(logs_named(out)) == [str(log) for log in kept]
    assert not (out / "logs").exists()


def test_keep_logs_still_works_and_names_logs(tmp_path: Path) -> None:
    code, output, out = tournament(tmp_path, "--keep-logs")
    assert code == 0, output
    assert "--keep-logs is deprecated: --logs DIR" in output
    assert len(list(out.glob("logs/*/seat*-pidbot.stderr"))) == 2
    assert sorted(logs_named(out)) == sorted(
        str(p.relative_to(out)) for p in out.glob("logs/*/*.stderr"))


def test_logs_in_the_output_folder_is_what_keep_logs_did(tmp_path: Path) -> None:
    code, output, out = tournament(tmp_path, "--logs", str(tmp_path / "t" / "logs"))
    assert code == 0, output
    assert len(logs_named(out)) == 2 and all(log.startswith("logs/") for log in logs_named(out))


def test_logs_elsewhere_is_refused_on_a_cluster_and_with_keep_logs(tmp_path: Path) -> None:
    code, output, _ = tournament(tmp_path, "--logs", str(tmp_path / "x"), "--cluster",
                                 "local:1")
    assert code == 2 and "on a cluster the logs come back to" in output, output
    code, output, _ = tournament(tmp_path, "--logs", str(tmp_path / "x"), "--keep-logs")
    assert code == 2 and "give --logs DIR alone" in output, output


def test_logs_that_cannot_be_written_is_refused_before_a_game(tmp_path: Path) -> None:
    """A --logs that is a file was taken, and every game then ended in the referee's error
    (`Not a directory`), exit 1, the output folder full of failed games: refused up front, as
    `match --logs` refuses it."""
    (tmp_path / "afile").write_text("x")
    code, output, out = tournament(tmp_path, "--logs", str(tmp_path / "afile"))
    assert code == 2 and "--logs" in output and "is not a folder" in output, output
    assert not (out / "results.jsonl").exists()
