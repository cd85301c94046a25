"""One output flag, JSON where a result is printed, one wording for a value out of range
(issue 47): `--out/-o` on every command that writes (the old `--replay` and `--output` still
read, shown nowhere), `--json` on `replay verify`, `show`, `html` and `export`, `FLAG = VALUE:
what it should be` for every range error, a one-bot tournament told what works, and a match
that will not overwrite another game's replay unless `--force`."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.replay.files import load_replay

runner = CliRunner()
SHORT = ["--rules", "phases-to-win=1"]


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("g") / "g.jsonl"
    code, _, stderr = run("match", "--seed", "1", *SHORT, "-o", str(path))
    assert code == 0, stderr
    return path


@pytest.mark.parametrize("flag", ["--out", "-o", "--replay", "--out=", "--replay="])
def test_match_writes_its_replay_with_out_and_its_old_name(tmp_path: Path, flag: str) -> None:
    path = tmp_path / "m.jsonl"
    given = [f"{flag}{path}"] if flag.endswith("=") else [flag, str(path)]
    code, _, stderr = run("match", "--seed", "3", *SHORT, *given)
    assert code == 0, stderr
    assert load_replay(path).header["seed"] == 3


@pytest.mark.parametrize("old", ["--output", "--out", "-o"])
def test_replay_commands_write_with_out_and_the_old_output(game: Path, tmp_path: Path,
                                                           old: str) -> None:
    code, _, stderr = run("replay", "export", str(game), old, str(tmp_path / "t.csv"),
                          "--format", "csv")
    assert code == 0 and (tmp_path / "t.csv").exists(), stderr
    code, _, stderr = run("replay", "html", str(game), old, str(tmp_path / "p.html"))
    assert code == 0 and (tmp_path / "p.html").exists(), stderr
    code, _, stderr = run("replay", "position", str(game), "--at", "3", old,
                          str(tmp_path / "p.toml"))
    assert code == 0 and (tmp_path / "p.toml").exists(), stderr


def test_a_tournament_takes_out_and_both_old_names(tmp_path: Path) -> None:
    for k, flag in enumerate(["--out", "--output", "--replay"]):
        code, _, stderr = run("tournament", "--bot", "builtin:greedy", "--bot",
                              "builtin:random", "--games", "1", *SHORT, "--no-progress",
                              flag, str(tmp_path / str(k)))
        assert code == 0 and (tmp_path / str(k) / "results.jsonl").exists(), stderr


@pytest.mark.parametrize("command", [["match"], ["play"], ["tournament"], ["replay", "resume"],
                                     ["replay", "html"], ["replay", "position"],
                                     ["replay", "export"]])
def test_help_shows_out_and_never_the_old_names(command: list[str]) -> None:
    code, stdout, _ = run(*command, "--help")
    assert code == 0 and "--out" in stdout, stdout
    assert "--replay " not in stdout and "--output" not in stdout, stdout


def test_a_mistyped_output_flag_is_pointed_at_out() -> None:
    """Issue 47: `--out` on match was unknown and click pointed at `--bot`."""
    code, _, stderr = run("match", "--outp", "x")
    assert code == 2 and "--out" in stderr.split("Possible options:")[1], stderr


def test_replay_verify_prints_json(game: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    code, stdout, _ = run("replay", "verify", str(game), str(bad), "--json")
    data = json.loads(stdout)
    assert code == 1 and data["verified"] == 1
    good, broken = data["files"]
    assert good["ok"] and good["actions"] > 0 and good["winners"]
    assert not broken["ok"] and "line 1" in broken["problem"]


def test_replay_show_prints_json(game: Path) -> None:
    code, stdout, _ = run("replay", "show", str(game), "--json")
    data = json.loads(stdout)
    assert code == 0 and data["problem"] is None and len(data["lines"]) > 10
    assert data["lines"][0].startswith("phase10")


def test_replay_html_and_export_print_json(game: Path, tmp_path: Path) -> None:
    code, stdout, _ = run("replay", "html", str(game), "-o", str(tmp_path / "p.html"), "--json")
    assert code == 0 and json.loads(stdout)["pages"] == [str(tmp_path / "p.html")]
    code, stdout, _ = run("replay", "export", str(game), "-o", str(tmp_path / "e.csv"),
                          "--format", "csv", "--json")
    assert code == 0 and json.loads(stdout)["rows"] > 0


def test_the_sprt_plan_prints_json() -> None:
    code, stdout, _ = run("tournament", "--bot", "builtin:greedy", "--bot", "builtin:random",
                          "--sprt", "0,10", "--plan", "--json")
    plans = json.loads(stdout)["plan"]
    assert code == 0 and [p["true_elo"] for p in plans] == [0, 5, 10]
    assert plans[0]["p_h1"] < 0.1 < 0.9 < plans[2]["p_h1"]


@pytest.mark.parametrize("args", [
    ["match", "--games", "-1"], ["match", "--games=-5"], ["match", "--move-time=0.0"],
    ["match", "--players", "0"],
    ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "-1"],
    ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--games=-5"],
    ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--move-time=0.0"],
    ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--stop-after", "0"],
])
def test_a_value_out_of_range_is_worded_one_way(args: list[str], tmp_path: Path) -> None:
    """Issue 47: `--games -1: from 1 to 1,000,000`, `--games = -5: at least 1`,
    `--move-time = 0.0: positive` -- now all `--FLAG = VALUE: what it should be`."""
    code, _, stderr = run(*args, *(["-o", str(tmp_path / "t")] if "tournament" in args else []))
    assert code == 2
    assert re.fullmatch(r"error: --[a-z-]+ = -?[\d.]+: (at least \d+|positive)\n", stderr), stderr


def test_one_bot_is_never_told_to_give_a_player_count_the_game_refuses(tmp_path: Path) -> None:
    """Issue 47: `1 bots cannot fill tables of 2 (give more bots or --players 1)`, and
    --players 1 then failed (Phase 10 is for 2..6)."""
    code, _, stderr = run("tournament", "--bot", "builtin:greedy", "-o", str(tmp_path / "t"))
    assert code == 2 and "--players 1" not in stderr, stderr
    assert "1 bot cannot fill tables of 2 (give 1 more --bot)" in " ".join(stderr.split())


def test_three_bots_at_tables_of_four_may_sit_three(tmp_path: Path) -> None:
    bots = [w for b in ("greedy", "random", "greedy") for w in ("--bot", f"builtin:{b}")]
    code, _, stderr = run("tournament", *bots, "--players", "4", "-o", str(tmp_path / "t"))
    hint = re.search(r"--players (\d+)\)", stderr)
    assert code == 2 and hint is not None, stderr
    code, _, stderr = run("tournament", *bots, "--players", hint[1], "--games", "1", *SHORT,
                          "--no-progress", "-o", str(tmp_path / "t"))
    assert code == 0, stderr  # the hint works


def test_match_keeps_a_replay_of_another_game_unless_forced(tmp_path: Path) -> None:
    """Issue 47: `match --replay` overwrote an existing replay of another game silently."""
    path = tmp_path / "g.jsonl"
    assert run("match", "--seed", "1", *SHORT, "-o", str(path))[0] == 0
    assert run("match", "--seed", "1", *SHORT, "-o", str(path))[0] == 0  # the same game again
    code, _, stderr = run("match", "--seed", "2", *SHORT, "-o", str(path))
    assert code == 2 and "another game" in stderr and "--force" in stderr, stderr
    assert load_replay(path).header["seed"] == 1  # untouched
    code, _, stderr = run("match", "--seed", "2", *SHORT, "-o", str(path), "--force")
    assert code == 0 and load_replay(path).header["seed"] == 2, stderr
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    code, _, stderr = run("match", "--seed", "2", *SHORT, "-o", str(notes))
    assert code == 2 and notes.read_text() == "mine\n", stderr


def test_match_keeps_a_folder_of_another_match_unless_forced(tmp_path: Path) -> None:
    folder = tmp_path / "m"
    assert run("match", "--seed", "1", "--games", "2", *SHORT, "-o", str(folder))[0] == 0
    code, _, stderr = run("match", "--seed", "5", "--games", "2", *SHORT, "-o", str(folder))
    assert code == 2 and "game-0001.jsonl holds the replay of another game" in stderr, stderr


def test_the_virtual_environment_the_readme_makes_is_ignored() -> None:
    done = subprocess.run(["git", "check-ignore", "-q", ".venv/bin/python"], cwd=ROOT,
                          check=False)
    assert done.returncode == 0
