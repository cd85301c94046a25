"""Tournaments on a dask cluster (issue 14), with a real scheduler and worker processes on
127.0.0.1, over TLS: the standings of a local run, a worker killed mid-run, a killed tournament
process resumed, a worker that cannot start a bot, a game that kills every worker it runs on,
files sent back to the tournament's machine, an uploaded bot folder.

Deselect with `-m 'not cluster'`; skipped (and says why) without dask.distributed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
import zlib
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import BAD_BOT, RANDOM_BOT, RANDOM_BOT_PATH, ROOT
from typer.testing import CliRunner

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install -e '.[cluster]')")
pytest.importorskip("cryptography", reason="cryptography (the test's TLS certificates) is not "
                    "installed (pip install -e '.[cluster]')")

import dask.config  # noqa: E402

from meldref.cli.app import app  # noqa: E402
from meldref.protocol.records import ResultLine  # noqa: E402
from meldref.replay.audit import verify  # noqa: E402
from meldref.tournament import cluster as cluster_module  # noqa: E402
from meldref.tournament import cluster_worker  # noqa: E402
from meldref.tournament.cluster import ClusterPool, inflate  # noqa: E402
from meldref.tournament.cluster_worker import files_of  # noqa: E402
from meldref.tournament.config import build_config  # noqa: E402
from meldref.tournament.run import open_tournament  # noqa: E402
from meldref.tournament.runner import run_job  # noqa: E402

pytestmark = pytest.mark.cluster

KILLER_BOT = f"{sys.executable} {ROOT / 'tests' / 'cli_bots' / 'worker_killer_bot.py'}"
PATH_BOT = f"meldref-test-bot-{uuid.uuid4().hex[:8]}"  # on PATH for this process only
# A nanny restarting a killed worker spawns a Python that imports dask and meldref: seconds on
# a quiet machine, over a minute seen when the suite shares two cores with other work.
RESTART_WAIT = 180
SHORT = ["--rules", "phases-to-win=1"]
runner = CliRunner()


@dataclass
class Cluster:
    address: str  # tls://127.0.0.1:PORT
    client: distributed.Client
    bin: Path  # holds PATH_BOT
    env: dict[str, str]  # dask's TLS settings for a client or worker in another process


@dataclass
class Tls:
    security: object  # distributed.security.Security
    settings: dict[str, object]  # dask's TLS settings for this process
    env: dict[str, str]  # the same, as environment variables for the others
    bin: Path  # holds PATH_BOT


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tls]:
    """Temporary TLS certificates, set as this process's dask settings for the module, and
    PATH_BOT on PATH (the workers inherit it)."""
    certs = tmp_path_factory.mktemp("certs")
    security = distributed.security.Security.temporary()
    settings: dict[str, object] = {"distributed.comm.require-encryption": True}
    env = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}
    for attribute, key in [("tls_ca_file", "ca-file"), ("tls_client_cert", "client.cert"),
                           ("tls_client_key", "client.key"), ("tls_worker_cert", "worker.cert"),
                           ("tls_worker_key", "worker.key")]:
        path = certs / f"{attribute}.pem"
        path.write_text(getattr(security, attribute))
        settings[f"distributed.comm.tls.{key}"] = str(path)
        variable = key.upper().replace("-", "_").replace(".", "__")
        env[f"DASK_DISTRIBUTED__COMM__TLS__{variable}"] = str(path)
    bin_dir = tmp_path_factory.mktemp("bin")
    script = bin_dir / PATH_BOT
    script.write_text(f"#!/bin/sh\nexec {RANDOM_BOT} --seed 5 \"$@\"\n")
    script.chmod(0o755)
    old_path = os.environ["PATH"]
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{old_path}"
    try:
        with dask.config.set(settings):
            yield Tls(security, settings, env, bin_dir)
    finally:
        os.environ["PATH"] = old_path


@contextlib.contextmanager
def tls_cluster(tls: Tls) -> Iterator[Cluster]:
    """A TLS scheduler and two worker processes (one thread each) on 127.0.0.1, reached as
    docs/cluster.md says, through dask's TLS settings; a worker that dies is restarted by its
    nanny. A game's task is played at most twice (allowed-failures 1), to keep the test of a
    game that kills its workers short."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        local = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
            protocol="tls://", security=tls.security, dashboard_address=None,
            worker_dashboard_address=None, silence_logs=logging.CRITICAL)
    client = distributed.Client(local, set_as_default=False)
    try:
        yield Cluster(local.scheduler_address, client, tls.bin, tls.env)
    finally:
        client.close()
        local.close()


@pytest.fixture(scope="module")
def cluster(tls: Tls) -> Iterator[Cluster]:
    """The module's cluster, for the tests that leave its workers alive."""
    with tls_cluster(tls) as shared:
        yield shared


@pytest.fixture
def own_cluster(tls: Tls) -> Iterator[Cluster]:
    """A cluster of the test's own, for a test that kills its workers: a nanny that fails to
    restart its worker on a loaded machine closes for good, and that must not leave the other
    tests a worker short (CI once waited 180 s for it)."""
    with tls_cluster(tls) as own:
        yield own


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["tournament", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "meldref.cli.app", "tournament", *args]


def results(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]


def verify_all(folder: Path) -> list[dict]:
    """Every game once, each replay re-simulated; the lines."""
    lines = results(folder)
    ids = [line["game_id"] for line in lines]
    assert len(ids) == len(set(ids)), ids
    for line in lines:
        assert verify(folder / line["replay"]).actions == line["actions"]
    assert not (folder / ".cluster").exists()  # attempt folders swept
    return lines


def wait_for_lines(folder: Path, count: int, proc: subprocess.Popen[bytes]) -> None:
    path = folder / "results.jsonl"
    deadline = time.monotonic() + 90
    while not (path.exists() and path.read_text().count("\n") >= count):
        assert proc.poll() is None, "the tournament ended early"
        assert time.monotonic() < deadline, "no results"
        time.sleep(0.05)


def pids_with(token: str) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if token.encode() in cmdline and stat.rsplit(")", 1)[1].split()[0] != "Z":
                out.append(int(entry))
    return out


def wait_until_gone(token: str, within: float = 20) -> None:
    deadline = time.monotonic() + within
    while alive := [p for p in pids_with(token) if p != os.getpid()]:
        assert time.monotonic() < deadline, f"bot processes left behind: {alive}"
        time.sleep(0.1)


@pytest.mark.long
def test_local_cluster_killed_resumed_and_equal_to_a_local_run(tmp_path: Path) -> None:
    # local:2 (two worker processes, TLS made for the run): kill -9 of the tournament ends its
    # workers (their nanny's pipe closes) and their bots (pdeathsig); the rerun resumes, and
    # ends with the games and standings of a -j 2 run with the same seed.
    token = f"tok{uuid.uuid4().hex[:10]}"
    (tmp_path / "seed.toml").write_text("seed = 11\n")
    args = [str(tmp_path / "seed.toml"), "--bot", "builtin:greedy", "--bot", "builtin:random",
            "--bot", f"{RANDOM_BOT} --seed 3 --name {token}", "--players", "2", "--games", "4",
            *SHORT, "--json", "--no-progress"]
    on_cluster = [*args, "--cluster", "local:2", "--out", str(tmp_path / "cluster")]
    proc = subprocess.Popen(command(*on_cluster), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_for_lines(tmp_path / "cluster", 2, proc)
    workers = [pid for pid in children(proc.pid) if "spawn_main" in cmdline(pid)]
    assert len(workers) == 2
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    wait_until_gone(token)
    deadline = time.monotonic() + 20
    while alive := [pid for pid in workers if "spawn_main" in cmdline(pid)]:
        assert time.monotonic() < deadline, f"workers left behind: {alive}"
        time.sleep(0.1)
    before = len(results(tmp_path / "cluster"))
    assert 2 <= before < 12
    code, cluster_out, err = invoke(*on_cluster)
    assert code == 0, err
    code, local_out, err = invoke(*args, "-j", "2", "--out", str(tmp_path / "local"))
    assert code == 0, err
    local, resumed = json.loads(local_out), json.loads(cluster_out)
    assert resumed["found_done"] == before and resumed["played_now"] == 12 - before
    assert resumed["standings"] == local["standings"]
    by_id = {r["game_id"]: r for r in verify_all(tmp_path / "local")}
    for line in verify_all(tmp_path / "cluster"):
        twin = by_id[line["game_id"]]
        for key in ("seed", "bots", "winners", "scores", "actions"):
            assert line[key] == twin[key]
    meta = json.loads((tmp_path / "cluster" / "tournament.json").read_text())
    assert meta["cluster"] == "local:2"


def children(parent: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if _ppid(stat) == parent:
                out.append(int(entry))
    return out


def _ppid(stat: str) -> int:
    """The parent's pid in a /proc/PID/stat line."""
    return int(stat.rsplit(")", 1)[1].split()[1])


def ancestor_of(ancestor: int, pid: int) -> bool:
    """Whether `ancestor` is `pid`'s parent, or its parent's, and so on."""
    while pid > 1:
        try:
            pid = _ppid(Path(f"/proc/{pid}/stat").read_text())
        except (OSError, ValueError, IndexError):
            return False
        if pid == ancestor:
            return True
    return False


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.long  # many seconds: kept out of the default run (.ci/run runs it)
def test_a_killed_worker_loses_no_game_and_leaves_no_bot(own_cluster: Cluster,
                                                         tmp_path: Path) -> None:
    out = tmp_path / "t"
    token = f"tok{uuid.uuid4().hex[:10]}"
    pids = own_cluster.client.run(os.getpid)
    killed: list[str] = []

    def kill_a_busy_worker() -> None:
        # A worker with a game in flight, whose game must be played again elsewhere: a game's
        # task on it (not the start-up check's, whose bots run there too) and one of the run's
        # bots running below it. Not judged by the results file: a verifying task waits for
        # the other worker's thread, so results can come in bunches, and CI once saw the last
        # games end before the second result line was written.
        deadline = time.monotonic() + 90
        while not finished.is_set() and time.monotonic() < deadline:
            playing = {address for address, keys in own_cluster.client.processing().items()
                       if any(str(key).startswith("meldref-t") for key in keys)}
            for address, pid in pids.items():
                if address in playing and any(ancestor_of(pid, bot)
                                              for bot in pids_with(token)):
                    killed.append(address)
                    os.kill(pid, signal.SIGKILL)
                    return
            time.sleep(0.01)

    # The bot takes 10 ms an action, so that a game lasts about a second and a worker is
    # seen busy (games of the plain random bot were over before one could be caught).
    slow = tmp_path / "slow_bot.py"
    slow.write_text(f"""import sys, time
sys.path.insert(0, {str(RANDOM_BOT_PATH.parent)!r})
import random_bot
original = random_bot.send
def send(line):
    if line.startswith("action"):
        time.sleep(0.01)
    original(line)
random_bot.send = send
sys.exit(random_bot.main(sys.argv[1:]))
""")
    finished = threading.Event()
    watcher = threading.Thread(target=kill_a_busy_worker)
    watcher.start()
    try:
        code, stdout, err = invoke("--bot", f"{sys.executable} {slow} --seed 1 --name {token}",
                                   "--bot", "builtin:random", "--games", "8", "--rules",
                                   "phases-to-win=2", "--out", str(out), "--json",
                                   "--no-progress", "--cluster", own_cluster.address)
    finally:
        finished.set()
        watcher.join()
    assert killed, "no worker had a game in flight"
    assert code == 0, err
    data = json.loads(stdout)
    assert data["played_now"] == 8 and data["missing"] == 0
    lines = verify_all(out)
    assert len(lines) == 8 and all(line["status"] == "ok" for line in lines)
    wait_until_gone(token)  # the dead worker's bots died with it (pdeathsig)


def test_a_worker_lost_during_the_start_up_check_is_not_waited_for(own_cluster: Cluster,
                                                                  tmp_path: Path) -> None:
    # The bot SIGKILLs its worker at the first handshake on a worker (the start-up check's;
    # a dask worker is a multiprocessing child, the tournament's own check is not), and plays
    # normally after: the check must not wait its whole bound (50 s here) for the lost
    # worker and fail the run; the other worker (and the dead one's replacement, checked at
    # its first game) play every game.
    flag = tmp_path / "killed-once"
    bot = tmp_path / "kill_once.py"
    bot.write_text(f"""import os, signal, sys
legal = []
for line in sys.stdin:
    words = line.split()
    if words[:1] == ["meldref"]:
        worker = os.getppid()  # above meldref's guard (protocol/guard.py)
        if b"guard.py" in open(f"/proc/{{worker}}/cmdline", "rb").read():
            worker = int(open(f"/proc/{{worker}}/stat").read().rsplit(")", 1)[1].split()[1])
        parent = open(f"/proc/{{worker}}/cmdline", "rb").read()
        if b"spawn_main" in parent and not os.path.exists({str(flag)!r}):
            open({str(flag)!r}, "x").close()
            os.kill(worker, signal.SIGKILL)
            sys.exit(0)
        print("id name once", "ready", sep="\\n", flush=True)
    elif words[:1] == ["view"]:
        legal = []
    elif words[:1] == ["legal"]:
        legal.append(" ".join(words[1:]))
    elif words[:1] == ["go"]:
        print("action", words[1], legal[0], flush=True)
    elif words[:1] == ["ping"]:
        print("pong", words[1], flush=True)
    elif words[:1] == ["quit"]:
        break
""")
    out = tmp_path / "t"
    code, stdout, err = invoke("--bot", f"{sys.executable} {bot}", "--bot", "builtin:random",
                               "--games", "4", *SHORT, "--out", str(out), "--json",
                               "--no-progress", "--cluster", own_cluster.address)
    assert flag.exists(), "the bot never killed a worker"
    assert code == 0, err  # was: exit 2, "no answer to the start-up check in 50 s"
    assert json.loads(stdout)["missing"] == 0
    assert all(line["status"] == "ok" for line in verify_all(out))


@pytest.mark.long  # waits out the workers' idle sweep of the killed run's bots
def test_a_killed_tournament_resumes_on_the_cluster(cluster: Cluster, tmp_path: Path) -> None:
    out = tmp_path / "t"
    token = f"tok{uuid.uuid4().hex[:10]}"
    args = ["--bot", f"{RANDOM_BOT} --seed 2 --name {token}", "--bot", "builtin:greedy",
            "--games", "8", "--rules", "phases-to-win=2", "--out", str(out), "--json",
            "--no-progress", "--cluster", cluster.address]
    proc = subprocess.Popen(command(*args), cwd=ROOT, env={**os.environ, **cluster.env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_lines(out, 2, proc)
    proc.send_signal(signal.SIGKILL)  # its games in flight go on, as orphans, on the workers
    proc.wait(timeout=10)
    before = len(results(out))
    assert 2 <= before < 8
    code, stdout, err = invoke(*args)
    assert code == 0, err
    data = json.loads(stdout)
    assert data["found_done"] == before and data["played_now"] == 8 - before
    assert len(verify_all(out)) == 8
    # The killed run's bots kept on the workers get no `release_run`: they are stopped once
    # the run has been idle there for KEEP_IDLE seconds.
    wait_until_gone(token, 20 + cluster_worker.KEEP_IDLE)


def test_a_worker_that_cannot_start_a_bot_fails_the_start_up_check(cluster: Cluster,
                                                                    tmp_path: Path) -> None:
    # A third worker whose PATH lacks the bot that this machine (and the two others) have.
    env = {**os.environ, "PATH": os.environ["PATH"].replace(f"{cluster.bin}{os.pathsep}", "")}
    blind = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_worker", cluster.address, "--nthreads",
         "1", "--no-nanny", "--host", "127.0.0.1", "--no-dashboard", "--name", "blind"],
        env={**env, **cluster.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        cluster.client.wait_for_workers(3, timeout=60)
        workers = cluster.client.scheduler_info(n_workers=-1)["workers"]
        address = next(a for a, w in workers.items() if w["name"] == "blind")
        out = tmp_path / "t"
        code, _, err = invoke("--bot", PATH_BOT, "--bot", "builtin:random", *SHORT, "--out",
                              str(out), "--no-progress", "--cluster", cluster.address)
        message = " ".join(err.split())
        assert code == 2, err
        assert f"worker {address}: bot command {PATH_BOT}: '{PATH_BOT}' is not on PATH" in \
            message
        others = [a for a in workers if a != address]
        assert not any(other in message for other in others)
        assert not (out / "results.jsonl").read_text()  # no game was played
    finally:
        blind.terminate()
        blind.wait(timeout=30)


def test_a_game_that_kills_its_workers_is_recorded_as_an_error(own_cluster: Cluster,
                                                               tmp_path: Path) -> None:
    out = tmp_path / "t"
    code, _, err = invoke("--bot", KILLER_BOT, "--bot", "builtin:random", "--games", "1",
                               "--no-duplicate", *SHORT, "--out", str(out), "--json",
                               "--no-progress", "--cluster", own_cluster.address)
    assert code == 1, err  # a failed game
    [line] = results(out)
    assert line["status"] == "error"
    assert line["error"] == "its worker died 2 times (killed, or out of memory?)"
    assert "its worker died" in (out / "failures.txt").read_text()


def test_bots_faults_and_limits_are_recorded_as_in_local_runs(cluster: Cluster,
                                                              tmp_path: Path) -> None:
    # The workers see the folder here: they write each game in an attempt folder, and the
    # tournament moves its replay and kept logs into place. A bot that crashes, and one that
    # goes over --memory-mb, fail their games on the workers as they would locally.
    out = tmp_path / "t"
    code, _, err = invoke("--bot", "builtin:greedy", "--bot", f"{BAD_BOT} crash", "--bot",
                          f"{BAD_BOT} hog", "--format", "gauntlet", "--players", "2", "--games",
                          "2", "--memory-mb", "256", *SHORT, "--out", str(out), "--no-progress",
                          "--cluster", cluster.address)
    assert code == 0, err
    lines = verify_all(out)
    assert len(lines) == 4
    failures = (out / "failures.txt").read_text().splitlines()
    assert len(failures) == 4
    for line in lines:
        bad = 1 - line["bots"].index("greedy")
        assert [f["outcome"] for f in line["faults"][bad]] == ["crashed"], line
        assert (out / line["logs"][bad]).is_file()
    for failure in failures:
        game_id, _, bot, outcome, log, replay = failure.split("\t")
        assert outcome == "crashed" and bot in ("bad-crash", "bad-hog")
        assert (out / log).parent == out / "logs" / game_id and (out / replay).is_file()


def test_files_sent_back_and_an_uploaded_bot_folder(cluster: Cluster, tmp_path: Path) -> None:
    # The bot folder is uploaded (its program must stay executable) and the games' files
    # come back with their results; the bot writes the folder it runs in to its log.
    folder = tmp_path / "contest"
    folder.mkdir()
    shutil.copy(ROOT / "bots" / "random_bot.py", folder / "random_bot.py")
    bot = folder / "where_bot.py"
    bot.write_text(f"#!{sys.executable}\nimport os, runpy, sys\n"
                   "print('cwd', os.getcwd(), file=sys.stderr, flush=True)\n"
                   "sys.argv = ['random_bot.py', '--seed', '4']\n"
                   "runpy.run_path('random_bot.py', run_name='__main__')\n")
    bot.chmod(0o755)
    out = tmp_path / "t"
    code, _, err = invoke("--bot", "./where_bot.py", "--bot", "builtin:greedy", *SHORT,
                               "--games", "2", "--bot-folder", str(folder), "--upload-bots",
                               "--cluster-files", "client", "--logs", str(out / "logs"),
                               "--out", str(out), "--json", "--no-progress", "--cluster",
                               cluster.address)
    assert code == 0, err
    lines = verify_all(out)
    assert len(lines) == 2
    # The bot says where it runs as it starts: a deal set is one task, so the second game
    # may be played by the bot the first one started (kept), whose log then has no new line.
    logs = [path for line in lines for path in line["logs"] if path]
    assert logs
    for log in logs:
        text = (out / log).read_text()
        assert "meldref-bots-" in text and str(folder) not in text  # the uploaded copy
        assert (out / log).stat().st_mode & 0o777 == 0o600


def test_a_game_played_twice_is_counted_once(cluster: Cluster, tmp_path: Path) -> None:
    # Whatever makes a game arrive twice (here: given twice), its id is yielded once, and the
    # second play's attempt folder is swept, not moved over the first one's replay.
    config = build_config({}, {
        "bots": ["builtin:greedy", RANDOM_BOT], "games": 2, "seed": 3, "out": str(tmp_path),
        "rules": {"phases-to-win": 1}, "cluster": cluster.address})
    folder = open_tournament(config).folder
    first, second = config.schedule()
    pool = ClusterPool(config, run_job, folder, False)
    lines = list(pool.play([first, first, second, first]))
    assert sorted(line.game_id for line in lines) == [first.game_id, second.game_id]
    for line in lines:
        assert line.replay is not None and line.figures is not None
        assert verify(folder / line.replay).actions == line.figures.actions
    assert not (folder / ".cluster").exists()


def test_a_worker_may_not_send_files_outside_its_game() -> None:
    line = ResultLine("t00-d0000-s00", "phase10", 1, ("a", "b"),
                      replay="replays/t00-d0000-s00.jsonl",
                      logs=("logs/t00-d0000-s00/seat0-a.stderr", None))
    assert files_of(line) == ["replays/t00-d0000-s00.jsonl",
                              "logs/t00-d0000-s00/seat0-a.stderr"]
    for bad in ("../x", "replays/other.jsonl", "logs/t00-d0000-s00/../../x",
                "results.jsonl", "/etc/passwd", "logs/t01-d0000-s00/seat0-a.stderr"):
        with pytest.raises(ValueError, match="not a replay or log"):
            files_of(dataclasses.replace(line, logs=(bad,)))


def test_files_sent_back_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    text = b"replay line\n" * 1000
    assert inflate(zlib.compress(text, 1), "r") == text
    monkeypatch.setattr(cluster_worker, "MAX_FILE_BYTES", 1000)
    with pytest.raises(ValueError, match="over"):
        inflate(zlib.compress(text, 1), "r")  # 12,000 bytes from 60: refused, not inflated
    with pytest.raises(ValueError, match="damaged"):
        inflate(zlib.compress(b"short")[:-3], "r")
    with pytest.raises(ValueError, match="damaged"):
        inflate(b"not zlib at all", "r")


def test_a_signal_while_leaving_the_cluster_waits_until_it_is_left(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SIGTERM just after the last game, while `local:1` is being closed: the close finishes
    # (a cluster closed half way made dask's exit handler wait 10 s, and the attempt folders
    # stayed), then the signal acts as it would have.
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are handled by the main thread only")
    closed: list[object] = []
    original = distributed.LocalCluster.close

    def close_signalled(self: object, *args: object, **kwargs: object) -> object:
        signal.raise_signal(signal.SIGTERM)  # the command line's handler: KeyboardInterrupt
        out = original(self, *args, **kwargs)
        closed.append(self)
        return out

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(distributed.LocalCluster, "close", close_signalled)
    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        config = build_config({}, {
            "bots": ["builtin:greedy", "builtin:random"], "games": 2, "seed": 3,
            "out": str(tmp_path), "rules": {"phases-to-win": 1}, "cluster": "local:1"})
        folder = open_tournament(config).folder
        pool = ClusterPool(config, run_job, folder, False)
        lines = []
        with pytest.raises(KeyboardInterrupt):
            lines.extend(pool.play(config.schedule()))
    finally:
        signal.signal(signal.SIGTERM, before)
    assert len(lines) == 2
    [cluster] = closed  # closed once, to the end, before the signal acted
    assert cluster.status == distributed.core.Status.closed  # type: ignore[attr-defined]
    assert not (folder / ".cluster").exists()


# The tournament's command line, with a note at exit of the state of every dask cluster of
# the process, taken before dask's own exit handler (atexit runs the last registered first),
# which closes any cluster left open, waiting up to 10 s for it.
WATCHED_EXIT = """import atexit, sys
from distributed.deploy.spec import SpecCluster
note = sys.argv.pop(1)
atexit.register(lambda: open(note, "w").write(
    " ".join(str(c.status) for c in list(SpecCluster._instances)) or "none"))
from meldref.cli.app import main
sys.argv[0] = "meldref"
main()
"""


@pytest.mark.long  # many seconds: kept out of the default run (.ci/run runs it)
def test_sigterm_after_the_last_game_on_a_local_cluster_leaves_nothing(tmp_path: Path) -> None:
    token = f"tok{uuid.uuid4().hex[:10]}"
    out, note = tmp_path / "t", tmp_path / "clusters-at-exit"
    proc = subprocess.Popen([sys.executable, "-c", WATCHED_EXIT, str(note), "tournament",
        "--bot", "builtin:greedy", "--bot", f"{RANDOM_BOT} --seed 3 --name {token}",
        "--games", "6", *SHORT, "--seed", "4", "--no-progress", "--out", str(out),
        "--cluster", "local:2"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for_lines(out, 6, proc)
    workers = [pid for pid in children(proc.pid) if "spawn_main" in cmdline(pid)]
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 130
    # Closed to the end before the process exits (was: a cluster closed half way, which
    # dask's exit handler then waited 10 s for): measured as the state, not by the clock.
    assert set(note.read_text().split()) <= {"none", "Status.closed"}, note.read_text()
    assert not (out / ".cluster").exists(), list((out / ".cluster").rglob("*"))
    assert len(results(out)) == 6
    wait_until_gone(token)
    assert not [pid for pid in workers if "spawn_main" in cmdline(pid)]


def listening(pids: set[int]) -> set[int]:
    import psutil  # a dependency of distributed

    ports = set()
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            ports |= {c.laddr.port for c in psutil.Process(pid).net_connections("tcp")
                      if c.status == psutil.CONN_LISTEN}
    return ports


def http_answer(port: int) -> int | None:
    """The HTTP status a port answers a status page's request with (None: no HTTP answer)."""
    for page in ("/info/main/workers.html", "/health", "/metrics", "/json/identity.json"):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{page}", timeout=5) as reply:
                return int(reply.status)
        except urllib.error.HTTPError as exc:
            return exc.code
        except (OSError, http.client.HTTPException):
            continue
    return None


def test_a_local_cluster_serves_no_http_page() -> None:
    # dask's scheduler and workers serve status pages (workers, logs) over plain HTTP to any
    # local user, dashboard or not: `local:N` turns their routes off and stops their servers,
    # so every port its processes listen on speaks only dask's own (TLS) protocol.
    before = listening({os.getpid(), *children(os.getpid())})
    local = cluster_module.local_cluster(2)
    try:
        client = distributed.Client(local, set_as_default=False)
        client.wait_for_workers(2, timeout=RESTART_WAIT)
        workers = client.scheduler_info(n_workers=-1)["workers"]
        ports = listening({os.getpid(), *children(os.getpid())}) - before
        comm = {int(address.rsplit(":", 1)[1]) for address in
                [local.scheduler_address, *workers, *(w["nanny"] for w in workers.values())]}
        assert ports == comm, "a port besides the scheduler's, the workers' and the nannies'"
        assert {port: http_answer(port) for port in ports} == dict.fromkeys(ports)
        client.close()
    finally:
        local.close()


PID_BOT = ROOT / "tests" / "bots" / "pid_bot.py"


def started(pids: Path) -> list[int]:
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


def running(pids: list[int]) -> list[int]:
    return [pid for pid in pids if "pid_bot" in cmdline(pid) and
            Path(f"/proc/{pid}/stat").exists() and
            Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]


@pytest.mark.parametrize("fresh", [False, True])
def test_workers_keep_their_bots_across_games(cluster: Cluster, tmp_path: Path,
                                              fresh: bool) -> None:
    # Issue 12 on a cluster: each worker keeps a run's bot programs from game to game (as a
    # local pool's worker does), and stops them when the run ends; --fresh-bots gives each
    # game its own. Counted by pid: the tournament's own start-up check, each worker's, then
    # (kept) one per worker.
    pids, out = tmp_path / "p.pids", tmp_path / "t"
    code, _, err = invoke("--bot", f"{sys.executable} {PID_BOT} {pids}", "--bot",
                          "builtin:greedy", "--games", "8", *SHORT, "--out", str(out),
                          "--logs", str(out / "logs"), "--no-progress", "--cluster",
                          cluster.address, *(["--fresh-bots"] if fresh else []))
    assert code == 0, err
    lines = verify_all(out)
    assert len(lines) == 8 and all(line["status"] == "ok" for line in lines)
    assert not any(any(line["faults"]) for line in lines)
    # The processes that played, from the games' logs (a start-up check's process plays no
    # game; a worker may join after the check and check itself at its first game): counted
    # so, whenever a worker joined.
    games_by_pid: dict[str, set[str]] = defaultdict(set)
    for log in out.glob("logs/*/*.stderr"):
        for pid, game in re.findall(r"pid (\d+) game (\d+) begins", log.read_text()):
            games_by_pid[pid].add(f"{log.parent.name}/{game}")
    assert {int(pid) for pid in games_by_pid} <= set(started(pids))
    assert sum(len(games) for games in games_by_pid.values()) == 8
    workers = len(cluster.client.scheduler_info(n_workers=-1)["workers"])
    if fresh:
        assert len(games_by_pid) == 8
    else:
        assert len(games_by_pid) <= max(2, workers) < 8
    deadline = time.monotonic() + 20  # released at the run's end (`quit`, on the workers)
    while alive := running(started(pids)):
        assert time.monotonic() < deadline, f"kept bots left running: {alive}"
        time.sleep(0.1)
    for log in out.glob("logs/*/*.stderr"):  # each game's log shows one game of one process
        assert len(set(re.findall(r"pid (\d+) game (\d+) begins", log.read_text()))) == 1


@pytest.mark.long  # 4-6 s: kept out of the default run, which .ci/run's -m long runs
def test_a_worker_with_two_task_threads_keeps_a_bot_per_thread(tmp_path: Path) -> None:
    # The kernel's death signal (setpriv --pdeathsig) follows the thread that started a bot:
    # each task thread keeps the bots it started (a bot lent to another thread's game would
    # die mid-game if its thread ended), they live on while the games go on, and they die
    # with the worker process when it is killed.
    pids, out = tmp_path / "p.pids", tmp_path / "t"
    plain = {"distributed.worker.profile.enabled": False,  # (not the fixture's TLS)
             "distributed.comm.require-encryption": False}
    with dask.config.set(plain), contextlib.ExitStack() as stack:
        local = distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1",
            protocol="tcp://", dashboard_address=None, worker_dashboard_address=None,
            silence_logs=logging.CRITICAL)
        stack.callback(local.close)
        client = distributed.Client(local, set_as_default=False)
        [worker_pid] = client.run(os.getpid).values()
        code, _, err = invoke("--bot", f"{sys.executable} {PID_BOT} {pids}", "--bot",
                              "builtin:greedy", "--games", "12", *SHORT, "--out", str(out),
                              "--logs", str(out / "logs"), "--no-progress", "--cluster",
                              local.scheduler_address, "--insecure-tcp")
        assert code == 0, err
        lines = verify_all(out)
        assert all(line["status"] == "ok" and not any(line["faults"]) for line in lines)
        threads: dict[str, set[str]] = {}
        for log in out.glob("logs/*/*.stderr"):
            [(pid, _)] = set(re.findall(r"pid (\d+) game (\d+) begins", log.read_text()))
            threads.setdefault(pid, set()).add(log.parent.name)
        assert len(started(pids)) <= 1 + 1 + 2 < 12  # checks, then one per thread
        assert max(len(games) for games in threads.values()) > 1
        # A second run on the same worker; killed mid-run: its kept bots die with it.
        pids2 = tmp_path / "p2.pids"
        proc = subprocess.Popen(command(
            "--bot", f"{sys.executable} {PID_BOT} {pids2}", "--bot", "builtin:greedy",
            "--games", "40", *SHORT, "--out", str(tmp_path / "t2"), "--no-progress",
            "--cluster", local.scheduler_address, "--insecure-tcp"), cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        wait_for_lines(tmp_path / "t2", 4, proc)
        on_worker = [pid for pid in running(started(pids2)) if worker_pid in ancestry(pid)]
        assert on_worker
        os.kill(worker_pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while alive := running(on_worker):
            assert time.monotonic() < deadline, f"bots outlived their worker: {alive}"
            time.sleep(0.1)
        proc.kill()
        proc.wait(timeout=30)
        client.close()


def ancestry(pid: int) -> list[int]:
    out = []
    while pid > 1:
        try:
            pid = _ppid(Path(f"/proc/{pid}/stat").read_text())
        except OSError:
            break
        out.append(pid)
    return out


def test_a_run_has_a_keeper_per_task_thread_until_it_is_released() -> None:
    token = f"run{uuid.uuid4().hex[:8]}"
    with cluster_worker.run_keeper(token) as first:
        pass
    with cluster_worker.run_keeper(token) as again:
        pass
    other: list[object] = []

    def play_elsewhere() -> None:
        with cluster_worker.run_keeper(token) as keeper:
            other.append(keeper)

    thread = threading.Thread(target=play_elsewhere)
    thread.start()
    thread.join()
    assert again is first and other[0] is not first
    assert sum(key[0] == token for key in cluster_worker._KEPT) == 2
    cluster_worker.release_run(token)
    assert not any(key[0] == token for key in cluster_worker._KEPT)
    with cluster_worker.run_keeper(token) as after:  # a game of the run after its end
        assert after is not first
    cluster_worker.release_run(token)



SEED_SNIFFER = """
import os, sys
with open(sys.argv[1]) as f:  # read from a file: on its own command line it would be found
    seed = f.read().strip()
seen = []
for pid in os.listdir("/proc"):
    if pid.isdigit():
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as f:
                    if seed.encode() in f.read():
                        seen.append(f"{pid} {part}")
            except OSError:
                pass
with open(sys.argv[2], "a") as f:
    f.write("".join(line + "\\n" for line in seen) + "scanned\\n")
os.execv(sys.executable, [sys.executable, *sys.argv[3:]])
"""


def test_the_seed_is_on_no_command_line_or_environment_a_bot_can_read(
        cluster: Cluster, tmp_path: Path) -> None:
    # docs/cluster.md: the seed travels to the workers inside the pickled jobs, never on a
    # command line or in an environment (which other processes on a machine can read in
    # /proc). A bot looks through every process there while the tournament runs.
    seed = "918273645"
    sniffer, told, found = tmp_path / "sniff.py", tmp_path / "seed.txt", tmp_path / "found.txt"
    sniffer.write_text(SEED_SNIFFER)
    told.write_text(seed)
    config = tmp_path / "t.toml"
    config.write_text(f'bots = ["builtin:greedy", "{sys.executable} {sniffer} {told} {found} '
                      f'{RANDOM_BOT_PATH}"]\nseed = {seed}\ngames = 2\n')
    code, _, err = invoke(str(config), *SHORT, "--out", str(tmp_path / "t"), "--no-progress",
                          "--cluster", cluster.address)
    assert code == 0, err
    lines = found.read_text().splitlines()
    assert lines.count("scanned") >= 2  # the start-up check's process and a game's
    assert [line for line in lines if line != "scanned"] == []


def pool_on(cluster: Cluster, tmp_path: Path, games: int) -> tuple[ClusterPool, object]:
    """A `ClusterPool` of three-seat short games on `cluster`, a deal set (6 games) a task;
    with the plan's jobs."""
    config = build_config({}, {
        "bots": ["builtin:greedy", "builtin:random", "builtin:expert"], "players": 3,
        "games": games, "seed": 2, "out": str(tmp_path / "t"), "rules": {"phases-to-win": 1},
        "cluster": cluster.address})
    pool = ClusterPool(config, run_job, open_tournament(config).folder, False)
    pool.size.seconds = 0.0  # a deal set a task, so that each worker takes several
    return pool, config.schedule()


def test_the_runs_setup_is_installed_once_per_worker(cluster: Cluster, tmp_path: Path) -> None:
    # Was: every task carried the run's setup (1.0 KB with 3 bots, 23.4 KB with 300). Now it
    # is installed on each worker once (a worker plugin), and tasks carry its token.
    pool, jobs = pool_on(cluster, tmp_path, 48)
    token = pool.token
    lines = list(pool.play(jobs))  # type: ignore[call-overload]
    assert len({line.game_id for line in lines}) == len(lines) == 48
    counts = cluster.client.run(cluster_worker.setup_counts, token)
    assert [installs for installs, _ in counts.values()] == [1, 1], counts
    assert sum(tasks for _, tasks in counts.values()) == 8, counts  # 48 games, 6 a task


def test_a_late_worker_gets_the_setup_and_one_without_it_is_sent_it_again(
        own_cluster: Cluster, tmp_path: Path) -> None:
    # A worker that joins after the run began gets the setup as it joins (the scheduler keeps
    # the plugin for it); a worker that lacks it all the same (restarted as it went out)
    # says so, is sent it again, and its games are played: every game once.
    pool, jobs = pool_on(own_cluster, tmp_path, 60)
    client = own_cluster.client
    first = sorted(client.nthreads())
    client.run(cluster_worker.forget_setup, pool.token)  # as if both had been restarted
    late = subprocess.Popen(
        ["dask", "worker", own_cluster.address, "--nthreads", "1", "--no-dashboard", "--host",
         "127.0.0.1"], env={**os.environ, **own_cluster.env}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        client.wait_for_workers(3, timeout=RESTART_WAIT)
        new = (set(client.nthreads()) - set(first)).pop()
        assert client.run(cluster_worker.setup_counts, pool.token, workers=[new]) == \
            {new: (1, 0)}
        lines = list(pool.play(jobs))  # type: ignore[call-overload]
        counts = client.run(cluster_worker.setup_counts, pool.token)
    finally:
        os.killpg(late.pid, signal.SIGKILL)
        late.wait()
    assert len({line.game_id for line in lines}) == len(lines) == 60
    assert all(line.ok for line in lines)
    assert [counts[address][0] for address in first] == [2, 2], counts  # sent again once
    assert counts[new][0] == 1, counts
