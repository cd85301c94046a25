"""Nothing survives: every way a match or a tournament can end (a signal, a second signal
during the grace periods, kill -9, a worker killed mid-game) leaves no bot, no worker and no
helper process behind, and a tournament still plays every game exactly once.

The bot here (tests/cli_bots/deaf_bot.py) ignores `quit`, the end of its input, SIGTERM,
SIGINT and SIGHUP: only the referee's SIGKILL of its process group stops it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from meldref.replay.files import verify

ROOT = Path(__file__).resolve().parent.parent
DEAF = ROOT / "tests" / "cli_bots" / "deaf_bot.py"
SHORT = ["--rules", "phases-to-win=1", "--players", "2"]


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def pids_with(token: str, but: int | None = None) -> list[int]:
    """Live processes whose command line holds `token` (but `but`: meldref itself, whose own
    command line names the bot)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in (os.getpid(), but):
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            fields = _stat(int(entry))
            if token.encode() in cmdline and fields is not None and fields[0] != "Z":
                out.append(int(entry))
    return out


def children_of(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[1] == str(pid) and fields[0] != "Z":
                out.append(int(entry))
    return out


def alive(pids: list[int]) -> list[int]:
    return [p for p in pids if (f := _stat(p)) is not None and f[0] != "Z"]


def wait_for(what: Callable[[], object], seconds: float, message: str) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, message
        time.sleep(0.05)


def start(args: list[str], token: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-m", "meldref", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for(lambda: pids_with(token, proc.pid) or proc.poll() is not None, 60,
             "the bot never started")
    assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    return proc


@pytest.mark.parametrize("signals", [[signal.SIGTERM], [signal.SIGINT], [signal.SIGHUP],
                                     [signal.SIGTERM, signal.SIGTERM]])
def test_a_signalled_match_leaves_no_bot(signals: list[int]) -> None:
    token = f"deaf{uuid.uuid4().hex[:10]}"
    proc = start(["match", "--bot", f"{sys.executable} {DEAF} {token} 0.05", "--bot",
                  "builtin:greedy", "--games", "50", *SHORT], token)
    time.sleep(0.3)  # a game in progress
    for sig in signals:  # the second one falls in the grace periods of closing the bot
        proc.send_signal(sig)
        time.sleep(0.2)
    assert proc.wait(timeout=30) == 130
    wait_for(lambda: not pids_with(token), 10, f"bots left behind: {pids_with(token)}")


def test_a_match_killed_with_sigkill_leaves_no_bot() -> None:
    token = f"deaf{uuid.uuid4().hex[:10]}"
    proc = start(["match", "--bot", f"{sys.executable} {DEAF} {token} 0.05", "--bot",
                  "builtin:greedy", "--games", "50", *SHORT], token)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    wait_for(lambda: not pids_with(token), 10, f"bots left behind: {pids_with(token)}")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_tournament_killed_with_sigkill_leaves_nothing(tmp_path: Path, jobs: str) -> None:
    token = f"deaf{uuid.uuid4().hex[:10]}"
    proc = start(["tournament", "--bot", f"{sys.executable} {DEAF} {token} 0.02", "--bot",
                  "builtin:random", "--games", "40", "-j", jobs, *SHORT, "--out",
                  str(tmp_path / "t"), "--no-progress", "--seed", "1"], token)
    wait_for(lambda: len(children_of(proc.pid)) >= int(jobs), 30, "no workers")
    helpers = children_of(proc.pid)  # workers, and multiprocessing's resource tracker
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    wait_for(lambda: not pids_with(token), 15, f"bots left behind: {pids_with(token)}")
    wait_for(lambda: not alive(helpers), 15, f"workers left behind: {alive(helpers)}")


def test_a_tournament_stopped_by_sigterm_leaves_nothing_and_resumes(tmp_path: Path) -> None:
    token = f"deaf{uuid.uuid4().hex[:10]}"
    args = ["tournament", "--bot", f"{sys.executable} {DEAF} {token} 0.02", "--bot",
            "builtin:random", "--games", "12", "-j", "2", *SHORT, "--out", str(tmp_path / "t"),
            "--no-progress", "--seed", "1", "--json"]
    proc = start(args, token)
    helpers = children_of(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 130
    wait_for(lambda: not pids_with(token) and not alive(helpers), 15, "processes left behind")
    done = subprocess.run([sys.executable, "-m", "meldref", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["missing"] == 0


def test_a_worker_killed_mid_game_loses_no_game(tmp_path: Path) -> None:
    # As the OOM killer would: SIGKILL one worker while it plays. Its games are played again
    # on a new pool; the tournament finishes every game exactly once and exits 0.
    token = f"deaf{uuid.uuid4().hex[:10]}"
    out = tmp_path / "t"
    proc = subprocess.Popen(
        [sys.executable, "-m", "meldref", "tournament", "--bot",
         f"{sys.executable} {DEAF} {token} 0.01", "--bot", "builtin:random", "--games", "16",
         "-j", "2", *SHORT, "--out", str(out), "--no-progress", "--seed", "2", "--json"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: pids_with(token, proc.pid) or proc.poll() is not None, 60,
             "the bot never started")

    def in_a_worker() -> list[int]:  # not the bot the tournament started to check it
        return [p for p in pids_with(token, proc.pid) if (f := _stat(p)) and
                f[1] != str(proc.pid)]

    wait_for(in_a_worker, 60, "no game started in a worker")
    worker = int(_stat(in_a_worker()[0])[1])  # type: ignore[index]
    os.kill(worker, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    ids = [line["game_id"] for line in lines]
    assert len(ids) == len(set(ids)) == 16
    assert all(line["status"] == "ok" for line in lines)
    assert json.loads(stdout)["missing"] == 0
    for line in lines:
        verify(out / line["replay"])
    wait_for(lambda: not pids_with(token), 15, f"bots left behind: {pids_with(token)}")


def test_resume_plays_again_the_games_recorded_as_errors(tmp_path: Path) -> None:
    from meldref.tournament.run import finished_games
    from meldref.tournament.schedule import GameJob

    jobs = [GameJob(i, f"g{i}", "phase10", None, i, i, ()) for i in range(3)]
    lines = [{"game_id": "g0", "status": "ok"}, {"game_id": "g1", "status": "error"},
             {"game_id": "g2", "status": "error"}, {"game_id": "g2", "status": "ok"},
             {"game_id": "old", "status": "ok"}]
    assert finished_games(lines, jobs) == [lines[0], lines[3]]
