"""Faults and recovery: each fault of docs/faults.md's table provoked, and the time it costs.

    python bench/faults.py [--only NAME ...] [--json] [--markdown]

Bot faults are played in real Phase 10 games through pipes (tests/bots/bad_bot.py MODE in seat 0
against built-in greedy), with the referee's default graces (spec/PROTOCOL.md section 7: ping
grace 1 s, busy grace 10 s, 1 s after `quit` and 1 s after SIGTERM) and a 1 s deadline with no
time bank. A seat wrapper clocks each decision: the time to recover is from the moment the
fault happened (the request, or the deadline for faults that only a deadline reveals) until the
referee has judged it and stopped the bot, ready to go on with the game. Faults of the referee's
own run (signals, a killed worker, bad files and paths) are provoked on `meldref` commands:
from the signal (or the command's start) until every process is gone, or the error is out.

Each row prints the fault, the outcome or exit code seen (checked against the expected one: a
row that does not behave as docs/faults.md says fails the run, exit 1), and the time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meldref.bots import builtin_bot
from meldref.engine.game import find_game
from meldref.protocol.command import BotCommand
from meldref.protocol.errors import OUTCOMES, SeatStartError
from meldref.protocol.referee import MatchPolicy, play_game
from meldref.protocol.seats import (
    InProcessSeat,
    Limits,
    ProcessSeat,
    Reply,
    Request,
    Seat,
    Setup,
    connect_all,
)

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
BAD_BOT = ROOT / "tests" / "bots" / "bad_bot.py"
RAISING_BOT = ROOT / "tests" / "bots" / "raising_sdk_bot.py"  # an SDK bot whose draw raises
DEAF_BOT = ROOT / "tests" / "cli_bots" / "deaf_bot.py"
KILLER_BOT = ROOT / "tests" / "cli_bots" / "worker_killer_bot.py"
GAME = find_game("phase10")
# One deadline for every decision, no bank: "the deadline" is then one number.
POLICY = MatchPolicy(move_time=1.0, first_move_time=1.0, time_bank=0.0)
DEFAULTS = Limits()  # the referee's own graces (spec/PROTOCOL.md section 7)


# ----------------------------------------------------------------------------------------------
# Bot faults: a seat that clocks the referee's side of each decision


class ClockedSeat(Seat):
    """A seat that passes everything to `inner`, noting when its last decision began, that
    decision's deadline, and when the bot was first stopped (the referee stops a failed bot
    at once; an illegal answer is judged by the referee, not the seat)."""

    def __init__(self, inner: Seat) -> None:
        self.inner, self.name = inner, inner.name
        self.asked = self.deadline = self.stopped = 0.0

    def connect(self, startup_time: float) -> None:
        self.inner.connect(startup_time)

    def start(self, setup: Setup) -> None:
        self.inner.start(setup)

    def decide(self, request: Request) -> Reply:
        self.asked = time.monotonic()
        self.deadline = self.asked + request.deadline
        return self.inner.decide(request)

    def notify(self, events: Sequence[Mapping[str, Any]]) -> None:
        self.inner.notify(events)

    def flush(self) -> None:
        self.inner.flush()

    def reject(self, request_id: int | None, reason: str) -> None:
        self.inner.reject(request_id, reason)

    def finish(self, result: Mapping[str, Any]) -> None:
        self.inner.finish(result)

    def take_notes(self) -> list[Any]:
        return self.inner.take_notes()

    def close(self) -> None:
        self.inner.close()
        self.stopped = self.stopped or time.monotonic()

    @property
    def alive(self) -> bool:
        return self.inner.alive


@dataclass(frozen=True)
class Seen:
    """What a row saw: the classification and the seconds to recover."""

    outcome: str
    seconds: float


def bad_game(mode: str, env: Mapping[str, str] | None = None, limits: Limits = DEFAULTS,
             at_deadline: bool = False) -> Seen:
    """One Phase 10 game with bad_bot.py `mode` in seat 0; the fault it ends with, timed from
    the request (or its deadline, `at_deadline`) to the bot stopped."""
    with tempfile.TemporaryDirectory() as folder:
        command = BotCommand((PY, str(BAD_BOT), mode), env=dict(env or {}))
        seat = ClockedSeat(ProcessSeat(command, limits, log_path=Path(folder) / "bot.log",
                                       game=GAME.name))
        other = InProcessSeat(builtin_bot(GAME.name, "greedy", 1))
        try:
            record = play_game(GAME, GAME.rules(), [seat, other], 7, POLICY)
        finally:
            seat.close()
            other.close()
    fatal = [f for f in record.faults[0] if f.fatal]
    if not fatal:
        notes = sorted({f.outcome for f in record.faults[0]})
        return Seen(f"no fatal fault (noted: {', '.join(notes) or 'none'})", 0.0)
    began = seat.deadline if at_deadline else seat.asked
    return Seen(fatal[0].outcome, seat.stopped - began)


def only_noted(argv: tuple[str, ...], outcome: str) -> Seen:
    """Faults that cost nothing (answers to old requests; the SDK's fallback, said): the game
    goes on, the notes are kept, all of `outcome`."""
    with tempfile.TemporaryDirectory() as folder:
        command = BotCommand((PY, *argv))
        seat = ProcessSeat(command, Limits(), log_path=Path(folder) / "bot.log", game=GAME.name)
        other = InProcessSeat(builtin_bot(GAME.name, "greedy", 1))
        try:
            record = play_game(GAME, GAME.rules(), [seat, other], 7, POLICY)
        finally:
            seat.close()
    kinds = {f.outcome for f in record.faults[0]}
    return Seen(outcome if kinds == {outcome} and record.status[0] == "ok" else str(kinds), 0.0)


def stopping(mode: str, env: Mapping[str, str] | None = None) -> Seen:
    """A bot that plays but must be killed at the end (it ignores quit and SIGTERM, or left
    children): the time `close` takes, quit to the last process gone."""
    with tempfile.TemporaryDirectory() as folder:
        command = BotCommand((PY, str(BAD_BOT), mode), env=dict(env or {}))
        seat = ProcessSeat(command, Limits(), log_path=Path(folder) / "bot.log", game=GAME.name)
        other = InProcessSeat(builtin_bot(GAME.name, "greedy", 1))
        try:
            record = play_game(GAME, GAME.rules(), [seat, other], 7, POLICY)
        finally:
            began = time.monotonic()
            seat.close()
            took = time.monotonic() - began
            left = [pid for pid in seat.pids if _alive(pid)]
    fatal = [f.outcome for f in record.faults[0] if f.fatal]
    outcome = fatal[0] if fatal else "(none)"
    return Seen(outcome if not left else f"left running: {left}", took)


def start_failure(mode: str) -> Seen:
    """A bot that cannot start or never says `ready`: the time from the start to the refusal
    (before any game)."""
    with tempfile.TemporaryDirectory() as folder:
        command = BotCommand((PY, str(BAD_BOT), mode))
        seat = ProcessSeat(command, Limits(), log_path=Path(folder) / "bot.log", game=GAME.name)
        began = time.monotonic()
        try:
            connect_all([seat], startup_time=POLICY.startup_time)
        except SeatStartError as exc:
            took = time.monotonic() - began
            outcome = exc.fault.outcome
            return Seen(outcome, took - (POLICY.startup_time if outcome == "stalled" else 0))
        finally:
            seat.close()
    return Seen("started", 0.0)


# ----------------------------------------------------------------------------------------------
# The referee's own faults: signals, killed processes, bad files


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def with_token(token: str, but: int = -1) -> list[int]:
    """Live processes whose command line holds `token` (but `but`)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) not in (but, os.getpid()):
            with contextlib.suppress(OSError):
                if token.encode() in (entry / "cmdline").read_bytes() and _alive(int(entry.name)):
                    out.append(int(entry.name))
    return out


def children(pid: int) -> list[int]:
    return [int(e.name) for e in Path("/proc").iterdir() if e.name.isdigit()
            and (f := _stat(int(e.name))) is not None and f[1] == str(pid) and f[0] != "Z"]


def until(condition: Callable[[], object], timeout: float = 60.0) -> float:
    """Poll `condition` until true; the time it took (raises TimeoutError past `timeout`)."""
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > timeout:
            raise TimeoutError("the condition never held")
        time.sleep(0.005)
    return time.monotonic() - began


def meldref(*args: str, stdout: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    return subprocess.Popen([PY, "-m", "meldref", *args], cwd=ROOT, stdout=stdout,
                            stderr=subprocess.DEVNULL)


SHORT = ["--rules", "phases-to-win=1", "--players", "2"]


@contextlib.contextmanager
def deaf_match(kind: str, folder: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`meldref match` or `tournament -j 2` with a bot that only SIGKILL stops, once a game is
    under way; everything left is killed on the way out."""
    token = f"deaf{uuid.uuid4().hex[:10]}"
    mark = folder / "decisions"
    bot = f"{PY} {DEAF_BOT} {token} 0.02 {mark}"
    args = (["match", "--bot", bot, "--bot", "builtin:greedy", "--games", "50", *SHORT]
            if kind == "match" else
            ["tournament", "--bot", bot, "--bot", "builtin:random", "--games", "40", "-j", "2",
             *SHORT, "--out", str(folder / "t"), "--no-progress"])
    proc = meldref(*args)
    try:
        until(mark.exists, 120)
        yield proc, token
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
        for pid in with_token(token):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def signalled(kind: str, sigs: Sequence[int]) -> Seen:
    """Signals to a match or tournament mid-game: time from the first to the exit with no bot
    and no worker left."""
    with tempfile.TemporaryDirectory() as folder, deaf_match(kind, Path(folder)) as (proc, token):
        family = children(proc.pid)
        began = time.monotonic()
        for sig in sigs:
            proc.send_signal(sig)
            if len(sigs) > 1:
                time.sleep(0.2)  # the second falls in the graces of closing the deaf bot
        code = proc.wait(timeout=60)
        until(lambda: not with_token(token, proc.pid) and not any(map(_alive, family)))
        return Seen(f"exit {code}", time.monotonic() - began)


def killed(kind: str) -> Seen:
    """kill -9 of a match or tournament mid-game: time until its bots and workers are gone."""
    with tempfile.TemporaryDirectory() as folder, deaf_match(kind, Path(folder)) as (proc, token):
        family = children(proc.pid)
        began = time.monotonic()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        until(lambda: not with_token(token, proc.pid) and not any(map(_alive, family)))
        return Seen("nothing left", time.monotonic() - began)


def forker_killed(kind: str, *extra: str, wrapper: Sequence[str] = (PY,)) -> Seen:
    """kill -9 of the process group of a match or a `-j 2` tournament whose bot forked a child
    (bad_bot.py `orphan_child`, run by `wrapper`): time until the bots and their children are
    gone."""
    token = f"fork{uuid.uuid4().hex[:10]}"
    bot = shlex.join([*wrapper, str(BAD_BOT), "orphan_child", token])
    with tempfile.TemporaryDirectory() as folder:
        args = (["match", "--bot", bot, "--games", "500", *SHORT] if kind == "match" else
                ["tournament", "--bot", bot, "--bot", "builtin:random", "--games", "400",
                 "-j", "2", *SHORT, "--out", str(Path(folder) / "t"), "--no-progress"])
        proc = subprocess.Popen([PY, "-m", "meldref", *args, *extra], cwd=ROOT,
                                start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            until(lambda: len(with_token(token, proc.pid)) >= 4, 120)  # bots and children
            began = time.monotonic()
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
            until(lambda: not with_token(token, proc.pid))
            return Seen("nothing left", time.monotonic() - began)
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()
            for pid in with_token(token):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def worker_killed(where: Sequence[str] = ("-j", "2")) -> Seen:
    """A worker SIGKILLed mid-game (as by the OOM killer): what the kill costs, the
    tournament's wall time against the same tournament unharmed (same seed, same games), and
    every game must still be played exactly once."""
    plain, _ = a_tournament(where, kill=False)
    harmed, ok = a_tournament(where, kill=True)
    return Seen("replayed" if ok else "games lost or doubled", harmed - plain)


def a_tournament(where: Sequence[str], kill: bool) -> tuple[float, bool]:
    """Eight games of a bot program at `where` (-j N, --cluster ...); its wall time, and
    whether it ended with every game played once. `kill`: SIGKILL the worker (the parent of
    a bot) playing the first game."""
    with tempfile.TemporaryDirectory() as folder:
        token = f"deaf{uuid.uuid4().hex[:10]}"
        out, mark = Path(folder) / "t", Path(folder) / "decisions"
        began = time.monotonic()
        proc = meldref("tournament", "--bot", f"{PY} {DEAF_BOT} {token} 0.01 {mark}", "--bot",
                       "builtin:random", "--games", "8", *where, *SHORT, "--out", str(out),
                       "--no-progress", "--json", "--seed", "5", stdout=subprocess.PIPE)
        try:
            if kill:
                def workers() -> set[int]:
                    return {int(f[1]) for p in with_token(token, proc.pid)
                            if (f := _stat(p)) is not None} - {proc.pid}

                until(lambda: mark.exists() and workers(), 300)  # a game under way
                os.kill(min(workers()), signal.SIGKILL)
            stdout, _ = proc.communicate(timeout=600)
            took = time.monotonic() - began
            lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
            return took, (proc.returncode == 0 and json.loads(stdout)["missing"] == 0
                          and len({line["game_id"] for line in lines}) == len(lines) == 8
                          and all(line["status"] == "ok" for line in lines))
        finally:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()


def command_exit(args: Sequence[str], setup: Callable[[Path], list[str]] | None = None,
                 env: Mapping[str, str] | None = None) -> Seen:
    """A command given a bad file or path: its exit code and how long it took to say so."""
    with tempfile.TemporaryDirectory() as folder:
        extra = setup(Path(folder)) if setup else []
        began = time.monotonic()
        done = subprocess.run([PY, "-m", "meldref", *args, *extra], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=False,
                              env={**os.environ, **(env or {})})
        took = time.monotonic() - began
        if "Traceback" in done.stderr:
            return Seen("traceback", took)
        return Seen(f"exit {done.returncode}", took)


def bad_replay(folder: Path) -> list[str]:
    path = folder / "bad.jsonl"
    path.write_text('{"type": "start", "version": 1}\n[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]\n')
    return [str(path)]


def folder_with_a_bad_replay(folder: Path) -> list[str]:
    done = subprocess.run([PY, "-m", "meldref", "match", "--games", "2", "--seed", "3",
                           "--replay", str(folder / "r"), *SHORT], cwd=ROOT,
                          capture_output=True, check=True)
    del done
    (folder / "r" / "broken.jsonl").write_text("not json\n")
    return [str(folder / "r")]


def bad_config(folder: Path) -> list[str]:
    path = folder / "t.toml"
    path.write_bytes(b'bots = ["builtin:greedy", "builtin:random"]\ngames = "\xff"\n')
    return [str(path)]


def fifo(folder: Path) -> list[str]:
    path = folder / "pipe"
    os.mkfifo(path)
    return [str(path)]


def orphan_crash() -> Seen:
    """A bot that exits while a child it started holds its stdout open: timed from its exit
    to the `crashed` fault (bench_crash.py's game, at this table's clocks)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_crash import detection

    with tempfile.TemporaryDirectory() as folder:
        return Seen("crashed", detection("orphan", POLICY, Path(folder)))


# ----------------------------------------------------------------------------------------------
# Files received from others (issue 20)


def _a_replay(folder: Path, *bots: str) -> tuple[Path, list[dict[str, Any]]]:
    path = folder / "game.jsonl"
    bot_args = [a for b in bots for a in ("--bot", b)]
    subprocess.run([PY, "-m", "meldref", "match", "--seed", "3", "--rules", "phases-to-win=1",
                    "--players", str(len(bots)), *bot_args, "--replay", str(path)], cwd=ROOT,
                   capture_output=True, check=True)
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def _rewritten(path: Path, records: list[dict[str, Any]]) -> Path:
    """`records` written as a replay with its chain recomputed, as anyone could."""
    from meldref.replay.files import ReplayWriter

    header = {k: v for k, v in records[0].items()
              if k not in ("type", "format", "version", "meldref", "sum")}
    with ReplayWriter(path, header) as writer:
        for record in records[1:]:
            writer.write(record)
    return path


def untrusted_resume() -> Seen:
    """`replay resume` of a replay whose header names a command that would create a file."""
    with tempfile.TemporaryDirectory() as folder:
        marker = Path(folder) / "ran"
        path, records = _a_replay(Path(folder), f"{PY} bots/random_bot.py", "builtin:greedy")
        records[0]["seats"][0]["spec"] = f"sh -c 'touch {marker}; exec {PY} bots/random_bot.py'"
        _rewritten(path, records)
        seen = command_exit(["replay", "resume", str(path), "--at", "3", "--replay",
                             str(Path(folder) / "r.jsonl")])
        return Seen("ran the command" if marker.exists() else seen.outcome, seen.seconds)


def forged_result(folder: Path) -> list[str]:
    path, records = _a_replay(folder, "builtin:greedy", "builtin:random")
    outcome = records[-1]["outcome"]
    outcome["termination"] = "forfeit"  # once: every check skipped
    outcome["places"], outcome["winners"] = outcome["places"][::-1], [1 - outcome["winners"][0]]
    return [str(_rewritten(path, records))]


def escaped_names() -> Seen:
    """`replay show` of a replay whose bot names hold terminal escapes."""
    with tempfile.TemporaryDirectory() as folder:
        path, records = _a_replay(Path(folder), "builtin:greedy", "builtin:random")
        for seat in records[0]["seats"]:
            seat["name"] = "evil\x1b[2J\x1b]0;pwned\x07"
        _rewritten(path, records)
        began = time.monotonic()
        done = subprocess.run([PY, "-m", "meldref", "replay", "show", str(path)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120, check=False)
        raw = "\x1b" in done.stdout + done.stderr or "\x07" in done.stdout + done.stderr
        return Seen("printed raw" if raw else "escaped", time.monotonic() - began)


RSS_SCRIPT = """
import sys
from meldref.replay.audit import verify
verify(sys.argv[1])
print(next(line for line in open("/proc/self/status") if line.startswith("VmHWM:")).split()[1])
"""


def big_replay() -> Seen:
    """`replay verify` of a 42 MB replay (a 6-seat game whose actions carry an extra key of
    many small objects, as a later writer may add): under 100 MB of RSS, and its time."""
    with tempfile.TemporaryDirectory() as folder:
        path, records = _a_replay(Path(folder), *["builtin:random"] * 6)
        del path
        per_line = 42_000_000 // sum(1 for r in records if r["type"] == "action")
        note = [{"k": i} for i in range(per_line // 9)]
        big = _rewritten(Path(folder) / "big.jsonl",
                         [{**r, "note": note} if r["type"] == "action" else r for r in records])
        began = time.monotonic()
        done = subprocess.run([PY, "-c", RSS_SCRIPT, str(big)], cwd=ROOT, capture_output=True,
                              text=True, timeout=600, check=True)
        took = time.monotonic() - began
        mb = int(done.stdout) / 1024
        return Seen("under 100 MB" if mb < 100 else f"{mb:.0f} MB", took)


def standings_signal() -> Seen:
    """A signal while a tournament computes its standings (held there by the test hook): time
    from the signal to the exit."""
    from meldref.tournament.run import PAUSE_ENV

    with tempfile.TemporaryDirectory() as folder:
        marker, out = Path(folder) / "standings", Path(folder) / "t"
        proc = subprocess.Popen([PY, "-m", "meldref", "tournament", "--bot", "builtin:greedy",
                                 "--bot", "builtin:random", "--games", "2", *SHORT, "--out",
                                 str(out), "--no-progress"], cwd=ROOT,
                                env={**os.environ, PAUSE_ENV: str(marker)},
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        until(marker.exists, 120)
        began = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
        took = time.monotonic() - began
        half = (out / "standings.json").exists() or "Traceback" in stderr
        return Seen("standings half written" if half else f"exit {proc.returncode}", took)


def nul_in_out(folder: Path) -> list[str]:
    path = folder / "t.toml"
    path.write_text('out = "runs/x\\u0000y"\nbots = ["builtin:greedy", "builtin:random"]\n')
    return [str(path)]


def deep_position(folder: Path) -> list[str]:
    path = folder / "p.toml"
    path.write_text('game = "phase10"\ndeep = ' + "[" * 3000 + "]" * 3000 + "\n")
    return [str(path)]


WRAPPED = {"memory_mb": 700, "max_processes": 40, "file_size_mb": 9}
# /proc/PID/limits' labels of the limits above, and the values they must read.
WRAPPED_PROC = {"Max address space": str(700 << 20), "Max processes": "40",
                "Max file size": str(9 << 20)}


def _limits_of(pid: int) -> dict[str, str]:
    """The soft limit of each line of /proc/PID/limits, by its label there."""
    lines = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {line[:26].strip(): line[26:].split()[0] for line in lines}


def wrapped_limits() -> Seen:
    """A bot behind `setpriv --reuid` and behind `runuser` (root only), started with the limits
    of WRAPPED: whether every process of it (the wrapper, the bot, the child it forked) has
    them; the time to its `ready`, the slower of the two."""
    from meldref.protocol.process import descendants

    if os.geteuid() != 0:
        return Seen("not run: switching users needs root", 0.0)
    wrappers = (("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"),
                ("runuser", "-u", "nobody", "--"))
    slowest, missing = 0.0, []
    for wrapper in wrappers:
        argv = (*wrapper, "/usr/bin/python3", str(BAD_BOT), "orphan_child")
        seat = ProcessSeat(BotCommand(argv), Limits(**WRAPPED), game=GAME.name)
        began = time.monotonic()
        try:
            seat.connect(30.0)
            slowest = max(slowest, time.monotonic() - began)
            assert seat.process is not None
            guard = seat.process.pid
            until(lambda: len(descendants(guard)) >= 2)  # noqa: B023 - the bot and its child
            for pid, _ in descendants(guard):
                have = _limits_of(pid)
                missing += [f"{wrapper[0]}: {key} of {pid}" for key, value
                            in WRAPPED_PROC.items() if have[key] != value]
        finally:
            seat.close()
    return Seen("in force" if not missing else f"missing: {missing[0]}", slowest)


def limit_refused() -> Seen:
    """A limit the referee could not set on a bot (no guard, and `prlimit` refused): the
    match refused, naming the flag, instead of played uncapped. The failure is made in the
    process, as no machine with /proc gives one."""
    import resource
    from unittest import mock

    from typer.testing import CliRunner

    from meldref.cli import app
    from meldref.protocol import process

    failing = mock.patch.object(process, "apply_limits",
                                lambda pid, limits: [str(resource.RLIMIT_AS)])
    with mock.patch.object(process, "GUARDED", False), failing:
        began = time.monotonic()
        result = CliRunner().invoke(app, ["match", "--bot", f"{PY} {BAD_BOT} good",
                                          "--memory-mb", "700", *SHORT])
        took = time.monotonic() - began
    named = "memory-mb" in result.stderr
    return Seen(f"exit {result.exit_code}" if named else "refused without the flag", took)


def big_plan() -> Seen:
    """A plan of 1,000,000 games per table: the memory and time until its first job."""
    import tracemalloc

    from meldref.protocol.seats import BotSpec
    from meldref.tournament.schedule import BotEntry, Plan

    bots = tuple(BotEntry(n, BotSpec(f"builtin:{n}")) for n in ("greedy", "random", "expert"))
    tracemalloc.start()
    began = time.monotonic()
    try:
        next(Plan("phase10", bots, players=2, games=1_000_000, seed=1).jobs())
        took = time.monotonic() - began
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return Seen("under 1 MB" if peak < 1 << 20 else f"{peak / (1 << 20):.0f} MB", took)


# ----------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class Row:
    """One fault: its name in docs/faults.md's table, the outcome expected, how to provoke it."""

    fault: str
    expected: str
    measure: Callable[[], Seen] = field(repr=False)
    does: str = ""  # what the referee does, in the README's words
    tested_by: str = ""  # the test of the row: FILE.py::NAME under tests/


# ----------------------------------------------------------------------------------------------
# Hostile authors and hostile neighbours (issue 43)


def _no_process_with(token: str) -> bool:
    try:
        until(lambda: not with_token(token), 30)
    except TimeoutError:
        return False
    return True


def sandboxed_crash_beside() -> Seen:
    """A sandboxed bot that crashes mid-game beside another sandboxed program, a replay
    written: the crasher's fault, the neighbour's none, the replay verified (before: the
    jail closed two descriptor numbers twice, crossing the neighbour's pipes and the replay)."""
    token = uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as folder:
        replay = Path(folder) / "g.jsonl"
        began = time.monotonic()
        subprocess.run([PY, "-m", "meldref", "match", "--bot", f"{PY} {BAD_BOT} crash {token}",
                        "--bot", f"{PY} {BAD_BOT} stderr_lines {token}", "--sandbox", *SHORT,
                        "--replay", str(replay)], cwd=ROOT, capture_output=True, timeout=300,
                       check=False)
        took = time.monotonic() - began
        if not replay.exists():
            return Seen("no replay", took)
        faults = [json.loads(line) for line in replay.read_text().splitlines()]
        charged = {f["seat"] for f in faults if f.get("type") == "fault"}
        verified = subprocess.run([PY, "-m", "meldref", "replay", "verify", str(replay)],
                                  cwd=ROOT, capture_output=True, check=False).returncode == 0
        if charged != {0} or not verified or not _no_process_with(token):
            return Seen(f"charged {sorted(charged)}, verified {verified}", took)
        return Seen("crashed", took)


def guard_killed() -> Seen:
    """A bot whose grandchild (own session, empty environment) SIGKILLs the guard: time from
    the match's start until nothing of the bot is left."""
    token = uuid.uuid4().hex
    bot = ROOT / "tests" / "bots" / "guard_killer_bot.py"
    began = time.monotonic()
    subprocess.run([PY, "-m", "meldref", "match", "--bot", f"{PY} {bot} {token} 0", *SHORT],
                   cwd=ROOT, capture_output=True, timeout=300, check=False)
    left = not _no_process_with(token)
    return Seen("left running" if left else "nothing left", time.monotonic() - began)


def writable_out(folder: Path) -> list[str]:
    out = folder / "shared"
    out.mkdir()
    os.chmod(out, 0o777)
    return [str(out)]


def planted_results() -> Seen:
    """A tournament's output folder holding `results.jsonl` as a link to someone's file."""
    with tempfile.TemporaryDirectory() as folder:
        victim, out = Path(folder) / "victim.txt", Path(folder) / "t"
        victim.write_text("theirs\n")
        out.mkdir(mode=0o700)
        (out / "results.jsonl").symlink_to(victim)
        seen = command_exit(["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random",
                             "--games", "2", *SHORT, "--no-progress", "--out", str(out)])
        return seen if victim.read_text() == "theirs\n" else Seen("target written", seen.seconds)


def hostile_line(folder: Path) -> list[str]:
    """A replay whose one action carries a 4 MiB line of `[{},{},...]`, its chain
    recomputed."""
    path, records = _a_replay(folder, "builtin:greedy", "builtin:random")
    first = next(k for k, r in enumerate(records) if r["type"] == "action")
    records[first] = {**records[first], "note": [{}] * ((4 << 20) // 3)}
    return [str(_rewritten(path, records))]


def second_header(folder: Path) -> list[str]:
    path, records = _a_replay(folder, "builtin:greedy", "builtin:random")
    records.insert(3, dict(records[0]))
    return [str(_rewritten(path, records))]


HOG = {"BAD_BOT_HOG_MB": "512"}
ROWS: tuple[Row, ...] = (
    Row("crashes (exits)", "crashed", lambda: bad_game("crash"),
        does='records the exit code, stops the group; forfeit or autoplay',
        tested_by='test_protocol_failures.py::test_crash_mid_game'),
    Row("killed by a signal (SIGSEGV)", "crashed", lambda: bad_game("segv"),
        does='records the signal; as above',
        tested_by='test_protocol_failures.py::test_crash_mid_game'),
    Row("exits, a child holding its output open", "crashed", orphan_crash,
        does=("wakes on the bot's exit (a pidfd; else a check every 50 ms), reads what it "
             'wrote before, stops the group with the child'),
        tested_by=('test_crash_detection.py::test_a_match_ends_the_crashed_seat_at_its_exit_not'
                  '_its_deadline')),
    Row("answers after the deadline", "timeout", lambda: bad_game("slow", at_deadline=True),
        does='pings; a line within the ping grace shows it alive; the late answer is noted `late`',
        tested_by=('test_protocol_failures.py::test_slow_bot_times_out_and_its_late_answer_'
                  'is_recognised')),
    Row("silent and idle (hung, deadlocked)", "stalled",
        lambda: bad_game("silent", at_deadline=True),
        does='pings, waits the ping grace (1 s), stops it (quit, SIGTERM, SIGKILL)',
        tested_by='test_protocol_failures.py::test_silent_bot_is_stalled'),
    Row("silent and computing (an endless loop)", "stalled",
        lambda: bad_game("spin", at_deadline=True),
        does='waits while it uses the CPU, up to the busy grace (10 s)',
        tested_by=('test_protocol_failures.py::test_bot_computing_for_ever_is_stalled_after'
                  '_the_busy_grace')),
    Row("stops reading its input", "stalled", lambda: bad_game("no_read", at_deadline=True),
        does='writes never block (lines queue up to 8 MiB, then `closed`)',
        tested_by=('test_protocol_failures.py::test_bot_that_stops_reading_or_never_flushes'
                  '_is_stalled')),
    Row("never flushes its output", "stalled", lambda: bad_game("no_flush", at_deadline=True),
        does='as a silent bot (section 2 of the spec says why)',
        tested_by=('test_protocol_failures.py::test_bot_that_stops_reading_or_never_flushes'
                  '_is_stalled')),
    Row("closes its output, keeps running", "closed", lambda: bad_game("close_stdout"),
        does='waits 0.5 s for an exit (a crash), then stops it',
        tested_by='test_protocol_failures.py::test_closed_stdout'),
    Row("illegal actions", "illegal", lambda: bad_game("illegal"),
        does='sends `error` with the reason, retries twice, then the seat is out',
        tested_by='test_protocol_failures.py::test_illegal_actions_get_reasons_then_forfeit'),
    Row("lines that are not protocol", "malformed", lambda: bad_game("garbage"),
        does='as illegal actions',
        tested_by='test_protocol_failures.py::test_garbage_is_malformed_and_retried_then_forfeits'),
    Row("floods (over 100 unasked lines)", "malformed", lambda: bad_game("flood"),
        does='judged at once, no retry; 20 notes kept per outcome',
        tested_by=('test_protocol_hostile.py::test_a_flooding_bot_is_judged_at_once_with_fe'
                  'w_records')),
    Row("says its answer is its SDK's fallback (its code raised or ran out of time)", "fallback",
        lambda: only_noted((str(RAISING_BOT),), "fallback"),
        does=('noted once a request (`info fallback <id> <why>`), never judged; the match\'s '
              'faults column shows `s0:fallback×n`'),
        tested_by="test_fallback_notes.py::test_a_match_counts_every_fallback_the_sdk_played"),
    Row("answers an old request", "late", lambda: only_noted((str(BAD_BOT), "twice"), "late"),
        does='noted, never judged as an action; the game goes on',
        tested_by=('test_protocol_failures.py::test_a_second_answer_to_an_old_request_is_la'
                  'te_never_illegal')),
    Row("over its memory cap (`--memory-mb`)", "crashed",
        lambda: bad_game("hog", HOG, Limits(memory_mb=256)),
        does='its allocation fails and it dies',
        tested_by='test_protocol_hostile.py::test_memory_cap_makes_a_hog_crash'),
    Row("over its CPU-time cap (`--cpu-seconds`)", "crashed",
        lambda: bad_game("spin", limits=Limits(cpu_seconds=1)),
        does='the kernel kills it at the cap',
        tested_by='test_isolation.py::test_a_cpu_cap_ends_a_bot_that_computes_past_it'),
    Row("hung, ignoring quit and SIGTERM, with a child", "stalled",
        lambda: bad_game("fork_child", at_deadline=True),
        does='SIGKILL to its whole group after the graces',
        tested_by='test_protocol_failures.py::test_child_ignoring_sigterm_is_killed_with_its_group'),
    Row("leaves children outside its group", "(none)", lambda: stopping("escape"),
        does='kills its descendants and every process with its token',
        tested_by='test_protocol_hostile.py::test_children_that_escape_the_group_are_killed'),
    Row("cannot start (exits at once, no such file)", "crashed",
        lambda: start_failure("exit_at_start"),
        does='stops before any game with the seat, command, reason and stderr; exit 2',
        tested_by='test_protocol_failures.py::test_connect_all_names_the_seat_that_cannot_start'),
    Row("never says ready", "stalled", lambda: start_failure("silent_start"),
        does='as above, after the start-up time',
        tested_by='test_protocol_failures.py::test_connect_all_names_the_seat_that_cannot_start'),
    Row("SIGINT, SIGTERM or SIGHUP to a match", "exit 130",
        lambda: signalled("match", [signal.SIGTERM]),
        does='stops every bot (quit, SIGTERM, SIGKILL), keeps what was played',
        tested_by='test_shutdown.py::test_a_signalled_match_leaves_no_bot'),
    Row("a second signal while bots are stopped", "exit 130",
        lambda: signalled("match", [signal.SIGINT, signal.SIGINT]),
        does='SIGKILLs at once',
        tested_by='test_shutdown.py::test_a_signalled_match_leaves_no_bot'),
    Row("SIGTERM to a tournament", "exit 130",
        lambda: signalled("tournament", [signal.SIGTERM]),
        does='workers kill their bots and exit; rerun to resume',
        tested_by=('test_shutdown.py::test_a_tournament_stopped_by_sigterm_leaves_nothing_a'
                  'nd_resumes')),
    Row("kill -9 of a match", "nothing left", lambda: killed("match"),
        does="each bot's guard kills the bot and all it started",
        tested_by='test_shutdown.py::test_a_match_killed_with_sigkill_leaves_no_bot'),
    Row("kill -9 of a tournament", "nothing left", lambda: killed("tournament"),
        does='workers and their bots die with it; rerun to resume',
        tested_by='test_shutdown.py::test_a_tournament_killed_with_sigkill_leaves_nothing'),
    Row("a worker killed mid-game (the OOM killer)", "replayed", worker_killed,
        does='its games are played again on a new worker, each counted once',
        tested_by='test_shutdown.py::test_a_worker_killed_mid_game_loses_no_game'),
    Row("a game that kills every worker it runs on", "exit 1",
        lambda: command_exit(["tournament", "--bot", f"{PY} {KILLER_BOT}", "--bot",
                              "builtin:random", "--games", "1", "--no-duplicate", "-j", "2",
                              *SHORT, "--no-progress", "--out"], lambda f: [str(f / "t")]),
        does="tried 3 times, then recorded as the referee's error; the rest play",
        tested_by='test_shutdown.py::test_a_game_that_kills_every_worker_is_recorded_as_an_error'),
    Row("a cluster worker killed mid-game", "replayed",
        lambda: worker_killed(["--cluster", "local:2"]),
        does='dask moves its games; each is counted once',
        tested_by='test_cluster.py::test_a_killed_worker_loses_no_game_and_leaves_no_bot'),
    Row("a replay file with wrong content", "exit 1",
        lambda: command_exit(["replay", "verify"], bad_replay),
        does='names the file, line and reason; no traceback',
        tested_by='test_untrusted_files.py::test_any_content_with_a_valid_chain_is_a_clear_error'),
    Row("a bad file in a folder of replays", "exit 1",
        lambda: command_exit(["replay", "stats"], folder_with_a_bad_replay),
        does='`replay stats` reports it and counts the rest',
        tested_by=('test_untrusted_files.py::test_a_bad_file_among_good_ones_is_reported_an'
                  'd_the_rest_counted')),
    Row("a configuration file that is not UTF-8", "exit 2",
        lambda: command_exit(["tournament"], bad_config),
        does='names the file and the problem before any game',
        tested_by=('test_untrusted_files.py::test_a_config_that_is_not_utf8_or_too_deep_exi'
                  'ts_2_naming_the_file')),
    Row("a FIFO given as a replay", "exit 2", lambda: command_exit(["replay", "show"], fifo),
        does='refused without opening it for reading',
        tested_by='test_cli_conventions.py::test_a_fifo_is_refused_without_waiting_for_a_writer'),
    Row("a device as an output path", "exit 2",
        lambda: command_exit(["match", "--replay", "/dev/null", "--games", "1", *SHORT]),
        does='refused before anything is written; the device untouched',
        tested_by=('test_untrusted_files.py::test_an_output_path_that_is_a_device_or_fifo_i'
                  's_refused_untouched')),
    Row("a replay naming a bot program, resumed without `--bot`", "exit 2", untrusted_resume,
        does=("refuses, naming the seats' commands; runs nothing (`--trust-replay-bots` "
              "prints them, then runs them)"),
        tested_by=("test_untrusted_replays.py::test_resume_never_runs_the_commands_of_the_"
                   "replays_header")),
    Row("a replay with forged results (its chain recomputed)", "exit 1",
        lambda: command_exit(["replay", "verify"], forged_result),
        does=("re-derives places, winners, scores, statuses and the ending from the seed, "
              "the actions and the fault records; names the line"),
        tested_by="test_replay_forgery.py::test_a_forged_claim_fails_verify"),
    Row("a damaged replay given to `replay html`", "exit 1",
        lambda: command_exit(["replay", "html"], bad_replay),
        does="the same code from verify, show, stats, position, html and resume",
        tested_by="test_untrusted_replays.py::test_a_damaged_replay_exits_1_from_every_command"),
    Row("a FIFO given to `replay html`", "exit 2",
        lambda: command_exit(["replay", "html"], fifo),
        does="refused without opening it, as by every replay command (/dev/zero, links too)",
        tested_by=("test_untrusted_replays.py::test_a_path_that_is_not_a_replay_file_exits_2_"
                   "from_every_command")),
    Row("bot names with terminal escapes in a replay", "escaped", escaped_names,
        does="control characters shown as `\\x1b`... by verify, show and stats",
        tested_by=("test_untrusted_replays.py::test_names_from_a_replay_are_shown_with_"
                   "control_characters_escaped")),
    Row("a 42 MB replay", "under 100 MB", big_replay,
        does="read and verified one line at a time (was 1.1 GB)",
        tested_by=("test_untrusted_replays.py::test_verifying_a_big_replay_takes_bounded_"
                   "memory")),
    Row("a signal while a tournament computes its standings", "exit 130", standings_signal,
        does="standings.json whole or not at all; the games kept; the rerun command printed",
        tested_by=("test_standings_signal.py::test_a_signal_during_the_standings_exits_130_"
                   "and_writes_them_whole_or_not_at_all")),
    Row("a NUL byte or a 3,000-level path in a configuration's `out`", "exit 2",
        lambda: command_exit(["tournament"], nul_in_out),
        does="names the key, the path shortened; nothing played",
        tested_by=("test_untrusted_replays.py::test_a_path_the_system_cannot_take_in_a_"
                   "configuration_exits_2")),
    Row("a position file nested 3,000 deep", "exit 2",
        lambda: command_exit(["match", "--position"], deep_position),
        does="says it is nested too deeply; nothing played",
        tested_by="test_untrusted_replays.py::test_a_position_file_nested_3000_deep_exits_2"),
    Row("kill -9 of a match's group, the bot's child too", "nothing left",
        lambda: forker_killed("match"),
        does="the guard kills every process the bot started",
        tested_by="test_bot_containment.py::test_a_forkers_child_dies_with_a_match_group_"
                  "killed_by_sigkill"),
    Row("kill -9 of a tournament's group, bots' children too", "nothing left",
        lambda: forker_killed("tournament"),
        does="as above, in every worker",
        tested_by="test_bot_containment.py::test_a_forkers_child_dies_with_a_tournament_"
                  "group_killed_by_sigkill"),
    Row("a bot behind `setpriv --reuid` or `runuser`, with limits", "in force",
        wrapped_limits,
        does=("the guard sets them between fork and exec: the program the wrapper runs and "
              "its children hold them (were: unlimited)"),
        tested_by=("test_bot_containment.py::test_limits_hold_in_every_process_behind_a_"
                   "user_switch")),
    Row("kill -9 of a match whose bot switched user", "nothing left",
        lambda: forker_killed("match", wrapper=("setpriv", "--reuid=nobody", "--regid=nogroup",
                                                "--clear-groups", "/usr/bin/python3")),
        does="the guard, the switched bot's parent, kills it and its child",
        tested_by=("test_bot_containment.py::test_a_forker_behind_a_user_switch_dies_with_a_"
                   "match_killed_by_sigkill")),
    Row("a limit that could not be set on a bot", "exit 2", limit_refused,
        does="refuses the bot, naming the flag (was: noted in `limits_missed`, read by nothing)",
        tested_by="test_bot_containment.py::test_a_limit_that_could_not_be_set_is_refused_naming_it"),
    Row("a plan of 1,000,000 games a table", "under 1 MB", big_plan,
        does="jobs made as they are taken (was: 508 MB and 152.8 s before the first game)",
        tested_by="test_tournament_plan.py::test_a_million_game_plan_builds_no_job_until_asked"),
    Row("a sandboxed bot over its memory cap (cgroup)", "crashed",
        lambda: bad_game("hog", HOG, Limits(memory_mb=256, sandbox=True)),
        does="the kernel's OOM killer ends it; forfeit",
        tested_by="test_sandbox.py::test_a_memory_hog_alone_forfeits_in_the_sandbox"),
    Row("kill -9 of a sandboxed match's group", "nothing left",
        lambda: forker_killed("match", "--sandbox"),
        does="the kernel ends the bot's PID namespace",
        tested_by="test_sandbox.py::test_a_sandboxed_forkers_child_dies_with_a_referee_"
                  "killed_by_sigkill"),
    Row("--sandbox where none can be built (no bwrap)", "exit 2",
        lambda: command_exit(["match", "--bot", f"{PY} {BAD_BOT} good", "--sandbox", *SHORT],
                             env={"PATH": "/nonexistent"}),
        does="refuses, naming what is missing; nothing played",
        tested_by="test_sandbox.py::test_no_bubblewrap_is_refused_naming_it"),
    Row("a sandboxed bot crashing beside another program, a replay written", "crashed",
        sandboxed_crash_beside,
        does=("charged to it alone; the neighbour plays on uncharged; the replay verifies with "
              "no stderr in it (was: the neighbour's pipes crossed, the game the referee's error)"),
        tested_by=("test_sandbox.py::test_a_sandboxed_crash_beside_another_program_charges_the_"
                   "crasher_alone")),
    Row("a bot's grandchild kills its guard (own session, no environment)", "nothing left",
        guard_killed,
        does=("the referee, handed the grandchild, sees the guard's missing word and kills it "
              "when the seat closes (was: left running)"),
        tested_by=("test_bot_containment.py::test_a_grandchild_that_killed_the_guard_is_gone_"
                   "when_the_seat_closes")),
    Row("a second signal to a tournament, at any moment", "exit 130",
        lambda: signalled("tournament", [signal.SIGTERM, signal.SIGTERM]),
        does="kills the bots at once; no traceback (was: 3 in 10 died by the signal, 1 traceback)",
        tested_by=("test_second_signal.py::test_a_second_signal_exits_130_without_a_traceback_"
                   "and_the_run_resumes")),
    Row("an output folder another user owns or can write", "exit 2",
        lambda: command_exit(["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random",
                              "--games", "2", *SHORT, "--no-progress", "--out"], writable_out),
        does="refused before anything is written, naming the folder and its owner or mode",
        tested_by="test_output_folders.py::test_an_output_folder_other_users_can_write_is_refused"),
    Row("a link planted where results go", "exit 2", planted_results,
        does="refused before anything is written; the link's target untouched",
        tested_by=("test_output_folders.py::test_a_link_planted_in_the_output_folder_is_refused_"
                   "and_its_target_untouched")),
    Row("a replay line of 4 MiB `[{},...]`, its chain recomputed", "exit 1",
        lambda: command_exit(["replay", "verify"], hostile_line),
        does=("every replay command refuses it naming the line, in under 100 MB (was: believed, "
              "158-168 MB; 769 MB for 30 lines of 1 MiB)"),
        tested_by=("test_replay_bounded.py::test_every_command_refuses_a_hostile_replay_in_"
                   "under_100_mb")),
    Row("records moved, repeated or left out (a second header)", "exit 1",
        lambda: command_exit(["replay", "verify"], second_header),
        does="names the line and the rule of order it breaks (was: `ok` for six kinds)",
        tested_by=("test_replay_forgery.py::test_verify_refuses_a_structural_forgery_naming_the_"
                   "line_and_rule")),
)


def _classified(outcome: str) -> str:
    """A fault's outcome as the README writes it: a recorded outcome in backquotes, an exit
    code or a state in words."""
    return f"`{outcome}`" if outcome in OUTCOMES else outcome


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None,
                        help="rows whose fault contains one of these words")
    parser.add_argument("--json", action="store_true", help="one JSON line per row")
    parser.add_argument("--markdown", action="store_true", help="docs/faults.md's table rows")
    args = parser.parse_args(argv)
    rows = [r for r in ROWS
            if args.only is None or any(w in r.fault for w in args.only)]
    wrong = 0
    for row in rows:
        seen = row.measure()
        ok = seen.outcome == row.expected
        wrong += not ok
        if args.json:
            print(json.dumps({"fault": row.fault, "expected": row.expected,
                              "seen": seen.outcome, "seconds": round(seen.seconds, 3)}))
        elif args.markdown:  # the README's table, whole: its rows are this file's
            print(f"| {row.fault} | {_classified(seen.outcome)} | {row.does} | "
                  f"{seen.seconds:.2f} s | {row.tested_by} |")
        else:
            mark = "" if ok else f"   <-- expected {row.expected}"
            print(f"{row.fault:45} {seen.outcome:22} {seen.seconds:7.2f} s{mark}", flush=True)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
