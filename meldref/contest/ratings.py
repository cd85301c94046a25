"""The ladder's ratings: the verdicts' order-free fit, fed deal set by deal set, fast at 200
bots and 200,000 games.

The model is the verdicts' own (`meldref.verdicts.ratings`: Bradley-Terry on the seat pairs of
every game, `prior_draws` virtual draws between rated bots, the Elo scale, zero at the
median version), so on the same games the ladder's ratings are the tournament's
(tests/test_contest.py checks it). Three things differ, all in how the figures are computed,
none in what they are:
- `verdicts.ratings.standings` tallies an array of (deals x bots x bots): at 200 bots and the
  ~17,000 deal sets of 200,000 four-seat games that is 5 GB. Here each finished deal set adds
  its few pair counts to flat arrays (one entry per ordered pair of its table), kept by the run
  from one deal set to the next (incremental), so a refresh never reads the games again.
- The intervals are a bootstrap over deal sets as there (a deal set's games share their
  cards), drawn as a Poisson bootstrap (each deal set weighted by a Poisson(1) count: the
  multinomial's limit, and computable on the flat arrays without materialising the deals),
  every resample's fit warm-started from the point fit.
- The maximum is found by Newton's method, batched over resamples (`newton_fit`), not by
  choix's I-LSR: the same maximum, reached in a few steps from a warm start.
`bench/bench_contest.py` measures a refresh.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from ..verdicts.games import GameResult
from ..verdicts.ratings import ELO_PER_UNIT, Spread, median_weights
from ..verdicts.strengths import fit_strengths
from .ranking import Rating

RESAMPLES: Final = 200
PRIOR_DRAWS: Final = 1.0  # the verdicts' default (`verdicts.ratings.standings`)
CHUNK: Final = 25  # resamples fitted at once (25 x 200 x 200 floats: 8 MB a matrix)
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
        idx = np.flatnonzero(rated)
        # The verdicts' point: maximum likelihood where it exists, the prior where not.
        point = fit_strengths(wins, rated, PRIOR_DRAWS).theta * ELO_PER_UNIT
        samples = np.full((resamples, n), np.nan)
        rng = np.random.default_rng(seed)
        used, ds_dense = np.unique(ds, return_inverse=True)
        for first in range(0, resamples, CHUNK):
            count = min(CHUNK, resamples - first)
            batch = np.empty((count, len(idx), len(idx)))
            for r in range(count):
                weight = rng.poisson(1.0, size=len(used))[ds_dense]
                again = np.bincount(cell, weights=w * weight, minlength=n * n).astype(float)
                batch[r] = again.reshape(n, n)[np.ix_(idx, idx)]
            samples[first:first + count, idx] = newton_fit(batch, point[idx] / ELO_PER_UNIT,
                                                           chord=wins[np.ix_(idx, idx)])
        # The verdicts' scale: zero at the median version (`verdicts.ratings.median_weights`),
        # so the ladder's figures are the tournament's, and one hopeless version moves none.
        weights = median_weights(np.nan_to_num(point), rated)
        spread = Spread.of_counts(ds, i, j, w, rated, point / ELO_PER_UNIT, PRIOR_DRAWS)
        point = point - float(np.sum(weights * np.nan_to_num(point)))
        samples = samples - np.sum(weights * np.nan_to_num(samples), axis=1, keepdims=True)
        self._samples = samples
        for name in in_play:
            k = self.index.get(name)
            if k is None or not rated[k]:
                continue
            low, high = (np.nanquantile(samples[:, k], [0.025, 0.975]) if resamples
                         else (np.nan, np.nan))
            # Printed: the verdicts' interval, counted in the version's own deal sets.
            shown_low, shown_high, why = spread.interval(k, point, weights, unit="deal set")
            out[name] = Rating(round(float(point[k]), 1), shown_low, shown_high,
                               self.games.get(name, 0), why, (_opt(low), _opt(high)))
        return out

    def order_held(self, order: Sequence[str]) -> float:
        """The share of the last fit's resamples that rank `order` so, best first (the
        confidence that these bots stand in this order)."""
        cols = self._columns(order)
        if cols is None:
            return 0.0  # not fitted yet: nothing is sure
        return float(np.mean(np.all(cols[:, :-1] > cols[:, 1:], axis=1)))

    def doubt(self, order: Sequence[str], apart: int = 1) -> list[float]:
        """For each two versions `apart` places apart in `order` (best first; 1: the
        neighbours), how likely the last fit's resamples make it that they stand the other
        way round: P(difference < 0) under a normal law with the resamples' mean and spread
        of their rating difference. 0 when their order is sure, 1/2 when nothing tells them
        apart, 1 for a bot not fitted yet. Entry i is about `order[i]` and `order[i + apart]`.
        Read from the spread rather than counted (the share of resamples that flip): a count
        of 200 resamples says 0 for every pair past 99.5%, and cannot tell the pairs still
        short of sure from those long past it. Matchmaking's settling step reads the doubts
        two places apart too (a new version may stand one place off its true place)."""
        if apart < 1:
            raise ValueError(f"apart: at least 1, not {apart}")
        return [self._doubt(order[k], order[k + apart]) for k in range(len(order) - apart)]

    def _doubt(self, a: str, b: str) -> float:
        cols = self._columns([a, b])
        if cols is None:
            return 1.0
        diff = cols[:, 0] - cols[:, 1]
        diff = diff[np.isfinite(diff)]
        spread = float(np.std(diff)) if len(diff) > 1 else 0.0
        if spread == 0.0:
            return (0.5 if not len(diff) or float(np.mean(diff)) == 0 else
                    float(np.mean(diff) < 0))
        return 0.5 * math.erfc(float(np.mean(diff)) / spread / math.sqrt(2))

    def _columns(self, names: Sequence[str]) -> Any:
        if self._samples is None or not len(self._samples) or any(
                self.index.get(n, len(self.names)) >= self._samples.shape[1] for n in names):
            return None
        return self._samples[:, [self.index[n] for n in names]]


def newton_fit(wins: FloatArray, start: FloatArray, prior_draws: float = PRIOR_DRAWS,
               tol: float = 1e-9, max_iter: int = 100, chord: FloatArray | None = None
               ) -> FloatArray:
    """Elo-scale Bradley-Terry ratings (mean 0) of a batch of wins matrices (batch x m x
    m: [b, i, j] = i's wins over j), each with `prior_draws` virtual draws between every two
    bots: the verdicts' model and prior, so the same maximum as `verdicts.ratings`' fit
    (choix's I-LSR), found by Newton's method on the log-likelihood, the whole batch at
    once. Why Newton: from a warm start (the previous fit, the point fit for the resamples)
    it converges in a few steps, each one linear solve; at 200 bots I-LSR needs seconds per
    fit, and a refresh makes 200 of them.

    The log-likelihood is concave and flat only along adding a constant to every strength:
    the Laplacian system is solved with that direction pinned (+ 1 1^T / m), and the
    strengths re-centred at mean 0 after each step; steps are capped at 2 units (a cold
    start far from the maximum).

    With `chord` (the wins the start was fitted on: the bootstrap's resamples), every step
    uses that one fit's Hessian, inverted once, instead of each resample's own (the chord
    method): it converges to the same maximum, in a few more steps that cost a matrix
    product each instead of a solve per resample. Its convergence is linear, at a rate set by
    how far the resamples' Hessians are from that one: where a step is not at most half the
    one before (few games a bot: a resample that drops a bot's only deal sets changes its
    Hessian entirely; the rate was 0.95 at 200 bots and 2,000 games, 100 steps without
    settling), the batch goes on from there with full Newton steps."""
    batch, m = wins.shape[0], wins.shape[1]
    if m == 0:
        return np.zeros((batch, 0))
    if m == 1:
        return np.zeros((batch, 1))
    a = wins + prior_draws / 2 * (1 - np.eye(m))
    games = a + a.transpose(0, 2, 1)
    won = a.sum(axis=2)
    theta = np.broadcast_to(start - start.mean(), (batch, m)).copy()
    pin = np.ones((m, m)) / m
    if chord is not None:
        fixed = _laplacian(chord[None] + prior_draws / 2 * (1 - np.eye(m)), theta[:1])[0]
        inverse = np.linalg.inv(fixed + pin)
        last = math.inf
        for _ in range(max_iter):
            p = 1 / (1 + np.exp(theta[:, None, :] - theta[:, :, None]))
            step = (won - (games * p).sum(axis=2)) @ inverse.T
            theta += np.clip(step, -2.0, 2.0)
            theta -= theta.mean(axis=1, keepdims=True)
            size = float(np.max(np.abs(step)))
            if size < tol:
                out: FloatArray = theta * ELO_PER_UNIT
                return out
            if size > last / 2:  # slow: full Newton steps from here (see above)
                break
            last = size
    for _ in range(max_iter):
        p = 1 / (1 + np.exp(theta[:, None, :] - theta[:, :, None]))  # P(i beats j)
        grad = won - (games * p).sum(axis=2)
        step = np.linalg.solve(_laplacian(a, theta) + pin, grad[..., None])[..., 0]
        step = np.clip(step, -2.0, 2.0)
        theta += step
        theta -= theta.mean(axis=1, keepdims=True)
        if np.max(np.abs(step)) < tol:
            break
    result: FloatArray = theta * ELO_PER_UNIT
    return result


def _laplacian(a: FloatArray, theta: FloatArray) -> FloatArray:
    """Minus the log-likelihood's Hessian at `theta` (batch x m x m), for the wins with
    their virtual draws `a`."""
    m = a.shape[1]
    p = 1 / (1 + np.exp(theta[:, None, :] - theta[:, :, None]))
    weight = (a + a.transpose(0, 2, 1)) * p * (1 - p)
    out: FloatArray = -weight
    out[:, np.arange(m), np.arange(m)] = weight.sum(axis=2)
    return out


def _opt(x: float) -> float | None:
    return None if not np.isfinite(x) else round(float(x), 1)
