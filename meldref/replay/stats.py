"""Figures over many replays (`replay stats`): games, wins per seat and per bot, scores,
faults, hands and decisions, counted by the same `Tally` as match totals and standings."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.game import JSON
from ..protocol.errors import Fault
from ..protocol.records import Figures
from ..verdicts.tally import Tally
from .audit import Verified, verify
from .files import Outline, ReplayError, ReplayPathError, open_replay, read_through


@dataclass(slots=True)
class Stats:
    """Totals over replays: games, wins per seat and per bot, scores, faults, hands, decisions."""

    games: int = 0
    finished: int = 0
    unreadable: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    unusable_paths: int = 0  # of the unreadable: files that could not be read at all
    actions: int = 0
    decisions: int = 0
    hands: int = 0
    tally: Tally = field(default_factory=Tally)

    def add(self, path: Path, names: list[str], seen: Outline) -> None:
        """Count a replay as read (its result as the file claims it)."""
        self.add_game(path, names, seen.actions, seen.fault_records(), seen.result)

    def add_verified(self, path: Path, done: Verified) -> None:
        """Count a verified replay: its result as `verify` re-derived it."""
        self.add_game(path, done.names, done.actions, done.fault_records, done.result)

    def add_game(self, path: Path, names: list[str], actions: int,
                 fault_records: Iterable[dict[str, JSON]], result: dict[str, JSON] | None) -> None:
        self.games += 1
        self.actions += actions
        faults: list[list[Fault]] = [[] for _ in names]
        for fault in fault_records:
            seat = fault.get("seat")
            if isinstance(seat, int) and 0 <= seat < len(names):
                faults[seat].append(Fault.from_json(fault))
        if result is None:
            self.truncated.append(str(path))
            self.tally.add_faults(names, faults)
            return
        self.finished += 1
        record = Figures.from_result(result, faults)
        self.decisions += record.decisions
        self.hands += record.hands or 0
        self.tally.add(names, record.outcome, record.faults)

    def to_json(self) -> dict[str, JSON]:
        finished = self.finished
        return {
            "games": self.games, "finished": finished,
            "truncated": self.truncated, "unreadable": self.unreadable,
            "actions": self.actions, "decisions": self.decisions, "hands": self.hands,
            "mean_hands": round(self.hands / finished, 3) if finished else None,
            "mean_decisions": round(self.decisions / finished, 3) if finished else None,
            "wins_by_seat": [{"seat": seat, "wins": wins}
                             for seat, wins in sorted(self.tally.wins_by_seat.items())],
            "bots": [row.to_json() for row in sorted(self.tally.rows(), key=lambda r: r.name)],
        }


def gather_stats(files: Iterable[Path], check: bool = False) -> Stats:
    """Figures over the replay `files` (with `check`, only those that verify, with the
    result verify re-derived: a forged one is listed as unreadable, not counted)."""
    stats = Stats()
    for path in files:
        try:
            if check:
                stats.add_verified(path, verify(path))
                continue
            replay = open_replay(path)
            seen = read_through(replay)
        except ReplayError as exc:
            stats.unreadable.append(f"{path}: {exc}")
            continue
        except ReplayPathError as exc:  # a path, not a content, problem: exit 2 as elsewhere
            stats.unreadable.append(str(exc))
            stats.unusable_paths += 1
            continue
        if seen.damaged is not None:
            stats.unreadable.append(f"{path}: {seen.damaged}")
            continue
        stats.add(path, replay.seat_names(), seen)
    return stats
