"""The leaderboard as `status` prints it and `serve` shows it: from the database alone (the
ratings the run saved after its last deal set), so reading it never refits anything."""

from __future__ import annotations

import functools
import math
from typing import Any, Final

import numpy as np

from ..verdicts.ranks import rank_figures
from ..verdicts.ratings import TOP_K
from .ranking import Rating, ranked
from .store import ContestStore, SavedRating, is_running

RANK_DRAWS: Final = 2000
RANK_SEED: Final = 1  # the same database, the same figures
Z95: Final = 1.959964


def leaderboard(store: ContestStore) -> dict[str, Any]:
    """Rank, bot, version, rating with its 95% interval, chances of first and of the top k
    with the 95% rank interval, games and faults of every version in play; the versions out
    of play with their reason; the games running and queued."""
    ratings = store.latest_ratings()
    versions = store.versions()
    labels = {v.id: v.label for v in versions}
    playing = {v.label: Rating(*ratings.get(v.id, (None, None, None, 0, None)))
               for v in versions if v.in_play}
    rows = []
    for rank, label in enumerate(ranked(playing), start=1):
        version = next(v for v in versions if v.label == label)
        rows.append({"rank": rank, **_row(store, version.id, labels, ratings)})
    final = store.last_final()
    # A final's cut is the top-k question a ladder's readers ask; without one, the verdicts' k.
    top_k = len(final["final"]["standings"]) if final else TOP_K
    rows = with_rank_chances(rows, top_k)
    out_of_play = [{**_row(store, v.id, labels, ratings), "state": v.state, "reason": v.reason}
                   for v in versions if not v.in_play]
    counts = store.counts()
    return {"game": store.settings.game, "players": store.settings.players,
            "run": is_running(store.folder),
            "leaderboard": rows, "out_of_play": out_of_play,
            "running": [{"game_id": gid, "bots": [labels[v] for v in seats]}
                        for gid, seats in store.running()],
            "queued": counts.get("queued", 0), "played": counts.get("done", 0),
            "top_k": top_k, "final": final}


def _row(store: ContestStore, vid: int, labels: dict[int, str],
         ratings: dict[int, SavedRating]) -> dict[str, Any]:
    version = store.version(vid)
    games, faults = store.version_record(vid)
    rating, low, high, _, why = ratings.get(vid, (None, None, None, 0, None))
    return {"bot": version.bot, "version": version.number, "label": labels[vid],
            "rating": rating, "rating_ci95": [low, high], "no_interval": why, "games": games,
            "faults": faults}


def interval_text(row: dict[str, Any], joiner: str) -> str:
    """A leaderboard row's 95% interval as `status` and the page print it: both ends, one
    (a version never placed below, or above, another), or, where there is none, why."""
    low, high = row["rating_ci95"]
    if low is not None and high is not None:
        return f"{low:+.0f}{joiner}{high:+.0f}"
    if low is not None or high is not None:
        return f">= {low:+.0f}" if low is not None else f"<= {high:+.0f}"
    why = row.get("no_interval")
    return f"none: {why}" if why else "-"


def chance_columns(top_k: int) -> list[str]:
    """The heads of `chance_text`'s columns, as the tournament's tables name them."""
    return ["ranks", "P first", f"P top {top_k}"]


def chance_text(row: dict[str, Any]) -> list[str]:
    """A leaderboard row's 95% rank interval, chance of first and of the top k as `status`
    and the pages print them (the interval as the tournament's tables do: `1-3`); "-" for
    a version not drawn."""
    if row.get("p_first") is None:
        return ["-", "-", "-"]
    low, high = row["rank_ci95"]
    return [str(low) if low == high else f"{low}-{high}", _percent(row["p_first"]),
            _percent(row["p_top"])]


def _percent(p: float) -> str:
    # Never "0%" or "100%": a chance the draws did not see happen is not nil (and 0.5%
    # would round to "0%").
    if p < 0.01:
        return "<1%"
    if p > 0.99:
        return ">99%"
    return f"{p:.0%}"


def with_rank_chances(rows: list[dict[str, Any]], top_k: int) -> list[dict[str, Any]]:
    """`rows` with each version's chance of first (`p_first`), of the top `top_k` (`p_top`)
    and its 95% rank interval (`rank_ci95`), drawn by `verdicts.ranks` (name-free: ties get
    the same figures) among the versions with an interval; None for the others.

    The database keeps each rating's 95% interval, not the fit's covariance, so the draws are
    of independent normals with the spread each interval implies (a one-sided interval: the
    spread on its one side). That leaves out the ratings' correlation (they are measured
    against each other): on a simulated ladder of 6 versions the chances came within 0.03 of
    the full covariance's, the rank intervals at most one place wider."""
    ratings = tuple((row["rating"], *row["rating_ci95"]) for row in rows)
    figures = rank_chances(ratings, top_k)
    return [{**row, "p_first": first, "p_top": top, "rank_ci95": None if ci is None
             else list(ci)} for row, (first, top, ci) in zip(rows, figures, strict=True)]


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
