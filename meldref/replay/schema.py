"""The shape of every replay line, checked as it is read (spec/REPLAY.md).

A replay is untrusted input: a file anyone may hand to `replay verify`, `show`, `stats` or
`resume`, its hash chain recomputed by whoever changed it. Every record is checked here against
its type's schema before any other code touches it, so what follows can rely on the types
(an `action` is a short text, a `seat` a small whole number, `events` a list of objects) and a
wrong file ends in one `ReplayError` naming the line, never in a traceback. `Order` checks
where each record stands (a forger can recompute the chain over records moved, repeated or
left out), which also bounds the faults a reader keeps: at most 148 a seat (20 of each outcome
one by one, a summary of each, one fatal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..engine.game import JSON
from ..protocol.errors import MAX_DETAIL, FaultOutcome, SeatStatus
from ..protocol.referee import NOTES_PER_KIND
from ..settings import describe

# One line of a replay as JSON reads it, before and after its schema is checked: its keys are
# the record type's (spec/REPLAY.md), its values JSON's.
Record = dict[str, JSON]
MAX_SEATS: Final = 64
MAX_COUNT: Final = 100_000_000  # actions, decisions, request ids
MAX_POINTS: Final = 10**9  # any score a game can reach, by far
MAX_TEXT: Final = 100_000  # characters of any one text (an action, a detail)
# Events of one record: a deal at 14 seats has 15, an action at most 18 (a hand's end). Each is
# built as a model when checked: 300,000 of them cost 60 MB before any other check could fail.
MAX_EVENTS: Final = 1_000

Seat = Annotated[int, Field(ge=0, lt=MAX_SEATS)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Points = Annotated[int, Field(ge=-MAX_POINTS, le=MAX_POINTS)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Seed = Annotated[int, Field(ge=-(1 << 64), le=1 << 64)] | Annotated[str, Field(max_length=200)]


class _Record(BaseModel):
    # Lines may carry more keys than these (a later 1.x writer); the ones read must be right.
    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False, defer_build=True)


class Event(_Record):
    event: Text


Events = Annotated[list[Event], Field(max_length=MAX_EVENTS)]


class SeatInfo(_Record):
    seat: Seat  # every writer gives it; `replay show` prints it (was: a KeyError without)
    name: Text | None = None
    spec: Text | None = None
    command: Text | None = None
    bot_name: Text | None = None
    version: Text | None = None


class Header(_Record):
    type: Literal["header"]
    format: Literal["meldref-replay"]
    version: int
    game: Text
    rules: Record
    seed: Seed
    players: Annotated[int, Field(ge=1, le=MAX_SEATS)]
    seats: list[SeatInfo] = Field(default_factory=list, max_length=MAX_SEATS)
    policy: Record = Field(default_factory=dict)
    game_id: Text | None = None


class Start(_Record):
    type: Literal["start"]
    game: Text | None = None
    rules: Record | None = None
    players: Annotated[int, Field(ge=1, le=MAX_SEATS)] | None = None
    seed: Seed | None = None
    names: list[Text] = Field(default_factory=list, max_length=MAX_SEATS)
    events: Events | None = None


class Action(_Record):
    type: Literal["action"]
    n: Count | None = None
    seat: Seat | None = None
    decision: Text | None = None
    action: Annotated[str, Field(max_length=20_000)]
    auto: bool = False
    elapsed: Seconds | None = None
    events: Events | None = None


class Fault(_Record):
    type: Literal["fault"]
    seat: Seat
    outcome: Annotated[FaultOutcome, Field(strict=False)]  # its value, as text
    detail: Annotated[str, Field(max_length=MAX_DETAIL)] = ""  # the referee's are no longer
    request: Count | None = None
    fatal: bool = False
    suppressed: Count = 0


class Outcome(_Record):
    termination: Text
    winners: list[Seat] = Field(default_factory=list, max_length=MAX_SEATS)
    places: list[Annotated[int, Field(ge=1, le=MAX_SEATS + 1)]] = Field(max_length=MAX_SEATS)
    scores: list[Points] = Field(max_length=MAX_SEATS)


class Result(_Record):
    type: Literal["result"]
    outcome: Outcome
    status: list[Annotated[SeatStatus, Field(strict=False)]] = Field(default_factory=list,
                                                                    max_length=MAX_SEATS)
    faults: list[Count] = Field(default_factory=list, max_length=MAX_SEATS)
    actions: Count | None = None
    decisions: Count = 0
    wall_time: Seconds | None = None
    names: list[Text] = Field(default_factory=list, max_length=MAX_SEATS)


_BY_TYPE: Final[dict[str, type[_Record]]] = {
    "header": Header, "start": Start, "action": Action, "fault": Fault, "result": Result}


def problem(record: Record) -> str | None:
    """Why `record` is not a replay line of its type, in a few words (None: it is one). A
    record of a type this version does not know is left alone (spec/REPLAY.md: readers skip
    what they do not know)."""
    model = _BY_TYPE.get(str(record.get("type")))
    if model is None:
        return None
    try:
        model.model_validate(record)
    except ValidationError as exc:
        return describe(exc, lambda name: name)
    return None


@dataclass(slots=True)
class Order:
    """Where each record may stand (spec/REPLAY.md section 1), checked line by line after the
    header: the start record on line 2 and only there; actions and faults after it; the
    result last. Faults as the referee records them: of a seat of the game; at most
    `NOTES_PER_KIND` of one outcome a seat one by one, then one summary of that outcome
    (`suppressed`), only after the game's last action, with only summaries after it."""

    players: int
    started: bool = False
    ended: bool = False
    summed_up: bool = False  # a summary was read: the game's actions are over
    noted: dict[tuple[int, str], int] = field(default_factory=dict)  # one by one, non-fatal
    summaries: set[tuple[int, str]] = field(default_factory=set)

    def problem(self, record: Record) -> str | None:
        """Why `record` cannot stand where it is, after the records seen so far (None: it
        can); counts it as read."""
        kind = record["type"]
        if self.ended:
            return f"{_a(kind)} record after the result (the result is the last line)"
        if kind == "header":
            return "a second header (the header is line 1, and only line 1)"
        if not self.started:
            self.started = kind == "start"
            return None if self.started else (f"{_a(kind)} record where the start record "
                                              "belongs (line 2 is the start record)")
        if kind == "start":
            return "a second start record (a game has one, on line 2)"
        if kind == "action" and self.summed_up:
            return ("an action after a fault summary (summaries follow the game's last "
                    "action)")
        self.ended = kind == "result"
        return self._fault(record) if kind == "fault" else None

    def _fault(self, record: Record) -> str | None:
        seat, outcome = record["seat"], str(record["outcome"])
        if seat >= self.players:
            return f"a fault of seat {seat}; the game has seats 0..{self.players - 1}"
        if record.get("suppressed"):
            return self._summary(seat, outcome, bool(record.get("fatal")))
        if self.summed_up:
            return ("a fault after a fault summary (summaries are the last faults, before "
                    "the result)")
        if record.get("fatal"):
            return None
        seen = self.noted[seat, outcome] = self.noted.get((seat, outcome), 0) + 1
        if seen > NOTES_PER_KIND:
            return (f"more than {NOTES_PER_KIND} {outcome} faults of seat {seat} recorded one "
                    "by one (the referee counts the rest in one summary)")
        return None

    def _summary(self, seat: int, outcome: str, fatal: bool) -> str | None:
        self.summed_up = True
        seen = self.noted.get((seat, outcome), 0)
        if fatal:
            return "a fault summary marked fatal (a summary counts notes, never a failure)"
        if (seat, outcome) in self.summaries:
            return (f"a second summary of seat {seat}'s {outcome} faults (one per seat and "
                    "outcome)")
        self.summaries.add((seat, outcome))
        if seen != NOTES_PER_KIND:
            return (f"a summary of seat {seat}'s {outcome} faults after {seen} recorded one by "
                    f"one (the referee sums up only past {NOTES_PER_KIND})")
        return None


def _a(word: str) -> str:
    return f"{'an' if word[:1] in tuple('aeiou') else 'a'} {word}"
