"""A version's place on the ladder as the pages and matchmaking read it: its rating with
its 95% interval, and the order of the leaderboard (kept apart from the fit, `ratings`, so
reading the leaderboard loads no numerics)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rating:
    """A version's rating with its 95% interval (None: not rated yet) and its games."""

    rating: float | None
    low: float | None
    high: float | None
    games: int

    @property
    def width(self) -> float:
        if self.low is None or self.high is None:
            return float("inf")
        return self.high - self.low


def ranked(ratings: Mapping[str, Rating]) -> list[str]:
    """Names best first: rated by rating, then the unrated by games played, then name."""
    return sorted(ratings, key=lambda n: (ratings[n].rating is None,
                                          -(ratings[n].rating or 0.0), -ratings[n].games, n))
