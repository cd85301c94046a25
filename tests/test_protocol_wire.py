"""The wire format: values to tokens, referee lines, and the parser of bot lines."""

from __future__ import annotations

import os
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meldref.protocol import channel as channel_module
from meldref.protocol.channel import EOF, LINE, SPIN, TOO_LONG, LineChannel, look_before_sleeping
from meldref.protocol.conversation import request_text
from meldref.protocol.errors import BotError
from meldref.protocol.seats import Request, StreamSeat
from meldref.protocol.wire import (
    MAX_LINE,
    decode_list,
    encode_value,
    error_line,
    event_line,
    parse_bot_line,
    setup_lines,
    split_fields,
    view_lines,
)


def test_scalars_are_one_token_each() -> None:
    assert encode_value(None) == "none"
    assert encode_value(True) == "true"
    assert encode_value(False) == "false"
    assert encode_value(12) == "12"
    assert encode_value("2 sets of 3") == "2_sets_of_3"
    assert encode_value("") == "-"


def test_lists_join_cards_with_commas_and_groups_with_semicolons() -> None:
    assert encode_value(["R1", "W", "10*"]) == "R1,W,10*"
    assert encode_value([]) == "-"
    groups = ["run:R3,R4,W=5,G6", "set:R7,B7,W"]
    assert encode_value(groups) == "run:R3,R4,W=5,G6;set:R7,B7,W"
    assert decode_list(encode_value(groups)) == groups
    assert decode_list(encode_value(groups[:1])) == groups[:1]
    assert decode_list("R1,W,10*") == ["R1", "W", "10*"]
    assert decode_list("-") == []


def test_view_puts_scalars_on_one_line_and_dicts_on_item_lines() -> None:
    lines = view_lines({
        "hand": ["R1", "W"], "phase": 3, "table": [{"id": 1, "group": "set:R7,B7,W"}],
        "empty": [], "me": {"seat": 0},
    })
    assert lines == [
        "view hand R1,W phase 3 empty -",
        "item table id 1 group set:R7,B7,W",
        "item me seat 0",
    ]


def test_request_ends_with_go_carrying_id_and_clocks() -> None:
    hints = ["draw pile", "draw  discard"]
    request = Request("draw", _View({"hand": ["R1"]}), 1.5, 0.0, hints=lambda: hints)
    lines = request_text(7, request)
    assert lines[-1] == "go 7 decision draw time 1500 bank 0"
    assert lines[1:3] == ["legal draw pile", "legal draw discard"]
    assert request_text(8, Request("x", _View({}), 0.001, 0.002))[:-1] == ["view"]


def test_setup_event_and_error_lines() -> None:
    lines = setup_lines("phase10", 1, {"skip-victim": "choose", "phases-to-win": None},
                        ["a bot", "b"])
    assert lines == ["game phase10 players 2 seat 1", "rule skip-victim choose",
                     "rule phases-to-win none", "player 0 a bot", "player 1 b"]
    assert event_line({"event": "draw", "seat": 0, "from": "pile"}) == \
        "event draw seat 0 from pile"
    assert error_line(3, "illegal:\nno  way") == "error 3 illegal: no way"
    words = event_line({"event": "x", "a": 1, "b": ["R1", "R2"]}).split()
    assert split_fields(words[2:]) == {"a": "1", "b": "R1,R2"}


def test_bot_lines() -> None:
    msg = parse_bot_line(b"action 12 lay phase=1 set:R9,Y9,B9  set:Y8,R8,W=8\r")
    assert msg is not None and msg.kind == "action" and msg.request_id == 12
    assert msg.text == "lay phase=1 set:R9,Y9,B9 set:Y8,R8,W=8"
    assert parse_bot_line("   ") is None
    assert parse_bot_line("ID name My Bot 2").text == "My Bot 2"  # type: ignore[union-attr]
    assert parse_bot_line("pong 4").text == "4"  # type: ignore[union-attr]
    for bad in ("action x draw pile", "action 3", "pong", "hello", "action -1 draw",
                "id", "act\x01ion 1 x", b"\xff\xfe", b"a" * (MAX_LINE + 1)):
        got = parse_bot_line(bad)
        assert got is not None and got.malformed, bad


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_crash_the_parser(data: bytes) -> None:
    for line in data.split(b"\n"):
        got = parse_bot_line(line)
        assert got is None or got.kind in ("id", "ready", "action", "pong", "info", "malformed")
        if got is not None and got.malformed:
            assert got.text  # always a reason


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_crashes_the_parser(text: str) -> None:
    got = parse_bot_line(text)
    assert got is None or got.malformed or got.kind in ("id", "ready", "action", "pong", "info")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=80), max_size=12), st.integers(1, 7))
def test_channel_splits_any_byte_stream_into_lines(chunks: list[bytes], step: int) -> None:
    """Bytes written in arbitrary pieces come out as the same lines; overlong ones marked."""
    r, w = os.pipe()
    r2, w2 = os.pipe()
    try:
        channel = LineChannel(r, w2, max_line=40)
        data = b"\n".join(chunks)
        for i in range(0, len(data), step):
            os.write(w, data[i:i + step])
        os.close(w)
        w = -1
        got = []
        while (item := channel.read(deadline=float("inf"))).kind != EOF:
            got.append(None if item.kind == TOO_LONG else item.data)
        want = []
        for line in data.split(b"\n") if data else []:
            line = line[:-1] if line.endswith(b"\r") else line
            want.append(None if len(line) > 40 else line)
        if data.endswith(b"\n") or not data:
            want = want[:-1] if data else []
        assert got == want
        channel.close()
    finally:
        for fd in (r, w, r2, w2):
            if fd >= 0:
                os.close(fd)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=60).filter(lambda b: b"\n" not in b), max_size=8))
def test_channel_reads_lines_written_one_at_a_time(lines: list[bytes]) -> None:
    """A line read alone, as a bot's answer nearly always is (the channel's shortcut): the
    same line, a `\r` before its newline dropped, an overlong one marked."""
    r, w = os.pipe()
    r2, w2 = os.pipe()
    try:
        channel = LineChannel(r, w2, max_line=40)
        for line in lines:
            os.write(w, line + b"\n")
            item = channel.read(deadline=float("inf"))
            want = line[:-1] if line.endswith(b"\r") else line
            if len(want) > 40:
                assert item.kind == TOO_LONG
            else:
                assert (item.kind, item.data) == (LINE, want)
            assert channel.unfinished == b""
        channel.close()
    finally:
        for fd in (r, w, r2, w2):
            os.close(fd)


def _answered_at_once(channel: LineChannel, w: int) -> bool:
    """A line in the pipe before the read, as from a bot that answered at once: whether the
    channel then counts the bot as fast. The test machine may be busy and take the read off
    the core for longer than SPIN, so many tries (each a few microseconds; 50 failed once at
    load 9.7 on two cores): one is enough."""
    for n in range(5000):
        os.write(w, b"action %d draw pile\n" % n)
        assert channel.read(deadline=float("inf")).data == b"action %d draw pile" % n
        if channel._spinning:
            return True
    return False


def test_a_read_looks_before_it_sleeps_only_for_a_bot_that_answers_that_fast() -> None:
    # A round trip through a sleep cost the referee two to three raw round trips (the bot's
    # core idle through its work, its own work slower after the switch): a read now looks for
    # the answer without sleeping, up to SPIN, but only while the bot's answers come that
    # fast, so a bot that thinks costs nothing more.
    r, w = os.pipe()
    r2, w2 = os.pipe()
    try:
        channel = LineChannel(r, w2)
        assert not channel._spinning  # a new bot is not looked for: its first answer decides
        assert _answered_at_once(channel, w)
        late = threading.Timer(SPIN * 100, os.write, (w, b"late\n"))
        late.start()
        assert channel.read(deadline=float("inf")).data == b"late"
        late.join()
        assert not channel._spinning  # slower than SPIN: the next wait sleeps at once
        assert channel.read(deadline=time.monotonic() + SPIN) is None  # nothing came
        assert not channel._spinning
        assert _answered_at_once(channel, w)  # fast again: looked for again
        os.close(w)
        w = -1
        assert channel.read(deadline=float("inf")).kind == EOF  # a look ends at the EOF
        channel.close()
    finally:
        for fd in (r, w, r2, w2):
            if fd >= 0:
                os.close(fd)


def test_a_look_whose_yield_lost_the_core_stops_looking_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Measured on a 2-core machine with four busy processes beside the game: Phase 10 through
    # pipes took 2,023 us a decision with the look against 108 with reads that sleep at once.
    # The look's yield gave the core to a busy process for a whole time slice, every other
    # decision (a slow answer turned the look off, the next quick one on again). A yield that
    # kept the referee off its core for longer than the whole look says the machine is
    # crowded: the channel stops looking for CROWDED_PAUSE, whatever its bot's speed.
    r, w = os.pipe()
    r2, w2 = os.pipe()
    yields: list[float] = []

    def crowded_yield() -> None:  # another process runs a slice before the referee again
        yields.append(time.monotonic())
        time.sleep(SPIN * 20)

    def answer_soon(line: bytes) -> None:  # the bot's answer, after the look began
        timer = threading.Timer(SPIN * 10, os.write, (w, line))
        timer.start()
        assert channel.read(deadline=float("inf")).data == line.rstrip()
        timer.join()

    try:
        channel = LineChannel(r, w2)
        assert _answered_at_once(channel, w)
        monkeypatch.setattr(os, "sched_yield", crowded_yield)
        answer_soon(b"action 1 draw pile\n")
        assert len(yields) == 1
        monkeypatch.undo()
        # Quick answers again, which would turn the look back on: no yield until the pause
        # is over (it is far longer than these reads).
        for _ in range(5):
            assert _answered_at_once(channel, w)
            monkeypatch.setattr(os, "sched_yield", crowded_yield)
            answer_soon(b"action 2 draw pile\n")
            monkeypatch.undo()
        assert len(yields) == 1
        assert channel_module.CROWDED_PAUSE >= 0.5
        channel.close()
    finally:
        for fd in (r, w, r2, w2):
            os.close(fd)


def test_with_looking_off_reads_still_read_and_fast_answers_are_still_noted() -> None:
    # Looking before sleeping took a core from the other game's bots at -j 2 on 2 cores (8%
    # fewer games a second): a pool of as many workers as cores turns it off, as a cluster's
    # workers do (tests/test_pool_workers.py); the reads still read.
    r, w = os.pipe()
    r2, w2 = os.pipe()
    try:
        look_before_sleeping(False)
        assert not channel_module._looking
        channel = LineChannel(r, w2)
        # Fast answers still noted, for when looking is on again; the reads still read.
        assert _answered_at_once(channel, w)
    finally:
        look_before_sleeping(True)
        for fd in (r, w, r2, w2):
            os.close(fd)
    assert channel_module._looking


class _View:
    """An observation of a game the text writers do not know: written from its JSON."""

    def __init__(self, data: dict[str, object] | None = None) -> None:
        self.data = {"hand": ["R1"]} if data is None else data

    def to_json(self) -> dict[str, object]:
        return self.data


LINES = st.lists(st.binary(max_size=60), max_size=4)


@settings(max_examples=60, deadline=None)
@given(before=LINES, during=LINES)
def test_arbitrary_lines_during_a_decision_end_as_recorded_faults(before: list[bytes],
                                                                  during: list[bytes]) -> None:
    """Whatever a bot writes, `decide` returns an answer or raises a BotError with a fault.

    `before` is written ahead of the request (lines between requests), `during` as the request
    goes out, then the bot's output ends: every line is read and judged, none waits on a clock
    (the deadline is long, the end of output comes first)."""
    to_ref_r, to_ref_w = os.pipe()
    to_bot_r, to_bot_w = os.pipe()

    def bot_answers(way: str, text: str) -> None:
        if way == ">" and text.startswith("go "):
            os.write(to_ref_w, b"".join(line + b"\n" for line in during))
            os.close(to_ref_w)

    seat = StreamSeat(to_ref_r, to_bot_w, on_line=bot_answers)
    try:
        os.write(to_ref_w, b"".join(line + b"\n" for line in before))
        try:
            reply = seat.decide(Request("draw", _View(), 60.0, 0.0))
        except BotError as exc:
            assert exc.fault.outcome in ("malformed", "closed")
            assert exc.fault.detail
        else:
            assert reply.request_id == 1 and reply.text
        assert all(n.outcome in ("late", "malformed") for n in seat.take_notes())
    finally:
        seat.channel.close()
        for fd in (to_ref_r, to_bot_r, to_bot_w):
            os.close(fd)


def test_events_as_seats_see_them_hold_plain_words() -> None:
    """`Event.for_seat` names the kind by its plain text (what the event lines and replays
    write), and `EventFields` is the same mapping with a line written once."""
    from meldref.engine.game import Event, EventKind
    from meldref.protocol.wire import EventFields

    for kind in EventKind:
        seen = Event(kind, 1, {"pile": 5}, {"card": "7H"}).for_seat(1)
        assert type(seen["event"]) is str and seen["event"] == kind.value
        fields = EventFields(seen)
        assert fields == seen and fields is not seen and fields.line is None
        line = event_line(fields)
        assert line == f"event {kind.value} seat 1 pile 5 card 7H" and event_line(fields) is line
