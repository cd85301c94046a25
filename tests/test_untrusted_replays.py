"""A replay (or position, or configuration) received from someone else is data (issue 20):
nothing in it becomes a process unless the user names it, every command gives the same exit
code for the same kind of bad file, names from it cannot drive the terminal, and reading it
takes bounded memory whatever its size."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import ROOT
from test_untrusted_files import chained
from typer.testing import CliRunner

from meldref.cli import app

runner = CliRunner()
RANDOM_BOT = f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'}"


def match_replay(path: Path, *bots: str, players: int = 2) -> list[dict[str, Any]]:
    bot_args = [a for b in bots for a in ("--bot", b)]
    result = runner.invoke(app, ["match", "phase10", "--players", str(players), "--seed", "3",
                                 "--rules", "phases-to-win=1", *bot_args, "--replay",
                                 str(path)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def program_game(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return match_replay(tmp_path_factory.mktemp("p") / "p.jsonl", RANDOM_BOT, "builtin:greedy")


# ----------------------------------------------------------------------------------------------
# Nothing from a file runs


def _trap(records: list[dict[str, Any]], marker: Path) -> list[dict[str, Any]]:
    """The replay with seat 0's recorded command one that creates `marker`, then plays."""
    records = json.loads(json.dumps(records))
    records[0]["seats"][0]["spec"] = (f"sh -c 'touch {marker}; exec {RANDOM_BOT}'")
    return records


def test_resume_never_runs_the_commands_of_the_replays_header(
        program_game: list[dict[str, Any]], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "handed-over.jsonl"
    path.write_bytes(chained(_trap(program_game, marker)))
    result = runner.invoke(app, ["replay", "resume", str(path), "--at", "5", "--replay",
                                 str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2, result.output
    assert "--trust-replay-bots" in result.stderr and "seat 0" in result.stderr
    assert not marker.exists() and not (tmp_path / "r.jsonl").exists()
    # The user names the bots: they play, the header's command does not run.
    named = runner.invoke(app, ["replay", "resume", str(path), "--at", "5", "--bot",
                                RANDOM_BOT, "--bot", "builtin:greedy", "--replay",
                                str(tmp_path / "r.jsonl")])
    assert named.exit_code == 0, named.output
    assert not marker.exists()


def test_trust_replay_bots_prints_the_commands_then_runs_them(
        program_game: list[dict[str, Any]], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "mine.jsonl"
    path.write_bytes(chained(_trap(program_game, marker)))
    result = runner.invoke(app, ["replay", "resume", str(path), "--at", "5",
                                 "--trust-replay-bots", "--replay", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 0, result.output
    assert f"running the replay's command for seat 0: sh -c 'touch {marker}" in " ".join(
        result.stderr.split())
    assert marker.exists()  # the trap is real: it is the flag that kept it from running


# ----------------------------------------------------------------------------------------------
# One exit code per kind of bad input, from every command


def _commands(tmp_path: Path) -> list[list[str]]:
    # position and resume play the game up to --at: past the forged action below.
    return [["verify"], ["show"], ["stats"], ["stats", "--verify"], ["position", "--at", "10"],
            ["html", "-o", str(tmp_path / "page.html")],
            ["resume", "--at", "10", "--replay", str(tmp_path / "resumed.jsonl")]]


def _special_files(tmp_path: Path) -> dict[str, Path]:
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    link = tmp_path / "zero.jsonl"
    link.symlink_to("/dev/zero")
    return {"a FIFO": fifo, "/dev/zero": Path("/dev/zero"), "/dev/null": Path("/dev/null"),
            "a link to /dev/zero": link, "a missing file": tmp_path / "none.jsonl",
            "a folder": tmp_path}


CODES_SCRIPT = """
import json, sys
from typer.testing import CliRunner
from meldref.cli import app
codes = [CliRunner().invoke(app, args).exit_code for args in json.loads(sys.argv[1])]
print(json.dumps(codes))
"""


def test_a_path_that_is_not_a_replay_file_exits_2_from_every_command(tmp_path: Path) -> None:
    folder = tmp_path / "o"
    folder.mkdir()
    runs = [["replay", command[0], str(path), *command[1:]]
            for what, path in _special_files(tmp_path).items() for command in _commands(folder)
            # a folder of replays is what these take
            if not (what == "a folder" and command[0] in ("verify", "stats", "html"))]
    # In a subprocess: a FIFO opened for reading would hang the test, not fail it.
    done = subprocess.run([sys.executable, "-c", CODES_SCRIPT, json.dumps(runs)],
                          capture_output=True, text=True, timeout=300, check=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    codes = json.loads(done.stdout)
    assert {" ".join(run[1:3]): code for run, code in zip(runs, codes, strict=True)
            if code != 2} == {}
    assert "Traceback" not in done.stderr


FORGERIES: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "a result with one place": lambda r: r[-1]["outcome"].__setitem__("places", [1]),
    "a winner seat 9": lambda r: r[-1]["outcome"].__setitem__("winners", [9]),
    "a header seat numbered 7": lambda r: r[0]["seats"][0].__setitem__("seat", 7),
    "an action that is not one": lambda r: r[5].__setitem__("action", "fly away"),
    "a changed byte": lambda r: None,  # the sum chain left wrong: see below
}
PLAY_FORGERIES = {"an action that is not one"}  # found only by playing the game again


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_damaged_replay_exits_1_from_every_command(tmp_path: Path, forgery: str) -> None:
    records = match_replay(tmp_path / "g.jsonl", "builtin:greedy", "builtin:random")
    FORGERIES[forgery](records)
    path = tmp_path / "bad.jsonl"
    data = chained(records)
    if forgery == "a changed byte":
        data = data.replace(b'"seed":3', b'"seed":4', 1)
    path.write_bytes(data)
    for command in _commands(tmp_path):
        if command == ["stats"] and forgery in PLAY_FORGERIES:
            continue  # stats believes the file's claims unless asked to --verify them
        result = runner.invoke(app, ["replay", command[0], str(path), *command[1:]])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            command, repr(result.exception))
        assert result.exit_code == 1, (forgery, command, result.output[-400:])


def test_stats_reports_a_forged_result_and_counts_the_rest(tmp_path: Path) -> None:
    good = match_replay(tmp_path / "good.jsonl", "builtin:greedy", "builtin:random")
    FORGERIES["a result with one place"](good)  # was: IndexError, the folder not counted
    (tmp_path / "forged.jsonl").write_bytes(chained(good))
    result = runner.invoke(app, ["replay", "stats", "--json", str(tmp_path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception)
    assert result.exit_code == 1 and json.loads(result.stdout)["finished"] == 1
    assert "forged.jsonl: line" in result.stderr


# ----------------------------------------------------------------------------------------------
# Names from a file cannot drive the terminal

EVIL = "evil\x1b[2J\x1b]0;pwned\x07\r\u202e"


def test_names_from_a_replay_are_shown_with_control_characters_escaped(tmp_path: Path) -> None:
    records = match_replay(tmp_path / "g.jsonl", "builtin:greedy", "builtin:random")
    for seat in records[0]["seats"]:
        seat["name"] = EVIL
    path = tmp_path / "named.jsonl"
    path.write_bytes(chained(records))
    for command in (["verify"], ["show"], ["stats"], ["stats", "--verify"]):
        result = runner.invoke(app, ["replay", command[0], str(path), *command[1:]])
        assert result.exit_code == 0, (command, result.output)
        assert "\x1b" not in result.output and "\x07" not in result.output, command
        assert "\u202e" not in result.output and "\r" not in result.output, command
        assert "evil\\x1b[2J" in result.output, (command, result.output)


# ----------------------------------------------------------------------------------------------
# Bounded memory: a replay is read one line at a time

# The peak from /proc (VmHWM, this process's memory since its exec): getrusage's ru_maxrss
# keeps the high-water mark of the process before the exec, here the test's own.
RSS_SCRIPT = """
import sys
from meldref.replay.audit import verify
done = verify(sys.argv[1])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(done.actions, peak.split()[1])
"""


def padded(records: list[dict[str, Any]], megabytes: int) -> list[dict[str, Any]]:
    """The game with each action carrying an extra key (as a later 1.x writer may add; a
    reader skips it) of many small objects: what makes a file expensive to hold whole."""
    actions = sum(1 for r in records if r["type"] == "action")
    note = [{"k": i} for i in range(megabytes * 1_000_000 // actions // 9)]  # 9 bytes each
    return [{**r, "note": note} if r["type"] == "action" else r for r in records]


def long_game(path: Path, game: str, players: int) -> list[dict[str, Any]]:
    """A whole game between random bots: Phase 10 at 6 seats is 4,689 actions (seed 3), Five
    Crowns at 14 seats 3,731. (Padded to 42 MB, its lines hold 9 KB each: a line of 540 KB
    of a 78-action game's would hold more JSON values than a replay line may.)"""
    result = runner.invoke(app, ["match", game, "--players", str(players), "--seed", "3",
                                 *["--bot", "builtin:random"] * players, "--replay", str(path)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in path.read_text().splitlines()]


def _verify_rss(path: Path) -> tuple[int, int]:
    done = subprocess.run([sys.executable, "-c", RSS_SCRIPT, str(path)], capture_output=True,
                          text=True, timeout=900, check=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    actions, rss_kb = done.stdout.split()
    return int(actions), int(rss_kb)


def _big_replay_rss(tmp_path: Path, megabytes: int) -> tuple[int, int]:
    records = long_game(tmp_path / "g.jsonl", "phase10", 6)
    big = tmp_path / "big.jsonl"
    big.write_bytes(chained(padded(records, megabytes)))
    assert big.stat().st_size > megabytes * 1_000_000 * 0.9
    actions, rss_kb = _verify_rss(big)
    assert actions == sum(1 for r in records if r["type"] == "action")
    return big.stat().st_size, rss_kb


def test_verifying_a_big_replay_takes_bounded_memory(tmp_path: Path) -> None:
    size, rss_kb = _big_replay_rss(tmp_path, 10)
    assert rss_kb < 100_000, (size, rss_kb)  # was: every record kept (about 25 bytes a byte)


@pytest.mark.slow
def test_verifying_a_42_mb_replay_stays_under_100_mb(tmp_path: Path) -> None:
    size, rss_kb = _big_replay_rss(tmp_path, 42)
    assert size > 42_000_000 and rss_kb < 100_000, (size, rss_kb)


# ----------------------------------------------------------------------------------------------
# Paths and nesting from configurations and positions

CONFIG = ('game = "phase10"\nplayers = 2\ngames = 1\n[[bot]]\ncmd = "builtin:greedy"\n'
          '[[bot]]\ncmd = "builtin:random"\n')


@pytest.mark.parametrize("key", ["out", "bot-folder"])
@pytest.mark.parametrize(("what", "value"), [
    ("a NUL byte", "x\\u0000y"), ("a 3,000-level path", "/".join(["a"] * 3000))],
    ids=["nul", "3000-levels"])
def test_a_path_the_system_cannot_take_in_a_configuration_exits_2(
        tmp_path: Path, key: str, what: str, value: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(f'{key} = "{tmp_path}/{value}"\n' + CONFIG)
    result = runner.invoke(app, ["tournament", str(path), "--no-progress"])
    assert result.exit_code == 2, (what, result.output[-300:])  # was: a traceback, exit 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert key in result.stderr and len(result.stderr) < 500, result.stderr


def test_a_position_file_nested_3000_deep_exits_2(tmp_path: Path) -> None:
    replay = tmp_path / "g.jsonl"
    match_replay(replay, "builtin:greedy", "builtin:random")
    written = runner.invoke(app, ["replay", "position", str(replay), "--at", "3"])
    path = tmp_path / "deep.toml"
    path.write_text(written.stdout + "deep = " + "[" * 3000 + "]" * 3000 + "\n")
    result = runner.invoke(app, ["match", "--position", str(path), "--players", "2"])
    assert result.exit_code == 2, result.output[-300:]  # was: RecursionError, exit 1
    assert "nested too deeply" in result.stderr
