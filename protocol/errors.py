"""Bot failures: one recorded `Fault` per problem, and the exceptions that carry them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from ..engine.game import JSON


class FaultOutcome(StrEnum):
    """Every outcome a fault record can hold (spec/PROTOCOL.md 7). `LATE` (an answer to an old
    request), `FALLBACK` (an answer the bot's own safety net chose) and non-fatal `MALFORMED`
    lines are noted but cost the bot nothing."""

    ILLEGAL = "illegal"  # an action the rules forbid
    MALFORMED = "malformed"  # a line that is not protocol
    TIMEOUT = "timeout"  # alive, but no answer before the deadline
    STALLED = "stalled"  # alive but silent through the grace after a ping
    CRASHED = "crashed"  # the process exited or died
    CLOSED = "closed"  # the process closed its output
    LATE = "late"  # an answer to a request already given up on
    FALLBACK = "fallback"  # the bot said it answered with its fallback (`info fallback <id>`)


class SeatStatus(StrEnum):
    """A seat at the end of a game (a replay's `result` record): still in play, or put out by
    a final fault and then ranked last (`FORFEIT`) or played by the referee (`AUTOPLAY`), as
    the match policy's `on_failure` says."""

    OK = "ok"
    FORFEIT = "forfeit"
    AUTOPLAY = "autoplay"


OUTCOMES: Final = tuple(FaultOutcome)
# The faults that say a bot did not answer in time (the handshake's too).
TIMED_OUT: Final = frozenset({FaultOutcome.TIMEOUT, FaultOutcome.STALLED})
# A fault's detail is cut to this many characters: it may quote what a hostile bot sent, and it
# goes into replays and `error` lines.
MAX_DETAIL: Final = 1000


@dataclass(frozen=True, slots=True)
class Fault:
    """One bot failure as recorded: what happened, in words, and whether it ended the seat.

    A summary fault (`suppressed` > 0) stands for that many faults of its outcome that were
    not recorded one by one (a bot must not fill the replay with its notes)."""

    outcome: FaultOutcome
    detail: str
    request_id: int | None = None
    fatal: bool = False
    suppressed: int = 0

    def __post_init__(self) -> None:
        if len(self.detail) > MAX_DETAIL:
            object.__setattr__(self, "detail", self.detail[: MAX_DETAIL - 3] + "...")

    @property
    def weight(self) -> int:
        """How many faults this record counts for."""
        return self.suppressed or 1

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"outcome": self.outcome.value, "detail": self.detail,
                               "fatal": self.fatal}
        if self.suppressed:
            out["suppressed"] = self.suppressed
        return out

    @staticmethod
    def from_json(data: Mapping[str, JSON]) -> Fault:
        """The fault of a `to_json` or `to_record` dict (what a result line or replay holds);
        `ValueError` for an outcome that is not one of `FaultOutcome` (the replay's schema
        refuses such a record first)."""
        request = data.get("request")
        suppressed = data.get("suppressed", 0)
        return Fault(FaultOutcome(str(data.get("outcome"))), str(data.get("detail", "")),
                     request if isinstance(request, int) else None, bool(data.get("fatal")),
                     suppressed if isinstance(suppressed, int) and suppressed > 0 else 0)

    def to_record(self, seat: int) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "type": "fault",
            "seat": seat,
            "outcome": self.outcome.value,
            "detail": self.detail,
            "request": self.request_id,
            "fatal": self.fatal,
        }
        if self.suppressed:
            out["suppressed"] = self.suppressed
        return out


class BotError(RuntimeError):
    """A bot failed; `fault` says how, as it is recorded."""

    def __init__(self, fault: Fault, elapsed: float = 0.0) -> None:
        super().__init__(f"{fault.outcome}: {fault.detail}")
        self.fault = fault
        self.elapsed = elapsed


class BotTimeoutError(BotError):
    """No answer before the deadline: alive ("timeout": a line, or CPU use, after the deadline)
    or alive but silent through the grace after a ping ("stalled")."""


class BotCrashedError(BotError):
    """The bot process exited or died ("crashed"), or closed its output ("closed")."""


class BotProtocolError(BotError):
    """The bot sent a line that is not protocol ("malformed"); the referee may ask again."""


class BotFloodError(BotError):
    """The bot sent more unsolicited lines than a request or idle period allows ("malformed",
    always final: a flood is not answered by asking again)."""


class SeatStartError(BotError):
    """A seat could not start before the first game (`protocol.seats.connect_all`): the
    message names the seat, the bot and the reason, with the end of its stderr if any."""

    def __init__(self, seat: int, name: str, fault: Fault, stderr_tail: str = "") -> None:
        super().__init__(fault)
        self.seat, self.name, self.stderr_tail = seat, name, stderr_tail
        tail = f"; its stderr ends: {stderr_tail}" if stderr_tail else ""
        self.args = (f"seat {seat} ({name}) cannot play: {fault.outcome}: {fault.detail}{tail}",)
