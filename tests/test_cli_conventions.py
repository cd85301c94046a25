"""Command-line conventions: `python -m meldref`, `--version`, completion, help that shows
defaults and rule keys, one exit code per kind of problem, and no Python values in the text."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pexpect
import pytest
from support import PYTHON, sleeping, wait_for
from typer.testing import CliRunner

from meldref import __version__
from meldref.cli import app

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "g.jsonl"
    code, _, stderr = invoke("match", "--seed", "3", "--players", "2", "--rules",
                             "phases-to-win=1", "--replay", str(path))
    assert code == 0, stderr
    return path


def test_python_dash_m_meldref_and_version() -> None:
    done = subprocess.run([PYTHON, "-m", "meldref", "--version"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.startswith(f"meldref {__version__} ")
    code, stdout, _ = invoke("--version")
    assert code == 0 and "protocol 1" in stdout


def test_completion_is_on() -> None:
    code, stdout, _ = invoke("--help")
    assert code == 0 and "--install-completion" in stdout and "--show-completion" in stdout


def test_help_shows_the_clock_defaults_and_the_rule_keys() -> None:
    result = runner.invoke(app, ["match", "--help"], env={"COLUMNS": "400"})
    code, text = result.exit_code, one_line(result.stdout)
    assert code == 0
    assert "Seconds per decision (default 1)" in text
    assert "(default 10)" in text  # startup time
    assert "skip-victim" in text and "party" in text and "phases-to-win" in text


@pytest.mark.parametrize("command", [["show"], ["resume", "--at", "1"], ["verify"], ["stats"]])
def test_a_folder_or_missing_path_is_a_usage_error_in_every_replay_command(
        command: list[str], tmp_path: Path) -> None:
    name, *rest = command
    (tmp_path / "empty").mkdir()
    for where, words in ((tmp_path / "nothing.jsonl", "no such file"),
                         (tmp_path / "empty", "is a folder" if name in ("show", "resume")
                          else "no replay files found")):
        code, stdout, stderr = invoke("replay", name, str(where), *rest)
        assert code == 2, (command, where, stdout, stderr)
        assert words in one_line(stderr) and "Errno" not in stderr and stdout == ""


@pytest.mark.parametrize("command", [["show"], ["resume", "--at", "1"], ["verify"], ["stats"]])
def test_a_fifo_is_refused_without_waiting_for_a_writer(command: list[str],
                                                        tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    name, *rest = command
    done = subprocess.run([PYTHON, "-m", "meldref", "replay", name, str(fifo), *rest],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "not a regular file" in done.stderr


def test_game_names_and_texts_hold_no_python_values(replay: Path) -> None:
    code, stdout, _ = invoke("replay", "verify", str(replay))
    assert code == 0 and "winner seat " in stdout and "[" not in stdout
    code, stdout, _ = invoke("replay", "stats", str(replay))
    assert code == 0 and "wins by seat: seat " in one_line(stdout) and "{" not in stdout
    code, _, stderr = invoke("bot", "check", "python3 x.py", "--game", "chess")
    assert code == 2 and "unknown game 'chess'; games: phase10" in one_line(stderr)
    assert '"' not in stderr


def test_solitaire_telling_says_when_the_deck_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    code, _, stderr = invoke("match", "solitaire", "--seed", "4", "--replay", str(path))
    assert code == 0, stderr
    code, stdout, _ = invoke("replay", "show", str(path))
    assert code == 0 and "next card None" not in stdout
    assert "the deck is empty" in stdout  # seed 4 empties the deck (was: "or" anything)


def test_ctrl_c_in_play_exits_130() -> None:
    # SIGINT as a person's shell leaves it: pytest started in the background by a script (as
    # `cmd &` without job control, or nohup) ignores SIGINT, the child would inherit that, and
    # a Python started with SIGINT ignored never raises KeyboardInterrupt.
    child = pexpect.spawn(PYTHON, ["-m", "meldref", "play", "phase10", "--seed", "2",
                                   "--players", "2"],
                          timeout=30, encoding="utf-8", dimensions=(50, 160),
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    child.expect(r"draw> ")
    # Interrupt once it waits in its read: a SIGINT that came between the prompt and the read
    # would be seen by Python only when the read returns, that is never.
    assert wait_for(lambda: sleeping(child.pid), 30.0)
    child.sendintr()
    child.expect("interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
