"""Hostile bots: floods of stray lines, children that escape the process group, resource hogs,
answers longer than a line may be. The referee stays bounded and judges the bot.

Like tests/test_protocol_failures.py: tests/bots/bad_bot.py MODE in seat 0 of the fake game
(the `play_bad` fixture of tests/conftest.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import fakegame
import pytest
from support import (
    BAD_BOT_PATH,
    FAKE,
    FAST,
    PATIENT,
    PYTHON,
    PlayBad,
    assert_forfeited,
    outcomes,
    pid_gone,
    wait_for,
)

from meldref.protocol.channel import LineChannel
from meldref.protocol.command import BotCommand
from meldref.protocol.errors import MAX_DETAIL, Fault, FaultOutcome
from meldref.protocol.referee import NOTES_PER_KIND, MatchPolicy, play_game
from meldref.protocol.seats import InProcessSeat, Limits, ProcessSeat
from meldref.protocol.sweep import descendants
from meldref.protocol.wire import MAX_LINE, fit_line, quote


def normal_decisions(play_bad: PlayBad) -> int:
    record, _, _ = play_bad("good")
    return record.decisions


# -- 1. stray-line floods ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["flood", "flood_idle"])
def test_a_flooding_bot_is_judged_at_once_with_few_records(mode: str,
                                                           play_bad: PlayBad) -> None:
    record, records, _ = play_bad(mode)
    assert_forfeited(record)
    [fatal] = [f for f in record.faults[0] if f.fatal]
    assert fatal.outcome == "malformed"
    assert "flooding" in fatal.detail
    # Judged within the first requests: no more decisions than a normal game, far fewer.
    assert record.decisions <= normal_decisions(play_bad) // 2
    faults = [r for r in records if r["type"] == "fault"]
    assert len(faults) <= NOTES_PER_KIND + 2
    assert len(json.dumps(records)) < 200_000


def test_a_flood_before_ready_is_final(play_bad: PlayBad) -> None:
    record, _, _ = play_bad("flood_banner")
    assert_forfeited(record)
    [fatal] = [f for f in record.faults[0] if f.fatal]
    assert fatal.outcome == "malformed"
    assert "flooding" in fatal.detail and "ready" in fatal.detail
    assert len(record.faults[0]) <= NOTES_PER_KIND + 2


def test_stray_lines_under_the_limit_are_noted_at_most_n_times(play_bad: PlayBad) -> None:
    record, records, _ = play_bad("stray")
    assert record.status == ["ok", "ok"]
    assert record.outcome.termination == "normal"
    late = [f for f in record.faults[0] if f.outcome == "late"]
    assert len(late) == NOTES_PER_KIND + 1  # the notes, then the summary
    summary = [r for r in records if r["type"] == "fault" and "suppressed" in r]
    # 30 strays per decision of seat 0 (the summary counts the ones not recorded)
    seat0 = sum(1 for r in records if r["type"] == "action" and r["seat"] == 0)
    assert [r["outcome"] for r in summary] == ["late"]
    assert summary[0]["suppressed"] == 30 * seat0 - NOTES_PER_KIND
    assert not summary[0]["fatal"]
    result = records[-1]
    assert result["faults"][0] == len([r for r in records if r["type"] == "fault"
                                       and r["seat"] == 0])


def test_the_stray_limit_is_a_seat_limit(play_bad: PlayBad) -> None:
    limits = dataclasses.replace(FAST, max_stray_lines=10)
    record, _, _ = play_bad("stray", limits=limits)
    assert_forfeited(record)
    [fatal] = [f for f in record.faults[0] if f.fatal]
    assert "more than 10 unsolicited lines during request 1" in fatal.detail


# -- 3. line length ------------------------------------------------------------------------------


def test_a_long_illegal_answer_is_quoted_short_and_no_line_is_too_long() -> None:
    sent: list[str] = []
    command = BotCommand((PYTHON, str(BAD_BOT_PATH), "long_illegal"))
    seat = ProcessSeat(command, FAST, game=FAKE.name,
                       on_line=lambda d, text: sent.append(text) if d == ">" else None)
    records: list[dict[str, Any]] = []
    try:
        record = play_game(FAKE, FAKE.rules(turns=8), [seat, InProcessSeat(
            fakegame.RandomFakeBot(1))], 3, PATIENT, records.append)
    finally:
        seat.close()
    assert outcomes(record) == [("illegal", False)] * 2 + [("illegal", True)]
    errors = [line for line in sent if line.startswith("error")]
    assert len(errors) == 3
    assert max(len(line.encode()) for line in sent) <= MAX_LINE
    assert max(len(line) for line in errors) < 1000
    for fault in (r for r in records if r["type"] == "fault"):
        assert len(fault["detail"]) <= MAX_DETAIL
        assert "..." in fault["detail"]


def test_every_line_sent_fits_in_a_line() -> None:
    read_fd, write_fd = os.pipe()
    quiet_r, quiet_w = os.pipe()
    seen: list[str] = []
    channel = LineChannel(quiet_r, write_fd, on_line=lambda d, text: seen.append(text))
    try:
        channel.send("error 1 " + "é" * 20_000, "go 2")
        data = b""
        while not data.endswith(b"go 2\n"):
            data += os.read(read_fd, 1 << 16)
    finally:
        channel.close()
        for fd in (read_fd, write_fd, quiet_r, quiet_w):
            os.close(fd)
    first = data.split(b"\n")[0]
    assert len(first) <= MAX_LINE and first.endswith(b"...")
    first.decode("utf-8")  # cut on a character boundary
    assert seen[0].encode() == first


def test_fit_line_quote_and_fault_details_are_bounded() -> None:
    assert fit_line("short") == "short"
    assert len(fit_line("x" * 20_000).encode()) == MAX_LINE
    assert len(fit_line("€" * 10_000).encode()) <= MAX_LINE
    assert quote("a  b\tc") == "a b c"
    assert quote("y" * 500) == "y" * 200 + "..."
    assert len(Fault(FaultOutcome.LATE, "z" * 50_000).detail) == MAX_DETAIL


# -- 2. processes that escape, resource limits -----------------------------------------------------


@pytest.mark.parametrize("mode", ["escape", "escape_orphan"])
def test_children_that_escape_the_group_are_killed(mode: str, play_bad: PlayBad,
                                                   tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"  # written before `ready`
    record, _, _ = play_bad(mode, env={"BAD_BOT_CHILD_PID_FILE": str(pid_file)})
    assert record.status == ["ok", "ok"]
    child = int(pid_file.read_text())
    assert wait_for(lambda: pid_gone(child), 10.0), f"escaped child {child} still runs"


def limits_of(pid: int) -> dict[str, list[str]]:
    out = {}
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]:
        words = line[26:].split()
        out[line[:26].strip()] = words
    return out


def test_bots_get_no_core_dumps_and_the_limits_asked_for() -> None:
    limits = dataclasses.replace(FAST, memory_mb=900, file_size_mb=5)
    seat = ProcessSeat(BotCommand((PYTHON, str(BAD_BOT_PATH), "good")), limits, game=FAKE.name)
    try:
        seat.connect(10.0)
        assert seat.process is not None
        # The program itself: the process started is the guard (protocol/guard.py).
        (bot,) = [pid for pid, _ in descendants(seat.process.pid)]
        got = limits_of(bot)
    finally:
        seat.close()
    assert got["Max core file size"][:2] == ["0", "0"]
    assert got["Max address space"][:2] == [str(900 << 20)] * 2
    assert got["Max file size"][:2] == [str(5 << 20)] * 2


def test_memory_cap_makes_a_hog_crash(play_bad: PlayBad) -> None:
    limits = dataclasses.replace(FAST, memory_mb=256)
    record, _, _ = play_bad("hog", env={"BAD_BOT_HOG_MB": "512"}, limits=limits)
    assert_forfeited(record)
    assert outcomes(record) == [("crashed", True)]


def test_limits_default_to_none_but_core() -> None:
    assert Limits().rlimits() == {__import__("resource").RLIMIT_CORE: 0}
    assert MatchPolicy().on_failure == "forfeit"
