"""`MatchPolicy`: how a match treats its bots (clocks, retries, what a failure costs).

Apart from the referee's loop (referee.py, compiled with mypyc by setup.py) because it is made
once per match and read by reflection: the settings take its fields and defaults
(`dataclasses.fields`), and a compiled class keeps no `Literal` in its annotations.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

from ..engine.game import JSON
from .errors import SeatStatus


@dataclass(frozen=True, slots=True)
class MatchPolicy:
    """How a match treats its bots. Times in seconds.

    Each decision has its own allowance, `time`: `move_time`, or for a seat's first decision of
    a game `max(first_move_time, move_time)` (it covers the bot's set-up work, so it is never
    the shorter). The deadline is `time + bank`. After the decision, with `elapsed` its time::

        bank = min(max(0, bank - max(0, elapsed - time)) + increment, max_bank)

    that is, only time over the allowance comes out of the bank, the increment is added after
    every decision, and the bank never grows over `max_bank` (None: no cap). The bank starts
    at `time_bank` for every game.
    """

    move_time: float = 1.0
    first_move_time: float = 5.0
    startup_time: float = 10.0
    time_bank: float = 5.0
    increment: float = 0.0
    max_bank: float | None = None  # the bank's cap (riddles.io's maximum time bank); None: none
    illegal_retries: int = 2  # extra attempts per decision after an illegal or malformed answer
    on_failure: Literal["forfeit", "autoplay"] = "forfeit"
    legal_hints: bool = True  # send `legal` lines (the engine's legal_actions) with each request
    max_actions: int = 1_000_000  # a guard against a game that never ends (an engine bug)

    def __post_init__(self) -> None:
        # Messages name the options as users write them ([limits] keys, flags).
        if self.on_failure not in (SeatStatus.FORFEIT, SeatStatus.AUTOPLAY):
            raise ValueError(f"on-failure {self.on_failure!r}: one of forfeit, autoplay")
        clocks = (self.move_time, self.first_move_time, self.startup_time, self.time_bank,
                  self.increment, self.max_bank or 0.0)
        if not all(math.isfinite(c) for c in clocks):
            raise ValueError("the clocks (move-time, time-bank...) must be finite numbers")
        if min(self.move_time, self.first_move_time, self.startup_time) <= 0:
            raise ValueError("move-time, first-move-time and startup-time must be positive")
        if self.time_bank < 0 or self.increment < 0 or self.illegal_retries < 0:
            raise ValueError("time-bank, increment and illegal-retries cannot be negative")
        if self.max_bank is not None and self.max_bank < self.time_bank:
            raise ValueError(f"max-bank ({self.max_bank:g}) is below time-bank "
                             f"({self.time_bank:g})")

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)


__all__ = ["MatchPolicy"]
