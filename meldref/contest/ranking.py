"""A version's place on the ladder as the pages and matchmaking read it: its rating with
its 95% interval, and the order of the leaderboard (kept apart from the fit, `ratings`, so
reading the leaderboard loads no numerics)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rating:
    """A version's rating with its printed 95% interval (None: not rated yet, or none and
    `no_interval` says why) and its games; `resampled`: the fit's normal 95% range (the
    rating +- 1.96 deviations, `ratings.LadderRatings.fit`), which matchmaking reads (the
    printed interval is missing below 10 deal sets a version, where matchmaking still has
    to place it)."""

    rating: float | None
    low: float | None
    high: float | None
    games: int
    no_interval: str | None = None
    resampled: tuple[float | None, float | None] = (None, None)

    @property
    def width(self) -> float:
        if self.low is None or self.high is None:
            return float("inf")
        return self.high - self.low


def ranked(ratings: Mapping[str, Rating]) -> list[str]:
    """Names best first: rated by rating, then the unrated by games played, then name."""
    return sorted(ratings, key=lambda n: (ratings[n].rating is None,
                                          -(ratings[n].rating or 0.0), -ratings[n].games, n))
