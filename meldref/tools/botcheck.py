"""`meldref bot check`: a conformance test of a bot program, as a checklist with reasons.

The session checks (handshake, ping, unknown messages, quit, end of input) talk to the program
over raw pipes, so they can say *why* nothing arrived: a line without its newline, or output
that only shows up once the program exits (it never flushed: PROTOCOL.md section 2). The game
checks go through the referee (`ProcessSeat` and `play_game`) exactly as a match does, with a
match's clocks (its time bank too; `strict`: none) and no retries: any fault fails the check.
"""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ..bots.sdk import SDK_RAISED
from ..engine.game import GAME_NAMES, JSON, GameInfo, Rules, UnknownGameError, find_game
from ..engine.registry import DEFAULT_GAME
from ..private import private_dir
from ..protocol.channel import EOF, EXITED, TOO_LONG
from ..protocol.command import BotCommand, describe_exit
from ..protocol.errors import TIMED_OUT, Fault, FaultOutcome, SeatStatus
from ..protocol.process import BotProcess, PipeTransport
from ..protocol.referee import MatchPolicy, play_game
from ..protocol.seats import BotSpec, Limits, ProcessSeat, Seat, seat_from_spec
from ..protocol.wire import MAX_LINE, BotLine, parse_bot_line
from ..replay.positions import PositionFile
from .bottest import ask

PASS, FAIL, WARN = "pass", "fail", "warn"
OPPONENT = "builtin:greedy"


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the checklist."""

    name: str
    status: str  # pass, fail or warn (a warning does not fail the bot)
    detail: str


@dataclass(slots=True)
class Report:
    command: str
    checks: list[Check] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    def add(self, name: str, status: str, detail: str) -> Check:
        check = Check(name, status, detail)
        self.checks.append(check)
        return check

    def to_json(self) -> dict[str, JSON]:
        return {"command": self.command, "passed": self.passed, "ids": self.ids,
                "checks": [{"check": c.name, "status": c.status, "detail": c.detail}
                           for c in self.checks]}


# ----------------------------------------------------------------------------------------------
# Raw pipes


class RawBot:
    """A bot process read through the referee's own reader (`PipeTransport`) and parser, with
    what a check also needs to see: the bytes of a line not ended yet, and output that only
    arrives once the input closes (missing newlines and missing flushes told apart)."""

    def __init__(self, command: BotCommand, log: Path | None, limits: Limits) -> None:
        self.process = BotProcess(command, log, limits.stderr_limit, limits.rlimits(),
                                  limits.no_network, limits.sandbox_plan())
        self.pipes = PipeTransport.to(self.process, limits.max_pending)
        self.tail = b""  # the last bytes before the output closed, without a newline

    @property
    def buffer(self) -> bytes:
        """What arrived of a line that has no newline (yet)."""
        return self.tail or self.pipes.unfinished

    def send(self, line: str) -> bool:
        self.pipes.send(line)
        return self.pipes.write_error is None

    def read_line(self, timeout: float) -> str | None:
        """The next complete line within `timeout` seconds, else None (unended bytes kept)."""
        got = self.pipes.read(time.monotonic() + timeout)
        if got is None or got.kind in (EOF, EXITED):
            return None
        if not got.ended:  # a last line cut off by the end of output: never a message
            self.tail = got.data
            return None
        if got.kind == TOO_LONG:
            return f"<a line over {MAX_LINE} bytes>"
        return got.data.decode("utf-8", "replace")

    def expect(self, wanted: Callable[[BotLine], bool], timeout: float
               ) -> tuple[str | None, list[str]]:
        """Lines until one whose message is `wanted` (returned) or the time is up; the
        non-blank lines seen before."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            line = self.read_line(left)
            if line is None:
                break
            msg = parse_bot_line(line)
            if msg is not None and wanted(msg):
                return line, seen
            if msg is not None:
                seen.append(line)
        return None, seen

    def close_input(self) -> None:
        self.process.close_input()

    def why_silent(self, what: str, waited: float, seen: Sequence[str] = ()) -> str:
        """After a missed deadline: other lines instead, newline missing, output held back, or
        nothing at all."""
        if seen:
            shown = " | ".join(repr(s) for s in seen[:3])
            return (f"no {what} within {waited:g} s; it sent {shown} instead (each message on "
                    "a line of its own, exactly as PROTOCOL.md writes it)")
        if self.buffer:
            return (f"no {what} within {waited:g} s, but {self.buffer[:60]!r} arrived without "
                    "a newline: end every line with \\n")
        if self.process.returncode is not None:
            return f"no {what}: the program ended ({self._exit()}); see its stderr log"
        self.close_input()  # a program that never flushes usually writes all at exit
        code = self.process.wait_exit(1.0)
        late = self.read_line(0.5)
        if late is not None:
            return (f"no {what} within {waited:g} s; {late!r} only arrived when its input was "
                    "closed: it does not flush stdout after each line (PROTOCOL.md section 2)")
        held = bytes(self.buffer)  # read again: the read above may have filled it
        if held:  # both faults at once: held back, and no newline when it came
            shown = held[:60].decode("utf-8", "replace")
            return (f"no {what} within {waited:g} s; {shown!r} only arrived when its input was "
                    "closed, and without a newline: end every line with \\n and flush stdout "
                    "after each line (PROTOCOL.md section 2)")
        state = "still running" if code is None else self._exit()
        return (f"no {what} within {waited:g} s and no output at all ({state}): does it read "
                "line by line and flush stdout after each line?")

    def _exit(self) -> str:
        code = self.process.returncode
        return "still running" if code is None else describe_exit(code)

    def shutdown(self) -> None:
        self.process.shutdown(0.2, 0.5)
        self.pipes.close()


# ----------------------------------------------------------------------------------------------
# The checks


def check_bot(command: str, games: Sequence[str] = (), *,
              policy: MatchPolicy | None = None, strict: bool = False,
              log_dir: Path | None = None, progress: Callable[[Check], None] | None = None,
              limits: Limits | None = None, position: PositionFile | None = None,
              rules: Rules | None = None, seat_counts: Sequence[int] = ()) -> Report:
    """Run the whole checklist against the program `command`, every process of it under the
    resource limits of `limits` (as a match would run it). The games are played with the
    clocks of `policy` (default: a match's, `MatchPolicy()`, the time bank included), or with
    `strict` without any bank, so that every decision must fit its own allowance; the first
    line of the checklist says which. Any fault fails: no retries. With a `position`, its game
    is checked from there instead of from a deal: the bot's answer in it, then the game played
    on to its end. The games are played under `rules` (default: the game's) at each of
    `seat_counts` (default: the game's smallest table), as a contest plays them."""
    policy = _checking(policy or MatchPolicy(), strict)
    report = Report(command)
    limits = limits or Limits()

    def add(name: str, status: str, detail: str) -> None:
        check = report.add(name, status, detail)
        if progress is not None:
            progress(check)

    try:
        parsed = BotCommand.parse(command)
    except ValueError as exc:
        add("command", FAIL, str(exc))
        return report
    add("clocks", PASS, clocks_used(policy, strict))
    log = (log_dir / "session.stderr") if log_dir else None
    if log_dir:
        private_dir(log_dir)
    first = position.game.name if position else games[0] if games else DEFAULT_GAME
    if not _session_checks(parsed, first, policy.startup_time, log, report, add, limits):
        return report
    if position is not None:
        _position_checks(command, position, policy, log_dir, add, limits)
        return report
    claimed = report.ids.get("games", "")
    wanted = list(games) or _claimed(claimed) or list(GAME_NAMES)
    with tempfile.TemporaryDirectory(prefix="meldref-check-") as scratch:
        # The game checks read the bot's stderr (its exceptions): a log even without --logs.
        for game in wanted:
            for players in seat_counts or (None,):
                _game_checks(command, game, policy, log_dir or Path(scratch), add, limits,
                             rules, players)
    return report


def _checking(policy: MatchPolicy, strict: bool) -> MatchPolicy:
    """The policy the checks play under: `policy`'s clocks (no bank at all if `strict`), no
    retries, so that any fault fails."""
    if strict:
        policy = dataclasses.replace(policy, time_bank=0.0, increment=0.0, max_bank=None)
    return dataclasses.replace(policy, illegal_retries=0, on_failure="forfeit",
                               first_move_time=max(policy.move_time, policy.first_move_time))


def clocks_used(policy: MatchPolicy, strict: bool) -> str:
    """Which clocks a check plays with, in words (its first line)."""
    times = (f"{policy.move_time:g} s a decision ({policy.first_move_time:g} s the first of a "
             f"game), {policy.startup_time:g} s to start")
    if strict:
        return f"strict: {times}, no time bank"
    bank = f"a {policy.time_bank:g} s time bank a game"
    if policy.increment:
        bank += f" (+{policy.increment:g} s a decision)"
    return f"a match's: {times}, {bank}; --strict checks without the bank"


def _claimed(text: str) -> list[str]:
    names = [w.strip() for w in text.replace(",", " ").split() if w.strip()]
    return [n for n in names if n in GAME_NAMES]


Add = Callable[[str, str, str], None]


def _session_checks(command: BotCommand, game: str, startup: float, log: Path | None,
                    report: Report, add: Add, limits: Limits) -> bool:
    try:
        bot = RawBot(command, log, limits)
    except OSError as exc:
        add("starts", FAIL, str(exc))
        return False
    try:
        add("starts", PASS, f"pid {bot.process.pid}")
        if not _handshake(bot, game, startup, report, add):
            return False
        _unknown_message(bot, add, _ping(bot, add))
        _quit(bot, add)
    finally:
        bot.shutdown()
    _end_of_input(command, game, startup, add, limits)
    return True


def _handshake(bot: RawBot, game: str, startup: float, report: Report, add: Add) -> bool:
    began = time.monotonic()
    bot.send(f"meldref 1 {game}")
    line, seen = bot.expect(lambda m: m.kind == "ready", startup)
    if line is None:
        # `id` and `info` lines are fine before `ready`: only other lines are news.
        odd = [s for s in seen if not _is_id_or_info(s)]
        if not odd and bot.buffer:
            stray = f" (it sent: {' | '.join(seen[:3])})" if seen else ""
            add("handshake", FAIL, bot.why_silent("`ready`", startup) + stray)
        else:
            add("handshake", FAIL, bot.why_silent("`ready`", startup, odd))
        return False
    for text in seen:
        msg = parse_bot_line(text)
        if msg is not None and msg.kind == "id" and msg.key and msg.text:
            report.ids[msg.key] = msg.text
    others = [s for s in seen if not _is_id_or_info(s)]
    ms = (time.monotonic() - began) * 1000
    add("handshake", WARN if others else PASS,
        f"ready after {ms:.0f} ms" + (f"; stray lines before ready: {others[:3]}" if others
                                      else ""))
    ids = ", ".join(f"{k}={v}" for k, v in report.ids.items())
    add("identifies itself", PASS if "name" in report.ids else WARN,
        ids if "name" in report.ids else "no `id name` line: results will show its command")
    # An organiser's probe (tests/bots/probe_bot.py, docs/sandbox.md): each escape it tried.
    for key, said in report.ids.items():
        if key.startswith("probe."):
            add(f"sandbox: {key.removeprefix('probe.')}",
                PASS if said.startswith("blocked") else FAIL, said)
    return True


def _is_id_or_info(line: str) -> bool:
    msg = parse_bot_line(line)
    return msg is not None and msg.kind in ("id", "info")


def _pong(token: str) -> Callable[[BotLine], bool]:
    return lambda m: m.kind == "pong" and m.text == token


def _ping(bot: RawBot, add: Add) -> bool:
    bot.send("ping check-1")
    line, seen = bot.expect(_pong("check-1"), 1.0)
    add("answers ping", PASS if line else FAIL,
        "pong check-1" if line else bot.why_silent("`pong check-1`", 1.0, seen))
    return line is not None


def _unknown_message(bot: RawBot, add: Add, answers_ping: bool) -> None:
    name = "ignores unknown messages"
    if not answers_ping:
        # The probe is a ping: a bot that ignores pings would fail here for that reason alone
        # (and the ping check has closed its input to see whether it flushes).
        add(name, WARN, "not checked: it does not answer ping, the probe this check uses")
        return
    bot.send("xyzzy-unknown-message from a later protocol version")
    bot.send("ping check-2")
    line, seen = bot.expect(_pong("check-2"), 1.0)
    if line is None:
        add(name, FAIL, bot.why_silent("`pong check-2` after an unknown message", 1.0, seen))
    elif seen:
        add(name, WARN, f"answered an unknown message with {seen[:2]}")
    else:
        add(name, PASS, "still answers ping")


QUIT_GRACE: Final = 1.0  # seconds for what the bot leaves to go after it (a guard's sweep,
# a sandbox's init exiting behind it) before it counts as left running


def _left_in_group(bot: RawBot) -> list[int]:
    deadline = time.monotonic() + QUIT_GRACE
    while True:
        left = [p for p in bot.process.group_alive() if p != bot.process.pid]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


# A bot that exits after `quit`, later than the 1 s a match waits before SIGTERM, costs
# nothing (the signal ends it) and is often only a busy machine (a sandboxed interpreter's
# exit, a contest's games beside it): a warning, not a failure that refuses a submission.
QUIT_SLOW: Final = 5.0  # seconds after `quit`: still running then is a failure


def _wait_exit(bot: RawBot) -> tuple[int | None, float | None]:
    """The bot's exit code (None: still running `QUIT_SLOW` s on) and, for an exit later
    than the 1 s a match waits, the seconds it took (else None)."""
    sent = time.monotonic()
    code = bot.process.wait_exit(1.0)
    if code is not None:
        return code, None
    code = bot.process.wait_exit(QUIT_SLOW - (time.monotonic() - sent))
    return code, time.monotonic() - sent


def _judge_exit(add: Add, name: str, after: str, code: int | None, took: float | None,
                left: list[int]) -> None:
    if code is None:
        add(name, FAIL, f"still running {QUIT_SLOW:g} s after {after}")
    elif left:
        add(name, FAIL, f"exited but left processes {left} in its group")
    elif took is not None:
        add(name, WARN, f"exited ({code}) {took:.1f} s after {after}: a match waits 1 s, "
            "then sends SIGTERM")
    else:
        add(name, PASS, f"exited ({code}) within 1 s")


def _quit(bot: RawBot, add: Add) -> None:
    if bot.process.returncode is not None:
        return
    bot.send("quit")
    code, took = _wait_exit(bot)
    _judge_exit(add, "exits on quit", "`quit`", code, took, _left_in_group(bot))


def _end_of_input(command: BotCommand, game: str, startup: float, add: Add,
                  limits: Limits) -> None:
    try:
        bot = RawBot(command, None, limits)
    except OSError as exc:
        add("exits when its input closes", FAIL, str(exc))
        return
    try:
        bot.send(f"meldref 1 {game}")
        bot.expect(lambda m: m.kind == "ready", startup)
        bot.close_input()
        code, took = _wait_exit(bot)
        _judge_exit(add, "exits when its input closes", "end of input", code, took, [])
    finally:
        bot.shutdown()


def _game_checks(command: str, game: str, policy: MatchPolicy, log_dir: Path | None, add: Add,
                 limits: Limits, rules: Rules | None = None, players: int | None = None) -> None:
    try:
        info = find_game(game)
    except UnknownGameError as exc:
        add(f"{game}: a full game", FAIL, f"this meldref cannot play {game}: {exc}")
        return
    name = game if players is None else f"{game}-{players}"
    # The smallest table by default: the bot's own decisions come often.
    players = players or info.min_players
    log = (log_dir / f"{name}.stderr") if log_dir else None
    seat = seat_from_spec(command, info, limits=limits, log_path=log)
    others = [seat_from_spec(OPPONENT, info, seed=k) for k in range(1, players)]
    try:
        for n in (1, 2):
            if not _one_game(info, seat, others, policy, n, add, rules):
                return
    finally:
        seat.close()  # its stderr is all in the log once it stopped
        _raised(log, game, add)


def _position_checks(command: str, loaded: PositionFile, policy: MatchPolicy,
                     log_dir: Path | None, add: Add, limits: Limits) -> None:
    name = f"position {loaded.path.name}"
    log = (log_dir / "position.stderr") if log_dir else None
    answer = ask(BotSpec.parse(command), loaded, policy, limits, log)
    if answer.problem is not None or answer.action is None:
        add(f"{name}: the answer", FAIL, f"seat {answer.seat} {answer.decision}: "
            f"{answer.action!r}: {answer.problem}")
        return
    if answer.matched is False:  # a legal answer conforms; how good it is, `bot test` says
        add(f"{name}: the answer", WARN, f"seat {answer.seat} {answer.decision}: "
            f"{answer.action!r} is legal but not the expected {' or '.join(answer.expected)}")
    else:
        expected = ", the expected one" if answer.matched else " (no expected action stated)"
        add(f"{name}: the answer", PASS, f"seat {answer.seat} {answer.decision}: "
            f"{answer.action!r}, legal{expected}")
    info, seat_no = loaded.game, answer.seat
    seat = seat_from_spec(command, info, limits=limits,
                          log_path=(log_dir / "position-game.stderr") if log_dir else None)
    seats = [seat if s == seat_no else seat_from_spec(OPPONENT, info, seed=s)
             for s in range(loaded.position.players)]
    label = f"{name}: the game played on"
    try:
        record = play_game(info, loaded.rules, seats, loaded.position.seed, policy,
                           start=loaded.position.start())
    except Exception as exc:  # the referee must not stop; if it does, say so
        add(label, FAIL, f"the referee failed: {exc!r}")
        return
    finally:
        seat.close()
    faults = record.faults[seat_no]
    if faults or record.status[seat_no] is not SeatStatus.OK:
        first = faults[0] if faults else None
        add(label, FAIL, f"{first.outcome}: {first.detail}" if first else record.status[seat_no])
        return
    add(label, PASS, f"{len(record.actions)} actions to the end, result "
                     f"{record.outcome.termination.value}, place {record.outcome.places[seat_no]}")


def _one_game(info: GameInfo, seat: Seat, others: list[Seat], policy: MatchPolicy, n: int,
              add: Add, rules: Rules | None = None) -> bool:
    asked: Counter[str] = Counter()
    times: list[float] = []

    def on_record(record: dict[str, JSON]) -> None:
        if record.get("type") == "action" and record["seat"] == 0 and not record.get("auto"):
            asked[record["decision"]] += 1
            if record.get("elapsed") is not None:
                times.append(record["elapsed"])

    label = f"{info.name}: {'a full game' if n == 1 else 'a second game, same process'}"
    try:
        record = play_game(info, info.rules() if rules is None else rules, [seat, *others],
                           1000 + n, policy, on_record)
    except Exception as exc:  # the referee must not stop; if it does, say so
        add(label, FAIL, f"the referee failed: {exc!r}")
        return False
    faults = record.faults[0]
    if faults or record.status[0] is not SeatStatus.OK:
        add(label, FAIL, named_fault(faults) or record.status[0])
        return False
    add(label, PASS, f"{sum(asked.values())} decisions, result "
                     f"{record.outcome.termination.value}, place {record.outcome.places[0]}")
    if n == 1:
        missing = [d for d in info.decisions if not asked[d]]
        add(f"{info.name}: every decision type", FAIL if missing else PASS,
            f"never asked: {missing}" if missing else
            ", ".join(f"{d} x{asked[d]}" for d in info.decisions))
        add(f"{info.name}: timing", *_timing(times, policy.move_time))
    return True


def named_fault(faults: Sequence[Fault]) -> str:
    """The fault a checked bot made, in words ("" for none). The fault that ended the seat
    says why, unless a note before it does: in a check no answer may come late (the game
    ends at the first timeout), so an answer to another request's id is the bot answering with
    the wrong id, and its timeout only the consequence."""
    fatal = next((f for f in faults if f.fatal), faults[0] if faults else None)
    if fatal is None:
        return ""
    why = f"{fatal.outcome}: {fatal.detail}"
    # An answer whose id is not the request's: "late" or "never sent" for an id that no
    # deadline passed for (a late answer to a request that timed out is late, not wrong).
    timed_out = {f.request_id for f in faults if f.outcome in TIMED_OUT}
    wrong = [f for f in faults if not f.fatal and f.request_id is not None
             and f.request_id not in timed_out and (
                 f.outcome is FaultOutcome.LATE or "never sent" in f.detail)]
    if wrong and fatal.outcome in TIMED_OUT:
        asked = f"request {fatal.request_id}" if fatal.request_id is not None else "a request"
        return (f"wrong request id: answered {asked} with id {wrong[-1].request_id} "
                f"({wrong[-1].detail}); `action <id>` repeats the id of its `go` line "
                f"(PROTOCOL.md section 6), so the answer was ignored and then {why}")
    if fatal.outcome is FaultOutcome.STALLED:
        why += " (a bot that does not flush stdout looks exactly like this)"
    return why


def _raised(log: Path | None, game: str, add: Add) -> None:
    """Fail a bot whose code raised: the SDK (bots/sdk.py) then answers with its fallback and
    the game looks fine, but the bot did not decide. It writes `SDK_RAISED` lines, each with a
    traceback, to stderr; other tracebacks there are a warning."""
    text = log.read_text("utf-8", "replace") if log is not None and log.exists() else ""
    raised = [line for line in text.splitlines() if SDK_RAISED in line]
    tracebacks = text.count("Traceback (most recent call last):")
    name = f"{game}: its code raised no exception"
    if raised:
        last = _last_exception(text)
        add(name, FAIL, f"{len(raised)} decision(s) raised, and the SDK answered with its "
                        f"fallback; the last: {last} (the tracebacks are in its stderr)")
    elif tracebacks:
        add(name, WARN, f"{tracebacks} Python traceback(s) on its stderr; the last: "
                        f"{_last_exception(text)}")
    else:
        add(name, PASS, "no exception reported on its stderr")


def _last_exception(text: str) -> str:
    """The `Kind: message` line ending the last traceback in `text`."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if not starts:
        return "?"
    after = [x for x in lines[starts[-1] + 1:] if x and not x.startswith(" ")]
    return after[0] if after else "?"


def _timing(times: list[float], allowed: float) -> tuple[str, str]:
    if not times:
        return WARN, "no timed answers"
    worst, mean = max(times), statistics.fmean(times)
    detail = (f"mean {mean * 1000:.1f} ms, max {worst * 1000:.1f} ms of {allowed * 1000:.0f} ms "
              "allowed")
    over = sum(t > allowed for t in times)
    if over:  # a game's first decision may take longer; the others drew on the bank
        detail += (f"; {over} answer(s) over the move time, paid by the first decision's "
                   "allowance or the time bank (--strict fails an answer over the move time "
                   "after the first)")
    return (WARN if worst > allowed / 2 else PASS), detail


__all__ = ["Check", "ProcessSeat", "Report", "check_bot"]
