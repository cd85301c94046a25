"""Nothing survives: every way a match or a tournament can end (a signal, a second signal
during the grace periods, kill -9, a worker killed mid-game) leaves no bot, no worker and no
helper process behind, and a tournament still plays every game exactly once.

The bot here (tests/cli_bots/deaf_bot.py) ignores `quit`, the end of its input, SIGTERM,
SIGINT and SIGHUP: only the referee's SIGKILL of its process group stops it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support import PYTHON, ROOT, TESTS, command, pid_gone, pids_with, wait_for

from meldref.replay.audit import verify
from meldref.tournament.run import read_results

DEAF = TESTS / "cli_bots" / "deaf_bot.py"
SHORT = ["--rules", "phases-to-win=1", "--players", "2"]


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def bots(token: str, referee: subprocess.Popen[bytes] | subprocess.Popen[str]) -> list[int]:
    """The bot processes carrying `token` (the referee's own command line names them too)."""
    return [pid for pid in pids_with(token) if pid != referee.pid]


def children_of(pid: int) -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()
            and (fields := _stat(int(entry.name))) is not None and fields[1] == str(pid)
            and fields[0] != "Z"]


def alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if not pid_gone(pid)]


def deaf(token: str, delay: float, mark: Path | None = None) -> str:
    return command(DEAF, token, str(delay), *([str(mark)] if mark else []))


def start(args: list[str], token: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([PYTHON, "-m", "meldref", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert wait_for(lambda: bots(token, proc) or proc.poll() is not None, 60), \
        "the bot never started"
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    return proc


def in_workers(token: str, proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> list[int]:
    """Bots carrying `token` started by a worker (not the one the tournament started itself
    to check the bot before any game)."""
    workers = workers_of(proc.pid)
    return [p for p in bots(token, proc) if (f := _stat(p)) and int(f[1]) in workers]


def workers_of(pid: int) -> list[int]:
    """The tournament's pool workers: the children of its fork server (whose command line says
    so), or its own children spawned (where there is no fork server)."""
    found = []
    for child in children_of(pid):
        line = _cmdline(child)
        if b"multiprocessing.forkserver" in line:
            found += children_of(child)
        elif b"spawn_main" in line:
            found.append(child)
    return found


def _cmdline(pid: int) -> bytes:
    """A process's command line, or nothing if it has exited since it was listed (a child
    seen in /proc can be gone by the time its cmdline is read)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def results_written(out: Path) -> int:
    path = out / "results.jsonl"
    return path.read_text().count("\n") if path.exists() else 0


def none_left(token: str, timeout: float = 15.0) -> None:
    assert wait_for(lambda: not pids_with(token), timeout), \
        f"bots left behind: {pids_with(token)}"


@pytest.mark.parametrize("signals", [[signal.SIGTERM], [signal.SIGINT], [signal.SIGHUP],
                                     [signal.SIGTERM, signal.SIGTERM]])
def test_a_signalled_match_leaves_no_bot(signals: list[int], bot_token: str,
                                         tmp_path: Path) -> None:
    mark = tmp_path / "decisions"
    proc = start(["match", "--bot", deaf(bot_token, 0.05, mark), "--bot", "builtin:greedy",
                  "--games", "50", *SHORT], bot_token)
    assert wait_for(mark.exists, 60), "no game in progress"
    for sig in signals:
        proc.send_signal(sig)
        # A second signal 0.2 s later falls in the 2 s of graces the deaf bot makes the
        # referee wait out; either way nothing may be left.
        time.sleep(0.2)
    assert proc.wait(timeout=30) == 130
    none_left(bot_token, 10)


def test_a_match_killed_with_sigkill_leaves_no_bot(bot_token: str, tmp_path: Path) -> None:
    mark = tmp_path / "decisions"
    proc = start(["match", "--bot", deaf(bot_token, 0.05, mark), "--bot", "builtin:greedy",
                  "--games", "50", *SHORT], bot_token)
    # Was: killed once the start-up check's bot existed, before any game. Now mid-game: the
    # bot is deciding (its mark written) and still runs when the referee dies.
    assert wait_for(mark.exists, 60), "no game in progress"
    assert bots(bot_token, proc), "no bot running"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    none_left(bot_token, 10)


@pytest.mark.parametrize("jobs", ["1", pytest.param("2", marks=pytest.mark.long)])
def test_a_tournament_killed_with_sigkill_leaves_nothing(tmp_path: Path, jobs: str,
                                                         bot_token: str) -> None:
    mark = tmp_path / "decisions"
    proc = start(["tournament", "--bot", deaf(bot_token, 0.02, mark), "--bot",
                  "builtin:random", "--games", "40", "-j", jobs, *SHORT, "--out",
                  str(tmp_path / "t"), "--no-progress", "--seed", "1"], bot_token)
    # Was: any child counted, the start-up check's bot among them: the workers and the
    # resource tracker were never seen; and with -j 1, killed before any game or worker. Now
    # killed while games are played in the workers (a bot program's games are played in
    # workers even one at a time: -j 1 has one), the bot deciding (its mark written).
    assert wait_for(lambda: mark.exists() and in_workers(bot_token, proc)
                    and len(workers_of(proc.pid)) == int(jobs), 60), "no game in the workers"
    # The workers, multiprocessing's resource tracker and fork server
    helpers = children_of(proc.pid) + workers_of(proc.pid)
    assert len([h for h in helpers if h in workers_of(proc.pid)]) == int(jobs)
    playing = in_workers(bot_token, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    none_left(bot_token)
    # Waited for, not read once: a process being killed has no command line left (so
    # `none_left` no longer sees it) for a moment before it becomes a zombie.
    assert wait_for(lambda: not alive(playing), 15), f"bots left behind: {alive(playing)}"
    assert wait_for(lambda: not alive(helpers), 15), f"workers left behind: {alive(helpers)}"


@pytest.mark.long  # 10 s each: the default run keeps under 5 minutes (SIGKILL's test stays)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_tournament_stopped_by_sigterm_leaves_nothing_and_resumes(tmp_path: Path,
                                                                   bot_token: str,
                                                                   sig: int) -> None:
    token = bot_token
    out = tmp_path / "t"
    args = ["tournament", "--bot", deaf(token, 0.01), "--bot",
            "builtin:random", "--games", "6", "-j", "2", *SHORT, "--out", str(out),
            "--no-progress", "--seed", "1", "--json"]
    proc = start(args, token)
    # Was: signalled during the start-up check, before any worker: workers killing their
    # bots, and resuming after played games, went untested. Now mid-tournament.
    assert wait_for(lambda: results_written(out) >= 1 and in_workers(token, proc)
                    and len(workers_of(proc.pid)) == 2, 60), "no game in the workers"
    helpers = children_of(proc.pid) + workers_of(proc.pid)
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == 130
    assert wait_for(lambda: not pids_with(token) and not alive(helpers), 15), \
        "processes left behind"
    # The games killed in flight lose their replay (issue 21: a stop never leaves one that
    # fails `replay verify`); every replay left is a game with its result line.
    recorded = {line.replay for line in read_results(out / "results.jsonl")}
    for path in (out / "replays").glob("*.jsonl"):
        assert path.relative_to(out).as_posix() in recorded, path.name
        verify(path)
    done = subprocess.run([PYTHON, "-m", "meldref", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["missing"] == 0 and 1 <= summary["found_done"] < 6, summary


@pytest.mark.long  # tests/test_cluster.py kills a worker mid-game in the default run
def test_a_worker_killed_mid_game_loses_no_game(tmp_path: Path, bot_token: str) -> None:
    # As the OOM killer would: SIGKILL one worker while it plays. Its games are played again
    # on a new pool; the tournament finishes every game exactly once and exits 0.
    token = bot_token
    out = tmp_path / "t"
    proc = subprocess.Popen(
        [PYTHON, "-m", "meldref", "tournament", "--bot", deaf(token, 0.01), "--bot",
         "builtin:random", "--games", "8", "-j", "2", *SHORT, "--out", str(out),
         "--no-progress", "--seed", "2", "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert wait_for(lambda: bots(token, proc) or proc.poll() is not None, 60), \
        "the bot never started"

    assert wait_for(lambda: in_workers(token, proc), 60), "no game started in a worker"
    worker = int(_stat(in_workers(token, proc)[0])[1])  # type: ignore[index]
    os.kill(worker, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    ids = [line["game_id"] for line in lines]
    assert len(ids) == len(set(ids)) == 8
    assert all(line["status"] == "ok" for line in lines)
    assert json.loads(stdout)["missing"] == 0
    for line in lines:
        verify(out / line["replay"])
    none_left(token)


def test_resume_plays_again_the_games_recorded_as_errors(tmp_path: Path) -> None:
    from meldref.protocol.seats import BotSpec
    from meldref.tournament.run import finished_games
    from meldref.tournament.schedule import BotEntry, Plan

    bots = tuple(BotEntry(n, BotSpec(f"builtin:{n}")) for n in ("greedy", "random"))
    plan = Plan("phase10", bots, players=2, games=4, seed=1)  # the ids are the plan's
    g = [plan.game_id(i) for i in range(3)]
    from meldref.protocol.records import Figures, ResultLine

    played = Figures.from_json({"places": [1, 2], "scores": [0, 50]})
    lines = [ResultLine(g[0], "phase10", 1, ("a", "b"), index=0, figures=played),
             ResultLine(g[1], "phase10", 1, ("a", "b"), index=1, error="died"),
             ResultLine(g[2], "phase10", 1, ("a", "b"), index=2, error="died"),
             ResultLine(g[2], "phase10", 1, ("a", "b"), index=2, figures=played),
             ResultLine("old", "phase10", 1, ("a", "b"), index=3, figures=played)]
    assert finished_games(lines, plan) == [lines[0], lines[3]]


def test_a_game_that_kills_every_worker_is_recorded_as_an_error(tmp_path: Path) -> None:
    # tests/cli_bots/worker_killer_bot.py SIGKILLs the worker playing it at its first decision:
    # each of its games is tried MAX_TRIES times on new workers, then recorded as the referee's
    # own error; the tournament goes on with the rest, and exits 1 as for any game the referee
    # could not finish (README.md and docs/commands.md, Exit codes).
    out = tmp_path / "t"
    args = [PYTHON, "-m", "meldref", "tournament", "--bot",
            command(TESTS / "cli_bots" / "worker_killer_bot.py"), "--bot", "builtin:random",
            "--bot", "builtin:greedy", "--games", "2", "-j", "2", *SHORT, "--out", str(out),
            "--no-progress", "--json"]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    killer = [line for line in lines if "killer" in line["bots"]]
    others = [line for line in lines if "killer" not in line["bots"]]
    assert killer and others
    assert all(line["status"] == "error" and "worker died 3 times" in line["error"]
               for line in killer), killer
    assert all(line["status"] == "ok" for line in others)
    assert json.loads(done.stdout)["missing"] == 0


WAITING_WORKER = """
import signal, sys, time
from meldref.protocol.command import BotCommand
from meldref.protocol.process import BotProcess
from meldref.tournament.pool import _stop_now

signal.signal(signal.SIGTERM, _stop_now)
bot = BotProcess(BotCommand(("sleep", "300")))
print(bot.pid, flush=True)
bot.proc.wait()  # blocked in waitpid, holding the Popen's lock: where a worker often is
"""


def test_a_worker_stopped_while_waiting_for_its_bot_exits_and_kills_it() -> None:
    # Was: SIGTERM (the tournament's, or the kernel's when the tournament dies) ran the
    # handler inside Popen.wait, whose lock the handler's own kill then waited for: the worker
    # hung for ever under init with its bot (seen after a tournament's worker was killed).
    worker = subprocess.Popen([PYTHON, "-c", WAITING_WORKER], stdout=subprocess.PIPE, text=True)
    assert worker.stdout is not None
    bot = int(worker.stdout.readline())
    time.sleep(0.3)  # into the blocking wait
    worker.send_signal(signal.SIGTERM)
    try:
        assert worker.wait(timeout=20) == 128 + signal.SIGTERM
    finally:
        worker.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(bot, signal.SIGKILL)
    assert wait_for(lambda: pid_gone(bot), 5.0)


def test_closing_seats_goes_on_past_an_interrupted_one() -> None:
    # Issue 10: closing seats suppressed only Exception, so a Ctrl-C while one seat was being
    # stopped left the seats after it running. Each is closed; the interruption goes on after.
    # close_all is each_seat with `close`: the stand-in seats below are no compiled Seat,
    # which the compiled close_all would refuse by its parameter's type.
    from meldref.protocol.referee import each_seat

    closed: list[str] = []

    class Seat:
        def __init__(self, name: str, error: BaseException | None = None) -> None:
            self.name, self.error = name, error

        def close(self) -> None:
            closed.append(self.name)
            if self.error is not None:
                raise self.error

    seats = [Seat("a", KeyboardInterrupt()), Seat("b", RuntimeError("broken")), Seat("c")]
    with pytest.raises(KeyboardInterrupt):
        each_seat(seats, lambda seat: seat.close())
    assert closed == ["a", "b", "c"]
