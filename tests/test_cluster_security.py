"""How a cluster run ends when its cluster fails or is not safe (issue 29): a scheduler killed
mid-run, local:N without cryptography, tls:// without TLS settings, a plain tcp:// address, a
worker on other code or with another copy of a bot, a worker whose replays do not verify,
Ctrl-C on local:2, a worker of another user on a shared folder. Each ends with its documented
exit code and one message, never a traceback. And how it scales: tasks of several deal sets
carrying the run's token, not its setup.

Real `dask scheduler` and `dask worker` processes on 127.0.0.1 where a test needs them.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import time
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support import RANDOM_BOT_PATH, ROOT

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install -e '.[cluster]')")

import dask.config  # noqa: E402

from meldref.protocol.records import ResultLine  # noqa: E402
from meldref.protocol.seats import BotSpec  # noqa: E402
from meldref.replay.files import ReplayWriter  # noqa: E402
from meldref.tournament import cluster_worker  # noqa: E402
from meldref.tournament.cluster import (  # noqa: E402
    TASK_GAMES,
    Batches,
    ClusterError,
    ClusterPool,
    Collector,
    Flight,
    TaskSize,
    connect_timeout,
    deal_sets,
    files_way,
)
from meldref.tournament.cluster_worker import (  # noqa: E402
    GameOutcome,
    Verdict,
    WorkerReport,
    WorkerSetup,
    _checked_bots,
    check_worker,
    line_figures,
    seating_only,
)
from meldref.tournament.config import build_config  # noqa: E402
from meldref.tournament.proof import code_digest, program_digests  # noqa: E402
from meldref.tournament.run import open_tournament, settle_seed  # noqa: E402
from meldref.tournament.runner import run_job  # noqa: E402
from meldref.tournament.schedule import BotEntry  # noqa: E402

pytestmark = pytest.mark.cluster

SHORT = ["--rules", "phases-to-win=1"]
# No TLS settings leak in from the machine: each test says what it uses. A scheduler that
# refuses or is gone is given up on after 3 s, not dask's 30 (meldref's client uses dask's
# setting).
CLEAN = {**{k: v for k, v in os.environ.items() if not k.startswith("DASK_")},
         "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "3s"}


def tournament(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meldref", "tournament", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=200,
                          env=env or {**CLEAN, "PYTHONPATH": str(ROOT)})


def one_message(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) <= 3, stderr


def test_a_plain_tcp_address_is_refused_without_insecure_tcp() -> None:
    done = tournament("--bot", "builtin:greedy", "--bot", "builtin:random", "--game",
                      "phase10", "--cluster", "tcp://127.0.0.1:9")
    assert done.returncode == 2
    assert "plain TCP lets anyone who can reach the scheduler's port run code" in done.stderr
    assert "--insecure-tcp" in done.stderr
    one_message(done.stderr)


@pytest.mark.long  # 4-6 s: kept out of the default run, which .ci/run's -m long runs
def test_insecure_tcp_says_what_it_exposes(tmp_path: Path) -> None:
    done = tournament("--bot", "builtin:greedy", "--bot", "builtin:random", "--game",
                      "phase10", "--cluster", "tcp://127.0.0.1:9", "--insecure-tcp",
                      "--out", str(tmp_path / "t"))
    assert "warning: --cluster tcp://127.0.0.1:9: plain TCP" in done.stderr
    assert done.returncode == 2 and "cannot reach the dask scheduler" in done.stderr
    assert "Traceback" not in done.stderr


def test_insecure_tcp_is_only_for_tcp() -> None:
    done = tournament("--bot", "builtin:greedy", "--bot", "builtin:random", "--game",
                      "phase10", "--cluster", "local:1", "--insecure-tcp")
    assert done.returncode == 2 and "only with a plain tcp:// address" in done.stderr


def test_the_client_waits_for_the_scheduler_as_long_as_dask_says(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Was: 20 s whatever dask's setting, so a scheduler lost mid-run kept a run 20 s.
    from meldref.tournament import cluster

    asked: list[float] = []

    def refused(address: str, timeout: float, set_as_default: bool) -> None:
        asked.append(timeout)
        raise OSError("refused")

    monkeypatch.setattr(cluster.distributed, "Client", refused)
    with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
        assert connect_timeout() == 3.0
        with pytest.raises(ClusterError, match="cannot reach the dask scheduler"):
            cluster.connect("tcp://127.0.0.1:9", None)
    assert asked == [3.0]
    with dask.config.set({"distributed.comm.timeouts.connect": 45}):
        assert connect_timeout() == 45.0


def test_tls_without_settings_is_refused_at_once(tmp_path: Path) -> None:
    # Was: 60 s of waiting, then a 230-line TypeError and exit 1.
    done = tournament("--bot", "builtin:greedy", "--bot", "builtin:random", "--game",
                      "phase10", "--cluster", "tls://127.0.0.1:9", "--out",
                      str(tmp_path / "t"))
    assert done.returncode == 2
    assert "dask's TLS settings are missing (distributed.comm.tls.ca-file" in done.stderr
    one_message(done.stderr)


def test_local_n_refuses_to_run_without_cryptography(tmp_path: Path) -> None:
    # Was: plain TCP in silence, which any local process could use to run code on the workers.
    code = ("import sys; sys.modules['cryptography'] = None; from meldref.cli import main; "
            "sys.argv = ['meldref'] + sys.argv[1:]; main()")
    done = subprocess.run(
        [sys.executable, "-c", code, "tournament", "--bot", "builtin:greedy", "--bot",
         "builtin:random", "--game", "phase10", *SHORT, "--games", "2", "--cluster",
         "local:1", "--out", str(tmp_path / "t"), "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=200,
        env={**CLEAN, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, done.stderr
    assert "needs the cryptography package: pip install 'meldref[cluster]'" in done.stderr
    one_message(done.stderr)
    assert not (tmp_path / "t" / "results.jsonl").exists() or \
        (tmp_path / "t" / "results.jsonl").read_text() == ""


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def plain_cluster(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """A `dask scheduler` on a plain tcp:// port of 127.0.0.1 (the test's own; nothing else
    runs there) and the folder its workers are started in; stops whatever is left."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**CLEAN, "PYTHONPATH": str(ROOT)}
    scheduler = subprocess.Popen(
        ["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    started: list[subprocess.Popen[bytes]] = [scheduler]
    try:
        yield address, scheduler, tmp_path
    finally:
        for proc in started:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def start_worker(address: str, cwd: Path, pythonpath: Path = ROOT) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        ["dask", "worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
         "--host", "127.0.0.1"],
        cwd=cwd, env={**CLEAN, "PYTHONPATH": str(pythonpath)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.long  # many seconds: kept out of the default run (.ci/run runs it)
def test_killing_the_scheduler_mid_run_exits_2_with_one_message(plain_cluster) -> None:
    # Was: a 190-line CommClosedError traceback and exit 1 in 3 of 4 runs.
    address, scheduler, tmp_path = plain_cluster
    worker = start_worker(address, ROOT)
    out = tmp_path / "t"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "meldref", "tournament", "--bot", "builtin:greedy",
             "--bot", "builtin:random", "--game", "phase10", *SHORT, "--games", "400",
             "--cluster", address, "--insecure-tcp", "--out", str(out), "--no-progress"],
            cwd=ROOT, env={**CLEAN, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        results = out / "results.jsonl"
        deadline = time.monotonic() + 150
        while not (results.exists() and results.read_text().count("\n") >= 3):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no game finished"
            time.sleep(0.05)
        os.killpg(scheduler.pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=150)
    finally:
        stop(worker)
    assert proc.returncode == 2, stderr
    assert f"lost the dask scheduler at {address}" in stderr and "rerun to resume" in stderr
    assert "Traceback" not in stderr, stderr[-3000:]


def copy_of_checkout(target: Path) -> Path:
    """The checkout's code (engine, protocol, bots, meldref: links kept) in `target`."""
    for name in ("engine", "protocol", "bots", "meldref"):
        shutil.copytree(ROOT / name, target / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_a_worker_on_changed_code_is_refused_naming_it(plain_cluster) -> None:
    # Was: a checkout with a wild worth 50 points, still 0.1.0, played 3 of 60 games
    # differently, exit 0.
    address, _, tmp_path = plain_cluster
    copy = copy_of_checkout(tmp_path / "changed")
    rules = copy / "engine" / "phase10" / "rules.py"
    rules.write_text(rules.read_text() + "\n# changed on this worker\n")
    worker = start_worker(address, ROOT, pythonpath=copy)
    try:
        done = tournament("--bot", "builtin:greedy", "--bot", "builtin:random", "--game",
                          "phase10", *SHORT, "--games", "4", "--cluster", address,
                          "--insecure-tcp", "--out", str(tmp_path / "t"), "--no-progress")
    finally:
        stop(worker)
    assert done.returncode == 2, done.stderr
    assert "other meldref code here than on the tournament's machine" in done.stderr
    assert "worker tcp://127.0.0.1:" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bot_program_that_differs_on_a_worker_is_refused_naming_the_file(tmp_path: Path
                                                                          ) -> None:
    # Was: without --bot-folder a worker's other copy of a bot played 18 of 40 games
    # differently, exit 0. The worker's check compares every file a bot's command names.
    (tmp_path / "bot.py").write_text("print('mine')\n")
    entry = BotEntry("b", BotSpec.parse(f"{sys.executable} bot.py --seed 2"))
    expected = program_digests([entry], tmp_path)
    (tmp_path / "bot.py").write_text("print('theirs')\n")
    setup = WorkerSetup("tok", cluster_worker.__version__, "phase10", (entry,), 5.0,
                        cluster_worker.Limits(), str(tmp_path), True, None, None, "client",
                        str(tmp_path / "a"), code_digest(), expected, os.getuid())
    folder, problem = _checked_bots(setup)
    assert folder is None and problem is not None
    assert "its file bot.py differs from the tournament machine's" in problem
    (tmp_path / "bot.py").unlink()
    assert "its file bot.py is not here" in str(_checked_bots(setup)[1])


def rewritten(replay: Path, scores: list[int]) -> bytes:
    """`replay` as a worker on other code would send it: the same actions, other final
    scores, every line's sum chained again (sound as a file, wrong as a game)."""
    records = [json.loads(x) for x in replay.read_text().splitlines()]
    records[-1]["outcome"]["scores"] = scores
    forged = replay.with_name("forged.jsonl")
    header = {k: v for k, v in records[0].items()
              if k not in ("type", "format", "version", "meldref", "sum")}
    writer = ReplayWriter(forged, header)
    for record in records[1:]:
        writer.write(record)
    writer.close()
    return forged.read_bytes()


def client_side(folder: Path) -> ClusterPool:
    """A `ClusterPool`'s client side only (no cluster): what takes a worker's results."""
    pool = object.__new__(ClusterPool)
    pool.folder, pool.results = folder, Collector(folder)
    pool.results.sample = __import__("random").Random(1)
    return pool


def forged_game(tmp_path: Path) -> tuple[Any, ResultLine, Path, ResultLine]:
    """A game played here standing in for a worker's: (its job, its honest line, its replay,
    the line a worker on other code would send: other scores)."""
    opened = open_tournament(build_config({}, {
        "bots": ["builtin:greedy", "builtin:random"], "games": 1, "seed": 3,
        "out": str(tmp_path / "worker"), "rules": {"phases-to-win": 1}}))
    job = next(iter(opened.config.schedule()))
    line = run_job(job, opened.folder, False)
    assert line.figures is not None and line.replay is not None
    figures = line.figures
    scores = tuple(s + 50 for s in figures.outcome.scores)
    claimed = replace(line, figures=replace(figures, outcome=replace(figures.outcome,
                                                                     scores=scores)))
    return job, line, tmp_path / "worker" / line.replay, claimed


def test_the_client_re_simulates_a_replay_no_other_worker_verified_and_stops_if_it_lies(
        tmp_path: Path) -> None:
    # Was: a worker on a modified checkout (a wild worth 50 points) played 3 of 60 games
    # differently and the tournament counted them, exit 0. With one worker (no other to
    # verify) the client re-simulates each replay itself; one that does not verify, or does
    # not say what its result line says, stops the run (exit 2) naming the worker.
    job, line, replay, claimed = forged_game(tmp_path)
    assert line.replay is not None
    pool = client_side(tmp_path / "client")

    def sent(data: bytes, result: ResultLine) -> ResultLine | None:
        outcome = GameOutcome("tls://10.0.0.9:4000", line=result,
                              files={line.replay: zlib.compress(data)})  # type: ignore[dict-item]
        return pool.results.line(outcome, job, False)

    scores = list(claimed.figures.outcome.scores)  # type: ignore[union-attr]
    for data in (rewritten(replay, scores), replay.read_bytes()):
        with pytest.raises(ClusterError) as caught:
            sent(data, claimed)
        assert str(caught.value).startswith("worker tls://10.0.0.9:4000 sent game "
                                            f"{line.game_id}, whose replay does not verify")
        assert "rerun to resume" in str(caught.value)
        assert not (pool.folder / line.replay).exists()  # not left to be read as played
    assert sent(replay.read_bytes(), line) == line  # the honest worker's game counts
    assert (pool.folder / line.replay).exists()


def test_a_replay_whose_digest_disagrees_with_the_verifiers_stops_the_run(
        tmp_path: Path) -> None:
    # Another worker re-simulated the replay the player wrote (its digest and figures): the
    # client keeps what the player sent it, so bytes that differ from what was verified go
    # to its own re-simulation, and a forgery stops the run naming the player.
    job, line, replay, claimed = forged_game(tmp_path)
    assert line.replay is not None
    honest = replay.read_bytes()
    verdict = Verdict(hashlib.sha256(honest).hexdigest(), line_figures(line))
    forged = rewritten(replay, list(claimed.figures.outcome.scores))  # type: ignore[union-attr]
    pool = client_side(tmp_path / "client")
    outcome = GameOutcome("tcp://10.0.0.9:4000", line=claimed,
                          files={line.replay: zlib.compress(forged)})
    with pytest.raises(ClusterError, match=r"worker tcp://10\.0\.0\.9:4000 sent game .* whose "
                                           "replay does not verify"):
        pool.results.line(outcome, job, False, verdict, "tcp://10.0.0.8:4000")
    # The same bytes as verified, the figures the verifier found: counted, not re-simulated.
    pool.results.sample_every = 10**9
    outcome = GameOutcome("tcp://10.0.0.9:4000", line=line,
                          files={line.replay: zlib.compress(honest)})
    calls: list[ResultLine] = []
    pool.results.unverified = calls.append  # type: ignore[assignment, method-assign]
    assert pool.results.line(outcome, job, False, verdict, "tcp://10.0.0.8:4000") == line
    assert calls == []
    # The same bytes, other figures from the verifier: the verifier is the one named.
    del pool.results.unverified
    wrong = replace(verdict, figures=(1, (1, 2), (0, 0)))
    with pytest.raises(ClusterError, match=r"worker tcp://10\.0\.0\.8:4000 re-simulated "):
        pool.results.line(outcome, job, False, wrong, "tcp://10.0.0.8:4000")


@pytest.mark.long  # many seconds: kept out of the default run (.ci/run runs it)
def test_a_worker_whose_replays_do_not_verify_stops_the_run_with_exit_2(plain_cluster
                                                                       ) -> None:
    # A worker on the same meldref code (its start-up check passes) that rewrites each replay
    # it plays (other final scores, every line's sum chained again), as a drifted machine
    # might: the other worker's verification, then the client's, find it; exit 2 naming it.
    address, _, tmp_path = plain_cluster
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(FORGER)
    honest = start_worker(address, ROOT)
    forger = start_worker(address, ROOT, pythonpath=Path(f"{site}{os.pathsep}{ROOT}"))
    try:
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)  # the forger plays too
        done = tournament("--bot", "builtin:greedy", "--bot", "builtin:random", "--game",
                          "phase10", *SHORT, "--games", "400", "--cluster", address,
                          "--insecure-tcp", "--out", str(tmp_path / "t"), "--no-progress")
    finally:
        stop(honest)
        stop(forger)
    assert done.returncode == 2, done.stderr
    assert "whose replay does not verify here" in done.stderr, done.stderr
    assert "worker tcp://127.0.0.1:" in done.stderr and "rerun to resume" in done.stderr
    assert "Traceback" not in done.stderr


# A worker's sitecustomize: each replay it writes is rewritten with other final scores.
FORGER = """
import json
from pathlib import Path

from meldref.replay.files import ReplayWriter
from meldref.tournament import cluster_worker

_play_here = cluster_worker._play_here


def forged(run, job, setup, keep_logs, address, attempt=None):
    outcome = _play_here(run, job, setup, keep_logs, address, attempt)
    if outcome.attempt and outcome.line and outcome.line.replay:
        path = Path(outcome.attempt) / outcome.line.replay
        records = [json.loads(x) for x in path.read_text().splitlines()]
        records[-1]["outcome"]["scores"] = [s + 50 for s in records[-1]["outcome"]["scores"]]
        header = {k: v for k, v in records[0].items()
                  if k not in ("type", "format", "version", "meldref", "sum")}
        path.unlink()
        writer = ReplayWriter(path, header)
        for record in records[1:]:
            writer.write(record)
        writer.close()
    return outcome


cluster_worker._play_here = forged
"""


class Submitted:
    """A dask client's `submit` and `as_completed` as `ClusterPool._submit` uses them: it
    keeps what each task carried."""

    def __init__(self) -> None:
        self.tasks: list[tuple[Any, ...]] = []

    def submit(self, *args: Any, **_: Any) -> object:
        self.tasks.append(args)
        return object()

    def add(self, _: object) -> None:
        pass


def submitting(config: Any, seconds: float, played: int = 0) -> Submitted:
    """What `ClusterPool._submit` sends for `config`'s games, at most 100 tasks, with tasks
    sized for `seconds` of play after `played` games of 10 ms each."""
    pool = object.__new__(ClusterPool)  # its submitting only: no cluster needed
    pool.run, pool.keep_logs, pool.token, pool.files = run_job, False, "tok", "client"
    pool.size = TaskSize(seconds)
    pool.size.observe([GameOutcome("w", line=object(), seconds=0.01)  # type: ignore[arg-type]
                       ] * played)
    pool.client = client = Submitted()  # type: ignore[assignment]
    pool._submit(Batches(deal_sets(config.schedule())), Flight(client), 100)
    return client


def test_a_task_carries_the_runs_token_not_its_setup(tmp_path: Path) -> None:
    # Was: every task carried the run's setup, every bot and its programs' digests: pickled,
    # 1.9 KB a task with 3 bots, 10.1 KB with 30, 93.2 KB with 300 (the 23.4 KB a
    # game with 300 bots). The setup is installed once per worker (`RunSetup`); a task
    # holds its games and the run's token.
    sizes = {}
    for count in (3, 100):
        config = settle_seed(build_config({}, {
            "bots": [f"{sys.executable} {RANDOM_BOT_PATH} --seed {i}" for i in range(count)],
            "players": 2, "games": 2, "seed": 3, "out": str(tmp_path / str(count))}))
        task = submitting(config, 0).tasks[0]
        assert task[3:5] == ("tok", "client")
        assert not any(isinstance(arg, WorkerSetup) for arg in task)
        sizes[count] = len(pickle.dumps(task[1:]))
    assert sizes[100] < sizes[3] + 100, sizes  # the seated bots' names are a little longer


def test_tasks_hold_several_whole_deal_sets(tmp_path: Path) -> None:
    # Was: a task per deal set (6 games at three seats), each costing the scheduler and the
    # client their per-task work. Now a deal set a task only until the first results say how
    # long a game takes, then whole deal sets for about `seconds` of play, `TASK_GAMES` at
    # most a task.
    config = settle_seed(build_config({}, {
        "bots": ["builtin:greedy", "builtin:random", "builtin:expert"], "players": 3,
        "games": 3000, "seed": 3, "out": str(tmp_path / "t")}))
    seatings = len(config.plan.seatings())
    assert seatings == 6
    first = [task[2] for task in submitting(config, 2.0).tasks]
    assert {len(batch) for batch in first} == {seatings}  # nothing measured yet
    sized = [task[2] for task in submitting(config, 2.0, played=12).tasks]
    assert {len(batch) for batch in sized[:-1]} == {198}  # 2 s / 10 ms = 200: 33 deal sets
    capped = [task[2] for task in submitting(config, 60.0, played=12).tasks]
    assert {len(batch) for batch in capped[:-1]} == {TASK_GAMES}
    for batch in sized:  # each deal set whole, in one task
        sets = [job.game_id.rpartition("-s")[0] for job in batch]
        assert all(sets.count(name) == seatings for name in set(sets))
    assert sum(len(batch) for batch in sized) == 3000  # every game once


def test_a_worker_checks_each_bot_the_first_time_a_task_seats_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A task carries only its games' bots (above), so a worker that joined after the start-up
    # check meets the run's bots a few at a time: each is checked when first seated, and a
    # drifted copy is refused then, naming its file.
    for name in ("a", "b"):
        shutil.copy(RANDOM_BOT_PATH, tmp_path / f"{name}.py")
    entries = tuple(BotEntry(name, BotSpec.parse(f"{sys.executable} {name}.py"))
                    for name in ("a", "b"))
    setup = WorkerSetup(uuid.uuid4().hex, cluster_worker.__version__, "phase10", entries, 10.0,
                        cluster_worker.Limits(), str(tmp_path), True, None, None, "client",
                        str(tmp_path / "x"), code_digest(), program_digests(entries, tmp_path),
                        os.getuid())
    with (tmp_path / "b.py").open("a") as f:
        f.write("# this worker's copy\n")
    monkeypatch.setattr(distributed, "get_worker", lambda: SimpleNamespace(address="tls://w:1"))
    assert check_worker(seating_only(setup, {"a"})).problem is None
    problem = check_worker(seating_only(setup, {"b"})).problem
    assert problem is not None and "its file b.py differs" in problem, problem
    assert check_worker(seating_only(setup, {"a"})).problem == problem  # the worker is unfit
    assert seating_only(setup, {"a", "b"}) == replace(setup)


def test_a_file_the_bot_writes_is_its_argument_not_its_program(tmp_path: Path) -> None:
    # Was: CI refused a run whose bot appends its pid to a file named in its command (the
    # tournament's own start-up check had written to it before a worker digested it). The
    # program is the command's first word if a file, and the first file after it.
    shutil.copy(RANDOM_BOT_PATH, tmp_path / "bot.py")
    (tmp_path / "games.log").write_text("")
    entry = BotEntry("b", BotSpec.parse(f"{sys.executable} bot.py games.log"))
    expected = program_digests([entry], tmp_path)
    assert [word for word, _ in expected[str(entry.spec)]] == [sys.executable, "bot.py"]
    (tmp_path / "games.log").write_text("pid 123\n")
    setup = WorkerSetup("tok", cluster_worker.__version__, "phase10", (entry,), 5.0,
                        cluster_worker.Limits(), str(tmp_path), True, None, None, "client",
                        str(tmp_path / "a"), code_digest(), expected, os.getuid())
    assert _checked_bots(setup)[1] is None
    jar = BotEntry("j", BotSpec.parse("java -jar bot.py games.log"))  # java on PATH: no file
    assert [word for word, _ in program_digests([jar], tmp_path)[str(jar.spec)]] == ["bot.py"]


def test_a_worker_of_another_user_cannot_share_the_folder(tmp_path: Path) -> None:
    # Was: workers as root, the tournament as another user: every game "its files could not
    # be kept: Permission denied", exit 1. Now: refused before any game when shared files are
    # asked for, and client files when left to choose.
    other = WorkerReport("tcp://w:1", None, False, None,
                         "it runs as uid 0, the tournament as uid 1000: the files it wrote "
                         "could not be moved into place")
    with pytest.raises(ClusterError, match="uid 0, the tournament as uid 1000"):
        files_way("shared", [other], tmp_path)
    assert files_way("auto", [other], tmp_path) == "client"


@pytest.mark.long  # many seconds: kept out of the default run (.ci/run runs it)
def test_ctrl_c_on_local_2_prints_one_line_and_exits_130(tmp_path: Path) -> None:
    # Was: 67 lines of the workers' tracebacks before the right exit 130. Ctrl-C reaches the
    # terminal's whole process group: the tournament and its local workers.
    out = tmp_path / "t"
    proc = subprocess.Popen(
        [sys.executable, "-m", "meldref", "tournament", "--bot", "builtin:greedy", "--bot",
         "builtin:random", "--game", "phase10", *SHORT, "--games", "400", "--cluster",
         "local:2", "--out", str(out), "--no-progress"],
        cwd=ROOT, env={**CLEAN, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 150
    while not (results.exists() and results.read_text().count("\n") >= 2):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no game finished"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=150)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr[-3000:]
    assert "KeyboardInterrupt" not in stderr
    lines = [json.loads(x) for x in results.read_text().splitlines()]
    assert len({line["game_id"] for line in lines}) == len(lines)


def test_a_game_outcome_pickles_with_every_field() -> None:
    # Through its constructor (see test_result_lines.py): a field added later goes too.
    import dataclasses

    values = {f.name: object() for f in dataclasses.fields(GameOutcome)}
    item = GameOutcome.__new__(GameOutcome)
    for name, value in values.items():
        object.__setattr__(item, name, value)
    assert item.__reduce__() == (GameOutcome, tuple(values.values()))


def test_a_verification_whose_workers_all_left_is_done_by_the_client(tmp_path: Path) -> None:
    # A verifying task runs only on other workers than the player (dask's work stealing
    # otherwise handed it to the idle player); if they all leave it would wait for ever: the
    # client gives it up and re-simulates the games itself, which counts an honest one.
    job, line, replay, claimed = forged_game(tmp_path)
    assert line.replay is not None

    class Waiting:  # a dask future that never finishes
        def done(self) -> bool:
            return False

    cancelled: list[object] = []
    pool = client_side(tmp_path / "client")
    pool.client = SimpleNamespace(cancel=cancelled.extend)  # type: ignore[assignment]
    pool.workers = ["tcp://10.0.0.9:4000"]  # the player alone is left
    flight = Flight(None)  # type: ignore[arg-type]
    waiting = Waiting()
    outcome = GameOutcome("tcp://10.0.0.9:4000", line=line,
                          files={line.replay: zlib.compress(replay.read_bytes())})
    flight.checking[waiting] = ((job,), [outcome])  # type: ignore[index]
    flight.verifiers[waiting] = ["tcp://10.0.0.8:4000"]  # type: ignore[index]
    lines: list[ResultLine] = []
    assert pool._orphans(flight, set(), lines) is None
    assert lines == [line] and cancelled == [waiting] and not flight.checking
    # ... and stops the run for a forged one.
    forged = GameOutcome("tcp://10.0.0.9:4000", line=claimed, files={line.replay: zlib.compress(
        rewritten(replay, list(claimed.figures.outcome.scores)))})  # type: ignore[union-attr]
    flight.checking[waiting] = ((job,), [forged])  # type: ignore[index]
    flight.verifiers[waiting] = ["tcp://10.0.0.8:4000"]  # type: ignore[index]
    stop = pool._orphans(flight, set(), [])
    assert stop is not None and "whose replay does not verify" in str(stop)
