"""Issue 10: a bot that crashes while a child it started keeps its stdout open is judged
`crashed` when it exits, not at its move's deadline, and the child dies with it.

The bot (tests/bots/crash_orphan_bot.py) starts `sleep` with its stdout, then exits with code
3 at its third decision. Each game is given a long move time, and the state reached tells when
the exit was noticed, not a clock: a transport read returns EXITED only before its deadline
(after it, nothing), and the referee says "before answering request N" only for that EXITED
(a death found at the deadline says "before sending answer"). (`python bench/bench_crash.py`
measures the detection time itself.)
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

import pytest
from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.engine.game import find_game
from meldref.protocol import launch, process
from meldref.protocol.channel import EXITED
from meldref.protocol.command import BotCommand
from meldref.protocol.process import BotProcess, PipeTransport
from meldref.protocol.referee import MatchPolicy, play_game
from meldref.protocol.seats import ProcessSeat

BOT = ROOT / "tests" / "bots" / "crash_orphan_bot.py"
# Long, so that a crash noticed only at the deadline would be plain (and still fail within the
# suite's 300 s timeout).
MOVE_TIME = 240.0
runner = CliRunner()


def sleepers(duration: str) -> list[int]:
    """Live `sleep <duration>` processes (the orphans of one test: a duration of its own)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if cmdline[:2] == [b"sleep", duration.encode()] and state != "Z":
                out.append(int(entry))
    return out


def unique_sleep() -> str:
    return f"{random.randrange(500, 900)}.{random.randrange(10**6)}"


def test_a_match_ends_the_crashed_seat_at_its_exit_not_its_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    duration = unique_sleep()
    monkeypatch.setenv("BOT_ORPHAN_SLEEP", duration)
    result = runner.invoke(app, ["match", "solitaire", "--bot", f"{sys.executable} {BOT} orphan",
                                 "--seed", "3", "--move-time", str(MOVE_TIME), "--json"])
    assert result.exit_code == 0, result.output
    (game,) = json.loads(result.stdout)["games"]
    (fault,) = game["faults"][0]
    assert fault["outcome"] == "crashed" and fault["fatal"]
    assert fault["detail"] == "exited with code 3 before answering request 3"  # not at the deadline
    assert game["seat_status"] == ["forfeit"]
    assert sleepers(duration) == [], "the orphan holding the bot's stdout outlived it"


def test_without_pidfds_the_exit_is_still_found_before_the_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback of systems without `os.pidfd_open`: the exit is looked for during waits."""
    duration = unique_sleep()
    monkeypatch.setattr(process, "open_pidfd", lambda pid: None)
    command = BotCommand((sys.executable, str(BOT), "orphan", "2"),
                         env={"BOT_ORPHAN_SLEEP": duration})
    info = find_game("solitaire")
    seat = ProcessSeat(command, game=info.name)
    policy = MatchPolicy(move_time=MOVE_TIME, first_move_time=MOVE_TIME, time_bank=0.0)
    try:
        record = play_game(info, info.rules(), [seat], 3, policy)
    finally:
        seat.close()
    assert [(f.outcome, f.detail) for f in record.faults[0]] == [
        ("crashed", "exited with code 3 before answering request 2")]  # not at the deadline
    assert sleepers(duration) == []


def test_the_pipes_say_exited_after_the_last_words_and_before_the_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """At the transport: what the program wrote before it ended is read first, then `EXITED`
    as soon as it ended, though a child it left behind holds the pipe open. (Started without
    the guard, protocol/guard.py, which kills such a child as soon as the program ends: the
    transport must still tell where no guard runs.)"""
    monkeypatch.setattr(launch, "GUARDED", False)
    duration = unique_sleep()
    bot = BotProcess(BotCommand(("sh", "-c", f"echo last words; sleep {duration} & exit 3")))
    pipes = PipeTransport.to(bot)
    try:
        deadline = time.monotonic() + MOVE_TIME
        first, then = pipes.read(deadline), pipes.read(deadline)
        assert first is not None and first.data == b"last words"
        assert then is not None and then.kind == EXITED  # a read past its deadline gives None
        assert pipes.exit_code(1.0) == 3 and not pipes.eof  # the child still holds the pipe
    finally:
        bot.kill()
        pipes.close()
    assert sleepers(duration) == []
