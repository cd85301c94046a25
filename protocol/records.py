"""What a game produced, in one shape for everyone who reads it.

The referee builds a `GameRecord` while it plays and streams its records (the replay format,
spec/REPLAY.md: `start`, `action`, `fault`, `result`, built here and nowhere else). Result lines
(`results.jsonl`, `meldref match --json`) hold a record's figures (`GameRecord.figures`), and a
`Tally` counts records per bot for match totals, tournament standings and replay stats alike:
games, wins (a win shared by k seats counts 1/k), places, scores and faults by outcome.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.game import Event, Outcome, Termination
from .errors import Fault, SeatStatus

JSON = Any


@dataclass
class GameRecord:
    """What happened in one game: seats, outcome, faults and timings."""

    game: str
    seed: int
    rules: dict[str, JSON]
    names: list[str]  # per seat, the name the seat played under (its `id name`)
    outcome: Outcome
    status: list[SeatStatus]  # per seat
    faults: list[list[Fault]]  # per seat, every fault in order
    actions: list[str] = field(default_factory=list)
    decisions: int = 0  # decisions asked of bots (retries included)
    wall_time: float = 0.0
    think_time: list[float] = field(default_factory=list)  # per seat, seconds

    @property
    def forfeited(self) -> list[int]:
        return [s for s, st in enumerate(self.status) if st is SeatStatus.FORFEIT]

    @property
    def hands(self) -> int | None:
        """Hands (Phase 10) or rounds (Five Crowns) played; None where a game has neither."""
        detail = self.outcome.detail
        value = detail.get("hands", detail.get("rounds"))
        return value if isinstance(value, int) else None

    def figures(self) -> dict[str, JSON]:
        """The result line's figures for this game (no paths; times rounded)."""
        outcome = self.outcome
        return {
            "status": "ok",
            "termination": outcome.termination.value,
            "winners": list(outcome.winners),
            "places": list(outcome.places),
            "scores": list(outcome.scores),
            "hands": self.hands,
            "detail": dict(outcome.detail),
            "seat_status": [st.value for st in self.status],
            "faults": [[fault.to_json() for fault in faults] for faults in self.faults],
            "actions": len(self.actions),
            "decisions": self.decisions,
            "names": list(self.names),
            "think_time": [round(t, 4) for t in self.think_time],
            "wall_time": round(self.wall_time, 4),
        }

    @staticmethod
    def from_figures(line: Mapping[str, JSON]) -> GameRecord:
        """A record from a result line's figures (`figures`, with the line's game and seed)."""
        outcome = Outcome(Termination(line.get("termination", "normal")), tuple(line["places"]),
                          tuple(line["scores"]), dict(line.get("detail") or {}))
        faults = [[Fault.from_json(f) for f in fs] for fs in line.get("faults") or []]
        return GameRecord(str(line.get("game", "")), int(line.get("seed", 0)), {},
                          list(line.get("names") or []), outcome,
                          _statuses(line.get("seat_status"), len(outcome.places)),
                          faults or [[] for _ in outcome.places], [], int(line.get("decisions",
                                                                                     0)))


    @staticmethod
    def from_result(result: Mapping[str, JSON], faults: list[list[Fault]]) -> GameRecord:
        """A record from a replay's `result` record and its fault records, by seat."""
        data = result.get("outcome") or {}
        outcome = Outcome(Termination(data.get("termination", "normal")),
                          tuple(data["places"]), tuple(data["scores"]),
                          {k: v for k, v in data.items()
                           if k not in ("termination", "winners", "places", "scores")})
        return GameRecord("", 0, {}, list(result.get("names") or []), outcome,
                          _statuses(result.get("status"), len(outcome.places)), faults,
                          [], int(result.get("decisions", 0)))


def _statuses(stored: JSON, seats: int) -> list[SeatStatus]:
    """Per seat, the statuses a result holds (none stored: every seat in play)."""
    return [SeatStatus(st) for st in stored] if stored else [SeatStatus.OK] * seats


# ----------------------------------------------------------------------------------------------
# The replay's records


def event_record(event: Event) -> dict[str, JSON]:
    """An event as a replay stores it: everything, plus which keys were private."""
    out = event.for_seat(None)
    out["private"] = sorted(event.private)
    return out


def start_record(protocol: int, game: str, rules: dict[str, JSON], names: Sequence[str],
                 seed: int, policy: dict[str, JSON], opening: Iterable[Event]) -> dict[str, JSON]:
    """The game starts: its settled rules, seats, seed, policy and the first deal's events."""
    return {
        "type": "start", "protocol": protocol, "game": game, "rules": rules,
        "players": len(names), "seed": seed, "names": list(names), "policy": policy,
        "events": [event_record(e) for e in opening],
    }


def action_record(n: int, seat: int, decision: str, text: str, elapsed: float | None,
                  events: Iterable[Event]) -> dict[str, JSON]:
    """Action `n`, by `seat`; `elapsed` None when the referee chose it for a failed seat."""
    return {
        "type": "action", "n": n, "seat": seat, "decision": decision, "action": text,
        "auto": elapsed is None, "elapsed": None if elapsed is None else round(elapsed, 6),
        "events": [event_record(e) for e in events],
    }


def result_record(record: GameRecord) -> dict[str, JSON]:
    """The game is over: its outcome, every seat's status and fault count, and its size."""
    return {
        "type": "result", "outcome": record.outcome.to_json(),
        "status": [st.value for st in record.status],
        "faults": [len(f) for f in record.faults], "actions": len(record.actions),
        "decisions": record.decisions, "wall_time": round(record.wall_time, 6),
        "names": record.names,
    }


# ----------------------------------------------------------------------------------------------
# Counting games per bot


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

    def add(self, bots: Sequence[str], record: GameRecord) -> None:
        """Count a finished game whose seat k was played by the bot named `bots[k]`."""
        self.games += 1
        outcome = record.outcome
        winners = outcome.winners
        faults = record.faults or [[] for _ in bots]
        for seat, name in enumerate(bots):
            line = self.bots.setdefault(name, BotTally(name))
            line.games += 1
            line.place_sum += outcome.places[seat]
            line.score_sum += outcome.scores[seat]
            for fault in faults[seat]:
                line.faults[fault.outcome] += fault.weight
            if seat in winners:
                line.wins += 1 / len(winners)
        for seat in winners:
            self.wins_by_seat[seat] += 1

    def add_faults(self, bots: Sequence[str], faults: Sequence[Sequence[Fault]]) -> None:
        """Count the faults of a game that did not finish (a cut replay)."""
        for seat, name in enumerate(bots):
            line = self.bots.setdefault(name, BotTally(name))
            for fault in faults[seat]:
                line.faults[fault.outcome] += fault.weight

    def rows(self) -> list[BotTally]:
        return list(self.bots.values())
