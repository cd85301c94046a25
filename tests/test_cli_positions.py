"""Position files on the command line: `match --position`, `replay position`, `bot check
--position` and `bot test` (spec/POSITION.md, docs/positions.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from docblocks import blocks
from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.engine.game import find_game
from meldref.engine.position import read_position
from meldref.replay.audit import verify
from meldref.replay.files import ReplayError, load_replay, simulate
from meldref.replay.positions import PositionFileError, load_position

RANDOM_BOT = f"{sys.executable} {ROOT / 'bots' / 'random_bot.py'} --seed 4"
runner = CliRunner()

POSITION = """\
game = "phase10"
seed = 7
hand_number = 3
dealer = 1
to_move = 0
decision = "draw"
discard_pile = "G9"
draw_pile = "R7 shuffled"     # R7 on top, the rest shuffled from the seed

[rules]
phases-to-win = 4

[[seat]]
hand = "R7 B7 W Y3 G3 B3 R10 G11 Y12 S"
score = 40
completed = [1, 2]

[[seat]]
hand = "R1 R2 R3 R4 B5 B6 G9 Y9 B12 S"
score = 25
completed = [1, 2]
"""


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def position(tmp_path: Path) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(POSITION)
    return path


def test_a_match_starts_from_the_position_and_its_replay_verifies(position: Path,
                                                                   tmp_path: Path) -> None:
    code, out, _ = run("match", "--position", str(position), "--games", "2", "--json",
                       "--replay", str(tmp_path / "games"))
    assert code == 0
    data = json.loads(out)
    assert data["game"] == "phase10" and data["seed"] == 7 and data["players"] == 2
    assert data["rules"]["phases-to-win"] == 4 and data["position"]["hand_number"] == 3
    replays = sorted((tmp_path / "games").glob("*.jsonl"))
    assert len(replays) == 2
    for path in replays:
        replay = load_replay(path)
        assert replay.header["position"] == data["position"] and replay.header["seed"] == 7
        start = replay.records[0][1]
        assert start["type"] == "start" and start["events"] == []  # no deal: the position
        assert verify(path).actions > 0
        first = replay.actions()[0][1]
        assert first["seat"] == 0 and first["decision"] == "draw"
    # The first draw from the pile is the R7 the position put on top.
    draws = [r for _, r in load_replay(replays[0]).actions() if r["action"] == "draw pile"]
    if draws and draws[0]["n"] == 0:
        assert draws[0]["events"][0]["card"] == "R7"


def test_rules_and_seed_on_the_command_line_go_over_the_file(position: Path) -> None:
    code, out, _ = run("match", "--position", str(position), "--rules", "phases-to-win=3",
                       "--seed", "11", "--json")
    data = json.loads(out)
    assert code == 0 and data["rules"]["phases-to-win"] == 3 and data["seed"] == 11


@pytest.mark.parametrize(("game", "flags", "message"), [
    (["fivecrowns"], [], "a phase10 position, not fivecrowns"),
    ([], ["--players", "3"], "--players 3: the position has 2 seats"),
    ([], ["-b", "builtin:greedy", "-b", "builtin:greedy", "-b", "builtin:greedy"],
     "the position has 2 seats, not 3 --bot"),
    ([], ["--rules", "phases-to-win=2"], "the game ended when it completed phase 2"),
])
def test_a_match_that_does_not_fit_the_position_stops_before_any_game(
        position: Path, game: list[str], flags: list[str], message: str) -> None:
    code, _, err = run("match", *game, "--position", str(position), *flags)
    assert code == 2 and message in " ".join(err.split()), err


def test_a_bad_position_file_is_refused_naming_file_and_problem(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(POSITION.replace('discard_pile = "G9"', 'discard_pile = "R7"'))
    code, _, err = run("match", "--position", str(path))
    assert code == 2
    assert f"{path}: R7 is in the position 3 times (seat 0 hand, discard_pile, draw_pile); " \
           "the deck has 2" in " ".join(err.split())
    path.write_text("game = phase10")
    code, _, err = run("match", "--position", str(path))
    assert code == 2 and "not TOML" in err


def test_replay_position_writes_every_point_as_a_file_that_reads_back(tmp_path: Path) -> None:
    replay = tmp_path / "g.jsonl"
    assert run("match", "fivecrowns", "--players", "3", "--seed", "4", "--replay",
               str(replay))[0] == 0
    loaded = load_replay(replay)
    total = len(loaded.actions())
    for at in (0, 1, total // 2, total - 1):
        code, out, _ = run("replay", "position", str(replay), "--at", str(at), "--expect")
        assert code == 0
        data = tomllib.loads(out)
        assert data["expect"] == loaded.actions()[at][1]["action"]
        path = tmp_path / f"at{at}.toml"
        path.write_text(out)
        state = load_position(path).position.start()
        assert state.snapshot() == simulate(load_replay(replay), stop_after=at).snapshot()
    code, _, err = run("replay", "position", str(replay), "--at", str(total))
    assert code == 2 and "the game is over there" in err


def test_a_game_resumed_from_a_position_replay_starts_there_too(position: Path,
                                                               tmp_path: Path) -> None:
    replay = tmp_path / "g.jsonl"
    run("match", "--position", str(position), "--replay", str(replay))
    again = tmp_path / "r.jsonl"
    code, _, _ = run("replay", "resume", str(replay), "--at", "5", "--replay", str(again))
    assert code == 0 and load_replay(again).header["position"] == load_replay(
        replay).header["position"]
    assert verify(again).actions > 5


def test_verify_refuses_a_header_whose_position_is_not_one(position: Path,
                                                           tmp_path: Path) -> None:
    from test_untrusted_files import chained

    replay = tmp_path / "g.jsonl"
    run("match", "--position", str(position), "--replay", str(replay))
    records = [json.loads(line) for line in replay.read_text().splitlines()]
    records[0]["position"]["seat"][0]["hand"] += " R7"
    replay.write_bytes(chained(records))
    with pytest.raises(ReplayError, match="line 1: cannot start the game from the header: seat "
                                          "0: it holds 11 cards"):
        verify(replay)


def test_bot_test_reports_each_answer_legal_and_expected(tmp_path: Path,
                                                         position: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "a-draw.toml").write_text(POSITION.replace(
        'decision = "draw"', 'decision = "draw"\nexpect = ["draw pile", "draw discard"]'))
    # Seat 1 has drawn: the only answers are discards; greedy never discards its Wild.
    (folder / "b-wild.toml").write_text(
        POSITION.replace('decision = "draw"', 'decision = "play"\nexpect = "discard W"')
        .replace("to_move = 0", "to_move = 1")
        .replace("R7 B7 W Y3 G3 B3 R10 G11 Y12 S", "R7 B7 Y3 G3 B3 R10 G11 Y12 S R11")
        .replace("R1 R2 R3 R4 B5 B6 G9 Y9 B12 S", "R1 R2 R3 R4 B5 B6 G9 Y9 B12 S W"))
    code, out, _ = run("bot", "test", "builtin:greedy", str(folder), "--json")
    data = json.loads(out)
    assert code == 1 and data["positions"] == 2 and data["passed"] == 1
    first, second = data["answers"]
    assert first["legal"] and first["matched"] is True and first["seat"] == 0
    assert second["legal"] and second["matched"] is False and second["expected"] == [
        "discard W"]
    code, out, _ = run("bot", "test", RANDOM_BOT, str(folder))
    assert "a-draw.toml" in out and "positions passed" in out
    code, _, err = run("bot", "test", "builtin:greedy", str(tmp_path / "none"))
    assert code == 2 and "not a folder" in err


def test_bot_test_names_an_illegal_answer(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "p.toml").write_text(POSITION)
    bot = tmp_path / "bot.py"
    bot.write_text("import sys\nfor line in sys.stdin:\n    w = line.split()\n"
                   "    if w and w[0] == 'meldref': print('ready', flush=True)\n"
                   "    if w and w[0] == 'go': print('action', w[1], 'draw discrad', flush=True)\n"
                   "    if w and w[0] == 'quit': break\n")
    code, out, _ = run("bot", "test", f"{sys.executable} {bot}", str(folder), "--json")
    (answer,) = json.loads(out)["answers"]
    assert code == 1 and not answer["legal"] and answer["action"] == "draw discrad"
    assert "not an action" in answer["problem"]


def test_bot_check_from_a_position(position: Path) -> None:
    code, out, _ = run("bot", "check", RANDOM_BOT, "--position", str(position), "--json")
    report = json.loads(out)
    assert code == 0, report
    names = [c["check"] for c in report["checks"]]
    assert "position p.toml: the answer" in names
    assert "position p.toml: the game played on" in names
    assert not any(n.startswith("phase10: a full game") for n in names)


def test_load_position_reads_rules_from_the_file_and_flags(position: Path) -> None:
    loaded = load_position(position, rules={"deal-rotation": "fixed"})
    assert loaded.rules.phases_to_win == 4 and loaded.rules.deal_rotation == "fixed"
    with pytest.raises(PositionFileError, match=r"\[rules\]: unknown rule option 'colour'"):
        load_position(position, rules={"colour": "red"})
    info = find_game("phase10")
    again = read_position(info, loaded.rules, loaded.position.to_json())
    assert again.start().snapshot() == loaded.position.start().snapshot()


@pytest.mark.parametrize("command", [["replay", "position"], ["bot", "test"]])
def test_the_new_commands_have_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.stdout


def test_the_readme_positions_load_and_the_greedy_bot_finds_their_expected_actions() -> None:
    code, out, _ = run("bot", "test", "builtin:greedy", str(ROOT / "docs" / "positions"),
                       "--json")
    data = json.loads(out)
    assert code == 0 and data["positions"] == data["passed"] >= 2
    page = (ROOT / "docs" / "positions.md").read_text()
    example = (ROOT / "docs" / "positions" / "phase10-lay-phase-3.toml").read_text()
    body = "\n".join(line for line in example.splitlines() if not line.startswith("#"))
    assert body.strip() in page


def shown_output(command: str) -> list[str]:
    """What docs/positions.md shows `command` printing: the ```text block after its ```sh."""
    for block in blocks(ROOT / "docs" / "positions.md"):
        if block.lang == "sh" and block.text == f"{command}\n":
            assert block.output is not None, f"no output shown for {command}"
            return block.output.splitlines()
    raise AssertionError(f"docs/positions.md does not show {command}")


def test_the_positions_page_transcript_is_what_the_commands_print(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    match = ("meldref match --position docs/positions/phase10-lay-phase-3.toml "
             "--out runs/ex.jsonl")
    printed_match = shown_output(match)
    printed_show = shown_output("meldref replay show runs/ex.jsonl | sed -n 5,7p")
    args = match.split()[1:]
    args[2] = str(ROOT / args[2])
    wide = {"COLUMNS": "120"}  # as tests/test_docs.py runs the page
    result = runner.invoke(app, args, env=wide, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    # Everything the page shows, in order; the wall time varies.
    assert [line for line in lines if not line.startswith("wall time")] == [
        line for line in printed_match if not line.startswith("wall time")]
    result = runner.invoke(app, ["replay", "show", "runs/ex.jsonl"], env=wide,
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[4:7] == printed_show


def test_a_date_in_a_position_file_is_refused_naming_the_key(tmp_path: Path) -> None:
    """TOML has dates, which no position holds: `meldref match` names the key and exits 2
    (it ended in a traceback: the check's message could not write a date as JSON)."""
    path = tmp_path / "dated.toml"
    path.write_text(POSITION.replace("seed = 7", "seed = 1979-05-27", 1))
    done = subprocess.run(["meldref", "match", "--position", str(path)], capture_output=True,
                          text=True, env={**os.environ, "MELDREF_PURE": "1"}, check=False)
    assert done.returncode == 2, done.stderr
    assert "seed = 1979-05-27: a date or time, which no position holds" in done.stderr
    assert "Traceback" not in done.stderr
