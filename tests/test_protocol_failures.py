"""Every way a bot program can fail ends as documented, and leaves no process behind.

Each case plays the fake game with tests/bots/bad_bot.py MODE in seat 0 against an in-process
bot (the `play_bad` fixture of tests/conftest.py). No verdict races a clock: a bot that answers
gets deadlines it meets under any load (PATIENT), a bot that never answers in time short ones
(SHORT), and "late" is late by construction (it answers only after the referee's ping).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import fakegame
import pytest
from support import (
    BAD_BOT,
    BAD_BOT_PATH,
    FAKE,
    FAST,
    PATIENT,
    PYTHON,
    SHORT,
    PlayBad,
    assert_forfeited,
    gone,
    outcomes,
    pid_gone,
    wait_for,
)

from meldref.protocol.channel import LineChannel
from meldref.protocol.command import BotCommand
from meldref.protocol.errors import BotCrashedError, SeatStartError
from meldref.protocol.referee import close_all, play_game
from meldref.protocol.seats import InProcessSeat, ProcessSeat, connect_all

GOOD = BotCommand((PYTHON, str(BAD_BOT_PATH), "good"))


@pytest.mark.parametrize("mode", ["good", "chatty", "stderr_flood", "stderr_lines"])
def test_well_behaved_bots_finish_the_game(mode: str, play_bad: PlayBad) -> None:
    record, records, seat = play_bad(mode)
    assert record.status == ["ok", "ok"]
    assert outcomes(record) == []
    assert record.outcome.termination == "normal"
    assert [r["type"] for r in records][:1] == ["start"]
    assert records[-1]["type"] == "result"
    if mode == "stderr_flood":  # stderr went to the log, capped, and was never parsed
        assert seat.log_path is not None
        size = seat.log_path.stat().st_size
        assert 64 << 10 <= size < (64 << 10) + 200


def test_banner_before_the_handshake_is_only_noted(play_bad: PlayBad) -> None:
    record, _, _ = play_bad("banner")
    assert record.status == ["ok", "ok"]
    assert outcomes(record) == [("malformed", False)]


def test_silent_bot_is_stalled(play_bad: PlayBad) -> None:
    record, records, _ = play_bad("silent", SHORT)
    assert outcomes(record) == [("stalled", True)]
    assert_forfeited(record)
    fault = next(r for r in records if r["type"] == "fault")
    assert fault["request"] == 1 and "no pong" in fault["detail"]
    assert "idle" in fault["detail"]


def test_slow_bot_times_out_and_its_late_answer_is_recognised(play_bad: PlayBad) -> None:
    # The bot answers only once the ping came, which the referee sends only after the deadline:
    # late whatever the load. A generous ping grace costs nothing (its answer ends the wait)
    # and keeps a slow machine from turning "timeout" into "stalled".
    record, records, _ = play_bad("slow", SHORT, limits=dataclasses.replace(FAST, ping_grace=10))
    assert outcomes(record) == [("late", False), ("timeout", True)]
    fault = next(r for r in records if r["type"] == "fault" and r["fatal"])
    assert "alive: sent `action`" in fault["detail"] and "still computing" not in fault["detail"]
    assert_forfeited(record)


def test_single_threaded_bot_computing_past_the_ping_grace_times_out(play_bad: PlayBad) -> None:
    # The bot computes from `go` until the ping waits on its stdin, then 0.6 s more: its answer
    # comes after the first 0.3 s ping grace by construction, and it cannot read the ping
    # before. Its CPU use over the grace shows it alive (and the busy grace is long): timeout.
    # 0.3 s windows: 5% of one is 15 ms of CPU, a margin over /proc's 10 ms ticks for a bot
    # that gets even a small share of a loaded machine.
    limits = dataclasses.replace(FAST, ping_grace=0.3, busy_grace=30.0)
    record, records, _ = play_bad("compute", SHORT, env={"BAD_BOT_SLOW": "0.6"}, limits=limits)
    assert outcomes(record) == [("late", False), ("timeout", True)]
    fault = next(r for r in records if r["type"] == "fault" and r["fatal"])
    assert "still computing" in fault["detail"] and "`action`" in fault["detail"]
    assert_forfeited(record)


def test_bot_computing_for_ever_is_stalled_after_the_busy_grace(play_bad: PlayBad) -> None:
    # The bot never answers: the verdict does not depend on the clocks, which are short; two
    # 0.3 s windows of CPU use make the busy grace (see the test above for 0.3 s).
    limits = dataclasses.replace(FAST, ping_grace=0.3, busy_grace=0.6)
    record, records, _ = play_bad("spin", SHORT, limits=limits)
    assert outcomes(record) == [("stalled", True)]
    fault = next(r for r in records if r["type"] == "fault")
    assert "using the CPU" in fault["detail"]
    assert_forfeited(record)


def test_a_second_answer_to_an_old_request_is_late_never_illegal(play_bad: PlayBad) -> None:
    record, _, _ = play_bad("twice")
    assert record.status == ["ok", "ok"] and record.outcome.termination == "normal"
    assert outcomes(record) and set(outcomes(record)) == {("late", False)}


def test_garbage_is_malformed_and_retried_then_forfeits(play_bad: PlayBad) -> None:
    record, _, _ = play_bad("garbage")
    assert outcomes(record) == [("malformed", False), ("malformed", False), ("malformed", True)]
    assert "unknown message type 'hello'" in record.faults[0][0].detail
    assert_forfeited(record)


def test_illegal_actions_get_reasons_then_forfeit(play_bad: PlayBad) -> None:
    record, _, _ = play_bad("illegal")
    assert outcomes(record) == [("illegal", False), ("illegal", False), ("illegal", True)]
    assert "it is time to draw" in record.faults[0][0].detail
    assert_forfeited(record)


def test_retry_after_an_error_is_accepted(play_bad: PlayBad) -> None:
    record, _, _ = play_bad("retry_once")
    assert record.status == ["ok", "ok"]
    assert outcomes(record) and set(outcomes(record)) == {("illegal", False)}
    assert record.outcome.termination == "normal"


@pytest.mark.parametrize(("mode", "words"), [
    ("crash", "exited with code 3"),
    ("segv", "killed by signal SIGSEGV"),
])
def test_crash_mid_game(mode: str, words: str, play_bad: PlayBad) -> None:
    record, _, _ = play_bad(mode)
    assert outcomes(record) == [("crashed", True)]
    assert words in record.faults[0][0].detail
    assert_forfeited(record)
    assert len(record.actions) >= 1  # it played before it crashed


def test_exit_at_start(play_bad: PlayBad) -> None:
    record, records, _ = play_bad("exit_at_start")
    assert outcomes(record) == [("crashed", True)]
    assert "exited with code 1 during the handshake" in record.faults[0][0].detail
    assert_forfeited(record)
    assert record.actions == []
    assert [r["type"] for r in records] == ["start", "fault", "result"]


def test_closed_stdout(play_bad: PlayBad) -> None:
    # The bot never exits: however short the wait for its exit, it is "closed", not "crashed".
    record, _, _ = play_bad("close_stdout", SHORT, limits=dataclasses.replace(FAST, exit_wait=0.1))
    assert outcomes(record) == [("closed", True)]
    assert "still running" in record.faults[0][0].detail
    assert_forfeited(record)


@pytest.mark.parametrize("mode", ["no_read", "no_flush"])
def test_bot_that_stops_reading_or_never_flushes_is_stalled(mode: str,
                                                            play_bad: PlayBad) -> None:
    record, _, _ = play_bad(mode, SHORT)
    assert outcomes(record) == [("stalled", True)]
    assert_forfeited(record)


def test_child_ignoring_sigterm_is_killed_with_its_group(play_bad: PlayBad,
                                                         tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"  # written before `ready`
    record, _, _ = play_bad("fork_child", SHORT, env={"BAD_BOT_CHILD_PID_FILE": str(pid_file)})
    assert outcomes(record) == [("stalled", True)]
    child = int(pid_file.read_text())
    assert wait_for(lambda: pid_gone(child), 10.0)


def test_child_left_by_a_bot_that_exits_normally_is_killed(play_bad: PlayBad,
                                                           tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    record, _, _ = play_bad("orphan_child", env={"BAD_BOT_CHILD_PID_FILE": str(pid_file)})
    assert record.status == ["ok", "ok"] and outcomes(record) == []
    child = int(pid_file.read_text())
    assert wait_for(lambda: pid_gone(child), 10.0)  # play_bad checked its whole group too


def test_autoplay_policy_keeps_the_seat_ranked_normally(play_bad: PlayBad) -> None:
    policy = dataclasses.replace(SHORT, on_failure="autoplay")
    record, records, _ = play_bad("silent", policy)
    assert record.status == ["autoplay", "ok"]
    assert record.outcome.termination == "normal"
    assert record.outcome.detail["autoplayed"] == [0]
    autos = [r for r in records if r["type"] == "action" and r["seat"] == 0]
    assert autos and all(r["auto"] for r in autos)


def test_wrong_command_fails_loudly_before_the_game() -> None:
    seat = ProcessSeat(BotCommand.parse("/nonexistent/bot --x"), FAST)
    with pytest.raises(BotCrashedError, match=r"cannot start .*: /nonexistent/bot does not exist"):
        seat.connect(1.0)
    seat.close()


# Seat 1 cannot start; seat 0 (a good bot) is started first, so that only the failing seat
# meets the start-up time: a bot that must start within it would race the machine's load.
# Bots that exit or cannot start get 10 s (they end long before); the silent one 0.3 s, all
# of which it costs.
@pytest.mark.parametrize(("command", "startup", "words"), [
    ("/nonexistent/bot", 10.0,
     r"seat 1 \(/nonexistent/bot\) cannot play: crashed: cannot start"),
    ("no-such-program-xyz", 10.0, "'no-such-program-xyz' is not on PATH"),
    ("/etc/passwd", 10.0, "/etc/passwd is not executable"),
    (f"{PYTHON} /nonexistent/typo.py", 10.0,
     "exited with code 2 during the handshake; its stderr ends: .*typo.py"),
    (f"{BAD_BOT} silent_start", 0.3, "no `ready` within 300 ms"),
])
def test_connect_all_names_the_seat_that_cannot_start(command: str, startup: float,
                                                      words: str) -> None:
    good = ProcessSeat(GOOD, FAST)
    seats = [good, ProcessSeat(BotCommand.parse(command), FAST), InProcessSeat(
        fakegame.RandomFakeBot(1))]
    try:
        good.connect(10.0)
        with pytest.raises(SeatStartError, match=words) as caught:
            connect_all(seats, startup_time=startup)
    finally:
        close_all(seats)
    assert caught.value.seat == 1
    assert good.process is None and wait_for(lambda: gone(good.pids), 10.0)  # closed by it


def test_connect_all_starts_every_seat() -> None:
    seats = [ProcessSeat(GOOD, FAST) for _ in range(2)]
    try:
        connect_all(seats, startup_time=10.0)
        assert all(s.alive for s in seats) and [s.name for s in seats] == ["bad-good"] * 2
    finally:
        close_all(seats)


def test_seat_restarts_after_failure_for_the_next_game() -> None:
    seat = ProcessSeat(GOOD, FAST, game=FAKE.name)
    other = InProcessSeat(fakegame.RandomFakeBot(1))
    try:
        for seed in (1, 2):
            record = play_game(FAKE, FAKE.rules(), [seat, other], seed, PATIENT)
            assert record.status == ["ok", "ok"]
            seat.process.signal_group(9)  # type: ignore[union-attr]  (dies between games)
            seat.process.wait_exit(10.0)  # type: ignore[union-attr]
    finally:
        close_all([seat, other])
    assert len(seat.pids) == 2
    assert wait_for(lambda: gone(seat.pids), 10.0)


def test_writes_never_block_on_a_bot_that_does_not_read() -> None:
    r, w = os.pipe()
    r2, w2 = os.pipe()
    channel = LineChannel(r2, w, max_pending=1 << 16)
    try:
        for _ in range(10_000):  # would block forever on a blocking pipe (64 KiB buffer)
            channel.send("event draw seat 1 from pile " + "x" * 50)
        assert channel.write_error is not None and "stopped reading" in channel.write_error
    finally:
        channel.close()
        for fd in (r, w, r2, w2):
            os.close(fd)
