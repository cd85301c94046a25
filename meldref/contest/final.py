"""`contest final`: the closing round robin of the ladder's top K versions, on fresh deal sets.

Every table of K choose `players` versions plays M deal sets, each in every balanced seating,
on deals the ladder never played, and **every table plays the same M deals** (deal m's seed is
`store.final_deal_seed(contest seed, final, m)` at every table): the luck of the cards is
common to the whole room, as in a duplicate bridge event, so it falls on no finalist more than
another. When each table dealt its own cards, two copies of one program finished +323 and
+256, each "rank held 98%": a table's lucky cards went into its finalists' ratings. Each
result line carries its deal's `seed`, the same at every table, and the verdicts take the
deal (named by its seed, `verdicts.games.GameResult.unit`) as the unit of evidence across
tables: its games at every table are one cluster, resampled together. The
standings are the tournament's (`tournament.standings.compute_standings`, bootstrap intervals,
cross table), published beside the ladder's ranks of the same versions. The final is played
with the ladder stopped (it takes the run lock) and resumes like the ladder: rerun the same
command and the games not played yet are played.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..protocol.records import ResultLine
from ..tournament.standings import Report, compute_standings
from ..verdicts.seatings import seatings
from .ladder.run import Budget, Event, Ladder, compressed, feed, game_pool
from .ranking import ranked
from .settings import ContestError
from .store import ContestStore, final_deal_seed, held


@dataclass(frozen=True, slots=True)
class FinalResult:
    """The final's standings, and each finalist's ladder rank and rating."""

    report: Report
    ladder: list[dict[str, Any]]
    stopped: str | None

    def to_json(self) -> dict[str, Any]:
        return {"final": self.report.to_json(), "ladder": self.ladder, "stopped": self.stopped}


def play_final(folder: Path, top: int, deal_sets: int = 2, jobs: int = 1,
               cluster: str | None = None, on_event: Event | None = None) -> FinalResult:
    """Play (or resume) the final of the top `top` versions in play; its standings."""
    with held(folder, "the ladder is running (pid {pid}): stop it before the final") as store:
        store.repair()
        ladder = Ladder(store, on_event)
        final, finalists = _open_or_new(store, ladder, top, deal_sets)
        pools = functools.partial(game_pool, store, jobs, cluster)
        stopped = _play(store, ladder, final, pools, on_event)
        labels = {v.id: v.label for v in store.versions()}
        names = [labels[v] for v in finalists]
        lines = [ResultLine.from_json(r) for r in store.final_lines(final)]  # read: JSON
        report = compute_standings(lines, names,
                                   higher_is_better=store.settings.info.higher_scores_win)
        board = [{"bot": labels[vid], "ladder_rank": rank + 1,
                  "rating": ladder.current[vid].rating}
                 for rank, vid in enumerate(finalists)]
        result = FinalResult(report, board, stopped)
        if stopped is None and not store.queued_games("final", final):
            store.save_final(final, {**result.to_json(), "finished": time.time()})
        return result


def _play(store: ContestStore, ladder: Ladder, final: int, pools: Callable[[], Any],
          on_event: Event | None) -> str | None:
    """The final's games not played yet; "interrupted" if a signal stopped them."""
    try:
        jobs = feed(store, ladder, Budget(), final=final)
        # Closed here, before the games in flight are discarded: its workers stop first.
        with contextlib.closing(pools().play(jobs)) as lines:
            for line in lines:
                record = compressed(store, line.to_json())  # the store keeps JSON
                store.record(int(record["index"]), record)
                if on_event is not None:
                    on_event("game", record)
    except KeyboardInterrupt:
        return "interrupted"
    finally:
        store.discard_in_flight()
    return None


def _open_or_new(store: ContestStore, ladder: Ladder, top: int, deal_sets: int
                 ) -> tuple[int, list[int]]:
    """The unfinished final (resumed), or a new one of the top versions in play."""
    found = store.open_final()
    if found is not None:
        return found
    seats = store.settings.players
    if top < seats:
        raise ContestError(f"--top {top}: at least the table's {seats} seats")
    if deal_sets < 1:
        raise ContestError(f"--deal-sets {deal_sets}: at least 1")
    in_play = {v.label: v.id for v in store.in_play()}
    order = ranked({label: ladder.current[vid] for label, vid in in_play.items()})
    if len(order) < top:
        raise ContestError(f"--top {top}: only {len(order)} versions are in play")
    finalists = [in_play[label] for label in order[:top]]
    final = store.add_final(top, deal_sets, finalists)
    rows = seatings(seats)
    for deal in range(deal_sets):
        shared = final_deal_seed(store.settings.seed, final, deal)
        for table in itertools.combinations(finalists, seats):
            store.add_deal_set("final", table, rows, final=final, seed=shared)
    return final, finalists
