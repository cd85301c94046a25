"""Every way a bot program can fail ends as documented, and leaves no process behind.

Each case plays the fake game with tests/bots/bad_bot.py MODE in seat 0 against an in-process
bot, with short deadlines.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

import fakegame
import pytest

from meldref.protocol.channel import LineChannel
from meldref.protocol.errors import BotCrashedError, SeatStartError
from meldref.protocol.process import BotCommand, group_members
from meldref.protocol.records import GameRecord
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import InProcessSeat, Limits, ProcessSeat, connect_all

BAD_BOT = Path(__file__).parent / "bots" / "bad_bot.py"
FAST = Limits(ping_grace=0.4, busy_grace=3.0, exit_wait=0.5, quit_grace=0.3, term_grace=0.3,
              stderr_limit=64 << 10)
GAME = fakegame.GAME


def pid_gone(pid: int) -> bool:
    """True if `pid` no longer runs (absent, or a zombie waiting for init to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_gone(pids: list[int], timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(pid_gone(p) and not group_members(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


def play_bad(mode: str, tmp_path: Path, policy: MatchPolicy | None = None,
             env: dict[str, str] | None = None, limits: Limits = FAST,
             ) -> tuple[GameRecord, list[dict[str, Any]], ProcessSeat]:
    command = BotCommand((sys.executable, str(BAD_BOT), mode), env=env or {})
    seat = ProcessSeat(command, limits, log_path=tmp_path / "bot.log", game=GAME.name)
    other = InProcessSeat(fakegame.RandomFakeBot(1))
    records: list[dict[str, Any]] = []
    policy = policy or MatchPolicy(move_time=0.4, first_move_time=0.4, time_bank=0.0,
                                   startup_time=10.0)
    try:
        record = play_game(GAME, GAME.rules(turns=8), [seat, other], 3, policy, records.append)
    finally:
        close_all([seat, other])
    assert seat.pids, "the bot was never started"
    assert wait_gone(seat.pids), f"processes left behind: {seat.pids}"
    return record, records, seat


def outcomes(record: GameRecord, seat: int = 0) -> list[tuple[str, bool]]:
    return [(f.outcome, f.fatal) for f in record.faults[seat]]


def assert_forfeited(record: GameRecord) -> None:
    assert record.status == ["forfeit", "ok"]
    assert record.outcome.places == (2, 1)
    assert record.outcome.termination == "forfeit"
    assert record.outcome.detail["forfeited"] == [0]


PATIENT = MatchPolicy(move_time=5.0, first_move_time=10.0, time_bank=0.0)


@pytest.mark.parametrize("mode", ["good", "chatty", "stderr_flood", "stderr_lines"])
def test_well_behaved_bots_finish_the_game(mode: str, tmp_path: Path) -> None:
    record, records, _ = play_bad(mode, tmp_path, PATIENT)
    assert record.status == ["ok", "ok"]
    assert outcomes(record) == []
    assert record.outcome.termination == "normal"
    assert [r["type"] for r in records][:1] == ["start"]
    assert records[-1]["type"] == "result"
    if mode == "stderr_flood":  # stderr went to the log, capped, and was never parsed
        size = (tmp_path / "bot.log").stat().st_size
        assert 64 << 10 <= size < (64 << 10) + 200


def test_banner_before_the_handshake_is_only_noted(tmp_path: Path) -> None:
    record, _, _ = play_bad("banner", tmp_path, PATIENT)
    assert record.status == ["ok", "ok"]
    assert outcomes(record) == [("malformed", False)]


def test_silent_bot_is_stalled(tmp_path: Path) -> None:
    record, records, _ = play_bad("silent", tmp_path)
    assert outcomes(record) == [("stalled", True)]
    assert_forfeited(record)
    fault = next(r for r in records if r["type"] == "fault")
    assert fault["request"] == 1 and "no pong" in fault["detail"]
    assert "idle" in fault["detail"]


def test_slow_bot_times_out_and_its_late_answer_is_recognised(tmp_path: Path) -> None:
    record, _, _ = play_bad("slow", tmp_path, env={"BAD_BOT_SLOW": "0.7"})
    kinds = outcomes(record)
    assert ("timeout", True) in kinds
    assert ("late", False) in kinds
    assert_forfeited(record)


def test_single_threaded_bot_computing_past_the_ping_grace_times_out(tmp_path: Path) -> None:
    # Deadline 0.4 s, ping grace 0.4 s: the bot answers after 1.2 s of computing, long after
    # the grace, and cannot read the ping before. Its CPU use shows it alive: a timeout.
    record, records, _ = play_bad("compute", tmp_path, env={"BAD_BOT_SLOW": "1.2"})
    assert outcomes(record)[-1] == ("timeout", True)
    assert ("late", False) in outcomes(record)
    fault = next(r for r in records if r["type"] == "fault" and r["fatal"])
    assert "still computing" in fault["detail"] and "`action`" in fault["detail"]
    assert_forfeited(record)


def test_bot_computing_for_ever_is_stalled_after_the_busy_grace(tmp_path: Path) -> None:
    limits = dataclasses.replace(FAST, busy_grace=1.0)
    record, records, _ = play_bad("spin", tmp_path, limits=limits)
    assert outcomes(record) == [("stalled", True)]
    fault = next(r for r in records if r["type"] == "fault")
    assert "using the CPU" in fault["detail"]
    assert_forfeited(record)


def test_a_second_answer_to_an_old_request_is_late_never_illegal(tmp_path: Path) -> None:
    record, _, _ = play_bad("twice", tmp_path, PATIENT)
    assert record.status == ["ok", "ok"] and record.outcome.termination == "normal"
    assert outcomes(record) and set(outcomes(record)) == {("late", False)}


def test_garbage_is_malformed_and_retried_then_forfeits(tmp_path: Path) -> None:
    record, _, _ = play_bad("garbage", tmp_path)
    assert outcomes(record) == [("malformed", False), ("malformed", False), ("malformed", True)]
    assert "unknown message type 'hello'" in record.faults[0][0].detail
    assert_forfeited(record)


def test_illegal_actions_get_reasons_then_forfeit(tmp_path: Path) -> None:
    record, _, _ = play_bad("illegal", tmp_path)
    assert outcomes(record) == [("illegal", False), ("illegal", False), ("illegal", True)]
    assert "it is time to draw" in record.faults[0][0].detail
    assert_forfeited(record)


def test_retry_after_an_error_is_accepted(tmp_path: Path) -> None:
    record, _, _ = play_bad("retry_once", tmp_path, PATIENT)
    assert record.status == ["ok", "ok"]
    assert outcomes(record) and set(outcomes(record)) == {("illegal", False)}
    assert record.outcome.termination == "normal"


@pytest.mark.parametrize(("mode", "words"), [
    ("crash", "exited with code 3"),
    ("segv", "killed by signal SIGSEGV"),
])
def test_crash_mid_game(mode: str, words: str, tmp_path: Path) -> None:
    record, _, _ = play_bad(mode, tmp_path, PATIENT)
    assert outcomes(record) == [("crashed", True)]
    assert words in record.faults[0][0].detail
    assert_forfeited(record)
    assert len(record.actions) >= 1  # it played before it crashed


def test_exit_at_start(tmp_path: Path) -> None:
    record, records, _ = play_bad("exit_at_start", tmp_path)
    assert outcomes(record) == [("crashed", True)]
    assert "exited with code 1 during the handshake" in record.faults[0][0].detail
    assert_forfeited(record)
    assert record.actions == []
    assert [r["type"] for r in records] == ["start", "fault", "result"]


def test_closed_stdout(tmp_path: Path) -> None:
    record, _, _ = play_bad("close_stdout", tmp_path)
    assert outcomes(record) == [("closed", True)]
    assert "still running" in record.faults[0][0].detail
    assert_forfeited(record)


@pytest.mark.parametrize("mode", ["no_read", "no_flush"])
def test_bot_that_stops_reading_or_never_flushes_is_stalled(mode: str, tmp_path: Path) -> None:
    record, _, _ = play_bad(mode, tmp_path)
    assert outcomes(record) == [("stalled", True)]
    assert_forfeited(record)


def test_child_ignoring_sigterm_is_killed_with_its_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    record, _, _ = play_bad("fork_child", tmp_path, env={"BAD_BOT_CHILD_PID_FILE": str(pid_file)})
    assert outcomes(record) == [("stalled", True)]
    child = int(pid_file.read_text())
    assert wait_gone([child])


def test_child_left_by_a_bot_that_exits_normally_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    record, _, _ = play_bad("orphan_child", tmp_path, PATIENT,
                            env={"BAD_BOT_CHILD_PID_FILE": str(pid_file)})
    assert record.status == ["ok", "ok"] and outcomes(record) == []
    assert wait_gone([int(pid_file.read_text())])  # play_bad checked its whole group too


def test_autoplay_policy_keeps_the_seat_ranked_normally(tmp_path: Path) -> None:
    policy = MatchPolicy(move_time=0.4, first_move_time=0.4, time_bank=0.0,
                         on_failure="autoplay")
    record, records, _ = play_bad("silent", tmp_path, policy)
    assert record.status == ["autoplay", "ok"]
    assert record.outcome.termination == "normal"
    assert record.outcome.detail["autoplayed"] == [0]
    autos = [r for r in records if r["type"] == "action" and r["seat"] == 0]
    assert autos and all(r["auto"] for r in autos)


def test_wrong_command_fails_loudly_before_the_game(tmp_path: Path) -> None:
    seat = ProcessSeat(BotCommand.parse("/nonexistent/bot --x"), FAST)
    with pytest.raises(BotCrashedError, match=r"cannot start .*: /nonexistent/bot does not exist"):
        seat.connect(1.0)
    seat.close()


@pytest.mark.parametrize(("command", "words"), [
    ("/nonexistent/bot", r"seat 1 \(/nonexistent/bot\) cannot play: crashed: cannot start"),
    ("no-such-program-xyz", "'no-such-program-xyz' is not on PATH"),
    ("/etc/passwd", "/etc/passwd is not executable"),
    (f"{sys.executable} /nonexistent/typo.py",
     "exited with code 2 during the handshake; its stderr ends: .*typo.py"),
    (f"{sys.executable} {BAD_BOT} silent_start", "no `ready` within 500 ms"),
])
def test_connect_all_names_the_seat_that_cannot_start(command: str, words: str) -> None:
    good = ProcessSeat(BotCommand((sys.executable, str(BAD_BOT), "good")), FAST)
    seats = [good, ProcessSeat(BotCommand.parse(command), FAST), InProcessSeat(
        fakegame.RandomFakeBot(1))]
    with pytest.raises(SeatStartError, match=words) as caught:
        connect_all(seats, startup_time=0.5)
    assert caught.value.seat == 1
    assert good.process is None and wait_gone(good.pids)  # the seats already started: closed


def test_connect_all_starts_every_seat() -> None:
    seats = [ProcessSeat(BotCommand((sys.executable, str(BAD_BOT), "good")), FAST)
             for _ in range(2)]
    try:
        connect_all(seats, startup_time=10.0)
        assert all(s.alive for s in seats) and [s.name for s in seats] == ["bad-good"] * 2
    finally:
        close_all(seats)


def test_seat_restarts_after_failure_for_the_next_game(tmp_path: Path) -> None:
    command = BotCommand((sys.executable, str(BAD_BOT), "good"))
    seat = ProcessSeat(command, FAST, game=GAME.name)
    other = InProcessSeat(fakegame.RandomFakeBot(1))
    try:
        for seed in (1, 2):
            record = play_game(GAME, GAME.rules(), [seat, other], seed, PATIENT)
            assert record.status == ["ok", "ok"]
            seat.process.signal_group(9)  # type: ignore[union-attr]  (dies between games)
            seat.process.wait_exit(2.0)  # type: ignore[union-attr]
    finally:
        close_all([seat, other])
    assert len(seat.pids) == 2
    assert wait_gone(seat.pids)


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
