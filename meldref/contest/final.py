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

import functools
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..tournament.standings import Report, compute_standings
from ..verdicts.seatings import seatings
from .ladder.events import GamePlayed, Listener, quiet
from .ladder.run import Budget, Ladder, Pool, compressed, feed, game_pool, played
from .ranking import ranked
from .settings import ContestError
from .store import ContestStore, FinalRecord, LadderPlace, final_deal_seed, held


@dataclass(frozen=True, slots=True)
class FinalResult:
    """The final's standings, and each finalist's ladder rank and rating."""

    report: Report
    ladder: list[LadderPlace]
    stopped: str | None

    def to_json(self) -> FinalRecord:
        return {"final": self.report.to_json(), "ladder": self.ladder, "stopped": self.stopped}


def play_final(folder: Path, top: int, deal_sets: int = 2, jobs: int = 1,
               cluster: str | None = None, on_event: Listener = quiet) -> FinalResult:
    """Play (or resume) the final of the top `top` versions in play; its standings."""
    with held(folder, "the ladder is running (pid {pid}): stop it before the final") as store:
        store.repair()
        ladder = Ladder(store, on_event)
        final, finalists = _open_or_new(store, ladder, top, deal_sets)
        pools = functools.partial(game_pool, store, jobs, cluster)
        stopped = _play(store, ladder, final, pools, on_event)
        labels = {v.id: v.label for v in store.versions()}
        names = [labels[v] for v in finalists]
        report = compute_standings(store.final_lines(final), names,
                                   higher_is_better=store.settings.info.higher_scores_win)
        board: list[LadderPlace] = [{"bot": labels[vid], "ladder_rank": rank + 1,
                                     "rating": ladder.current[vid].rating}
                                    for rank, vid in enumerate(finalists)]
        result = FinalResult(report, board, stopped)
        if stopped is None and not store.queued_games("final", final):
            store.save_final(final, {**result.to_json(), "finished": time.time()})
        return result


def _play(store: ContestStore, ladder: Ladder, final: int, pools: Callable[[], Pool],
          on_event: Listener) -> str | None:
    """The final's games not played yet; "interrupted" if a signal stopped them."""
    try:
        with played(pools(), feed(store, ladder, Budget(), final=final)) as lines:
            for line in lines:
                recorded = compressed(store, line)
                store.record(recorded)
                on_event(GamePlayed(recorded))
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
