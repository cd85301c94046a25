"""The conversation with one bot, against a scripted bot: no process, no pipe, no real clock.

A `ScriptedBot` is a `Transport` whose other end is a script (as python-chess's MockTransport):
`bot.on("go 1").reply("action 1 draw pile", after=0.3)` waits for the referee to send a line
starting with `go 1`, and makes the answer arrive 0.3 s later on a clock of its own, which
reads advance. So every deadline, grace and elapsed time below is exact, and a test of a
10-second grace takes no time at all.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import pytest

from meldref.engine.game import find_game
from meldref.protocol.channel import EOF, EXITED, TOO_LONG, Incoming
from meldref.protocol.conversation import Conversation, Request, Setup
from meldref.protocol.errors import (
    BotCrashedError,
    BotFloodError,
    BotProtocolError,
    BotTimeoutError,
)
from meldref.protocol.limits import Limits
from meldref.protocol.seats import TransportSeat


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def to(self, moment: float) -> None:
        self.now = max(self.now, moment)


@dataclass
class Arrival:
    at: float
    kind: str  # a line, "too-long", "eof", or "exit" (the process ends; output may stay open)
    data: bytes = b""
    code: int = 0


@dataclass
class Step:
    """What the bot does once the referee sends a line starting with `prefix`."""

    prefix: str
    then: list[tuple[float, str, bytes, int]] = field(default_factory=list)

    def reply(self, *lines: str, after: float = 0.0) -> Step:
        self.then += [(after, "line", line.encode(), 0) for line in lines]
        return self

    def too_long(self, after: float = 0.0) -> Step:
        self.then.append((after, TOO_LONG, b"", 0))
        return self

    def exits(self, code: int, after: float = 0.0, close_output: bool = True) -> Step:
        """The process ends; with `close_output` its stdout closes too, else a child it left
        holds it open (the transport then says `EXITED`, as `PipeTransport` does)."""
        self.then.append((after, "exit", b"", code))
        if close_output:
            self.then.append((after, EOF, b"", 0))
        return self

    def closes_output(self, after: float = 0.0) -> Step:
        self.then.append((after, EOF, b"", 0))
        return self


class ScriptedBot:
    """A `Transport` played by a script; `sent` is every line the referee wrote."""

    def __init__(self, clock: Clock, busy: bool = False) -> None:
        self.clock = clock
        self.busy = busy  # uses a whole CPU while alive (computing), else none
        self.sent: list[str] = []
        self.steps: deque[Step] = deque()
        self.inbox: list[Arrival] = []
        self.eof = False
        self.write_error: str | None = None
        self.exit_at: float | None = None
        self.code = 0

    def on(self, prefix: str) -> Step:
        step = Step(prefix)
        self.steps.append(step)
        return step

    def unasked(self, *lines: str, after: float = 0.0) -> None:
        """Lines the bot writes on its own, `after` seconds from now."""
        for line in lines:
            self._arrive(Arrival(self.clock.now + after, "line", line.encode()))

    def assert_done(self) -> None:
        assert not self.steps, f"the referee never sent {self.steps[0].prefix!r}: {self.sent}"

    def _arrive(self, arrival: Arrival) -> None:
        self.inbox.append(arrival)
        self.inbox.sort(key=lambda a: a.at)  # stable: lines due at once keep their order

    # -- Transport -------------------------------------------------------------------------

    def send(self, *lines: str, now: bool = True) -> None:
        for line in lines:
            self.sent.append(line)
            if self.steps and line.startswith(self.steps[0].prefix):
                for after, kind, data, code in self.steps.popleft().then:
                    self._arrive(Arrival(self.clock.now + after, kind, data, code))

    def flush(self) -> None:
        pass

    def poll(self) -> None:
        pass

    def drain(self, timeout: float) -> bool:
        return True

    def read(self, deadline: float) -> Incoming | None:
        while self.inbox and self.inbox[0].at <= deadline:
            got = self.inbox.pop(0)
            self.clock.to(got.at)
            if got.kind == "exit":
                self.exit_at, self.code = got.at, got.code
                continue
            if got.kind == EOF:
                self.eof = True
                continue
            return Incoming(got.data, got.at, got.kind)
        if self.eof:
            return Incoming(b"", self.clock.now, EOF)
        if self.exit_at is not None:
            return Incoming(b"", self.clock.now, EXITED)
        self.clock.to(deadline)
        return None

    def pending(self) -> list[Incoming]:
        out = []
        while self.inbox and self.inbox[0].at <= self.clock.now and self.inbox[0].kind not in (
                "exit", EOF):
            got = self.inbox.pop(0)
            out.append(Incoming(got.data, got.at, got.kind))
        return out

    def exit_code(self, wait: float = 0.0) -> int | None:
        ending = self.exit_at
        if ending is None:
            ending = next((a.at for a in self.inbox if a.kind == "exit"), None)
        if ending is not None and ending <= self.clock.now + wait:
            self.clock.to(ending)
            self.exit_at = ending
            self.code = next((a.code for a in self.inbox if a.kind == "exit"), self.code)
            return self.code
        self.clock.to(self.clock.now + wait)
        return None

    def cpu_time(self) -> float | None:
        return self.clock.now if self.busy and self.exit_at is None else 0.0


LIMITS = Limits(ping_grace=1.0, busy_grace=10.0, exit_wait=0.5, max_stray_lines=100)


def talk(busy: bool = False, limits: Limits = LIMITS) -> tuple[Conversation, ScriptedBot,
                                                              Clock]:
    clock = Clock()
    bot = ScriptedBot(clock, busy)
    return Conversation(bot, limits, clock), bot, clock


def request(time: float = 1.0, bank: float = 0.0) -> Request:
    """A real decision: the first of a Solitaire deal (seed 7), with its legal hints."""
    state = find_game("solitaire").new_game(find_game("solitaire").rules(), 1, 7)
    return Request(state.decision, state.observation(0), time, bank,
                   lambda: [str(a) for a in state.legal_actions()])


# ----------------------------------------------------------------------------------------------
# The handshake


def test_a_handshake_collects_the_ids_up_to_ready() -> None:
    conv, bot, clock = talk()
    bot.on("meldref 1 phase10").reply("id name fake bot", "info warming up", "id author Ada",
                                      "ready", after=0.25)
    assert conv.handshake("phase10", 10.0) == {"name": "fake bot", "author": "Ada"}
    assert clock.now == 100.25 and conv.take_notes() == []
    bot.assert_done()


def test_chatter_before_ready_is_forgiven_and_malformed_lines_are_noted() -> None:
    conv, bot, _ = talk()
    bot.on("meldref").reply("Hello, I am a banner", "pong 3", "ready")
    assert conv.handshake("phase10", 10.0) == {}
    (note,) = conv.take_notes()
    assert note.outcome == "malformed" and not note.fatal and "before ready" in note.detail


def test_a_bot_that_exits_during_the_handshake_crashed() -> None:
    conv, bot, _ = talk()
    bot.on("meldref").reply("id name doomed").exits(2, after=0.1)
    with pytest.raises(BotCrashedError) as caught:
        conv.handshake("phase10", 10.0)
    assert caught.value.fault.outcome == "crashed"
    assert caught.value.fault.detail == "exited with code 2 during the handshake"


def test_a_silent_idle_bot_stalls_in_the_handshake_after_the_ping_grace() -> None:
    conv, bot, clock = talk()
    with pytest.raises(BotTimeoutError) as caught:
        conv.handshake("phase10", 3.0)
    fault = caught.value.fault
    assert fault.outcome == "stalled" and fault.fatal
    assert "no `ready` within 3000 ms and no pong within 1000 ms" in fault.detail
    assert bot.sent == ["meldref 1 phase10", "ping 1"]
    assert clock.now == 104.0  # the deadline, then the ping grace: no more


def test_a_flood_of_banners_before_ready_is_final() -> None:
    conv, bot, _ = talk(limits=Limits(max_stray_lines=5))
    bot.on("meldref").reply(*["banner"] * 6, "ready")
    with pytest.raises(BotFloodError) as caught:
        conv.handshake("phase10", 10.0)
    assert caught.value.fault.fatal
    assert "flooding: more than 5 unsolicited lines before `ready`" in caught.value.fault.detail


# ----------------------------------------------------------------------------------------------
# Decisions


def test_an_answer_in_time_is_the_reply_with_its_exact_time() -> None:
    conv, bot, _ = talk()
    bot.on("go 1 decision place time 1000 bank 500").reply("action 1 place 3 R7", after=0.3)
    reply = conv.decide(request(1.0, 0.5))
    assert (reply.text, reply.request_id, reply.elapsed) == ("place 3 R7", 1, pytest.approx(0.3))
    assert bot.sent[0].startswith("view ") and any(s.startswith("legal place") for s in bot.sent)
    bot.assert_done()


def test_request_ids_only_increase() -> None:
    conv, bot, _ = talk()
    bot.on("go 1 ").reply("action 1 place 3 R7")
    bot.on("go 2 ").reply("action 2 place 4 R7")
    assert [conv.decide(request()).request_id for _ in range(2)] == [1, 2]


def test_info_pong_and_ready_lines_during_a_request_are_not_the_answer() -> None:
    conv, bot, _ = talk()
    bot.on("go 1").reply("info thinking hard", "pong 9", "ready", "", "action 1 place 5 R7")
    assert conv.decide(request()).text == "place 5 R7"
    assert conv.take_notes() == []  # stray, but under the flood limit: nothing recorded


def test_a_late_answer_is_a_timeout_and_then_only_noted() -> None:
    conv, bot, _ = talk()
    bot.on("go 1").reply("action 1 place 3 R7", after=1.4)  # 0.4 s into the ping grace
    with pytest.raises(BotTimeoutError) as caught:
        conv.decide(request(1.0))
    fault = caught.value.fault
    assert fault.outcome == "timeout" and fault.request_id == 1
    assert fault.detail == ("no answer within 1000 ms (alive: sent `action` 400 ms after the "
                            "deadline)")
    (late,) = conv.take_notes()
    assert late.outcome == "late" and not late.fatal and "late answer to request 1" in late.detail


def test_an_old_answer_arriving_between_requests_is_late_not_the_next_answer() -> None:
    conv, bot, _ = talk()
    bot.on("go 1").reply("action 1 place 3 R7")
    conv.decide(request())
    bot.unasked("action 1 place 3 R7")  # sent twice
    bot.on("go 2").reply("action 2 place 4 R7", after=0.1)
    assert conv.decide(request()).text == "place 4 R7"
    (late,) = conv.take_notes()
    assert late.outcome == "late" and late.request_id == 1


def test_an_answer_to_a_request_never_sent_is_noted_as_malformed() -> None:
    conv, bot, _ = talk()
    bot.on("go 1").reply("action 7 place 3 R7", "action 1 place 4 R7")
    assert conv.decide(request()).text == "place 4 R7"
    (note,) = conv.take_notes()
    assert note.outcome == "malformed" and "request 7, which was never sent" in note.detail


@pytest.mark.parametrize(("line", "why"), [
    ("hello there", "unknown message type 'hello'"),
    ("action x place 3 R7", "is not a request id"),
])
def test_a_malformed_answer_may_be_asked_again(line: str, why: str) -> None:
    conv, bot, _ = talk()
    bot.on("go 1").reply(line, after=0.2)
    with pytest.raises(BotProtocolError) as caught:
        conv.decide(request())
    assert why in caught.value.fault.detail and not caught.value.fault.fatal
    assert caught.value.elapsed == pytest.approx(0.2)


def test_a_line_too_long_is_malformed() -> None:
    conv, bot, _ = talk()
    bot.on("go 1").too_long()
    with pytest.raises(BotProtocolError, match="line too long"):
        conv.decide(request())


def test_a_flood_during_a_request_is_final_at_once() -> None:
    conv, bot, clock = talk()
    bot.on("go 1").reply(*["action 0 place 3 R7"] * 101, "action 1 place 3 R7", after=0.01)
    with pytest.raises(BotFloodError) as caught:
        conv.decide(request())
    assert caught.value.fault.fatal and caught.value.fault.request_id == 1
    assert "more than 100 unsolicited lines during request 1" in caught.value.fault.detail
    assert clock.now == pytest.approx(100.01)  # judged on the 101st line, not at the deadline


def test_a_flood_between_requests_is_final_at_the_next_request() -> None:
    conv, bot, _ = talk()
    bot.on("go 1").reply("action 1 place 3 R7", *["pong 1"] * 101)
    conv.decide(request())
    with pytest.raises(BotFloodError, match="between requests"):
        conv.decide(request())


def test_stray_lines_under_the_limit_cost_nothing_each_period_afresh() -> None:
    conv, bot, _ = talk()
    for n in (1, 2, 3):
        bot.on(f"go {n} ").reply(*["pong 0"] * 100, f"action {n} place 3 R7")
        assert conv.decide(request()).request_id == n


# ----------------------------------------------------------------------------------------------
# Silence and death


def test_a_silent_idle_bot_stalls_after_the_ping_grace() -> None:
    conv, bot, clock = talk()
    with pytest.raises(BotTimeoutError) as caught:
        conv.decide(request(1.0, 0.5))
    fault = caught.value.fault
    assert fault.outcome == "stalled"
    assert "no answer within 1500 ms and no pong within 1000 ms; idle" in fault.detail
    assert bot.sent[-1] == "ping 1" and clock.now == pytest.approx(102.5)


def test_a_bot_that_answers_the_ping_is_alive_so_timed_out() -> None:
    conv, bot, _ = talk()
    bot.on("ping 1").reply("pong 1", after=0.2)
    with pytest.raises(BotTimeoutError) as caught:
        conv.decide(request())
    assert caught.value.fault.outcome == "timeout"
    assert "alive: sent `pong` 200 ms after the deadline" in caught.value.fault.detail


def test_a_computing_bot_is_waited_for_through_the_busy_grace() -> None:
    conv, bot, _ = talk(busy=True)
    bot.on("go 1").reply("action 1 place 3 R7", after=7.0)  # 6 s late, still computing
    with pytest.raises(BotTimeoutError) as caught:
        conv.decide(request())
    assert caught.value.fault.outcome == "timeout"
    assert "alive: still computing, then sent `action` 6000 ms" in caught.value.fault.detail


def test_a_bot_computing_for_ever_stalls_at_the_end_of_the_busy_grace() -> None:
    conv, _, clock = talk(busy=True)
    with pytest.raises(BotTimeoutError) as caught:
        conv.decide(request())
    assert caught.value.fault.outcome == "stalled"
    assert "silent for 10000 ms more while using the CPU" in caught.value.fault.detail
    assert clock.now == pytest.approx(111.0)


@pytest.mark.parametrize(("code", "words"), [
    (3, "exited with code 3 before answering request 1"),
    (-11, "killed by signal SIGSEGV before answering request 1"),
])
def test_a_bot_that_dies_mid_request_crashed(code: int, words: str) -> None:
    conv, bot, clock = talk()
    bot.on("go 1").exits(code, after=0.2)
    with pytest.raises(BotCrashedError) as caught:
        conv.decide(request(30.0))
    assert caught.value.fault.outcome == "crashed" and caught.value.fault.detail == words
    assert clock.now == pytest.approx(100.2)  # at once, not at the deadline


def test_a_bot_whose_child_holds_its_output_crashed_when_it_exited() -> None:
    """Issue 10: the process ended, its stdout still open (a child inherited it): crashed at
    once, with its answer before the exit still read."""
    conv, bot, clock = talk()
    bot.on("go 1").reply("action 1 place 3 R7", after=0.1)
    bot.on("go 2").exits(3, after=0.2, close_output=False)
    assert conv.decide(request(30.0)).text == "place 3 R7"
    with pytest.raises(BotCrashedError) as caught:
        conv.decide(request(30.0))
    assert caught.value.fault.outcome == "crashed"
    assert caught.value.fault.detail == "exited with code 3 before answering request 2"
    assert clock.now == pytest.approx(100.3)


def test_a_program_seen_to_end_without_an_exit_code_crashed_and_no_none_is_said() -> None:
    """The transport saw the program end (its pidfd) but had no exit code within the wait:
    crashed, in words (was: `closed: None before answering request 71`)."""
    conv, bot, _ = talk()
    bot.on("go 1").exits(3, after=0.2, close_output=False)
    bot.exit_code = lambda wait=0.0: None  # type: ignore[method-assign]
    with pytest.raises(BotCrashedError) as caught:
        conv.decide(request(30.0))
    fault = caught.value.fault
    assert fault.outcome == "crashed" and "None" not in fault.detail
    assert fault.detail == "ended before answering request 1 (its exit code unknown)"


def test_a_bot_that_closes_its_output_but_runs_on_is_closed() -> None:
    conv, bot, clock = talk()
    bot.on("go 1").closes_output(after=0.2)
    with pytest.raises(BotCrashedError) as caught:
        conv.decide(request(30.0))
    fault = caught.value.fault
    assert fault.outcome == "closed"
    assert fault.detail == "closed its output before answering request 1 but is still running"
    assert clock.now == pytest.approx(100.7)  # the exit wait, then judged


def test_a_bot_that_stopped_reading_is_closed_at_its_next_request() -> None:
    conv, bot, _ = talk()
    bot.write_error = "stopped reading: over 8388608 bytes unread"
    with pytest.raises(BotCrashedError) as caught:
        conv.decide(request())
    assert caught.value.fault.outcome == "closed" and "stopped reading" in caught.value.fault.detail


# ----------------------------------------------------------------------------------------------
# A game's other messages, and the goodbye


def test_setup_events_errors_and_gameover_go_out_as_protocol_lines() -> None:
    conv, bot, _ = talk()
    conv.start(Setup("solitaire", {"natural": "none"}, 0, ("me",)))
    conv.notify([{"event": "place", "pile": 3, "card": "R7"}])
    conv.reject(4, "illegal: no such pile")
    conv.finish({"termination": "normal", "winners": [0]})
    assert bot.sent == ["game solitaire players 1 seat 0", "rule natural none", "player 0 me",
                        "event place pile 3 card R7", "error 4 illegal: no such pile",
                        "gameover termination normal winners 0"]


def test_goodbye_says_quit_once() -> None:
    conv, bot, _ = talk()
    conv.say_goodbye()
    conv.say_goodbye()
    assert bot.sent == ["quit"]


def test_a_seat_over_any_transport_shakes_hands_decides_and_says_goodbye() -> None:
    # `TransportSeat`: the protocol as a bot program gets it, over a transport given to it (the
    # benchmark's in-memory loopback): no process to start or stop.
    bot = ScriptedBot(Clock())
    bot.on("meldref 1 solitaire").reply("id name scripted", "ready")
    bot.on("go 1").reply("action 1 place 3 X")
    seat = TransportSeat(bot, name="unnamed", game="solitaire", limits=LIMITS)
    seat.connect()
    assert seat.name == "scripted"
    assert seat.decide(request()).text == "place 3 X"
    seat.close()
    assert bot.sent[-1] == "quit" and any(line.startswith("legal ") for line in bot.sent)
    bot.assert_done()
