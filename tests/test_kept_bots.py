"""Issue 12: bot programs keep running across the games of a match or of a tournament worker,
restarted only after a game in which they failed; `--fresh-bots` gives each game its own.

The bot (tests/bots/pid_bot.py) appends its pid to a file when it starts, so the processes of a
run are counted, and writes `pid P game N ...` lines to stderr, so each game's log shows which
process played it.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.replay.audit import verify

PID_BOT = ROOT / "tests" / "bots" / "pid_bot.py"
SHORT = ["--rules", "phases-to-win=1", "--seed", "5"]
runner = CliRunner()


def bot(pids: Path, *args: str) -> str:
    return " ".join([sys.executable, str(PID_BOT), str(pids), *args])


def started(pids: Path) -> list[int]:
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


def running(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            out.append(pid)
    return out


def match(*args: str) -> dict:
    result = runner.invoke(app, ["match", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_match_starts_one_process_per_program_bot(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pids", tmp_path / "b.pids"
    data = match("phase10", "--bot", bot(a), "--bot", bot(b), "--bot", "builtin:greedy",
                 "--games", "3", *SHORT, "--replay", str(tmp_path / "replays"))
    assert [g["status"] for g in data["games"]] == ["ok"] * 3
    assert all(not any(fs) for fs in (g["faults"] for g in data["games"]))
    assert len(started(a)) == 1 and len(started(b)) == 1  # the start-up check's, kept
    assert running(started(a) + started(b)) == []  # and stopped when the match ended
    assert len(list((tmp_path / "replays").glob("*.jsonl"))) == 3
    verified = runner.invoke(app, ["replay", "verify", str(tmp_path / "replays")])
    assert verified.exit_code == 0, verified.output


def test_two_copies_of_a_program_are_two_processes(tmp_path: Path) -> None:
    pids = tmp_path / "p.pids"
    data = match("phase10", "--bot", bot(pids), "--bot", bot(pids), "--games", "3", *SHORT)
    assert [g["status"] for g in data["games"]] == ["ok"] * 3
    assert len(started(pids)) == 2


def test_a_bot_that_crashed_in_game_two_is_restarted_for_game_three(tmp_path: Path) -> None:
    pids = tmp_path / "p.pids"
    data = match("phase10", "--bot", bot(pids, "2"), "--bot", "builtin:greedy",
                 "--games", "3", *SHORT)
    faults = [[f["outcome"] for f in g["faults"][g["seats"].index("pidbot")]]
              for g in data["games"]]
    assert faults == [[], ["crashed"], []]  # game 2 only: game 3 is a fresh process's first
    assert [g["seat_status"][g["seats"].index("pidbot")] for g in data["games"]] == [
        "ok", "forfeit", "ok"]
    assert len(started(pids)) == 2
    assert running(started(pids)) == []


def test_fresh_bots_give_every_game_its_own_process(tmp_path: Path) -> None:
    pids = tmp_path / "p.pids"
    data = match("phase10", "--bot", bot(pids), "--bot", "builtin:greedy", "--games", "3",
                 "--fresh-bots", *SHORT)
    assert [g["status"] for g in data["games"]] == ["ok"] * 3
    assert len(started(pids)) == 3  # the first game plays the start-up check's process
    assert running(started(pids)) == []


def test_a_kept_process_is_restarted_once_it_used_half_its_cpu_cap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RLIMIT_CPU counts a process's whole life: a kept process that has used half of it is
    replaced before its next game, so no game starts with less than half the cap."""
    monkeypatch.setenv("PID_BOT_BURN", "0.6")  # CPU seconds at every `game` line
    pids = tmp_path / "p.pids"
    data = match("phase10", "--bot", bot(pids), "--bot", "builtin:greedy", "--games", "3",
                 "--cpu-seconds", "2", *SHORT)
    assert [g["status"] for g in data["games"]] == ["ok"] * 3
    assert all(not any(fs) for fs in (g["faults"] for g in data["games"]))
    # 0.6 s after game 1 (kept), 1.2 s after game 2 (over half of 2 s: replaced).
    assert len(started(pids)) == 2


def test_tournament_workers_keep_their_bots_and_logs_stay_per_game(tmp_path: Path) -> None:
    a, b, out = tmp_path / "a.pids", tmp_path / "b.pids", tmp_path / "t"
    result = runner.invoke(app, [
        "tournament", "--game", "phase10", "--bot", bot(a), "--bot", bot(b),
        "--bot", "builtin:greedy", "--players", "2", "--games", "4", "-j", "2",
        "--rules", "phases-to-win=1", "--out", str(out), "--keep-logs", "--no-progress",
        "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 12 and all(x["status"] == "ok" for x in lines)
    for pids in (a, b):
        played = sum(1 for x in lines if str(pids) in " ".join(x["specs"]))
        assert played == 8
        # The start-up check's process, then at most one per worker: not one per game.
        assert len(started(pids)) <= 3
        assert running(started(pids)) == []
        # Each was told `quit` when its worker ended (was: workers forked from the fork
        # server end without atexit handlers, so their kept bots were killed, not told).
        assert sorted(started(pids)) == sorted(started(pids.with_suffix(".pids.quit")))
    logs = sorted(out.glob("logs/*/*.stderr"))
    assert len(logs) == 16  # every game of a program bot, kept with --keep-logs
    for log in logs:
        played = {m.groups() for m in re.finditer(r"pid (\d+) game (\d+) (begins|decides)",
                                                  log.read_text())}
        # One process, in one of its games, wrote every line of this game's log.
        assert len({(pid, n) for pid, n, _ in played}) == 1, log
        assert log.read_text().count(" begins") == 1, log
    for line in lines:  # each replay re-simulates to its own game's end
        assert verify(out / line["replay"]).actions == line["actions"]


def test_fresh_bots_in_a_tournament_file(tmp_path: Path) -> None:
    pids, out = tmp_path / "p.pids", tmp_path / "t"
    config = tmp_path / "t.toml"
    config.write_text(f'game = "phase10"\nplayers = 2\ngames = 2\njobs = 1\n'
                      f'out = "{out}"\n[rules]\nphases-to-win = 1\n[limits]\n'
                      f'fresh-bots = true\n[[bot]]\ncmd = "{bot(pids)}"\n'
                      f'[[bot]]\ncmd = "builtin:greedy"\n')
    result = runner.invoke(app, ["tournament", str(config), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert len(started(pids)) == 1 + 2  # the start-up check, then one per game
    saved = json.loads((out / "tournament.json").read_text())
    assert saved["limits"]["fresh-bots"] is True


def test_a_wrong_fresh_bots_value_names_the_key(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[limits]\nfresh-bots = "maybe"\n[[bot]]\ncmd = "builtin:greedy"\n'
                      '[[bot]]\ncmd = "builtin:random"\n')
    result = runner.invoke(app, ["tournament", str(config), "--no-progress"])
    assert result.exit_code == 2 and "[limits] fresh-bots" in result.stderr



BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"


def counted(pids: Path, mode: str) -> str:
    """tests/bots/bad_bot.py in `mode`, its pid appended to `pids` (the shell `exec`s it)."""
    return f"sh -c 'echo $$ >> {pids}; exec {sys.executable} {BAD_BOT} {mode}'"


def test_faults_that_cost_nothing_keep_the_process(tmp_path: Path) -> None:
    pids = tmp_path / "p.pids"
    data = match("phase10", "--bot", counted(pids, "retry_once"), "--bot", "builtin:greedy",
                 "--games", "3", *SHORT)
    for game in data["games"]:  # an illegal answer, then a legal retry: noted, not final
        (faults,) = [f for f in game["faults"] if f]
        assert faults and {f["outcome"] for f in faults} == {"illegal"}
        assert not any(f["fatal"] for f in faults)
    assert len(started(pids)) == 1


def test_a_timeout_restarts_the_process_for_the_next_game(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The bot holds every answer until the referee's ping, so each game ends in a timeout on
    # its first-move clock (--first-move-time 0.4), and the next game starts a new process.
    pids = tmp_path / "p.pids"
    data = match("phase10", "--bot", counted(pids, "slow"), "--bot", "builtin:greedy",
                 "--games", "2", "--move-time", "0.2", "--first-move-time", "0.4",
                 "--time-bank", "0", *SHORT)
    for game in data["games"]:
        (faults,) = [f for f in game["faults"] if f]
        assert [f["outcome"] for f in faults if f["fatal"]] == ["timeout"]
        assert "no answer within 400 ms" in faults[-1]["detail"]  # --first-move-time's
    assert len(started(pids)) == 2  # each game's timeout ended its process


def test_a_kept_process_writes_each_game_to_its_own_log(tmp_path: Path) -> None:
    """What the bot wrote before its last line read goes to the log it was writing to; what it
    writes between two games (`hold_log`) opens the next game's log."""
    from meldref.protocol.command import BotCommand
    from meldref.protocol.process import BotProcess, PipeTransport

    one, two, three = (tmp_path / f"{n}.stderr" for n in ("one", "two", "three"))
    script = ("echo first >&2; echo a; read x; echo between >&2; echo b; read y; "
              "echo second >&2; echo c; read z")
    bot = BotProcess(BotCommand(("sh", "-c", script)), one)
    pipes = PipeTransport.to(bot)
    try:
        deadline = float("inf")
        assert (got := pipes.read(deadline)) is not None and got.data == b"a"
        bot.hold_log()  # the game is over: `first` is in its log
        pipes.send("x")
        assert (got := pipes.read(deadline)) is not None and got.data == b"b"
        bot.log_to(two)  # the next game: `between` opens its log
        pipes.send("y")
        assert (got := pipes.read(deadline)) is not None and got.data == b"c"
        bot.log_to(three)
    finally:
        bot.kill()
        pipes.close()
    assert one.read_text() == "first\n"
    assert two.read_text() == "between\nsecond\n"
    assert three.read_text() == ""


def test_a_closed_keeper_stops_the_seats_given_back_to_it(tmp_path: Path) -> None:
    """A dask worker closes a run's keeper when the run ends, while a game of that run may
    still be playing (a cancelled task runs to its end): its seats are stopped, not kept."""
    from meldref.engine.game import find_game
    from meldref.protocol.seats import BotSpec, Limits
    from meldref.tournament.keeper import BotKeeper

    pids, info, limits = tmp_path / "p.pids", find_game("phase10"), Limits()
    spec = BotSpec.parse(bot(pids))
    keeper = BotKeeper()
    kept = keeper.lend(spec, info, limits, None)
    playing = keeper.lend(spec, info, limits, None)
    for seat in (kept, playing):
        seat.connect()
    keeper.give_back([kept])
    assert kept.ready  # kept, idle
    keeper.close()  # the run is over: the idle one stops ...
    assert not kept.ready
    keeper.give_back([playing])  # ... and so does the one back from a game after that
    assert not playing.ready
    assert running(started(pids)) == []


def test_a_bot_dies_with_the_thread_that_started_it(tmp_path: Path) -> None:
    """Why a dask worker keeps bots per task thread (tournament/cluster_worker.py): the death signal
    (`setpriv --pdeathsig KILL`) is sent when the THREAD that started the bot ends, even if
    its process lives on."""
    import threading

    from meldref.engine.game import find_game
    from meldref.protocol.launch import SETPRIV
    from meldref.protocol.seats import BotSpec, Limits
    from meldref.tournament.keeper import BotKeeper

    if SETPRIV is None:
        pytest.skip("setpriv (util-linux) is not installed")
    pids, keeper = tmp_path / "p.pids", BotKeeper()
    seats = []

    def start() -> None:
        seat = keeper.lend(BotSpec.parse(bot(pids)), find_game("phase10"), Limits(), None)
        seat.connect()
        seats.append(seat)

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    try:
        [pid] = started(pids)
        deadline = time.monotonic() + 10
        while running([pid]):
            assert time.monotonic() < deadline, "the bot outlived the thread that started it"
            time.sleep(0.05)
    finally:
        keeper.give_back(seats, keep=False)
