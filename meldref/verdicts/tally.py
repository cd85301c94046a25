"""Games counted per bot: games, wins (a win shared by k seats counts 1/k), places, scores and
faults by outcome, for match totals, tournament standings and replay stats alike. It reads a
game's outcome and faults by their shape (`Ranked`, `Counted`): the verdicts import nothing
of meldref."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..engine.game import JSON


class Ranked(Protocol):
    """What a tally reads of a game's outcome (`engine.game.Outcome`)."""

    @property
    def places(self) -> tuple[int, ...]: ...
    @property
    def scores(self) -> tuple[int, ...]: ...
    @property
    def winners(self) -> tuple[int, ...]: ...


class Counted(Protocol):
    """What a tally reads of a fault (`protocol.errors.Fault`): its outcome, and how many
    faults it stands for (a summary stands for those it counts)."""

    @property
    def outcome(self) -> str: ...
    @property
    def weight(self) -> int: ...


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

    def to_json(self) -> dict[str, JSON]:
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

    def add(self, bots: Sequence[str], outcome: Ranked,
            faults: Sequence[Sequence[Counted]]) -> None:
        """Count a finished game whose seat k was played by the bot named `bots[k]`, with
        its faults by seat."""
        self.games += 1
        winners = outcome.winners
        for seat, name in enumerate(bots):
            line = self.bots.setdefault(name, BotTally(name))
            line.games += 1
            line.place_sum += outcome.places[seat]
            line.score_sum += outcome.scores[seat]
            if seat in winners:
                line.wins += 1 / len(winners)
        self.add_faults(bots, faults or [[] for _ in bots])
        for seat in winners:
            self.wins_by_seat[seat] += 1

    def add_faults(self, bots: Sequence[str], faults: Sequence[Sequence[Counted]]) -> None:
        """Count the faults of a game (also of one that did not finish: a cut replay)."""
        for seat, name in enumerate(bots):
            line = self.bots.setdefault(name, BotTally(name))
            for fault in faults[seat]:
                line.faults[fault.outcome] += fault.weight

    def rows(self) -> list[BotTally]:
        return list(self.bots.values())
