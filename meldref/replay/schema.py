"""The shape of every replay line, checked as it is read (spec/REPLAY.md).

A replay is untrusted input: a file anyone may hand to `replay verify`, `show`, `stats` or
`resume`, its hash chain recomputed by whoever changed it. Every record is checked here against
its type's schema before any other code touches it, so what follows can rely on the types
(an `action` is a short text, a `seat` a small whole number, `events` a list of objects) and a
wrong file ends in one `ReplayError` naming the line, never in a traceback.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..protocol.errors import FaultOutcome, SeatStatus
from ..settings import describe

MAX_SEATS: Final = 64
MAX_COUNT: Final = 100_000_000  # actions, decisions, request ids
MAX_POINTS: Final = 10**9  # any score a game can reach, by far
MAX_TEXT: Final = 100_000  # characters of any one text (an action, a detail)

Seat = Annotated[int, Field(ge=0, lt=MAX_SEATS)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Points = Annotated[int, Field(ge=-MAX_POINTS, le=MAX_POINTS)]
Text = Annotated[str, Field(max_length=MAX_TEXT)]
Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Seed = Annotated[int, Field(ge=-(1 << 64), le=1 << 64)] | Annotated[str, Field(max_length=200)]


class _Record(BaseModel):
    # Lines may carry more keys than these (a later 1.x writer); the ones read must be right.
    model_config = ConfigDict(extra="allow", strict=True, allow_inf_nan=False)


class Event(_Record):
    event: Text


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
    rules: dict[str, Any]
    seed: Seed
    players: Annotated[int, Field(ge=1, le=MAX_SEATS)]
    seats: list[SeatInfo] = Field(default_factory=list, max_length=MAX_SEATS)
    policy: dict[str, Any] = Field(default_factory=dict)
    game_id: Text | None = None


class Start(_Record):
    type: Literal["start"]
    game: Text | None = None
    rules: dict[str, Any] | None = None
    players: Annotated[int, Field(ge=1, le=MAX_SEATS)] | None = None
    seed: Seed | None = None
    names: list[Text] = Field(default_factory=list, max_length=MAX_SEATS)
    events: list[Event] | None = None


class Action(_Record):
    type: Literal["action"]
    n: Count | None = None
    seat: Seat | None = None
    decision: Text | None = None
    action: Annotated[str, Field(max_length=20_000)]
    auto: bool = False
    elapsed: Seconds | None = None
    events: list[Event] | None = None


class Fault(_Record):
    type: Literal["fault"]
    seat: Seat
    outcome: Annotated[FaultOutcome, Field(strict=False)]  # its value, as text
    detail: Text = ""
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


_BY_TYPE: Final = {"header": Header, "start": Start, "action": Action, "fault": Fault,
                   "result": Result}
_CHECKERS: Final[dict[str, TypeAdapter[Any]]] = {
    kind: TypeAdapter(model) for kind, model in _BY_TYPE.items()}


def problem(record: dict[str, Any]) -> str | None:
    """Why `record` is not a replay line of its type, in a few words (None: it is one). A
    record of a type this version does not know is left alone (spec/REPLAY.md: readers skip
    what they do not know)."""
    checker = _CHECKERS.get(str(record.get("type")))
    if checker is None:
        return None
    try:
        checker.validate_python(record)
    except ValidationError as exc:
        return describe(exc, lambda name: name)
    return None
