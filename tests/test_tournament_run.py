"""Tournaments end to end: subprocess bots, parallel jobs, duplicate deals, interruption and
resume, SPRT, failures and fail-fast configuration errors."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from support import (
    BAD_BOT,
    CLINGY_BOT_PATH,
    PYTHON,
    RANDOM_BOT,
    ROOT,
    command,
    pid_gone,
    pids_with,
    wait_for,
)
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.protocol.seats import BotSpec
from meldref.protocol.sweep import descendants, kill_strays
from meldref.replay.audit import verify
from meldref.tournament.schedule import BotEntry, deal_seed

SHORT = ["--rules", "phases-to-win=2"]
TOURNAMENT = [PYTHON, "-m", "meldref.cli.app", "tournament"]
# Bots that hold (bad_bot.py hold, clingy_bot.py with a file) keep a game in progress until the
# test stops the tournament; a long move time keeps the referee from ending that game first.
HOLD_CLOCK = ["--move-time", "600"]
runner = CliRunner()


def results(folder: Path) -> list[dict]:
    lines = (folder / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["tournament", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def finished_games(folder: Path) -> int:
    """Lines in results.jsonl so far (0 before it exists)."""
    try:
        return (folder / "results.jsonl").read_text().count("\n")
    except FileNotFoundError:
        return 0


def in_game(count_file: Path) -> int:
    """How many games of bad_bot.py hold got a decision (each adds a byte to the file)."""
    return count_file.stat().st_size if count_file.exists() else 0


def holding(count_file: Path, play: int, hold: int | None = None) -> dict[str, str]:
    """The environment that makes `bad_bot.py hold` play `play` games, then hold the next
    (`hold` of them, default all)."""
    env = {**os.environ, "BAD_BOT_COUNT_FILE": str(count_file), "BAD_BOT_PLAY": str(play)}
    return env if hold is None else {**env, "BAD_BOT_HOLD": str(hold)}


def bots_of(token: str, tournament: subprocess.Popen[str] | subprocess.Popen[bytes]
            ) -> list[int]:
    """The bot processes carrying `token` (the tournament's own command line carries it too)."""
    return [pid for pid in pids_with(token) if pid != tournament.pid]


def kill_tournament(proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    """SIGKILL the tournament `proc`; its workers (and their bots) must follow it: they watch
    their parent, so none is left idle or playing a game queued to it."""
    family = descendants(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    try:
        assert wait_for(lambda: all(pid_gone(pid) for pid, _ in family), 10.0), \
            f"processes outlived the killed tournament: {sorted(family)}"
    finally:
        kill_strays(family, 0)  # not for the next tests, whatever this one found


def assert_all_gone(token: str) -> None:
    """Bots of a stopped tournament must go (their worker dies with the tournament)."""
    assert wait_for(lambda: not pids_with(token), 30.0), \
        f"bot processes left behind: {pids_with(token)}"


def test_subprocess_bots_two_jobs_duplicate_deals(tmp_path: Path) -> None:
    out = tmp_path / "t"
    code, stdout = invoke("--bot", f"{RANDOM_BOT} --seed 1 --name r1", "--bot", "builtin:greedy",
                          "--games", "4", "-j", "2", *SHORT, "--out", str(out), "--json",
                          "--no-progress")
    assert code == 0, stdout
    data = json.loads(stdout)
    assert data["games"] == 4 and data["played_now"] == 4 and data["missing"] == 0
    # Results name a program by its `id name` (random_bot.py --name r1 says `id name r1`).
    assert {line["bot"] for line in data["standings"]} == {"r1", "greedy"}
    assert {b["name"]: b["command"] for b in data["bots"]} == {
        "r1": f"{RANDOM_BOT} --seed 1 --name r1", "greedy": None}
    assert data["head_to_head"]["wins"] + data["head_to_head"]["draws"] + \
        data["head_to_head"]["losses"] == 4
    lines = results(out)
    assert sorted(r["game_id"] for r in lines) == sorted(
        ["t00-d0000-s00", "t00-d0000-s01", "t00-d0001-s00", "t00-d0001-s01"])
    for deal in (0, 1):  # the same deal, the bots swapped
        pair = [r for r in lines if r["deal"] == deal]
        assert pair[0]["seed"] == pair[1]["seed"]
        assert pair[0]["bots"] == list(reversed(pair[1]["bots"]))
    for r in lines:
        assert r["status"] == "ok"
        assert verify(out / r["replay"]).actions == r["actions"]
    assert (out / "standings.json").exists() and (out / "tournament.json").exists()
    assert not list((out / "logs").rglob("*.stderr"))  # clean games keep no logs


def test_stop_after_then_resume_plays_exactly_the_missing_games(tmp_path: Path) -> None:
    out = tmp_path / "t"
    args = ["--bot", "builtin:greedy", "--bot", "builtin:random", "--bot", "builtin:greedy",
            "--players", "2", "--games", "2", *SHORT, "--out", str(out), "--json",
            "--no-progress"]
    code, stdout = invoke(*args, "--stop-after", "2")
    first = json.loads(stdout)
    assert code == 0 and first["played_now"] == 2 and first["stopped"] == "stop-after"
    assert first["missing"] == 4
    code, stdout = invoke(*args)
    second = json.loads(stdout)
    assert code == 0 and second["played_now"] == 4 and second["found_done"] == 2
    ids = [r["game_id"] for r in results(out)]
    assert len(ids) == 6 and len(set(ids)) == 6
    code, stdout = invoke(*args)
    assert json.loads(stdout)["played_now"] == 0
    verify_all(out)


def test_stop_after_at_two_jobs_starts_no_game_beyond_k(tmp_path: Path) -> None:
    """Issue 47: `--stop-after 3 -j 2` played 4 or more (a pool of two workers takes four
    games at once, and a stop finished every game in flight). Games beyond K never start."""
    out = tmp_path / "sa"
    done = subprocess.run(
        [*TOURNAMENT, "--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "12",
         "--stop-after", "3", "-j", "2", "--rules", "phases-to-win=1", "--out", str(out),
         "--json", "--no-progress"], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["played_now"] == 3 and data["stopped"] == "stop-after"
    assert len(results(out)) == 3
    assert len(list((out / "replays").glob("*.jsonl"))) == 3  # no fourth game ever started


def test_killed_tournament_resumes_and_leaves_no_process(tmp_path: Path, bot_token: str) -> None:
    # The bots of the first two games play, the next two hold: the tournament is killed with
    # exactly two games done and two cut in progress, however fast the machine runs.
    out, count = tmp_path / "t", tmp_path / "count"
    args = [*TOURNAMENT, "--bot", f"{BAD_BOT} hold {bot_token}", "--bot", "builtin:random",
            "--games", "4", "-j", "2", *SHORT, *HOLD_CLOCK, "--out", str(out), "--json",
            "--no-progress"]
    proc = subprocess.Popen(args, cwd=ROOT, env=holding(count, 2, hold=2),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: finished_games(out) >= 2 and in_game(count) >= 4, 120.0)
        assert bots_of(bot_token, proc), "no game in progress"
    finally:
        kill_tournament(proc)
    assert len(results(out)) == 2
    assert_all_gone(bot_token)
    # The same command without the holding: the bots play every game left.
    finished = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    data = json.loads(finished.stdout)
    assert data["played_now"] == 2 and data["found_done"] == 2
    ids = [r["game_id"] for r in results(out)]
    assert len(ids) == 4 and len(set(ids)) == 4
    assert_all_gone(bot_token)
    verify_all(out)  # games cut by the kill were replayed whole


def test_killed_one_job_tournament_leaves_no_stuck_bot(tmp_path: Path, bot_token: str) -> None:
    # With -j 1 too, games with bot programs run in a worker process that dies with the
    # tournament (kill -9 included) and stops its bots: a bot that never notices the end of
    # its input (tests/cli_bots/clingy_bot.py) must not outlive the tournament. It holds its
    # first decision (and says so in a file), so the kill always finds it in a game.
    holds = tmp_path / "holding"
    bot = command(CLINGY_BOT_PATH, bot_token, str(holds))
    args = [*TOURNAMENT, "--bot", bot, "--bot", "builtin:random", "--games", "1",
            "--no-duplicate", "-j", "1", *SHORT, *HOLD_CLOCK, "--out", str(tmp_path / "t"),
            "--no-progress"]
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: holds.exists() or proc.poll() is not None, 120.0)
        assert proc.poll() is None and bots_of(bot_token, proc), "no game in progress"
    finally:
        kill_tournament(proc)
    assert_all_gone(bot_token)


def test_sprt_stops_a_lopsided_match(tmp_path: Path) -> None:
    out = tmp_path / "t"
    code, stdout = invoke("--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "200",
                          "--sprt", "0,200,0.1,0.1", *SHORT, "--out", str(out), "--json",
                          "--no-progress")
    data = json.loads(stdout)
    assert code == 0 and data["stopped"] == "sprt"
    assert data["sprt"]["verdict"] == "H1" and data["played_now"] < 200
    verify_all(out)


def test_failed_games_are_listed_with_their_logs(tmp_path: Path) -> None:
    out = tmp_path / "t"
    code, stdout = invoke("--bot", f"{BAD_BOT} crash", "--bot", "builtin:greedy", "--games", "2",
                          *SHORT, "--out", str(out), "--no-progress")
    assert code == 0
    failures = (out / "failures.txt").read_text().splitlines()
    assert len(failures) == 2
    game_id, seat, bot, outcome, log, replay = failures[0].split("\t")
    assert game_id.startswith("t00-")
    assert outcome == "crashed" and bot == "bad-crash" and seat in ("seat 0", "seat 1")
    assert (out / log).exists() and (out / replay).exists()
    assert "failures:" in stdout
    for r in results(out):
        verify(out / r["replay"])


def test_standings_table_and_progress_bar(tmp_path: Path) -> None:
    result = runner.invoke(app, ["tournament", "--bot", "builtin:greedy", "--bot",
                                 "builtin:random", "--bot", "builtin:greedy", "--players", "3",
                                 "--games", "3", *SHORT, "--out", str(tmp_path / "t")],
                           env={"COLUMNS": "120"})  # wide: at 80 the heads fold (test_cli_*)
    assert result.exit_code == 0, result.output
    assert "rank held" in result.stdout and "greedy#1" in result.stdout
    assert "6/6" in result.stderr  # the progress bar: 3 games round up to a deal set of 6


def test_config_file_runs(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(f'games = 2\nformat = "gauntlet"\nout = "{tmp_path / "o"}"\n'
                      '[rules]\nphases-to-win = 1\n'
                      '[[bot]]\nname = "champ"\ncmd = "builtin:greedy"\n'
                      '[[bot]]\ncmd = "builtin:random"\n[[bot]]\ncmd = "builtin:greedy"\n'
                      '[limits]\nmove-time = 2\n')
    code, stdout = invoke(str(config), "--json", "--no-progress", "--players", "2")
    data = json.loads(stdout)
    assert code == 0 and data["games"] == 4
    assert all("champ" in r["bots"] for r in results(tmp_path / "o"))
    verify_all(tmp_path / "o")


def test_config_names_id_names_and_limits(tmp_path: Path) -> None:
    # A name given in the configuration wins; otherwise the program's `id name` is shown.
    # [limits] reach every game's referee: max-bank, and legal-hints = false (no `legal`
    # lines: random_bot.py then builds its own actions).
    config = tmp_path / "t.toml"
    config.write_text(f'games = 2\nout = "{tmp_path / "o"}"\n[rules]\nturn-cap = 30\nhand-cap = 2\n'
                      f'[[bot]]\nname = "champ"\ncmd = "{RANDOM_BOT} --name given"\n'
                      f'[[bot]]\ncmd = "{RANDOM_BOT} --seed 2 --name announced"\n'
                      '[limits]\ntime-bank = 2.0\nmax-bank = 3.5\nincrement = 0.25\n'
                      'legal-hints = false\non-failure = "autoplay"\n')
    code, stdout = invoke(str(config), "--json", "--no-progress")
    assert code == 0, stdout
    data = json.loads(stdout)
    assert {line["bot"] for line in data["standings"]} == {"champ", "announced"}
    assert data["standings"][0]["faults"] == data["standings"][1]["faults"] == 0
    lines = results(tmp_path / "o")
    verify_all(tmp_path / "o")
    policy = json.loads((tmp_path / "o" / lines[0]["replay"]).read_text().splitlines()[0])[
        "policy"]
    assert (policy["max_bank"], policy["increment"], policy["legal_hints"],
            policy["on_failure"]) == (3.5, 0.25, False, "autoplay")


def test_a_clash_between_a_flag_and_the_config_names_both(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('bots = ["builtin:greedy", "builtin:random"]\n[limits]\ntime-bank = 3.0\n')
    result = runner.invoke(app, ["tournament", str(config), "--max-bank", "1", "--out",
                                 str(tmp_path / "o"), "--no-progress"])
    assert result.exit_code == 2
    assert "--max-bank (1) is below [limits] time-bank (3)" in " ".join(result.stderr.split())
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("limits", "message"), [
    ("legal-hints = 0", "[limits] legal-hints = 0: true or false"),
    ("max-bank = 1.0", "[limits] max-bank (1) is below the default time-bank (5)"),
    ("max-bank = 1.0\ntime-bank = 3.0", "[limits] max-bank (1) is below [limits] time-bank (3)"),
    ('move-time = "fast"', "[limits] move-time = 'fast': a number"),
    ("move-time = nan", "[limits] move-time = nan: a finite number"),
    ("startup-time = 1e308", "[limits] startup-time = 1e+308: at most"),
    ('on-failure = "retry"', "one of forfeit, autoplay"),
    ("max-bankk = 3", "[limits] max-bankk: unknown; known: cpu-seconds, file-size-mb"),
    ("memory-mb = 0", "[limits] memory-mb = 0: at least 1"),
    ("memory-mb = 100000000000000000000", "[limits] memory-mb = 100000000000000000000: at most"),
    ("max-processes = -1", "at least 1"),
    ('file-size-mb = "big"', "a whole number"),
    ("memory-mb = 256.5", "a whole number"),
    ("file-size-mb = true", "a whole number"),
])
def test_bad_limits_stop_before_any_game(tmp_path: Path, limits: str, message: str) -> None:
    config = tmp_path / "t.toml"
    config.write_text(f'bots = ["builtin:greedy", "builtin:random"]\n[limits]\n{limits}\n')
    result = runner.invoke(app, ["tournament", str(config), "--out", str(tmp_path / "o"),
                                 "--no-progress"])
    assert result.exit_code == 2 and message in " ".join(result.stderr.split())
    assert not (tmp_path / "o" / "results.jsonl").exists()


def verify_all(folder: Path) -> None:
    """Every replay a tournament wrote re-simulates."""
    for line in results(folder):
        verify(folder / line["replay"])


@pytest.mark.parametrize(("args", "message"), [
    (["--bot", "./no/such/bot", "--bot", "builtin:greedy"], "does not exist"),
    (["--bot", "no-such-program-xyz", "--bot", "builtin:greedy"], "not on PATH"),
    (["--bot", "builtin:nope", "--bot", "builtin:greedy"], "no built-in bot"),
    (["--bot", f"{BAD_BOT} exit_at_start", "--bot", "builtin:greedy"], "failed to start"),
    (["--bot", "builtin:greedy", "--bot", "builtin:random", "--rules", "wrap=yes"],
     "unknown rule option"),
    (["--bot", "builtin:greedy", "--bot", "builtin:random", "--rules", "run-wrap=maybe"],
     "true or false"),
    (["/no/such/config.toml"], "cannot read"),
    (["--bot", "builtin:greedy"], "cannot fill"),
])
def test_fail_fast_before_any_game(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "t"
    result = runner.invoke(app, ["tournament", *args, "--out", str(out), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
    assert not (out / "results.jsonl").exists()


def test_another_tournament_in_the_same_folder_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "t"
    base = ["--bot", "builtin:greedy", "--bot", "builtin:random", *SHORT, "--out", str(out),
            "--no-progress"]
    assert invoke(*base, "--games", "2")[0] == 0
    result = runner.invoke(app, ["tournament", *base, "--games", "4"])
    assert result.exit_code == 2 and "another tournament" in result.stderr


def test_flags_game_format_duplicate_seed_limits_logs(tmp_path: Path) -> None:
    out = tmp_path / "t"
    code, stdout = invoke("--game", "fivecrowns", "--format", "gauntlet", "--no-duplicate",
                          "--seed", "40", "--bot", f"{RANDOM_BOT} --seed 3", "--bot",
                          "builtin:greedy", "--bot", "builtin:random", "--players", "2",
                          "--games", "2", "--move-time", "2", "--startup-time", "5",
                          "--rules", "turn-cap=4",  # short rounds: the games are not the point
                          "--keep-logs", "--out", str(out), "--json", "--no-progress")
    assert code == 0
    lines = results(out)
    assert len(lines) == 4 and all(r["game"] == "fivecrowns" for r in lines)
    # Each table deals its own cards, from a hash of the seed, the table's bots and the deal.
    tables = [("greedy", "random_bot"), ("random", "random_bot")]
    assert sorted({r["seed"] for r in lines}) == sorted(
        deal_seed(40, [BotEntry(n, BotSpec("builtin:x")) for n in t], d)
        for t in tables for d in (0, 1))
    assert all("random_bot" in r["bots"] for r in lines)
    header = json.loads((out / lines[0]["replay"]).read_text().splitlines()[0])
    assert header["policy"]["move_time"] == 2 and header["policy"]["startup_time"] == 5
    plan = json.loads((out / "tournament.json").read_text())["plan"]
    assert plan["format"] == "gauntlet" and plan["duplicate"] is False
    assert json.loads(stdout)["games"] == 4
    verify_all(out)


def test_solitaire_tournament_ranks_by_score(tmp_path: Path) -> None:
    code, stdout = invoke("--game", "solitaire", "--bot", "builtin:greedy", "--bot",
                          "builtin:random", "--games", "2", "--out", str(tmp_path / "s"),
                          "--json", "--no-progress")
    data = json.loads(stdout)
    assert code == 0 and data["games"] == 4
    assert {line["bot"]: line["games"] for line in data["standings"]} == {"greedy": 2,
                                                                        "random": 2}
    # Bots that never share a table are compared on the deals both played (no W-D-L and no
    # Elo made up: was "+2 =0 -0, Elo +inf"), and ranked by win rate, then piles closed.
    pair = data["head_to_head"]
    assert pair["deals"] == 2 and "wins" not in pair and "elo" not in pair
    assert data["standings"][0]["bot"] == "greedy"
    verify_all(tmp_path / "s")


def test_sigterm_stops_cleanly_with_130_and_resumes(tmp_path: Path, bot_token: str) -> None:
    # Two games are played, the bot of the third holds: SIGTERM always comes mid-game. (A
    # stopped worker starts no game queued to it: test_a_stopped_worker_starts_no_queued_game.)
    out, count = tmp_path / "t", tmp_path / "count"
    args = [*TOURNAMENT, "--bot", f"{BAD_BOT} hold {bot_token}", "--bot", "builtin:greedy",
            "--games", "4", *SHORT, *HOLD_CLOCK, "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(args, cwd=ROOT, env=holding(count, 2, hold=1),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: finished_games(out) >= 2 and in_game(count) >= 3, 120.0)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 130
    assert "rerun the same command to resume" in " ".join(stderr.split())
    assert_all_gone(bot_token)
    assert len(results(out)) == 2
    finished = subprocess.run([*args, "--json"], cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert json.loads(finished.stdout)["played_now"] == 2
    verify_all(out)


def test_a_stopped_worker_starts_no_queued_game(tmp_path: Path, bot_token: str) -> None:
    # Every bot holds its first decision: a worker that went on to the game queued after the
    # one it was stopped in would keep the tournament (and a bot) alive for the move time.
    count = tmp_path / "count"
    args = [*TOURNAMENT, "--bot", f"{BAD_BOT} hold {bot_token}", "--bot", "builtin:greedy",
            "--games", "4", *SHORT, *HOLD_CLOCK, "--out", str(tmp_path / "t"), "--no-progress"]
    proc = subprocess.Popen(args, cwd=ROOT, env=holding(count, 0), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: in_game(count) >= 1, 120.0)
        proc.send_signal(signal.SIGTERM)
        # Stopping takes well under a second (the bots leave on `quit`); 10 s under any load.
        assert wait_for(lambda: proc.poll() is not None, 10.0), "still running after SIGTERM"
        assert proc.returncode == 130
    finally:
        kill_tournament(proc)
        for pid in pids_with(bot_token):
            os.kill(pid, signal.SIGKILL)
    assert in_game(count) == 1


def test_memory_cap_in_the_config_crashes_a_hog(tmp_path: Path) -> None:
    # bad_bot.py hog allocates 512 MiB at its first decision; under a 256 MiB cap that seat
    # crashes (and forfeits) in every game, while a flag on top of the config is honoured too.
    config = tmp_path / "t.toml"
    config.write_text(f'games = 2\nout = "{tmp_path / "o"}"\n[rules]\nphases-to-win = 1\n'
                      f'[[bot]]\ncmd = "{BAD_BOT} hog"\n[[bot]]\ncmd = "builtin:greedy"\n'
                      '[limits]\nmemory-mb = 256\nfile-size-mb = 64\n')
    code, _ = invoke(str(config), "--no-progress", "--max-processes", "4000")
    assert code == 0
    lines = results(tmp_path / "o")
    assert len(lines) == 2
    for line in lines:
        hog = line["bots"].index("bad-hog")
        assert line["seat_status"][hog] != "ok"
        assert [f["outcome"] for f in line["faults"][hog]] == ["crashed"]
    stored = json.loads((tmp_path / "o" / "tournament.json").read_text())["limits"]
    assert stored == {"memory-mb": 256, "file-size-mb": 64, "max-processes": 4000}


def test_without_a_cap_the_hog_plays_cleanly(tmp_path: Path) -> None:
    code, _ = invoke("--bot", f"{BAD_BOT} hog", "--bot", "builtin:greedy", "--games", "1",
                     "--rules", "phases-to-win=1", "--out", str(tmp_path / "o"), "--no-progress")
    assert code == 0
    assert results(tmp_path / "o")[0]["faults"] == [[], []]
