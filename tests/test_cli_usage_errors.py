"""Exit code 2 before any game for what cannot run: an output folder that cannot be written,
rules the player count rules out, a seat or hand a replay does not have, no replays to read;
and the words for a bot path that is a folder and a file that is not a replay."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.engine.game import RuleOptionError, find_game
from meldref.protocol.command import BotCommand, why_not_started
from meldref.settings import parse_rules

runner = CliRunner()
TWO_BOTS = ["--bot", "builtin:greedy", "--bot", "builtin:random", "--players", "2",
            "--games", "1", "--no-progress", "--rules", "phases-to-win=1"]
NINE_SEATS = ["fivecrowns", "--players", "9", "--rules", "party=off"]
PARTY_OFF = "two decks serve at most 7 players, not 9"


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def one_line(text: str) -> str:
    """rich wraps long messages at 120 columns (not a terminal): join the pieces again."""
    return " ".join(text.split())


# ----------------------------------------------------------------------------------------------
# 1. tournament --out


def test_tournament_out_is_a_file(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("mine\n")
    for out in (taken, taken / "inner"):
        code, _, stderr = invoke("tournament", *TWO_BOTS, "--out", str(out))
        assert code == 2, stderr
        assert f"{taken} is not a folder" in one_line(stderr)
        assert "Traceback" not in stderr
    assert taken.read_text() == "mine\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_tournament_out_cannot_be_made() -> None:
    code, _, stderr = invoke("tournament", *TWO_BOTS, "--out", "/proc/meldref-x")
    assert code == 2, stderr
    assert "cannot write /proc/meldref-x: No such file or directory" in one_line(stderr)


# ----------------------------------------------------------------------------------------------
# 2. rules against the player count


def test_check_setup_runs_the_games_own_player_check() -> None:
    info = find_game("fivecrowns")
    with pytest.raises(RuleOptionError, match=PARTY_OFF):
        info.check_setup(parse_rules(info.rules_type, {"party": "off"}), 9)
    info.check_setup(parse_rules(info.rules_type, {"party": "auto"}), 9)
    with pytest.raises(RuleOptionError, match=r"is for 2\.\.14 players, not 15"):
        info.check_setup(info.rules(), 15)
    phase10 = find_game("phase10")  # rules without `for_players`: the player count only
    phase10.check_setup(phase10.rules(), 4)
    with pytest.raises(RuleOptionError):
        phase10.check_setup(phase10.rules(), 9)


def test_match_party_off_with_nine_seats_stops_before_any_game() -> None:
    code, stdout, stderr = invoke("match", *NINE_SEATS)
    assert code == 2, stdout
    assert PARTY_OFF in one_line(stderr) and stdout == ""


def test_tournament_party_off_with_nine_seats_stops_before_any_game(tmp_path: Path) -> None:
    bots = [arg for _ in range(9) for arg in ("--bot", "builtin:greedy")]
    code, _, stderr = invoke("tournament", "--game", "fivecrowns", "--players", "9", "--rules",
                             "party=off", *bots, "--out", str(tmp_path / "t"), "--no-progress")
    assert code == 2
    assert PARTY_OFF in one_line(stderr)
    assert not (tmp_path / "t").exists()


# ----------------------------------------------------------------------------------------------
# 3. replay show --seat / --hand


@pytest.fixture(scope="module")
def fivecrowns_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("show") / "fc.jsonl"
    code, _, stderr = invoke("match", "fivecrowns", "--players", "3", "--seed", "5",
                             "--replay", str(path))
    assert code == 0, stderr
    return path


@pytest.mark.parametrize(("args", "message"), [
    (["--seat", "9"], "--seat 9: the game has seats 0..2"),
    (["--seat", "-1"], "--seat -1: the game has seats 0..2"),
    (["--hand", "99"], "--hand 99: the replay has hands 1..11"),
    (["--hand", "0"], "--hand 0: the replay has hands 1..11"),
])
def test_show_refuses_a_seat_or_hand_the_replay_lacks(fivecrowns_replay: Path, args: list[str],
                                                       message: str) -> None:
    code, stdout, stderr = invoke("replay", "show", str(fivecrowns_replay), *args)
    assert code == 2 and message in stderr and stdout == ""


def test_show_a_seat_and_hand_it_has(fivecrowns_replay: Path) -> None:
    code, stdout, _ = invoke("replay", "show", str(fivecrowns_replay), "--seat", "2",
                             "--hand", "11")
    assert code == 0 and "as seat 2 saw it" in stdout and "round 11" in stdout


# ----------------------------------------------------------------------------------------------
# 4. match --replay


def test_match_replay_under_a_file_stops_before_any_game(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("")
    for games, where in (("1", taken / "r.jsonl"), ("2", taken / "replays")):
        code, stdout, stderr = invoke("match", "--rules", "phases-to-win=1", "--games", games,
                                      "--replay", str(where))
        assert code == 2, stdout
        assert f"{taken} is not a folder" in one_line(stderr) and stdout == ""


def test_several_games_need_a_replay_folder_not_a_file(tmp_path: Path) -> None:
    # Before: --games 2 --replay x.jsonl silently made a folder named x.jsonl.
    code, stdout, stderr = invoke("match", "--rules", "phases-to-win=1", "--games", "2",
                                  "--replay", str(tmp_path / "x.jsonl"))
    assert code == 2 and stdout == ""
    assert "2 games write one replay each into a folder" in one_line(stderr)
    assert not (tmp_path / "x.jsonl").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_match_replay_folder_that_cannot_be_made() -> None:
    code, stdout, stderr = invoke("match", "--rules", "phases-to-win=1",
                                  "--replay", "/proc/meldref-x/r.jsonl")
    assert code == 2 and stdout == ""
    assert "cannot write /proc/meldref-x" in one_line(stderr)


def test_match_replay_folder_is_made_first(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "r.jsonl"
    code, _, stderr = invoke("match", "--rules", "phases-to-win=1", "--replay", str(path))
    assert code == 0, stderr
    assert path.exists() and (path.parent.stat().st_mode & 0o777) == 0o700


# ----------------------------------------------------------------------------------------------
# 5. a bot path that is a folder


def test_a_folder_as_a_bot_is_named_so(tmp_path: Path) -> None:
    folder = tmp_path / "mybot"
    folder.mkdir()
    command = BotCommand((str(folder),))
    assert why_not_started(command, PermissionError(13, "Permission denied")) == (
        f"{folder} is a directory, not a program")
    relative = BotCommand(("./mybot",), cwd=str(tmp_path))
    assert "is a directory" in why_not_started(relative, PermissionError(13, "denied"))
    code, _, stderr = invoke("match", "--bot", str(folder), "--bot", "builtin:greedy")
    assert code == 2 and "is a directory, not a program" in one_line(stderr)


# ----------------------------------------------------------------------------------------------
# 6. files that are not replays, folders with none


def test_verify_names_a_file_that_is_not_a_replay(tmp_path: Path) -> None:
    other = tmp_path / "data.json"
    other.write_text(json.dumps({"type": "note", "a": 1}) + "\n")
    plain = tmp_path / "notes.txt"
    plain.write_text("hello\nworld\n")
    code, _, stderr = invoke("replay", "verify", str(other), str(plain))
    assert code == 1
    assert one_line(stderr).count("line 1: not a meldref replay (no header)") == 2
    assert "altered" not in stderr


def test_a_changed_header_is_still_altered(fivecrowns_replay: Path, tmp_path: Path) -> None:
    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(fivecrowns_replay.read_bytes().replace(b'"seed":5', b'"seed":6', 1))
    code, _, stderr = invoke("replay", "verify", str(changed))
    assert code == 1 and "line 1: altered" in one_line(stderr)


@pytest.mark.parametrize("command", ["verify", "stats"])
def test_a_folder_without_replays_is_a_usage_error(tmp_path: Path, command: str) -> None:
    (tmp_path / "notes.txt").write_text("no replays here\n")
    code, stdout, stderr = invoke("replay", command, str(tmp_path))
    assert code == 2
    assert "no replay files found" in stderr and "None" not in stdout


def test_stats_over_unreadable_files_shows_no_none(tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    code, stdout, stderr = invoke("replay", "stats", str(junk))
    assert code == 1 and "unreadable" in stderr
    assert "None" not in stdout and "(mean -)" in stdout
