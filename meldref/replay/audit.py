"""`replay verify`: every claim of a replay checked against what the seed, the rules and the
actions give, reading the file one line at a time (spec/REPLAY.md section 4).

A replay is untrusted: anyone can change a line and recompute the hash chain, so the chain only
proves that the file is whole. What a reader (`replay stats`, a standings table) believes of a
verified file is therefore derived here, not read:

- the game: every action re-applied from the seed, legal, by the seat to move, with the events
  stored; an action the referee chose (`auto`) is the game's `autoplay_action()`, and it is
  chosen exactly for the seats out of play;
- the seats' statuses: a seat is out (the policy's `on_failure`) exactly when a fatal fault
  record says so, once; a fault that only a decision can raise (illegal, timeout, stalled)
  names the seat to move; a timeout's stated allowance and an answer's `elapsed` fit the
  policy's clock;
- the result, whole: termination, winners, places, scores and the game's own detail, as the
  referee makes them (`protocol.referee`): the rules' outcome once the game is over, else a
  `forfeit` ending exactly when the forfeits leave at most one seat playing; forfeited seats
  ranked last; the status, fault counts and action count.

Memory stays bounded: only the game state and a few numbers per seat are kept, whatever the
file's size (a record is dropped once checked).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ..engine.game import JSON, GameState, Outcome
from ..protocol.errors import TIMED_OUT, FaultOutcome, SeatStatus
from ..protocol.referee import NOTES_PER_KIND, forfeit_outcome, forfeits_decide, rank
from .files import (
    Replay,
    ReplayError,
    ReplayTruncated,
    apply_record,
    check_start,
    read_lines,
)

# Faults only a decision raises, so only the seat to move can have them (spec/PROTOCOL.md 7);
# "timeout" and "stalled" also come from the handshake, before the first action.
DECISION_FAULTS: Final = frozenset({FaultOutcome.ILLEGAL, *TIMED_OUT})
# How far past its deadline an answer may be measured (the referee reads the line a moment
# after it came, on a loaded machine: half the deadline and 5 s more is far more than that);
# beyond that the answer would have been a timeout. The check is for numbers made up.
ON_FAILURE: Final = (SeatStatus.FORFEIT, SeatStatus.AUTOPLAY)  # what a fatal fault makes a seat
LATE_FACTOR: Final = 1.5
LATE_SLACK: Final = 5.0
_WITHIN = re.compile(r"^no (answer|`ready`) within (\d+) ms")


@dataclass(frozen=True, slots=True)
class Verified:
    """What a successful `verify` found: the counts, and the result as it was re-derived."""

    actions: int
    faults: int
    result: dict[str, JSON]
    names: list[str] = field(default_factory=list)  # per seat, the bot's name in the header
    fault_records: list[dict[str, JSON]] = field(default_factory=list)

    @property
    def winners(self) -> list[str]:
        """The winners by name ("seat k (name)"); none in a lost Solitaire game."""
        seats = (self.result.get("outcome") or {}).get("winners") or []
        return [f"seat {s} ({self.names[s]})" if isinstance(s, int) and s < len(self.names)
                else f"seat {s}" for s in seats]


@dataclass(slots=True)
class _Clock:
    """An upper bound of one seat's clock (`protocol.referee._Clock`): the charges of the
    refused answers are not recorded, and can only have shortened it, except for the increment
    each adds, which `fault` adds."""

    policy: dict[str, JSON]
    bank: float = 0.0
    first: bool = True

    def allowance(self) -> float:
        move = float(self.policy.get("move_time", 1.0))
        return max(float(self.policy.get("first_move_time", 5.0)), move) if self.first else move

    def deadline(self) -> float:
        return self.allowance() + self.bank

    def _add(self, bank: float) -> None:
        cap = self.policy.get("max_bank")
        self.bank = bank if not isinstance(cap, (int, float)) else min(bank, float(cap))

    def fault(self) -> None:
        self._add(self.bank + float(self.policy.get("increment", 0.0)))

    def charge(self, elapsed: float) -> None:
        over = max(0.0, elapsed - self.allowance())
        self._add(max(0.0, self.bank - over) + float(self.policy.get("increment", 0.0)))
        self.first = False


@dataclass(slots=True)
class _Audit:
    """The game re-simulated record by record, with what each seat's records say of it."""

    replay: Replay
    state: GameState
    policy: dict[str, JSON]
    timed: list[bool]  # per seat: a program, whose answers the clock bounded
    status: list[SeatStatus] = field(default_factory=list)
    out_order: list[tuple[int, int]] = field(default_factory=list)  # (seat, actions before)
    faults: list[dict[str, JSON]] = field(default_factory=list)
    clocks: list[_Clock] = field(default_factory=list)
    actions: int = 0
    chosen: int = 0  # actions the bots chose (not the referee)
    names: list[str] | None = None  # the start record's
    noted: list[dict[FaultOutcome, int]] = field(default_factory=list)  # per seat, by outcome

    @property
    def players(self) -> int:
        return len(self.status)

    @property
    def on_failure(self) -> SeatStatus:
        return SeatStatus(self.policy.get("on_failure", SeatStatus.FORFEIT))

    def forfeits_decide(self) -> bool:
        return forfeits_decide(self.status, self.on_failure)

    # -- records ---------------------------------------------------------------------------

    def start(self, line: int, record: dict[str, JSON]) -> None:
        check_start(self.replay, self.state, line, record)
        if "names" in record:
            self.names = list(record["names"])
        if "policy" in record and "policy" in self.replay.header and (
                record["policy"] != self.replay.header["policy"]):
            raise ReplayError(line, "start record policy differs from the header's")

    def action(self, line: int, record: dict[str, JSON]) -> None:
        if self.forfeits_decide():
            raise ReplayError(line, "an action after the forfeits had ended the game")
        seat = self.state.to_move
        auto = bool(record.get("auto", False))
        if seat is not None and auto != (self.status[seat] is not SeatStatus.OK):
            claim = "by the referee" if auto else "by its bot"
            raise ReplayError(line, f"an action of seat {seat} played {claim}, but the seat is "
                                    f"{'in play' if self.status[seat] is SeatStatus.OK else 'out'}")
        if seat is not None and auto:
            expected = str(self.state.autoplay_action())
            if record.get("action") != expected:
                raise ReplayError(line, f"the referee's action {record.get('action')!r} for "
                                        f"seat {seat}, not the game's {expected!r}")
        elif seat is not None:
            self._check_answer_time(line, seat, record.get("elapsed"))
            self.chosen += 1
        apply_record(self.state, line, record, self.actions)
        self.actions += 1

    def _check_answer_time(self, line: int, seat: int, elapsed: JSON) -> None:
        clock = self.clocks[seat]
        if not isinstance(elapsed, (int, float)):
            return
        if self.timed[seat] and elapsed > clock.deadline() * LATE_FACTOR + LATE_SLACK:
            raise ReplayError(line, f"seat {seat} answered in {elapsed:g} s, past its deadline "
                                    f"of {clock.deadline():g} s (that is a timeout)")
        clock.charge(float(elapsed))

    def fault(self, line: int, record: dict[str, JSON]) -> None:
        seat, outcome = int(record["seat"]), FaultOutcome(record["outcome"])
        if outcome in DECISION_FAULTS and not record.get("suppressed") and (
                outcome is FaultOutcome.ILLEGAL or self.actions) and (
                seat != self.state.to_move or self.status[seat] is not SeatStatus.OK):
            raise ReplayError(line, f"a {outcome} fault of seat {seat}, which was not asked "
                                    "to move")
        if outcome in TIMED_OUT and self.timed[seat]:
            self._check_allowance(line, seat, str(record.get("detail", "")))
        self.clocks[seat].fault()
        if not record.get("fatal") and not record.get("suppressed"):
            self._note(seat, outcome)
        if record.get("fatal"):
            if self.status[seat] is not SeatStatus.OK:
                raise ReplayError(line, f"a second fatal fault of seat {seat}")
            self.status[seat] = self.on_failure
            self.out_order.append((seat, self.actions))
        self.faults.append(record)

    def _note(self, seat: int, outcome: FaultOutcome) -> None:
        # The reader lets through at most NOTES_PER_KIND (schema.Order): the faults kept here
        # are few.
        seen = self.noted[seat][outcome] = self.noted[seat].get(outcome, 0) + 1
        if seen == NOTES_PER_KIND and self.policy.get("increment"):
            # The referee records no more of these one by one: each it leaves out may have
            # added the increment to the bank, so the bound of the bank is lost.
            self.timed[seat] = False

    def _check_allowance(self, line: int, seat: int, detail: str) -> None:
        found = _WITHIN.match(detail)
        if found is None:
            return
        stated = int(found.group(2)) / 1000
        bound = (float(self.policy.get("startup_time", 10.0)) if found.group(1) == "`ready`"
                 else self.clocks[seat].deadline())
        if stated > bound + 0.001:
            raise ReplayError(line, f"a timeout of seat {seat} after {stated:g} s; its "
                                    f"deadline was at most {bound:g} s")

    # -- the result ------------------------------------------------------------------------

    def result(self, line: int, record: dict[str, JSON]) -> dict[str, JSON]:
        derived = self._outcome(line, record["outcome"])
        claims: list[tuple[str, JSON, JSON]] = [
            ("outcome", record["outcome"], derived.to_json()),
            ("status", record.get("status"), self.status),
            ("faults", record.get("faults"),
             [sum(1 for f in self.faults if f["seat"] == s) for s in range(self.players)]),
            ("actions", record.get("actions", self.actions), self.actions),
        ]
        for key, stored, expected in claims:
            if stored != expected:
                raise ReplayError(line, f"result {key} {_diff(stored, expected)}")
        if self.names is not None and record.get("names", self.names) != self.names:
            raise ReplayError(line, f"result names {_diff(record.get('names'), self.names)} "
                                    "(the start record's)")
        if int(record.get("decisions", 0)) < self.chosen:
            raise ReplayError(line, f"result counts {record.get('decisions')} decisions; the "
                                    f"bots chose {self.chosen} actions")
        return record

    def _outcome(self, line: int, stored: dict[str, JSON]) -> Outcome:
        status = self._status_when_ranked(stored)
        outcome = self.state.outcome
        if outcome is None:
            if not forfeits_decide(status, self.on_failure):
                raise ReplayError(line, "a result, but the re-simulated game is not over (and "
                                        "no forfeits ended it)")
            outcome = forfeit_outcome(status, self.state.scores)
        return rank(outcome, status)

    def _status_when_ranked(self, stored: dict[str, JSON]) -> list[SeatStatus]:
        """The statuses when the referee ranked the game: every seat out before the last
        action is out, and of those out after it, the first ones (the rest failed in
        `finish`, after the ranking), as many as the result's `forfeited` (or `autoplayed`)
        list says; the seats out first, whatever the list claims."""
        key = "forfeited" if self.on_failure is SeatStatus.FORFEIT else "autoplayed"
        claimed = stored.get(key)
        before = [s for s, at in self.out_order if at < self.actions]
        after = [s for s, at in self.out_order if at >= self.actions]
        out = before
        for k in range(len(after) + 1):
            if claimed == sorted(before + after[:k]):
                out = before + after[:k]
        return [self.on_failure if s in out else SeatStatus.OK for s in range(self.players)]


def _diff(stored: JSON, expected: JSON) -> str:
    if isinstance(stored, dict) and isinstance(expected, dict):
        keys = sorted(k for k in set(stored) | set(expected) if stored.get(k) != expected.get(k))
        return "; ".join(f"{k} {stored.get(k)!r}, re-derived {expected.get(k)!r}" for k in keys)
    return f"{stored!r}, re-derived {expected!r}"


def verify(path: str | os.PathLike[str]) -> Verified:
    """Check every line and every claim of the replay in `path` (see the module docstring),
    one line at a time; `ReplayError` naming the first line that does not check out."""
    lines = read_lines(path)
    header = _header(lines)
    replay = Replay(Path(path), header)
    players = int(header["players"])
    seats = list(header.get("seats") or [])
    timed = [not str((seats[s] if s < len(seats) else {}).get("spec") or "builtin:"
                     ).startswith("builtin:") for s in range(players)]
    policy: dict[str, JSON] = header["policy"] if isinstance(header.get("policy"), dict) else {}
    if policy.get("on_failure", SeatStatus.FORFEIT) not in ON_FAILURE:
        raise ReplayError(1, f"altered: the policy's on_failure {policy.get('on_failure')!r} "
                             f"is not one of {', '.join(ON_FAILURE)}")
    audit = _Audit(replay, replay.new_state(), dict(policy or {}), timed, [SeatStatus.OK] * players)
    audit.noted = [{} for _ in range(players)]
    audit.clocks = [_Clock(audit.policy, float(audit.policy.get("time_bank", 5.0)))
                    for _ in range(players)]
    result: dict[str, JSON] | None = None
    last = 1
    for number, record in lines:  # in their places: `read_lines` checks the order
        last = number
        kind = record["type"]
        if kind == "start":
            audit.start(number, record)
        elif kind == "action":
            audit.action(number, record)
        elif kind == "fault":
            audit.fault(number, record)
        elif kind == "result":
            result = audit.result(number, record)
    if result is None:
        raise ReplayTruncated(last + 1, "truncated: no result line (the game did not "
                                        "finish)")
    return Verified(audit.actions, len(audit.faults), result, replay.seat_names(), audit.faults)


def _header(lines: Iterator[tuple[int, dict[str, JSON]]]) -> dict[str, JSON]:
    _, header = next(lines)  # checked by `read_lines`; an empty file is a `ReplayError`
    return header
