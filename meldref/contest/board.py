"""The leaderboard as `status` prints it and `serve` shows it: from the database alone (the
ratings the run saved after its last deal set), so reading it never refits anything."""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, TypedDict

import numpy as np

from ..engine.game import JSON
from ..verdicts.ranks import rank_figures
from ..verdicts.ratings import TOP_K
from .ranking import Rating, ranked
from .store import ContestStore, SavedFinal, Version, VersionRecord, is_running

RANK_DRAWS: Final = 2000
RANK_SEED: Final = 1  # the same database, the same figures
Z95: Final = 1.959964


class RowJSON(TypedDict):
    """A version's row as `status --json` and `/board.json` give it."""

    bot: str
    version: int
    label: str
    rating: float | None
    rating_ci95: list[float | None]
    no_interval: str | None
    games: int
    faults: int


class RankedJSON(RowJSON):
    """A row of the leaderboard: its rank first, its chances last."""

    rank: int
    p_first: float | None
    p_top: float | None
    rank_ci95: list[int] | None


class OutJSON(RowJSON):
    """A version out of play: its state and why."""

    state: str
    reason: str | None


class RunningJSON(TypedDict):
    game_id: str
    bots: list[str]


class BoardJSON(TypedDict):
    """The board as `status --json` prints it (with `service`) and the page polls it."""

    game: str
    players: int
    run: bool
    leaderboard: list[RankedJSON]
    out_of_play: list[OutJSON]
    running: list[RunningJSON]
    queued: int
    played: int
    top_k: int
    final: SavedFinal | None


@dataclass(frozen=True, slots=True)
class RankChances:
    """A version's chance of first, of the top k, and its 95% rank interval."""

    first: float
    top: float
    ranks: tuple[int, int]

    def cells(self) -> list[str]:
        """As `status` and the pages print them (the interval as the tournament's tables
        do: `1-3`)."""
        low, high = self.ranks
        return [str(low) if low == high else f"{low}-{high}", _percent(self.first),
                _percent(self.top)]


NO_CHANCES: Final = ("-", "-", "-")  # the cells of a version not drawn


@dataclass(frozen=True, slots=True)
class BoardRow:
    """A version on the board: its rating with its 95% interval (None: not rated, or no
    interval and `no_interval` says why), its ladder games and faults, and on the
    leaderboard (in play) its chances (None: not drawn)."""

    version: Version
    rating: float | None
    low: float | None
    high: float | None
    no_interval: str | None
    games: int
    faults: int
    chances: RankChances | None = None

    @staticmethod
    def of(record: VersionRecord) -> BoardRow:
        rating, low, high, _, why = record.rating
        return BoardRow(record.version, rating, low, high, why, record.games, record.faults)

    def interval_text(self, joiner: str) -> str:
        """The 95% interval as `status` and the page print it: both ends, one (a version
        never placed below, or above, another), or, where there is none, why."""
        low, high = self.low, self.high
        if low is not None and high is not None:
            return f"{low:+.0f}{joiner}{high:+.0f}"
        if low is not None or high is not None:
            return f">= {low:+.0f}" if low is not None else f"<= {high:+.0f}"
        return f"none: {self.no_interval}" if self.no_interval else "-"

    def chance_cells(self) -> list[str]:
        return list(NO_CHANCES) if self.chances is None else self.chances.cells()

    def _json(self) -> RowJSON:
        v = self.version
        return {"bot": v.bot, "version": v.number, "label": v.label, "rating": self.rating,
                "rating_ci95": [self.low, self.high], "no_interval": self.no_interval,
                "games": self.games, "faults": self.faults}

    def ranked_json(self, rank: int) -> RankedJSON:
        c = self.chances
        return {"rank": rank, **self._json(),
                "p_first": None if c is None else c.first, "p_top": None if c is None else c.top,
                "rank_ci95": None if c is None else list(c.ranks)}

    def out_json(self) -> OutJSON:
        return {**self._json(), "state": self.version.state, "reason": self.version.reason}


@dataclass(frozen=True, slots=True)
class Board:
    """The leaderboard (in play, best first: rank 1 first), the versions out of play, the
    games running (their versions' labels) and queued, the games played, the top k its
    chances count, and the last final."""

    game: str
    players: int
    run: bool
    leaderboard: tuple[BoardRow, ...]
    out_of_play: tuple[BoardRow, ...]
    running: tuple[tuple[str, tuple[str, ...]], ...]
    queued: int
    played: int
    top_k: int
    final: SavedFinal | None

    def ranked(self) -> list[tuple[int, BoardRow]]:
        """The leaderboard's rows with their ranks."""
        return list(enumerate(self.leaderboard, start=1))

    def row_of(self, label: str) -> BoardRow | None:
        return next((r for r in (*self.leaderboard, *self.out_of_play)
                     if r.version.label == label), None)

    def rank_of(self, label: str) -> int | None:
        """A version's rank on the leaderboard (None: out of play)."""
        return next((rank for rank, r in self.ranked() if r.version.label == label), None)

    def to_json(self) -> BoardJSON:
        return {"game": self.game, "players": self.players, "run": self.run,
                "leaderboard": [r.ranked_json(rank) for rank, r in self.ranked()],
                "out_of_play": [r.out_json() for r in self.out_of_play],
                "running": [{"game_id": gid, "bots": list(bots)} for gid, bots in self.running],
                "queued": self.queued, "played": self.played, "top_k": self.top_k,
                "final": self.final}


def leaderboard(store: ContestStore) -> Board:
    """Rank, bot, version, rating with its 95% interval, chances of first and of the top k
    with the 95% rank interval, games and faults of every version in play; the versions out
    of play with their reason; the games running and queued. From one query of the versions
    with their records and ratings."""
    records = store.version_records()
    playing = {r.version.label: r for r in records if r.version.in_play}
    order = ranked({label: Rating(*r.rating) for label, r in playing.items()})
    final = store.last_final()
    # A final's cut is the top-k question a ladder's readers ask; without one, the verdicts' k.
    top_k = len(final["final"]["standings"]) if final else TOP_K
    rows = with_rank_chances([BoardRow.of(playing[label]) for label in order], top_k)
    labels = {r.version.id: r.version.label for r in records}
    counts = store.counts()
    return Board(store.settings.game, store.settings.players, is_running(store.folder),
                 tuple(rows), tuple(BoardRow.of(r) for r in records if not r.version.in_play),
                 tuple((gid, tuple(labels[v] for v in seats)) for gid, seats in store.running()),
                 counts.get("queued", 0), counts.get("done", 0), top_k, final)


def chance_columns(top_k: int) -> list[str]:
    """The heads of the chances' columns, as the tournament's tables name them."""
    return ["ranks", "P first", f"P top {top_k}"]


def chance_text(row: Mapping[str, JSON]) -> list[str]:
    """The chance cells of a leaderboard row as `status --json` gives it (`RankChances.
    cells`; "-" for a version not drawn)."""
    if row.get("p_first") is None:
        return list(NO_CHANCES)
    low, high = row["rank_ci95"]
    return RankChances(row["p_first"], row["p_top"], (low, high)).cells()


def _percent(p: float) -> str:
    # Never "0%" or "100%": a chance the draws did not see happen is not nil (and 0.5%
    # would round to "0%").
    if p < 0.01:
        return "<1%"
    if p > 0.99:
        return ">99%"
    return f"{p:.0%}"


def with_rank_chances(rows: Sequence[BoardRow], top_k: int) -> list[BoardRow]:
    """`rows` with each version's chance of first, of the top `top_k` and its 95% rank
    interval, drawn by `verdicts.ranks` (name-free: ties get the same figures) among the
    versions with an interval; None for the others.

    The database keeps each rating's 95% interval, not the fit's covariance, so the draws are
    of independent normals with the spread each interval implies (a one-sided interval: the
    spread on its one side). That leaves out the ratings' correlation (they are measured
    against each other): on a simulated ladder of 6 versions the chances came within 0.03 of
    the full covariance's, the rank intervals at most one place wider."""
    figures = rank_chances(tuple((r.rating, r.low, r.high) for r in rows), top_k)
    return [replace(row, chances=None if ci is None or first is None or top is None
                    else RankChances(first, top, ci))
            for row, (first, top, ci) in zip(rows, figures, strict=True)]


Chances = tuple[float | None, float | None, tuple[int, int] | None]


@functools.lru_cache(maxsize=8)
def rank_chances(ratings: tuple[tuple[float | None, float | None, float | None], ...],
                 top_k: int) -> tuple[Chances, ...]:
    """Per (rating, low, high), best first: the chance of first, of the top k, and the 95%
    rank interval. Kept for the last few ratings: they change when the run refits, while
    every viewer's page asks for them every few seconds (200 versions: a quarter of a CPU
    second a call)."""
    spreads = [_spread(r, lo, hi) for r, lo, hi in ratings]
    drawn = [k for k, sd in enumerate(spreads) if sd is not None]
    if len(drawn) < 2:
        return tuple((None, None, None) for _ in ratings)
    values = np.array([r[0] or 0.0 for r in ratings], dtype=float)
    cov = np.diag(np.array([spreads[k] or 0.0 for k in drawn]) ** 2)
    figures = rank_figures(values, cov, np.array(drawn, dtype=np.intp), RANK_DRAWS, RANK_SEED,
                           top_k)
    assert figures is not None  # two or more drawn, and draws
    return tuple((round(float(figures.first[k]), 4), round(float(figures.top[k]), 4),
                  (int(figures.low[k]), int(figures.high[k]))) if k in drawn
                 else (None, None, None) for k in range(len(ratings)))


def _spread(rating: float | None, low: float | None, high: float | None) -> float | None:
    """The standard deviation a 95% interval implies; None without a rating or a bound."""
    if rating is None:
        return None
    if low is not None and high is not None:
        sd = (high - low) / (2 * Z95)
    elif low is not None or high is not None:
        sd = abs(rating - (low if low is not None else high or 0.0)) / Z95
    else:
        return None
    return sd if math.isfinite(sd) else None
