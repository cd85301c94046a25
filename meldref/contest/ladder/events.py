"""What a run of the ladder (or of the final) tells its caller as it goes: each a small frozen
value, heard by a `Listener` (`contest run` prints them). A module of its own, light: the
command line imports it when it starts, the ladder's numerics only when a run does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ...protocol.records import ResultLine


@dataclass(frozen=True, slots=True)
class GamePlayed:
    """A game recorded: its result line (its replay compressed)."""

    line: ResultLine


@dataclass(frozen=True, slots=True)
class DealSetDone:
    """A deal set complete: its games are in the ratings, refitted."""

    deal_set: int


@dataclass(frozen=True, slots=True)
class Suspended:
    """A version suspended (`Ladder.check_suspension`), and why."""

    version: str
    reason: str


@dataclass(frozen=True, slots=True)
class Unseated:
    """No table can be seated: `in_play` versions, a table of `seats`; the run waits for
    submissions (`waits`) or stops."""

    in_play: int
    seats: int
    waits: bool

    def text(self) -> str:
        """`2 versions in play, a table needs 3`."""
        return f"{self.in_play} versions in play, a table needs {self.seats}"


RunEvent = GamePlayed | DealSetDone | Suspended | Unseated


class Listener(Protocol):
    """What hears a run's events as it goes: any function of one `RunEvent`."""

    def __call__(self, event: RunEvent, /) -> None: ...


def quiet(event: RunEvent, /) -> None:
    """The events of a run nobody listens to."""
