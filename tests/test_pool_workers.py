"""How a tournament's workers start (issue 28: -j 2 cost x1.25 the CPU a game of -j 1).

A spawned worker imported meldref, pydantic with it, itself: the CPU of two imports a run. The
workers are now forked from a fork server that imported what a game needs once, and that
import leaves pydantic out (only reading a replay or checking settings needs it)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import subprocess
import sys
import uuid
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support import RANDOM_BOT_PATH, command

from meldref.tournament import forkserver
from meldref.tournament.pool import GamePool
from meldref.tournament.schedule import GameJob

MARK = "MELDREF_TEST_POOL_MARK"


def jobs(count: int) -> list[GameJob]:
    return [GameJob(k, f"g{k}", "phase10", None, k, k, ()) for k in range(count)]


def what_the_worker_has(job: GameJob, folder: Path, keep_logs: bool) -> dict[str, Any]:
    """A game's stand-in: what its worker had loaded and saw, as it began."""
    return {"index": job.index, "game_id": job.game_id, "status": "ok", "pid": os.getpid(),
            "bots_loaded": "meldref.bots.phase10" in sys.modules,
            "runner_loaded": "meldref.tournament.runner" in sys.modules,
            "pydantic": sorted(m for m in sys.modules if m.split(".")[0] == "pydantic")[:3],
            "mark": os.environ.get(MARK),
            "looking": bool(sys.modules["meldref.protocol.channel"]._looking)}


def play(tmp_path: Path, count: int = 4, workers: int = 2) -> list[dict[str, Any]]:
    pool = GamePool(workers, what_the_worker_has, tmp_path, False)
    return list(pool.play(jobs(count)))


def test_a_pool_of_a_worker_per_core_reads_without_looking_first(tmp_path: Path) -> None:
    # With every core playing a game, a read that looks for a quick answer before it sleeps
    # takes a core from another game's bots: a contest at -j 2 on 2 cores played 8% fewer
    # games a second with it on. Fewer workers than cores keep it.
    cores = os.cpu_count() or 1
    assert {r["looking"] for r in play(tmp_path / "full", workers=cores)} == {False}
    if cores > 1:
        assert {r["looking"] for r in play(tmp_path / "spare", workers=cores - 1)} == {True}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a fork server: Linux")
def test_workers_start_with_a_games_modules_loaded_and_without_pydantic(tmp_path: Path) -> None:
    # Was: spawned workers, which had loaded only what unpickling the job needed (the
    # built-in bots were imported by the first game, in every worker), and pydantic with the
    # replay writer and the runner.
    results = play(tmp_path)
    assert [r["status"] for r in results] == ["ok"] * 4
    assert all(r["bots_loaded"] and r["runner_loaded"] for r in results), results
    assert all(r["pydantic"] == [] for r in results), results


def test_workers_see_the_tournaments_environment_of_now(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # A fork server keeps the environment of the moment it started (the first pool of the
    # process); a worker must see the tournament's as it is when its pool starts.
    monkeypatch.setenv(MARK, "first")
    assert {r["mark"] for r in play(tmp_path / "a")} == {"first"}
    monkeypatch.setenv(MARK, "second")
    assert {r["mark"] for r in play(tmp_path / "b")} == {"second"}
    monkeypatch.delenv(MARK)
    assert {r["mark"] for r in play(tmp_path / "c")} == {None}


def fork_servers_carrying(name: str, value: str) -> list[int]:
    """Live fork servers whose environment holds `name=value` (inherited from a run)."""
    mark, found = f"{name}={value}".encode(), []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if (stat[0] != "Z" and b"multiprocessing.forkserver" in
                        (entry / "cmdline").read_bytes()
                        and mark in (entry / "environ").read_bytes().split(b"\0")):
                    found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a fork server: Linux")
def test_nothing_of_a_tournament_outlives_the_command(tmp_path: Path) -> None:
    # Was: the fork server noticed the command's end only once its process had exited (its
    # "alive" pipe closed), so it was still running when `meldref tournament -j 2` returned.
    # (Its output not read here: a caller reading it waited for the server's end, which held
    # the command's stdout and stderr.)
    token = uuid.uuid4().hex
    subprocess.run([sys.executable, "-m", "meldref", "tournament", "phase10",
                    "-b", command(RANDOM_BOT_PATH, "--seed", "1"), "-b", "builtin:random",
                    "-g", "2", "-j", "2", "--rules", "phases-to-win=1", "--out",
                    str(tmp_path / "t"), "--no-progress"],
                   env={**os.environ, MARK: token}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert fork_servers_carrying(MARK, token) == []


def write_to_stderr(job: GameJob, folder: Path, keep_logs: bool) -> dict[str, Any]:
    """A game's stand-in that writes a line where its worker's stderr goes."""
    os.write(2, f"worker {os.getpid()} game {job.game_id}\n".encode())
    return {"index": job.index, "game_id": job.game_id, "status": "ok"}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a fork server: Linux")
def test_workers_write_where_the_tournaments_stderr_goes_now(tmp_path: Path) -> None:
    # A fork server keeps the stdout and stderr of the moment it started (the first pool of
    # the process); a worker's own output (a warning, a traceback) goes where the tournament's
    # goes when its pool starts.
    for name in ("a", "b"):
        log = tmp_path / f"{name}.stderr"
        with log.open("w") as f:
            kept = os.dup(2)
            os.dup2(f.fileno(), 2)
            try:
                pool = GamePool(2, write_to_stderr, tmp_path, False)
                assert len(list(pool.play(jobs(4)))) == 4
            finally:
                os.dup2(kept, 2)
                os.close(kept)
        assert log.read_text().count(" game g") == 4, (name, log.read_text())


# The fork server's private CPython members, all read in meldref.tournament.forkserver: these
# tests fail (they never skip) on a Python that moved them, which would otherwise leave the
# server running after a tournament and workers alive after a SIGKILL without a word.

def test_this_python_has_the_fork_server_members_meldref_reads() -> None:
    assert sys.version_info >= (3, 11)
    assert forkserver.missing() == [], (
        f"Python {sys.version.split()[0]}'s multiprocessing.forkserver lacks "
        f"{forkserver.missing()}: meldref/tournament/forkserver.py must follow it")


def test_the_fork_server_starts_says_its_pid_and_stops() -> None:
    pid = forkserver.start()
    assert isinstance(pid, int) and forkserver.server_pid() == pid
    assert b"multiprocessing.forkserver" in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert forkserver.stop()
    assert forkserver.server_pid() is None
    with pytest.raises(ProcessLookupError):  # ended, and reaped: not even a zombie
        os.kill(pid, 0)
    assert not forkserver.stop()  # none left to stop


def test_a_worker_forked_from_the_server_closes_its_alive_pipe_and_the_caller_keeps_its() -> None:
    context = multiprocessing.get_context("forkserver")
    try:
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            closed = pool.submit(forkserver.leave_alive_pipe).result()
            assert isinstance(closed, int)
            with pytest.raises(OSError):  # closed in the worker
                pool.submit(os.fstat, closed).result()
            assert pool.submit(forkserver.leave_alive_pipe).result() is None  # once
        assert forkserver.leave_alive_pipe() is None  # the server's starter keeps its pipe
        assert forkserver.server_pid() is not None
    finally:
        forkserver.stop()
