"""A tournament's standings: what an organiser publishes, from the result lines alone.

Every figure comes from `meldref.verdicts` over the finished games, fitted all at once: the
standings do not depend on the order games finished in, the order bots were listed in, or how
many jobs played them. For two bots the SPRT is fed whole deal sets in schedule order
(`SprtWatch`), so it stops at the same game whatever `-j` is, and never inside a deal set;
games that finished after the deciding deal set are recorded but left out of the standings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..engine.game import JSON
from ..protocol.records import ResultLine
from ..verdicts.games import GameResult, ResultLineError
from ..verdicts.pairs import CrossTable, HeadToHead, SameDeals, cross_table
from ..verdicts.ratings import RankBy, Standings, standings
from ..verdicts.sprt import SprtSpec, SprtTest
from ..verdicts.tally import Tally
from .schedule import Plan


@dataclass(frozen=True, slots=True)
class Report:
    """The standings, the cross table, the two bots' record and SPRT, and the faults."""

    standings: Standings
    cross: CrossTable
    pair: HeadToHead | SameDeals | None  # the two bots of a two-bot tournament
    sprt: SprtTest | None
    faults: Tally  # per bot, by outcome
    failed_games: int = 0  # the referee's own errors (no result)
    after_stop: int = 0  # games finished after the SPRT decided, left out

    def to_json(self) -> dict[str, JSON]:
        faults = {row.name: {"faults": row.fault_count,
                             "by_outcome": dict(sorted(row.faults.items()))}
                  for row in self.faults.rows()}
        rows = [{**row.to_json(), **faults.get(row.bot, {"faults": 0, "by_outcome": {}})}
                for row in self.standings.rows]
        out: dict[str, JSON] = {
            "standings": rows,
            "ratings": {k: v for k, v in self.standings.to_json().items() if k != "rows"},
            "cross_table": self.cross.to_json(),
            "failed_games": self.failed_games,
            "after_stop": self.after_stop,
        }
        if self.pair is not None:
            out["head_to_head"] = self.pair.to_json()
        if self.sprt is not None:
            out["sprt"] = self.sprt.to_json()
        return out


def compute_standings(results: Sequence[ResultLine], bots: Sequence[str], *,
                      higher_is_better: bool = False, sprt: SprtTest | None = None,
                      upto: int | None = None, rank_by: RankBy = "places") -> Report:
    """The report over `results` (result lines); only games of index <= `upto` when the SPRT
    stopped the tournament there; bots ranked by rating ("places") or by mean score margin
    ("margin")."""
    lines = [r for r in results if upto is None or (r.index or 0) <= upto]
    after = len(results) - len(lines)
    ok = [r for r in lines if r.ok]
    games = sorted((_game(line) for line in ok), key=lambda g: g.key)
    faults = Tally(bots)
    for line in ok:
        assert line.figures is not None
        faults.add(line.bots, line.figures.outcome, line.figures.faults)
    cross = cross_table(games, bots, higher_is_better)
    pair = cross.get(bots[0], bots[1]) if len(bots) == 2 else None
    return Report(standings(games, bots, higher_is_better=higher_is_better, rank_by=rank_by),
                  cross, pair, sprt, faults,
                  len(lines) - len(ok), after)


def _game(line: ResultLine) -> GameResult:
    """A finished game of the schedule as the verdicts read it."""
    if line.figures is None or line.deal is None:
        raise ResultLineError(f"result {line.game_id}: no finished game of a schedule")
    outcome = line.figures.outcome
    return GameResult(line.deal, line.bots, outcome.places,
                      tuple(float(s) for s in outcome.scores), line.seed)


@dataclass(slots=True)
class SprtWatch:
    """The SPRT of a two-bot tournament, fed each deal set once all its games have finished,
    in schedule order; `stop` is the index of the last game of the deal set that decided.

    Results may arrive in any order (parallel games): a deal set waits for the ones before
    it. A deal set with a game the referee could not finish is not counted (as a deal cut
    short); every run, whatever `-j`, counts the same ones in the same order. The two bots
    share one table, so deal set f is the games f*m .. f*m + m-1 (m seatings): the groups are
    counted, never listed."""

    test: SprtTest
    first: str
    second: str
    deal_sets: int  # of the schedule
    done: dict[int, ResultLine] = field(default_factory=dict)
    fed: int = 0  # deal sets fed so far
    stop: int | None = None

    @staticmethod
    def of(spec: SprtSpec, plan: Plan, first: str, second: str) -> SprtWatch:
        return SprtWatch(SprtTest(spec, len(plan.seatings())), first, second, plan.deal_sets())

    def _group(self, f: int) -> range:
        m = self.test.seatings
        return range(f * m, (f + 1) * m)

    def add(self, result: ResultLine) -> bool:
        """Count `result` (a game of the schedule); True once the test has decided (then
        `stop` says where)."""
        if self.stop is not None:
            return True
        assert result.index is not None
        self.done[result.index] = result
        while self.fed < self.deal_sets and all(i in self.done for i in
                                                 self._group(self.fed)):
            group = self._group(self.fed)
            self.fed += 1
            lines = [self.done.pop(i) for i in group]
            half_points = self._half_points(lines)
            if half_points is None:
                continue
            self.test.add(half_points)
            if self.test.verdict() is not None:
                self.stop = group[-1]
                return True
        return False

    def _half_points(self, lines: list[ResultLine]) -> int | None:
        if len(lines) != self.test.seatings or not all(r.ok for r in lines):
            return None
        total = 0
        for line in lines:
            game = _game(line)
            a, b = game.places[game.bots.index(self.first)], game.places[
                game.bots.index(self.second)]
            total += 2 if a < b else 1 if a == b else 0
        return total
