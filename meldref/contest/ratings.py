"""The ladder's ratings: the verdicts' order-free fit, fed deal set by deal set, fast at 200
bots and 200,000 games.

The model and the fit are the verdicts' own, one fit for everything the ladder shows and
matchmaking reads: Bradley-Terry on the seat pairs of every game, maximum likelihood wherever
it exists (`verdicts.strengths.fit_strengths`: no prior, but for a version peeled off for
never placing above, or below, the rest), the cluster-robust covariance with each deal set a
cluster (`verdicts.ratings.Spread`), the Elo scale with zero at the median version. On the
same games the ladder's ratings and printed intervals are the tournament's
(tests/test_contest.py and tests/test_contest_intervals.py check it). What differs is only
how the counts are kept: `verdicts.ratings.standings` tallies an array of (deals x bots x
bots), at 200 bots and the ~17,000 deal sets of 200,000 four-seat games 5 GB; here each
finished deal set adds its few pair counts to flat arrays (one entry per ordered pair of its
table), kept by the run from one deal set to the next, so a refresh never reads the games
again.

Matchmaking reads the same fit: the doubt about two versions' order and the spread of their
difference come from the covariance (`doubt`, `spread`), and a version too new for a printed
interval gets the normal range of its rating (`Rating.resampled`); `order_held` counts
seeded draws of the fit's normal approximation, as the tournament's rank figures do
(`verdicts.ranks`). Before (issue 44), these read a Poisson bootstrap whose every resample
was refitted with one virtual draw between every two versions, while the point had none:
two fits of one ladder.
`bench/bench_contest.py` measures a refresh.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from numpy.typing import NDArray
from scipy.sparse.csgraph import connected_components

from ..verdicts.elo import Z95
from ..verdicts.games import GameResult
from ..verdicts.ranks import median_variance
from ..verdicts.ratings import ELO_PER_UNIT, Spread, median_weights
from ..verdicts.strengths import fit_strengths
from .ranking import Rating

RESAMPLES: Final = 200  # draws for `order_held`
PRIOR_DRAWS: Final = 1.0  # the verdicts' default, for peeled versions only
FloatArray = NDArray[np.float64]


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
    _fitted: _Fitted | None = None  # the last fit

    def _at(self, name: str) -> int:
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
        return self.index[name]

    def add_deal_set(self, games: Iterable[GameResult]) -> None:
        """One finished deal set's games: each game's seat pairs, the better place a win,
        equal places half a win each (the verdicts' rule)."""
        counts: dict[tuple[int, int], float] = {}
        for game in games:
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
        """Ratings of `in_play` from the deal sets among them, with their 95% intervals; the
        fit (and its covariance) kept for `doubt`, `spread` and `order_held`."""
        n = len(self.names)
        out = {name: Rating(None, None, None, self.games.get(name, 0)) for name in in_play}
        self._fitted = None
        playing = np.zeros(n, dtype=bool)
        for name in in_play:
            if name in self.index:
                playing[self.index[name]] = True
        ds, i, j, w = (np.asarray(a) for a in (self._ds, self._i, self._j, self._w))
        keep = playing[i] & playing[j] if len(i) else np.zeros(0, dtype=bool)
        ds, i, j, w = ds[keep], i[keep], j[keep], w[keep].astype(float)
        if not len(w):
            return out
        wins = np.bincount(i * n + j, weights=w, minlength=n * n).astype(float).reshape(n, n)
        rated = (wins.sum(axis=0) + wins.sum(axis=1)) > 0
        # The verdicts' fit: maximum likelihood where it exists, the prior only for a
        # version peeled off (never placed above, or below, the rest), and its covariance.
        theta = fit_strengths(wins, rated, PRIOR_DRAWS).theta
        spread = Spread.of_counts(ds, i, j, w, rated, theta, PRIOR_DRAWS)
        # The verdicts' scale: zero at the median version (`verdicts.ratings.median_weights`),
        # so the ladder's figures are the tournament's, and one hopeless version moves none.
        weights = median_weights(np.nan_to_num(theta), rated)
        point = (theta - float(np.sum(weights * np.nan_to_num(theta)))) * ELO_PER_UNIT
        fitted = _Fitted.of(point, spread, weights, self._draws(point, spread, resamples, seed))
        median_var = median_variance(theta, spread.cov, spread.rated, seed=seed)
        self._fitted = fitted
        for name in in_play:
            k = self.index.get(name)
            if k is None or not rated[k]:
                continue
            half = Z95 * math.sqrt(fitted.variance([k], [1.0]))
            # Printed: the verdicts' interval, counted in the version's own deal sets.
            shown_low, shown_high, why = spread.interval(k, point, weights, "deal set",
                                                         median_var)
            out[name] = Rating(round(float(point[k]), 1), shown_low, shown_high,
                               self.games.get(name, 0), why,
                               (_opt(point[k] - half), _opt(point[k] + half)))
        return out

    @staticmethod
    def _draws(point: FloatArray, spread: Spread, draws: int, seed: int) -> FloatArray:
        """`draws` seeded draws of the rated versions' ratings (Elo, NaN for the others)
        from the fit's normal approximation: the tournament's rank figures read the same
        (`verdicts.ranks`)."""
        out = np.full((draws, len(point)), np.nan)
        if draws and len(spread.rated):
            rng = np.random.default_rng(seed)
            cov = spread.cov * ELO_PER_UNIT ** 2
            out[:, spread.rated] = rng.multivariate_normal(
                point[spread.rated], cov, size=draws, method="eigh", check_valid="ignore")
        return out

    def order_held(self, order: Sequence[str]) -> float:
        """The share of the last fit's draws that rank `order` so, best first (the
        confidence that these bots stand in this order)."""
        got = self._fitted_at(*order)
        if got is None:
            return 0.0  # not fitted yet: nothing is sure
        cols = got[0].draws[:, got[1]]
        if not len(cols):
            return 0.0
        return float(np.mean(np.all(cols[:, :-1] > cols[:, 1:], axis=1)))

    def doubt(self, order: Sequence[str], apart: int = 1) -> list[float]:
        """For each two versions `apart` places apart in `order` (best first; 1: the
        neighbours), how likely the last fit makes it that they stand the other way round:
        P(difference < 0) under the normal law of the fit's rating difference (its
        cluster-robust variance). 0 when their order is sure, 1/2 when nothing tells them
        apart, 1 for a bot not fitted yet. Entry i is about `order[i]` and `order[i + apart]`.
        """
        if apart < 1:
            raise ValueError(f"apart: at least 1, not {apart}")
        return [self._doubt(order[k], order[k + apart]) for k in range(len(order) - apart)]

    def spread(self, order: Sequence[str], apart: int = 1) -> list[float]:
        """For each two versions `apart` places apart in `order`, how little the games have
        measured their difference, whatever it came out as: the standard deviation (Elo) it
        would have if every comparison were an even one (`_Fitted.measured`), inf for a bot
        not fitted yet. Read from who met whom how often, never from who won: matchmaking
        that chose by the results would stop a pair's games once its luck had pulled it
        apart (bench/bench_matchmaking.py)."""
        if apart < 1:
            raise ValueError(f"apart: at least 1, not {apart}")
        return [self._sd(order[k], order[k + apart]) for k in range(len(order) - apart)]

    def _fitted_at(self, *names: str) -> tuple[_Fitted, list[int]] | None:
        """The last fit and the bots' places in it; None if there is no fit or a bot came
        after it (its games added since: it has no place in the fit's arrays yet)."""
        fitted = self._fitted
        keys = [self.index.get(name) for name in names]
        if fitted is None or any(k is None or k >= len(fitted.point) for k in keys):
            return None
        return fitted, [k for k in keys if k is not None]

    def _pair(self, a: str, b: str) -> tuple[float, float] | None:
        """The difference a - b and its standard deviation, None if either is not rated."""
        got = self._fitted_at(a, b)
        if got is None:
            return None
        fitted, (ka, kb) = got
        if not (np.isfinite(fitted.point[ka]) and np.isfinite(fitted.point[kb])):
            return None
        diff = float(fitted.point[ka] - fitted.point[kb])
        return diff, math.sqrt(max(fitted.variance([ka, kb], [1.0, -1.0]), 0.0))

    def _doubt(self, a: str, b: str) -> float:
        got = self._pair(a, b)
        if got is None:
            return 1.0
        diff, sd = got
        if sd == 0.0:
            return 0.5 if diff == 0 else float(diff < 0)
        return 0.5 * math.erfc(diff / sd / math.sqrt(2))

    def _sd(self, a: str, b: str) -> float:
        got = self._fitted_at(a, b)
        return math.inf if got is None else got[0].measured(*got[1])


@dataclass(frozen=True, slots=True)
class _Fitted:
    """One fit of the ladder: the ratings (Elo, anchored; NaN: not rated), the verdicts'
    covariance on the rated (`Spread`, log-strength), the anchor's weights and the draws."""

    point: FloatArray
    spread: Spread
    weights: FloatArray
    draws: FloatArray
    resistance: FloatArray  # (bots, bots): the comparisons' Laplacian's pseudo-inverse
    component: NDArray[np.intp]  # per bot: its linked group in that graph (-1: not rated)

    @staticmethod
    def of(point: FloatArray, spread: Spread, weights: FloatArray, draws: FloatArray
           ) -> _Fitted:
        """The fit, with the graph of who compared with whom how often (for `measured`)."""
        rated, n = spread.rated, len(point)
        sub = spread.comparisons[np.ix_(rated, rated)]
        resistance = np.zeros((n, n))
        resistance[np.ix_(rated, rated)] = np.linalg.pinv(np.diag(sub.sum(axis=1)) - sub)
        component = np.full(n, -1, dtype=np.intp)
        component[rated] = connected_components(sub > 0, directed=False)[1]
        return _Fitted(point, spread, weights, draws, resistance, component)

    def measured(self, a: int, b: int) -> float:
        """The standard deviation (Elo) of bot a's rating less bot b's if every comparison
        between the bots were an even one (a chance of 1/2 each): the effective resistance
        between them in the graph of their comparisons, times 4, under the root. It depends
        on the counts of comparisons alone (inf: the two never linked by any)."""
        if not (self.component[a] >= 0 and self.component[a] == self.component[b]):
            return math.inf
        resistance = (self.resistance[a, a] + self.resistance[b, b]
                      - 2 * self.resistance[a, b])
        return math.sqrt(max(4 * float(resistance), 0.0)) * ELO_PER_UNIT

    def variance(self, bots: Sequence[int], coefficients: Sequence[float]) -> float:
        """The variance (Elo^2) of sum c x rating (anchored) over `bots`."""
        rated = self.spread.rated
        c = np.zeros(len(self.point))
        for bot, coefficient in zip(bots, coefficients, strict=True):
            c[bot] += coefficient
        c = c - float(np.sum(c)) * self.weights  # the anchor moves with every version
        inner = c[rated]
        return max(float(inner @ self.spread.cov @ inner), 0.0) * ELO_PER_UNIT ** 2


def _opt(x: float) -> float | None:
    return None if not np.isfinite(x) else round(float(x), 1)
