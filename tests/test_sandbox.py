"""The sandbox (`--sandbox`, protocol/sandbox.py): every escape the probe bot tries fails, in
every game and in a -j 2 tournament, nothing of the host changes, nothing is left running;
a misbehaving bot is judged exactly as without a sandbox; no sandbox, no run.

tests/bots/probe_bot.py reports each escape it tried as `id probe.<escape> blocked|OPEN ...`
in its handshake; the replay header keeps every `id`, so a test reads them there."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import (
    BAD_BOT_PATH,
    FAKE,
    FAST,
    PATIENT,
    RANDOM_BOT_PATH,
    ROOT,
    SHORT,
    TESTS,
    PlayBad,
    command,
    outcomes,
    pids_with,
    wait_for,
)
from typer.testing import CliRunner

from meldref.cli import app
from meldref.protocol import sandbox
from meldref.protocol.command import BotCommand
from meldref.protocol.limits import Limits
from meldref.protocol.seats import ProcessSeat

PROBLEM = sandbox.sandbox_problem()
if PROBLEM is not None:
    print(f"tests/test_sandbox.py: skipped: {PROBLEM}", file=sys.stderr)
needs_sandbox = pytest.mark.skipif(PROBLEM is not None, reason=f"no sandbox here: {PROBLEM}")
PROBE = TESTS / "bots" / "probe_bot.py"
GAMES = {"phase10": ["--rules", "phases-to-win=1", "--players", "2"],
         "fivecrowns": ["--players", "2"],
         "solitaire": []}
LIGHT = ["read-other", "referee-proc", "signal", "trace", "loopback", "network",
         "unix-socket", "write-outside", "user-namespace"]
HEAVY = ["fill-tmp", "fork-bomb", "allocate", "spin-cpu"]
CAPS = ["--memory-mb", "400", "--max-processes", "60"]
runner = CliRunner()


@dataclasses.dataclass
class Host:
    """What a probe may try to reach on the host: a listening port and Unix sockets, a bot
    folder of another bot with a secret, a file outside any temporary folder to create."""

    port: int
    unix: Path
    abstract: str
    other: Path
    mark: Path

    def args(self, *targets: Path) -> list[str]:
        out = ["--referee", str(os.getpid()), "--port", str(self.port), "--unix",
               str(self.unix), "--abstract", self.abstract, "--mark", str(self.mark),
               "--other", str(self.other), "--other", str(self.other / "secret.txt")]
        for target in targets:
            out += ["--other", str(target)]
        return out


@pytest.fixture
def host(tmp_path: Path, bot_token: str) -> Iterator[Host]:
    server = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(str(tmp_path / "service.sock"))
    unix.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0meldref-probe-" + bot_token)
    abstract.listen()
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "secret.txt").write_text("the leader's bot\n")
    os.chmod(other, 0o755)
    (other / "secret.txt").chmod(0o644)
    try:
        yield Host(server.getsockname()[1], tmp_path / "service.sock",
                   "meldref-probe-" + bot_token, other, tmp_path / "made-by-the-bot")
    finally:
        for s in (server, unix, abstract):
            s.close()


def probe_folder(tmp_path: Path, name: str) -> Path:
    """A bot folder of its own holding a copy of the probe (readable by other users: the
    sandboxed bot runs as a uid of its own)."""
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(PROBE, folder / "probe_bot.py")
    os.chmod(folder, 0o755)
    (folder / "probe_bot.py").chmod(0o644)
    return folder


def probe_command(folder: Path, token: str, args: list[str], heavy: bool = False) -> str:
    """The probe's command line; the token (an unreadable path) lets the test find it."""
    return command(folder / "probe_bot.py", *args, *(["--heavy"] if heavy else []),
                   "--other", f"/{token}")


def header_ids(replay: Path) -> list[dict[str, str]]:
    header = json.loads(replay.read_text().splitlines()[0])
    return [seat["id"] for seat in header["seats"] if seat.get("id", {}).get("name") == "probe"]


def probes(ids: dict[str, str]) -> dict[str, str]:
    return {k.removeprefix("probe."): v for k, v in ids.items() if k.startswith("probe.")}


def assert_all_blocked(ids: dict[str, str], expected: list[str]) -> None:
    found = probes(ids)
    assert sorted(found) == sorted(expected), found
    opened = {k: v for k, v in found.items() if not v.startswith("blocked")}
    assert not opened, opened


def host_unchanged(host: Host) -> None:
    assert not host.mark.exists()
    assert (host.other / "secret.txt").read_text() == "the leader's bot\n"
    assert sorted(p.name for p in host.other.iterdir()) == ["secret.txt"]


@needs_sandbox
@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_escape_fails_in_a_sandboxed_match(game: str, tmp_path: Path, host: Host,
                                                 bot_token: str) -> None:
    folder = probe_folder(tmp_path, "probe")
    replay = tmp_path / "replay.jsonl"
    bot = probe_command(folder, bot_token, host.args(replay, ROOT / "README.md"), heavy=True)
    args = ["match", game, "--bot", bot, *GAMES[game], "--seed", "3", "--sandbox", *CAPS,
            "--startup-time", "30", "--replay", str(replay), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (line,) = json.loads(result.stdout)["games"]
    assert line["status"] == "ok" and not any(line["faults"]), line  # the game went on
    for ids in header_ids(replay):
        assert_all_blocked(ids, LIGHT + HEAVY)
    assert "through cgroup" in result.stderr or "no cgroup" in result.stderr  # says which
    host_unchanged(host)
    assert wait_for(lambda: not pids_with(bot_token), 10), "left running"


def test_the_probe_gets_out_without_a_sandbox(tmp_path: Path, host: Host,
                                             bot_token: str) -> None:
    """The control: the same probe, no sandbox, reads the other bot's folder, the referee's
    /proc, reaches the host's loopback and its Unix sockets (so the test above can fail)."""
    folder = probe_folder(tmp_path, "probe")
    replay = tmp_path / "replay.jsonl"
    bot = probe_command(folder, bot_token, host.args(replay))
    result = runner.invoke(app, ["match", "solitaire", "--bot", bot, "--seed", "3",
                                 "--replay", str(replay)])
    assert result.exit_code == 0, result.output
    (ids,) = header_ids(replay)
    found = probes(ids)
    for escape in ("read-other", "referee-proc", "signal", "trace", "loopback",
                   "unix-socket", "write-outside", "user-namespace"):
        assert found[escape].startswith("OPEN"), (escape, found[escape])


@needs_sandbox
@pytest.mark.long  # the matches above try every escape in the default run
def test_every_escape_fails_in_a_sandboxed_tournament_of_two_jobs(
        tmp_path: Path, host: Host, bot_token: str) -> None:
    out = tmp_path / "t"
    a, b = probe_folder(tmp_path, "a"), probe_folder(tmp_path, "b")
    common = [*host.args(out, out / "tournament.json", out / "replays")]
    bot_a = probe_command(a, bot_token, [*common, "--other", str(b)], heavy=True)
    bot_b = probe_command(b, bot_token, [*common, "--other", str(a)], heavy=True)
    result = runner.invoke(app, ["tournament", "--game", "phase10", "--bot", bot_a, "--bot",
                                 bot_b, "--games", "4", "-j", "2", "--rules", "phases-to-win=1",
                                 "--out", str(out), "--no-progress", "--sandbox", *CAPS,
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["missing"] == 0
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 4 and all(x["status"] == "ok" for x in lines)
    for x in lines:
        for ids in header_ids(out / x["replay"]):
            assert_all_blocked(ids, LIGHT + HEAVY)
    host_unchanged(host)
    assert wait_for(lambda: not pids_with(bot_token), 10), "left running"


@pytest.mark.long  # many seconds: kept out of the default run (.ci/run runs it)
@needs_sandbox
def test_bot_check_reports_each_escape_as_a_check(tmp_path: Path, host: Host,
                                                  bot_token: str) -> None:
    folder = probe_folder(tmp_path, "probe")
    bot = probe_command(folder, bot_token, host.args(), heavy=True)
    result = runner.invoke(app, ["bot", "check", bot, "--game", "solitaire", "--sandbox",
                                 *CAPS, "--startup-time", "30", "--json"])
    assert result.exit_code == 0, result.output
    checks = {c["check"]: c for c in json.loads(result.stdout)["checks"]}
    for escape in LIGHT + HEAVY:
        assert checks[f"sandbox: {escape}"]["status"] == "pass", checks[f"sandbox: {escape}"]


@needs_sandbox
def test_the_folders_above_what_the_sandbox_shows_hold_only_the_way_down(tmp_path: Path,
                                                                         bot_token: str) -> None:
    """The sandbox binds meldref's package (for the SDK) and the bot's folder at their real
    paths, so their parents exist in it holding just the way down: a checkout in /srv/ci made
    docs/sandbox.md's probe read "/srv: 1 entries" as an escape. The probe counts what else a
    folder holds; the checkout's parent (here with its siblings) shows nothing else."""
    folder = probe_folder(tmp_path, "probe")
    above = [str(ROOT.parent), str(folder.parent.parent)]
    bot = probe_command(folder, bot_token, [arg for path in above for arg in ("--other", path)])
    result = runner.invoke(app, ["bot", "check", bot, "--game", "solitaire", "--sandbox",
                                 *CAPS, "--startup-time", "30", "--json"])
    checks = {c["check"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["sandbox: read-other"]["status"] == "pass", checks["sandbox: read-other"]


# ----------------------------------------------------------------------------------------------
# What the bot gets


@needs_sandbox
def test_a_sandboxed_bot_has_a_uid_of_its_own_and_a_fresh_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFEREE_SECRET", "s3cr3t")
    folder = probe_folder(tmp_path, "probe")
    limits = dataclasses.replace(FAST, sandbox=True)
    argv = (sys.executable, str(folder / "probe_bot.py"))
    seats = [ProcessSeat(BotCommand(argv, env={"GIVEN": "1"}), limits, game=FAKE.name)
             for _ in range(2)]
    try:
        for seat in seats:
            seat.connect(10.0)
        uids = [uids_of(seat) for seat in seats]
        envs = [set(seat.ids["env"].split(",")) for seat in seats]
    finally:
        for seat in seats:
            seat.close()
    assert all(len(u) == 1 for u in uids), uids  # one uid for all of a bot's processes
    (first,), (second,) = uids
    assert first != second and min(first, second) >= sandbox.UID_BASE
    assert envs[0] == envs[1] == {*sandbox.ENVIRONMENT, "GIVEN"}


def uids_of(seat: ProcessSeat) -> set[int]:
    """The real uids of the bot's processes but bwrap's own (root)."""
    from meldref.protocol.sweep import descendants

    assert seat.process is not None
    out = set()
    for pid, _ in descendants(seat.process.pid):
        status = Path(f"/proc/{pid}/status").read_text()
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        if uid != 0:
            out.add(uid)
    return out


@needs_sandbox
def test_python3_through_pyenv_or_a_venv_runs_as_without_a_sandbox() -> None:
    python3 = shutil.which("python3")
    assert python3 is not None
    result = runner.invoke(app, ["match", "phase10", "--bot", "python3 bots/random_bot.py",
                                 "--bot", "builtin:greedy", "--rules", "phases-to-win=1",
                                 "--seed", "1", "--sandbox", "--json"])
    assert result.exit_code == 0, result.output
    (line,) = json.loads(result.stdout)["games"]
    assert line["status"] == "ok" and not any(line["faults"]), line


# ----------------------------------------------------------------------------------------------
# Faults judged as without a sandbox

MODES = {"crash": PATIENT, "segv": PATIENT, "close_stdout": SHORT, "silent": SHORT,
         "garbage": PATIENT, "orphan_child": PATIENT, "escape": PATIENT,
         "exit_at_start": PATIENT, "compute": SHORT}


@needs_sandbox
@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_misbehaving_bot_is_judged_as_without_a_sandbox(mode: str,
                                                          play_bad: PlayBad) -> None:
    limits = dataclasses.replace(FAST, exit_wait=0.1) if mode == "close_stdout" else FAST
    plain, _, _ = play_bad(mode, MODES[mode], limits=limits)
    boxed, _, _ = play_bad(mode, MODES[mode], limits=dataclasses.replace(limits,
                                                                            sandbox=True))
    assert outcomes(boxed) == outcomes(plain), (boxed.faults, plain.faults)
    assert boxed.status == plain.status
    assert [f.detail.split(" after ")[0] for f in boxed.faults[0]] == [
        f.detail.split(" after ")[0] for f in plain.faults[0]] or mode in ("compute", "silent")


@needs_sandbox
def test_a_memory_hog_alone_forfeits_in_the_sandbox(play_bad: PlayBad) -> None:
    limits = dataclasses.replace(FAST, memory_mb=200, sandbox=True)
    record, _, _ = play_bad("hog", PATIENT, env={"BAD_BOT_HOG_MB": "600"}, limits=limits)
    assert outcomes(record) == [("crashed", True)]
    assert record.status == ["forfeit", "ok"]


@needs_sandbox
def test_without_a_cgroup_the_sandboxs_limits_are_rlimits_and_hold(
        play_bad: PlayBad, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the machine offers no cgroup to write (not root, none mounted), a sandboxed
    memory hog still forfeits alone: its cap is the address-space rlimit."""
    monkeypatch.setattr(sandbox, "own_cgroups", lambda: None)
    assert "no cgroup here" in sandbox.plan(200, 60).describe()
    limits = dataclasses.replace(FAST, memory_mb=200, sandbox=True)
    record, _, _ = play_bad("hog", PATIENT, env={"BAD_BOT_HOG_MB": "600"}, limits=limits)
    assert outcomes(record) == [("crashed", True)]
    assert record.status == ["forfeit", "ok"]


@pytest.mark.parametrize(("version", "controllers", "through", "kept"), [
    (1, ("memory", "pids", "cpu"), "memory-mb, max-processes, one CPU at most through cgroup v1",
     set()),
    (2, ("memory", "pids", "cpu"), "memory-mb, max-processes, one CPU at most through cgroup v2",
     set()),
    (1, ("memory",), "memory-mb through cgroup v1", {"NPROC"}),
    (None, (), "no cgroup here", {"AS", "NPROC"}),
])
def test_the_sandbox_says_which_limits_go_through_a_cgroup_and_keeps_the_rest_as_rlimits(
        version: int | None, controllers: tuple[str, ...], through: str,
        kept: set[str]) -> None:
    import resource

    cgroups = (None if version is None else
               sandbox.Cgroups(version, {c: Path("/cg") / c for c in controllers}))
    plan = sandbox.Plan(cgroups, memory_mb=400, max_processes=60)
    assert plan.describe().startswith(f"sandbox (bubblewrap): {through}; other limits as rlimits")
    wanted = {getattr(resource, f"RLIMIT_{name}"): 1 for name in ("AS", "NPROC", "FSIZE")}
    left = plan.rlimits(wanted)
    assert left == {getattr(resource, f"RLIMIT_{name}"): 1 for name in (*kept, "FSIZE")}


# ----------------------------------------------------------------------------------------------
# No sandbox, no run


def test_no_bubblewrap_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setattr(sandbox, "BWRAP", None)
    monkeypatch.setattr(sandbox, "_PROBLEM", [])
    made = tmp_path / "made"
    bot = command(BAD_BOT_PATH, "good")
    for args in (["match", "phase10", "--bot", bot, "--sandbox"],
                 ["bot", "check", bot, "--sandbox"],
                 ["bot", "test", bot, str(tmp_path), "--sandbox"],
                 ["tournament", "--bot", bot, "--bot", "builtin:random", "--sandbox",
                  "--out", str(made)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "--sandbox: bubblewrap (`bwrap`) is not installed" in result.stderr, args
    assert not made.exists()


def test_a_contest_whose_sandbox_cannot_run_here_refuses_submit_and_run_naming_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Found on a machine without bubblewrap: `contest submit` (the README's contest example)
    # ended in a traceback, an AssertionError from deep in the jail, naming nothing.
    monkeypatch.setattr(sandbox, "BWRAP", None)
    monkeypatch.setattr(sandbox, "_PROBLEM", [])
    folder = tmp_path / "contest"
    made = runner.invoke(app, ["contest", "init", str(folder), "phase10", "-n", "2"])
    assert made.exit_code == 0, made.output  # made, and warned: the folder may move
    assert "bubblewrap (`bwrap`) is not installed" in made.stderr
    assert "--no-sandbox" in made.stderr
    bot = tmp_path / "bot.py"
    bot.write_text(RANDOM_BOT_PATH.read_text())
    for args in (["contest", "submit", str(folder), str(bot), "--name", "b"],
                 ["contest", "run", str(folder), "--games", "2", "--no-wait"],
                 ["contest", "final", str(folder), "--top", "2"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert "the contest's sandbox cannot run here: bubblewrap (`bwrap`) is not installed" \
            in result.stderr, args
        assert result.exception is None or isinstance(result.exception, SystemExit)
    # A cluster's workers elsewhere are where its games start bots: not refused here.
    remote = runner.invoke(app, ["contest", "run", str(folder), "--cluster", "tcp://127.0.0.1:9",
                                 "--no-wait"])
    assert "sandbox" not in remote.output, remote.output
    off = runner.invoke(app, ["contest", "init", str(tmp_path / "off"), "phase10", "-n", "2",
                              "--no-sandbox"])
    assert off.exit_code == 0 and "sandbox" not in off.stderr, off.output


def test_a_sandboxed_bot_on_a_machine_without_the_sandbox_is_an_error_naming_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # What a library caller (a contest's checks, a pool) meets: an OSError saying why, as for
    # any bot that cannot start, not an AssertionError.
    from meldref.protocol.process import BotProcess

    monkeypatch.setattr(sandbox, "BWRAP", None)
    monkeypatch.setattr(sandbox, "_PROBLEM", [])
    with pytest.raises(OSError, match=r"in its sandbox: bubblewrap \(.bwrap.\) is not installed"):
        BotProcess(BotCommand((sys.executable, str(RANDOM_BOT_PATH))),
                   sandbox=sandbox.plan(None, None))


def test_sandbox_in_a_configuration_file_is_refused_too(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setattr(sandbox, "BWRAP", None)
    monkeypatch.setattr(sandbox, "_PROBLEM", [])
    config = tmp_path / "t.toml"
    bot = command(BAD_BOT_PATH, "good").replace("\\", "\\\\").replace('"', '\\"')
    config.write_text(f'game = "phase10"\nout = "{tmp_path / "t"}"\n[limits]\nsandbox = true\n'
                      f'[[bot]]\ncmd = "{bot}"\n[[bot]]\ncmd = "builtin:random"\n')
    result = runner.invoke(app, ["tournament", str(config), "--no-progress"])
    assert result.exit_code == 2, result.output
    assert "--sandbox: bubblewrap" in result.stderr


# ----------------------------------------------------------------------------------------------
# Nothing outlives the referee


@needs_sandbox
@pytest.mark.parametrize("target", ["referee", "group"])
def test_a_sandboxed_forkers_child_dies_with_a_referee_killed_by_sigkill(
        target: str, bot_token: str) -> None:
    """The kernel's part: bwrap dies with the referee, its init with bwrap, and with the init
    every process of the PID namespace."""
    import signal
    import subprocess

    from support import PYTHON

    forker = command(BAD_BOT_PATH, "orphan_child", bot_token)
    proc = subprocess.Popen([PYTHON, "-m", "meldref", "match", "--bot", forker, "--bot",
                             "builtin:greedy", "--games", "200", "--rules", "phases-to-win=1",
                             "--sandbox"], cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # bwrap, its init, the bot and the child it forked all name the token.
        assert wait_for(lambda: len(set(pids_with(bot_token)) - {proc.pid}) >= 4, 60)
        if target == "group":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait(timeout=10)
        assert wait_for(lambda: not pids_with(bot_token), 15), pids_with(bot_token)
    finally:
        proc.kill()
        proc.wait()


def test_the_cpu_probe_counts_only_its_spinners() -> None:
    """The spin-cpu probe judges the CPU its two spinners got, not what the probe's earlier
    children used (a fork bomb, an allocator killed at its memory cap): counted in, a sandbox
    held to one CPU read as "OPEN 1.47 CPUs" on a loaded machine. Held to one CPU by affinity
    after a child that burned a second of CPU, the probe must still say blocked."""
    script = f"""
import os, sys, time
sys.path.insert(0, {str(PROBE.parent)!r})
import probe_bot
os.sched_setaffinity(0, {{sorted(os.sched_getaffinity(0))[0]}})
pid = os.fork()
if pid == 0:
    while time.process_time() < 1.0:
        pass
    os._exit(0)
os.waitpid(pid, 0)
print(probe_bot.probe_spin())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.startswith("blocked"), done.stdout


@needs_sandbox
def test_a_jail_closes_each_descriptor_once_never_a_number_reused_since() -> None:
    """`started` gives bwrap its ends and closes ours; `reap` must not close those numbers
    again: by then the kernel has handed them out anew (here to files opened in between, in
    a match to another seat's pipe or the replay being written)."""
    jail = sandbox.Jail(("true",), None, {}, "once", sandbox.Plan(None, None, None))
    proc = subprocess.Popen(jail.argv, env=jail.outer_env, pass_fds=jail.pass_fds,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    jail.started(proc.pid, {})
    proc.wait(timeout=60)
    reused = [os.open(os.devnull, os.O_RDONLY) for _ in range(4)]
    try:
        jail.reap()
        jail.reap()  # a second teardown path is a no-op too
        for fd in reused:
            os.fstat(fd)  # still open: nothing of ours was closed by the jail
    finally:
        for fd in reused:
            os.close(fd)


@needs_sandbox
def test_a_sandboxed_crash_beside_another_program_charges_the_crasher_alone(
        tmp_path: Path, bot_token: str) -> None:
    """Two programs side by side, both sandboxed, replays written: the crasher's fault is
    the crasher's, every game has a result and a replay that verifies, and no game is the
    referee's error (before: games 1 and 3 `failed: OSError: [Errno 9] Bad file
    descriptor`, the neighbour charged, a bot's stderr inside a replay)."""
    out = tmp_path / "out"
    crasher = command(BAD_BOT_PATH, "crash", bot_token)
    innocent = command(BAD_BOT_PATH, "stderr_lines", bot_token)  # protocol-like stderr
    done = subprocess.run(
        [sys.executable, "-m", "meldref", "tournament", "phase10", "--players", "2",
         "--rules", "phases-to-win=1", "--bot", crasher, "--bot", innocent, "--games", "4",
         "-j", "1", "--sandbox", "--out", str(out), "--no-progress"],
        capture_output=True, text=True, timeout=600, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 4
    for line in lines:
        assert line["status"] == "ok", line
        faults = dict(zip(line["names"], line["faults"], strict=True))
        assert faults["bad-stderr_lines"] == [], line
        assert [f["outcome"] for f in faults["bad-crash"]] == ["crashed"], line
    replays = sorted((out / "replays").glob("*.jsonl"))
    assert len(replays) == 4
    for replay in replays:
        assert "hello there" not in replay.read_text()  # the innocent's stderr
        check = runner.invoke(app, ["replay", "verify", str(replay)])
        assert check.exit_code == 0, check.output
    assert wait_for(lambda: not pids_with(bot_token))


def test_a_sandboxed_bot_is_capped_unless_told_otherwise() -> None:
    assert Limits().caps() == {}
    assert Limits(sandbox=True).caps() == {
        "memory-mb": 1024, "max-processes": 64, "cpu-seconds": 3600, "file-size-mb": 64,
        "tmp-mb": 64}
    given = Limits(sandbox=True, memory_mb=300, tmp_mb=8)
    assert given.caps()["memory-mb"] == 300 and given.caps()["tmp-mb"] == 8
    assert given.sandbox_plan() is not None and given.sandbox_plan().tmp_mb == 8


@needs_sandbox
def test_the_probe_meets_the_sandboxs_default_caps(tmp_path: Path, bot_token: str) -> None:
    """`--sandbox` alone (a contest's default): the fork bomb, the memory hog and the /tmp
    filler stop at the default caps (before: 3,000 processes and 8 GiB, the probe's own
    caps), and the run says which caps it applied; `--tmp-mb` changes the /tmp's size."""
    folder = probe_folder(tmp_path, "probe")
    replay = tmp_path / "replay.jsonl"
    bot = probe_command(folder, bot_token, [], heavy=True)
    result = runner.invoke(app, ["match", "solitaire", "--bot", bot, "--seed", "3",
                                 "--sandbox", "--tmp-mb", "16", "--startup-time", "60",
                                 "--replay", str(replay), "--json"])
    assert result.exit_code == 0, result.output
    assert "memory-mb 1024, max-processes 64" in result.stderr
    (ids,) = header_ids(replay)
    found = probes(ids)
    for escape in ("fork-bomb", "allocate", "fill-tmp"):
        assert found[escape].startswith("blocked"), (escape, found[escape])
    assert "after 63 processes" in found["fork-bomb"] or "after 62" in found["fork-bomb"], found
    assert found["fill-tmp"].startswith("blocked after 1"), found  # 16 MiB, less the probe's
    assert wait_for(lambda: not pids_with(bot_token), 10), "left running"
