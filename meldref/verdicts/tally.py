"""Games counted per bot: games, wins (a win shared by k seats counts 1/k), places, scores and
faults by outcome, for match totals, tournament standings and replay stats alike."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..protocol.errors import Fault
from ..protocol.records import Figures


@dataclass(slots=True)
class BotTally:
    """One bot's games so far."""

    name: str
    games: int = 0
    wins: float = 0.0  # a win shared by k seats counts 1/k; a lost Solitaire game has none
    place_sum: int = 0
    score_sum: int = 0
    faults: Counter[str] = field(default_factory=Counter)  # by outcome

    @property
    def mean_place(self) -> float | None:
        return self.place_sum / self.games if self.games else None

    @property
    def mean_score(self) -> float | None:
        return self.score_sum / self.games if self.games else None

    @property
    def win_rate(self) -> float | None:
        return self.wins / self.games if self.games else None

    @property
    def fault_count(self) -> int:
        return sum(self.faults.values())

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.name, "games": self.games, "wins": round(self.wins, 6),
                "win_rate": _rounded(self.win_rate), "mean_place": _rounded(self.mean_place),
                "mean_score": _rounded(self.mean_score), "faults": self.fault_count,
                "faults_by_outcome": dict(sorted(self.faults.items()))}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


class Tally:
    """Games counted per bot (and wins per seat), in the order bots were first named."""

    def __init__(self, bots: Iterable[str] = ()) -> None:
        self.bots: dict[str, BotTally] = {name: BotTally(name) for name in bots}
        self.wins_by_seat: Counter[int] = Counter()
        self.games = 0

    def add(self, bots: Sequence[str], game: Figures) -> None:
        """Count a finished game whose seat k was played by the bot named `bots[k]`."""
        self.games += 1
        outcome = game.outcome
        winners = outcome.winners
        for seat, name in enumerate(bots):
            line = self.bots.setdefault(name, BotTally(name))
            line.games += 1
            line.place_sum += outcome.places[seat]
            line.score_sum += outcome.scores[seat]
            if seat in winners:
                line.wins += 1 / len(winners)
        self.add_faults(bots, game.faults or [[] for _ in bots])
        for seat in winners:
            self.wins_by_seat[seat] += 1

    def add_faults(self, bots: Sequence[str], faults: Sequence[Sequence[Fault]]) -> None:
        """Count the faults of a game (also of one that did not finish: a cut replay)."""
        for seat, name in enumerate(bots):
            line = self.bots.setdefault(name, BotTally(name))
            for fault in faults[seat]:
                line.faults[fault.outcome] += fault.weight

    def rows(self) -> list[BotTally]:
        return list(self.bots.values())
