"""Bot failures: one recorded `Fault` per problem, and the exceptions that carry them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

# Every outcome a fault record can hold. "late" (an answer to an old request) and non-fatal
# "malformed" lines are noted but cost the bot nothing.
OUTCOMES: Final = ("illegal", "malformed", "timeout", "stalled", "crashed", "closed", "late")
# A fault's detail is cut to this many characters: it may quote what a hostile bot sent, and it
# goes into replays and `error` lines.
MAX_DETAIL: Final = 1000


@dataclass(frozen=True, slots=True)
class Fault:
    """One bot failure as recorded: what happened, in words, and whether it ended the seat."""

    outcome: str
    detail: str
    request_id: int | None = None
    fatal: bool = False

    def __post_init__(self) -> None:
        if len(self.detail) > MAX_DETAIL:
            object.__setattr__(self, "detail", self.detail[: MAX_DETAIL - 3] + "...")

    def to_record(self, seat: int) -> dict[str, Any]:
        return {
            "type": "fault",
            "seat": seat,
            "outcome": self.outcome,
            "detail": self.detail,
            "request": self.request_id,
            "fatal": self.fatal,
        }


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
