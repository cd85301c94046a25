"""What a game produced, in one shape for everyone who reads it.

The referee builds a `GameRecord` while it plays and streams its records (the replay format,
spec/REPLAY.md: `start`, `action`, `fault`, `result`, built here and nowhere else). A game's
`ResultLine` (a line of `results.jsonl`, a game of `meldref match --json`) holds its record's
`Figures`, typed from the referee to the standings: JSON only where a file is written or read
(`to_json`, `from_json`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..engine.game import JSON as JSON  # the one alias, re-exported (older imports)
from ..engine.game import Event, Outcome, Termination
from .errors import Fault, SeatStatus


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

    def figures(self) -> Figures:
        """What the game gave, as its result line holds it (no actions; times rounded)."""
        return Figures(self.outcome, tuple(self.status), tuple(tuple(f) for f in self.faults),
                       len(self.actions), self.decisions, tuple(self.names),
                       tuple(round(t, 4) for t in self.think_time), round(self.wall_time, 4))


@dataclass(frozen=True, slots=True)
class Figures:
    """What a finished game gave: its outcome, each seat's status ("ok", "forfeit",
    "autoplay") and faults, the actions applied and decisions asked, the names the seats played
    under, and the times (seconds, rounded)."""

    outcome: Outcome
    status: tuple[SeatStatus, ...]
    faults: tuple[tuple[Fault, ...], ...]
    actions: int
    decisions: int
    names: tuple[str, ...] = ()
    think_time: tuple[float, ...] = ()
    wall_time: float = 0.0

    def __reduce__(self) -> tuple[type[Figures], tuple[object, ...]]:
        # Through the constructor: a dataclass's own state setter looks its fields up for
        # every object, which made unpickling a cluster task's results three times slower.
        return (Figures, (self.outcome, self.status, self.faults, self.actions,
                          self.decisions, self.names, self.think_time, self.wall_time))

    @property
    def hands(self) -> int | None:
        """Hands (Phase 10) or rounds (Five Crowns) played; None where a game has neither."""
        detail = self.outcome.detail
        value = detail.get("hands", detail.get("rounds"))
        return value if isinstance(value, int) else None

    @property
    def faulty(self) -> bool:
        """Whether any seat had a fault."""
        return any(self.faults)

    def to_json(self) -> dict[str, JSON]:
        """The figures' keys of a result line."""
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
            "actions": self.actions,
            "decisions": self.decisions,
            "names": list(self.names),
            "think_time": list(self.think_time),
            "wall_time": self.wall_time,
        }

    @staticmethod
    def from_json(line: Mapping[str, JSON]) -> Figures:
        """The figures of a result line read from a file; `KeyError`, `TypeError` or
        `ValueError` for a line without them."""
        outcome = Outcome(Termination(line.get("termination", "normal")),
                          tuple(int(p) for p in line["places"]),
                          tuple(int(s) for s in line["scores"]), dict(line.get("detail") or {}))
        seats = len(outcome.places)
        faults = tuple(tuple(Fault.from_json(f) for f in fs) for fs in line.get("faults") or [])
        return Figures(outcome, tuple(_statuses(line.get("seat_status"), seats)),
                       faults or ((),) * seats, int(line.get("actions", 0)),
                       int(line.get("decisions", 0)),
                       tuple(str(n) for n in line.get("names") or []),
                       tuple(float(t) for t in line.get("think_time") or []),
                       float(line.get("wall_time", 0.0)))

    @staticmethod
    def from_result(result: Mapping[str, JSON], faults: Sequence[Sequence[Fault]]) -> Figures:
        """The figures of a replay's `result` record, with its fault records by seat."""
        data = result.get("outcome") or {}
        outcome = Outcome(Termination(data.get("termination", "normal")),
                          tuple(data["places"]), tuple(data["scores"]),
                          {k: v for k, v in data.items()
                           if k not in ("termination", "winners", "places", "scores")})
        return Figures(outcome, tuple(_statuses(result.get("status"), len(outcome.places))),
                       tuple(tuple(f) for f in faults),
                       # actions and wall_time may be null (spec/REPLAY.md's schema): 0
                       int(result.get("actions") or 0), int(result.get("decisions", 0)),
                       tuple(result.get("names") or []), (),
                       float(result.get("wall_time") or 0.0))


@dataclass(frozen=True, slots=True)
class ResultLine:
    """One game as a result line says it: which game (its id, game, seed, the bots by name
    and spec, its index and deal in a schedule), where its replay and its bots' kept logs are,
    and what it gave (`figures`), or why the referee could not finish it (`error`)."""

    game_id: str
    game: str
    seed: int
    bots: tuple[str, ...]
    specs: tuple[str, ...] = ()
    index: int | None = None
    deal: int | None = None
    replay: str | None = None
    logs: tuple[str | None, ...] = ()
    figures: Figures | None = None
    error: str | None = None

    def __reduce__(self) -> tuple[type[ResultLine], tuple[object, ...]]:
        # Through the constructor, as `Figures`: a cluster's results arrive in thousands.
        return (ResultLine, (self.game_id, self.game, self.seed, self.bots, self.specs,
                             self.index, self.deal, self.replay, self.logs, self.figures,
                             self.error))

    @property
    def ok(self) -> bool:
        """Whether the game finished (a result), rather than failing in the referee."""
        return self.figures is not None

    @property
    def failed(self) -> bool:
        """Whether the game failed in the referee or any seat had a fault."""
        return self.figures is None or self.figures.faulty

    def to_json(self) -> dict[str, JSON]:
        """The line as `results.jsonl` writes it."""
        out: dict[str, JSON] = {
            "index": self.index, "game_id": self.game_id, "game": self.game,
            "seed": self.seed, "deal": self.deal, "bots": list(self.bots),
            "specs": list(self.specs), "replay": self.replay}
        if self.figures is not None:
            out.update(self.figures.to_json())
        else:
            out.update(status="error", error=self.error)
        out["logs"] = list(self.logs)
        return out

    @staticmethod
    def from_json(data: Mapping[str, JSON]) -> ResultLine:
        """A line read from a results file; `KeyError`, `TypeError` or `ValueError` for one
        that is not a result line."""
        index, deal = data.get("index"), data.get("deal")
        ok = data.get("status") == "ok"
        return ResultLine(
            str(data["game_id"]), str(data.get("game", "")), int(data.get("seed", 0)),
            tuple(str(b) for b in data["bots"]), tuple(str(s) for s in data.get("specs") or []),
            index if isinstance(index, int) and not isinstance(index, bool) else None,
            deal if isinstance(deal, int) and not isinstance(deal, bool) else None,
            _text(data.get("replay")), tuple(_text(p) for p in data.get("logs") or []),
            Figures.from_json(data) if ok else None,
            None if ok else str(data.get("error", data.get("status"))))


def _text(value: JSON) -> str | None:
    return None if value is None else str(value)


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
