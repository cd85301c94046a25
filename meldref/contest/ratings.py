"""The ladder's ratings: the verdicts' order-free fit, fed deal set by deal set, fast at 200
bots and 200,000 games.

The model and the point fit are the verdicts' own (`meldref.verdicts.ratings`: Bradley-Terry on
the seat pairs of every game, `prior_draws` virtual draws between rated bots, the Elo scale,
mean 0), so on the same games the ladder's ratings are the tournament's. Two things differ, and
only in how the sums are kept:
- `verdicts.ratings.standings` tallies an array of (deals x bots x bots): at 200 bots and the
  ~17,000 deal sets of 200,000 four-seat games that is 5 GB. Here each finished deal set adds
  its few pair counts to flat arrays (one entry per ordered pair of its table), kept by the run
  from one deal set to the next (incremental), so a refresh never reads the games again.
- The intervals are a bootstrap over deal sets as there (a deal set's games share their
  cards), drawn as a Poisson bootstrap (each deal set weighted by a Poisson(1) count: the
  multinomial's limit, and computable on the flat arrays without materialising the deals),
  every resample's fit warm-started from the point fit. `bench/bench_contest.py` measures a
  refresh.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from ..verdicts.games import GameResult
from ..verdicts.ratings import _fit as fit_wins  # the verdicts' fit, shared (see docstring)
from .ranking import Rating

RESAMPLES: Final = 200
PRIOR_DRAWS: Final = 1.0


@dataclass(slots=True)
class LadderRatings:
    """Pair counts of every finished deal set, added as they finish; `fit` over the bots in
    play."""

    names: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    deal_sets: int = 0
    _ds: list[int] = field(default_factory=list)
    _i: list[int] = field(default_factory=list)
    _j: list[int] = field(default_factory=list)
    _w: list[float] = field(default_factory=list)
    games: dict[str, int] = field(default_factory=dict)
    _last: dict[str, float] = field(default_factory=dict)  # the previous fit: a warm start
    _samples: Any = None  # the last fit's resamples (resamples x names)

    def _at(self, name: str) -> int:
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
        return self.index[name]

    def add_deal_set(self, lines: Iterable[Mapping[str, Any]]) -> None:
        """One finished deal set's result lines: each game's seat pairs, the better place a
        win, equal places half a win each (the verdicts' rule)."""
        counts: dict[tuple[int, int], float] = {}
        for line in lines:
            game = GameResult.from_json(line)
            if game is None:
                continue
            for bot in game.bots:
                self.games[bot] = self.games.get(bot, 0) + 1
            if not game.rated:
                continue
            seats = [self._at(b) for b in game.bots]
            for x, a in enumerate(seats):
                for y, b in enumerate(seats):
                    if x != y:
                        pa, pb = game.places[x], game.places[y]
                        won = 1.0 if pa < pb else 0.5 if pa == pb else 0.0
                        if won:
                            counts[(a, b)] = counts.get((a, b), 0.0) + won
        for (a, b), w in counts.items():
            self._ds.append(self.deal_sets)
            self._i.append(a)
            self._j.append(b)
            self._w.append(w)
        self.deal_sets += 1

    def fit(self, in_play: Sequence[str], resamples: int = RESAMPLES,
            seed: int = 1) -> dict[str, Rating]:
        """Ratings of `in_play` from the deal sets among them, with bootstrap intervals."""
        n = len(self.names)
        out = {name: Rating(None, None, None, self.games.get(name, 0)) for name in in_play}
        playing = np.zeros(n, dtype=bool)
        for name in in_play:
            if name in self.index:
                playing[self.index[name]] = True
        ds, i, j, w = (np.asarray(a) for a in (self._ds, self._i, self._j, self._w))
        keep = playing[i] & playing[j] if len(i) else np.zeros(0, dtype=bool)
        ds, i, j, w = ds[keep], i[keep], j[keep], w[keep].astype(float)
        if not len(w):
            return out
        cell = i * n + j
        wins = np.bincount(cell, weights=w, minlength=n * n).astype(float).reshape(n, n)
        rated = (wins.sum(axis=0) + wins.sum(axis=1)) > 0
        start = np.array([self._last.get(name, 0.0) for name in self.names])
        point = fit_wins(wins, rated, PRIOR_DRAWS, start)
        samples = np.empty((resamples, n))
        rng = np.random.default_rng(seed)
        used, ds_dense = np.unique(ds, return_inverse=True)
        for r in range(resamples):
            weight = rng.poisson(1.0, size=len(used))[ds_dense]
            again = np.bincount(cell, weights=w * weight, minlength=n * n).astype(float).reshape(
                n, n)
            samples[r] = fit_wins(again, rated, PRIOR_DRAWS, point)
        self._samples = samples
        for name in in_play:
            k = self.index.get(name)
            if k is None or not rated[k]:
                continue
            low, high = (np.nanquantile(samples[:, k], [0.025, 0.975]) if resamples
                         else (np.nan, np.nan))
            out[name] = Rating(round(float(point[k]), 1), _opt(low), _opt(high),
                               self.games.get(name, 0))
            self._last[name] = float(point[k])
        return out

    def order_held(self, order: Sequence[str]) -> float:
        """The share of the last fit's resamples that rank `order` so, best first (the
        confidence that these bots stand in this order)."""
        if self._samples is None or not len(self._samples) or any(
                self.index.get(n, len(self.names)) >= self._samples.shape[1] for n in order):
            return 0.0  # not fitted yet: nothing is sure
        cols = self._samples[:, [self.index[n] for n in order]]
        return float(np.mean(np.all(cols[:, :-1] > cols[:, 1:], axis=1)))

    def doubt(self, order: Sequence[str]) -> list[float]:
        """For each two neighbours of `order` (best first), the share of the last fit's
        resamples that put them the other way round: 0 when their order is sure, 1/2 when
        nothing tells them apart (1 for a bot not fitted yet)."""
        return [1.0 - self.order_held([a, b]) for a, b in itertools.pairwise(order)]


def _opt(x: float) -> float | None:
    return None if not np.isfinite(x) else round(float(x), 1)
