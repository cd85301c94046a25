"""`meldref match` and the command line's help, options and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import BAD_BOT, PYTHON
from support import RANDOM_BOT as RANDOM_PROGRAM
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.replay.audit import verify
from meldref.replay.files import load_replay

RANDOM_BOT = f"{RANDOM_PROGRAM} --seed 4"
runner = CliRunner()


def match(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["match", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("command", [
    [], ["match"], ["tournament"], ["replay"], ["replay", "show"], ["replay", "verify"],
    ["replay", "stats"], ["replay", "resume"], ["play"], ["bot"], ["bot", "check"],
])
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0
    assert "Usage" in result.stdout


def test_seed_7_json_is_identical_twice_and_names_a_winner() -> None:
    first = match("phase10", "--seed", "7", "--json")
    second = match("phase10", "--seed", "7", "--json")
    assert first[0] == 0 and first[1] == second[1]
    data = json.loads(first[1])
    (game,) = data["games"]
    assert data["players"] == 4 and data["seed"] == 7
    assert game["winners"] and game["status"] == "ok"
    assert len(game["scores"]) == len(game["phases"]) == len(game["faults"]) == 4
    assert game["hands"] >= 1 and game["decisions"] >= game["actions"] > 0
    assert data["rules"]["phases-to-win"] is None  # every rule option, defaults included
    assert "wall" not in first[1]


def test_default_match_runs_and_prints_a_table() -> None:
    code, stdout, _ = match()
    assert code == 0 and "greedy#1" in stdout and "wall time" in stdout


def test_subprocess_bot_and_rotation_over_several_games(tmp_path: Path) -> None:
    code, stdout, _ = match("phase10", "--bot", RANDOM_BOT, "--bot", "builtin:greedy", "--games",
                            "3", "--seed", "11", "--rules", "phases-to-win=2", "--replay",
                            str(tmp_path / "r"), "--json")
    assert code == 0
    data = json.loads(stdout)
    seats = [g["seats"] for g in data["games"]]
    assert seats == [["random_bot", "greedy"], ["greedy", "random_bot"],
                     ["random_bot", "greedy"]]
    assert [g["seed"] for g in data["games"]] == [11, 12, 13]
    assert {t["bot"]: t["games"] for t in data["totals"]} == {"random_bot": 3, "greedy": 3}
    replays = sorted((tmp_path / "r").glob("*.jsonl"))
    assert [p.name for p in replays] == ["game-0001.jsonl", "game-0002.jsonl",
                                         "game-0003.jsonl"]
    for path in replays:
        verify(path)


NAMELESS_BOT = """
import sys
legal = []
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "meldref":
        print("ready", flush=True)
    elif words[0] == "view":
        legal = []
    elif words[0] == "legal":
        legal.append(" ".join(words[1:]))
    elif words[0] == "go":
        print(f"action {words[1]} {legal[0]}", flush=True)
    elif words[0] == "quit":
        break
"""


def test_results_name_bots_by_their_id_name(tmp_path: Path) -> None:
    # The name a program announces (`id name`) is what results show, made unique when two
    # bots announce the same; a program without `id name` is named after its file.
    nameless = tmp_path / "nameless.py"
    nameless.write_text(NAMELESS_BOT)
    twin = f"{RANDOM_BOT} --name twin"
    other = f"{RANDOM_BOT} --seed 5 --name twin"
    code, stdout, _ = match("phase10", "--bot", twin, "--bot", other, "--bot",
                            f"{PYTHON} {nameless}", "--seed", "3", "--rules",
                            "phases-to-win=1", "--json")
    assert code == 0, stdout
    data = json.loads(stdout)
    assert data["bots"] == [
        {"name": "twin#1", "spec": twin, "command": twin},
        {"name": "twin#2", "spec": other, "command": other},
        {"name": "nameless", "spec": f"{PYTHON} {nameless}",
         "command": f"{PYTHON} {nameless}"}]
    assert data["games"][0]["seats"] == ["twin#1", "twin#2", "nameless"]
    code, stdout, _ = match("phase10", "--bot", twin, "--players", "2", "--seed", "3",
                            "--rules", "phases-to-win=1")
    assert code == 0 and "twin#1 twin#2" in stdout


def test_players_sets_the_number_of_default_seats(tmp_path: Path) -> None:
    code, stdout, _ = match("--players", "2", "--seed", "3", "--json", "--replay",
                            str(tmp_path / "one.jsonl"))
    assert code == 0 and json.loads(stdout)["players"] == 2
    assert verify(tmp_path / "one.jsonl").actions > 0
    code, stdout, _ = match("--players", "3", "--bot", "builtin:random", "--seed", "3", "--json")
    assert [b["name"] for b in json.loads(stdout)["bots"]] == ["random#1", "random#2",
                                                               "random#3"]


def test_limits_reach_the_referee(tmp_path: Path) -> None:
    code, _, _ = match("--players", "2", "--seed", "1", "--move-time", "0.5", "--startup-time",
                       "2", "--time-bank", "1.5", "--increment", "0.1", "--max-bank", "4",
                       "--on-failure", "autoplay", "--replay", str(tmp_path / "g.jsonl"))
    assert code == 0
    header = json.loads((tmp_path / "g.jsonl").read_text().splitlines()[0])
    assert header["policy"]["move_time"] == 0.5 and header["policy"]["startup_time"] == 2
    assert (header["policy"]["time_bank"], header["policy"]["increment"],
            header["policy"]["max_bank"], header["policy"]["on_failure"],
            header["policy"]["legal_hints"]) == (1.5, 0.1, 4, "autoplay", True)


def test_no_hints_sends_no_legal_lines(tmp_path: Path) -> None:
    # No `legal` lines: random_bot.py builds its own actions and plays cleanly, while a bot
    # that only copies hints (the nameless one above) has nothing to copy and fails.
    nameless = tmp_path / "nameless.py"
    nameless.write_text(NAMELESS_BOT)
    args = ["solitaire", "--seed", "1", "--replay", str(tmp_path / "s.jsonl"), "--json"]
    code, stdout, _ = match(*args, "--bot", RANDOM_BOT, "--no-hints")
    assert code == 0 and json.loads(stdout)["games"][0]["faults"] == [[]]
    assert load_replay(tmp_path / "s.jsonl").header["policy"]["legal_hints"] is False
    # Another game (another bot): its replay goes elsewhere (--out refuses to overwrite).
    code, stdout, _ = match(*args[:-3], "--replay", str(tmp_path / "n.jsonl"), "--json",
                            "--bot", f"{PYTHON} {nameless}", "--no-hints")
    (faults,) = json.loads(stdout)["games"][0]["faults"]
    assert code == 0 and faults and faults[-1]["fatal"]


@pytest.mark.parametrize(("args", "message"), [
    (["chess"], "unknown game"),
    (["phase10", "--rules", "no-such=1"], "unknown rule option"),
    (["phase10", "--rules", "phases-to-win"], "KEY=VALUE"),
    (["phase10", "--players", "9"], "2..6"),
    (["phase10", "--bot", "builtin:greedy", "--bot", "builtin:x"], "no built-in bot"),
    (["phase10", "--bot", "/no/such/bot", "--bot", "builtin:greedy"], "does not exist"),
    (["phase10", "--players", "3", "--bot", "builtin:greedy", "--bot", "builtin:random"],
     "--players 3"),
    (["phase10", "--games", "0"], "--games = 0: at least 1"),
    (["phase10", "--move-time", "-1"], "positive"),
    (["phase10", "--max-bank", "1", "--time-bank", "2"],
     "--max-bank (1) is below --time-bank (2)"),
    (["phase10", "--max-bank", "1"], "--max-bank (1) is below the default time-bank (5)"),
    (["phase10", "--on-failure", "retry"], "--on-failure = 'retry': one of forfeit, autoplay"),
    (["phase10", "--startup-time", "nan"], "--startup-time = nan: a finite number"),
    (["phase10", "--move-time", "inf"], "--move-time = inf: a finite number"),
    (["phase10", "--move-time", "1e308"], "--move-time = 1e+308: at most"),
    (["phase10", "--time-bank", "nan"], "--time-bank = nan: a finite number"),
    (["phase10", "--players", "0"], "--players = 0: at least 1"),
])
def test_bad_input_exits_2_with_the_reason(args: list[str], message: str) -> None:
    code, stdout, stderr = match(*args)
    assert code == 2
    assert message in " ".join(stderr.split())
    assert stdout == ""


@pytest.mark.parametrize(("game", "players"), [("fivecrowns", 3), ("solitaire", 1)])
def test_other_games_play_record_and_tell(tmp_path: Path, game: str, players: int) -> None:
    code, stdout, _ = match(game, "--seed", "2", "--games", "2", "--replay",
                            str(tmp_path / "r"), "--json")
    assert code == 0
    data = json.loads(stdout)
    assert data["players"] == (4 if game == "fivecrowns" else 1)
    for path in sorted((tmp_path / "r").glob("*.jsonl")):
        verify(path)
        shown = runner.invoke(app, ["replay", "show", str(path), "--seat", "0"])
        assert shown.exit_code == 0 and "result (" in shown.stdout
    if game == "fivecrowns":
        assert all(g["rounds"] == 11 for g in data["games"])
        assert "-- round 11 --" in shown.stdout
    code, stdout, _ = match(game, "--players", str(players), "--bot", RANDOM_BOT, "--seed", "1",
                            "--json")
    assert code == 0 and json.loads(stdout)["games"][0]["status"] == "ok"


def hog_faults(*args: str) -> list[list[dict]]:
    # bad_bot.py hog allocates 512 MiB (BAD_BOT_HOG_MB) at its first decision, then plays on.
    code, stdout, stderr = match("phase10", "--bot", f"{BAD_BOT} hog", "--bot", "builtin:greedy",
                                 "--seed", "5", "--rules", "phases-to-win=1", "--json", *args)
    assert code == 0, stderr
    (game,) = json.loads(stdout)["games"]
    return game["faults"]


def test_memory_cap_crashes_a_bot_that_allocates_more() -> None:
    assert hog_faults() == [[], []]  # uncapped, 512 MiB is fine
    capped = hog_faults("--memory-mb", "256", "--max-processes", "4000",
                        "--file-size-mb", "64")
    assert [[(f["outcome"], f["fatal"]) for f in fs] for fs in capped] == [
        [("crashed", True)], []]
    assert "signal" in capped[0][0]["detail"] or "exit" in capped[0][0]["detail"]


@pytest.mark.parametrize(("flag", "value"), [("--memory-mb", "0"), ("--max-processes", "-3"),
                                             ("--file-size-mb", "0")])
def test_bad_resource_limits_are_usage_errors(flag: str, value: str) -> None:
    code, _, stderr = match("phase10", flag, value)
    assert code == 2 and f"{flag} = {value}: at least 1" in stderr


def test_replay_stats_count_the_faults_a_summary_stands_for(tmp_path: Path) -> None:
    # bad_bot.py twice answers every request twice: one `late` note per decision. The replay
    # keeps 20 and one summary fault with "suppressed": n (spec/REPLAY.md section 3).
    replay = tmp_path / "g.jsonl"
    code, _, _ = match("phase10", "--bot", f"{BAD_BOT} twice", "--bot", "builtin:greedy",
                       "--seed", "5", "--rules", "phases-to-win=2", "--replay", str(replay))
    assert code == 0
    records = [json.loads(line) for line in replay.read_text().splitlines()]
    faults = [r for r in records if r["type"] == "fault"]
    (summary,) = [r for r in faults if "suppressed" in r]
    assert len(faults) == 21 and summary["suppressed"] >= 2 and not summary["fatal"]
    result = runner.invoke(app, ["replay", "stats", str(replay), "--json"])
    bots = {b["bot"]: b for b in json.loads(result.stdout)["bots"]}
    assert bots["bad-twice"]["faults_by_outcome"] == {"late": 20 + summary["suppressed"]}
    assert bots["bad-twice"]["faults"] == 20 + summary["suppressed"]
