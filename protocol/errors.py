"""Bot failures: one recorded `Fault` per problem, and the exceptions that carry them."""

from __future__ import annotations

from collections.abc import Mapping
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
    """One bot failure as recorded: what happened, in words, and whether it ended the seat.

    A summary fault (`suppressed` > 0) stands for that many faults of its outcome that were
    not recorded one by one (a bot must not fill the replay with its notes)."""

    outcome: str
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

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"outcome": self.outcome, "detail": self.detail,
                               "fatal": self.fatal}
        if self.suppressed:
            out["suppressed"] = self.suppressed
        return out

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Fault:
        """The fault of a `to_json` or `to_record` dict (what a result line or replay holds)."""
        request = data.get("request")
        suppressed = data.get("suppressed", 0)
        return Fault(str(data.get("outcome")), str(data.get("detail", "")),
                     request if isinstance(request, int) else None, bool(data.get("fatal")),
                     suppressed if isinstance(suppressed, int) and suppressed > 0 else 0)

    def to_record(self, seat: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "fault",
            "seat": seat,
            "outcome": self.outcome,
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
