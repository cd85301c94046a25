"""Standings for any number of bots, fitted on all games at once: the same games give the
same standings whatever order they finished in and whatever order the bots were listed in.

The model. Each game at a table of k distinct bots is broken into its k(k-1)/2 pairs of
seats, each pair a Bradley-Terry comparison: the bot placed better wins it, equal places are
half a win each. Ratings are the maximum-likelihood strengths of these comparisons (choix's
I-LSR on the matrix of wins), with `prior_draws` virtual draws between every two rated bots
(as BayesElo's prior), so a bot that never lost still gets a finite rating.

Why pairs, not the Plackett-Luce likelihood of whole finishing orders:
- At two seats they are the same model. At more, Plackett-Luce implies that any two bots'
  relative order in a game follows Bradley-Terry with the same strengths (the other bots
  drop out of P(i before j)), so the pairwise fit estimates the Plackett-Luce strengths
  consistently (Azari Soufiani et al., "full rank breaking").
- Shared places need no invented order: Plackett-Luce has no place for a tie, and averaging
  over the orders of tied seats is t! orders for t tied seats (up to 14 in party mode).
- A rating gap reads as the head-to-head score the cross table shows for the same bots.
- The fit needs only the N x N matrix of wins, so 10,000 games cost no more than 100, and a
  bootstrap resample is a weighted sum of per-deal matrices.
Counting every pair of a game as if independent would overstate the evidence; the intervals
therefore come from a bootstrap over deals (all games of one deal, at every table, stay
together: they share their cards), not from the likelihood's curvature.

Ratings are on the Elo scale (400/ln 10 per unit of log-strength), mean 0 over the rated bots.
A bot is rated once it has a comparison with another bot; bots without (Solitaire: one seat,
or no games yet) are ranked after the rated ones by win rate, then mean score.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import choix
import numpy as np
from numpy.typing import NDArray

from .elo import DIGITS, finite
from .games import GameResult

ELO_PER_UNIT = 400 / math.log(10)  # Elo per unit of natural log-strength
RESAMPLES = 500
FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BotStanding:
    """One bot's row: its record, rating with 95% bootstrap interval, and how often the
    bootstrap kept it at its rank."""

    bot: str
    rank: int
    games: int
    wins: float  # a win shared by k seats counts 1/k
    mean_place: float
    mean_score: float
    rating: float | None = None  # None: no comparison with another bot
    rating_low: float | None = None
    rating_high: float | None = None
    rank_held: float | None = None  # share of bootstrap resamples with this bot at its place

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def to_json(self) -> dict[str, Any]:
        def opt(x: float | None) -> float | None:
            return None if x is None else finite(x)

        return {"rank": self.rank, "bot": self.bot, "games": self.games,
                "wins": finite(self.wins), "win_rate": finite(self.win_rate),
                "mean_place": finite(self.mean_place), "mean_score": finite(self.mean_score),
                "rating": opt(self.rating),
                "rating_ci95": [opt(self.rating_low), opt(self.rating_high)],
                "rank_held": opt(self.rank_held)}


@dataclass(frozen=True, slots=True)
class Standings:
    """Every bot ranked; how the figures were made (deals resampled, seed, prior)."""

    rows: tuple[BotStanding, ...]
    games: int
    deals: int
    resamples: int
    seed: int
    prior_draws: float

    def to_json(self) -> dict[str, Any]:
        return {"standings": [r.to_json() for r in self.rows], "games": self.games,
                "deals": self.deals, "resamples": self.resamples, "seed": self.seed,
                "prior_draws": self.prior_draws,
                "model": "bradley-terry on seat pairs, bootstrap over deals"}


def standings(games: Iterable[GameResult], bots: Iterable[str] = (), *,
              higher_is_better: bool = False, resamples: int = RESAMPLES, seed: int = 1,
              prior_draws: float = 1.0) -> Standings:
    """Rank every bot of `games` (and of `bots`, even without games).

    `higher_is_better` orders mean scores for bots ranked without a rating (Solitaire piles
    closed: True; penalty points: False). `resamples` bootstrap resamples of the deals, drawn
    from a generator seeded with `seed`, give the intervals and `rank_held`.
    """
    if resamples < 0 or prior_draws <= 0:
        raise ValueError("resamples must be >= 0 and prior_draws > 0")
    data = _Tally.of(sorted(games, key=lambda g: g.key), bots)
    rated = data.rated()
    point = _fit(data.wins_matrix(None), rated, prior_draws)
    order, ranks = _order(point, *data.records(None), data.names, higher_is_better)
    samples, held = _bootstrap(data, rated, prior_draws, point, order, higher_is_better,
                               resamples, seed)
    rows = tuple(_row(data, rank, place, i, point if rated[i] else None, samples, held)
                 for place, (rank, i) in enumerate(zip(ranks, order, strict=True)))
    return Standings(rows, data.games, len(data.deals), resamples, seed, prior_draws)


def _row(data: _Tally, rank: int, place: int, i: int, point: FloatArray | None,
         samples: FloatArray | None, held: FloatArray | None) -> BotStanding:
    games, wins, places, scores = data.totals()[:, i]
    per_game = 1 / games if games else 0.0
    rating = low = high = None
    if point is not None:
        # Rounded to the reported digits: bots with one record differ by float noise.
        rating = round(float(point[i]), DIGITS)
        if samples is not None:
            low, high = (round(float(x), DIGITS)
                         for x in np.quantile(samples[:, i], [0.025, 0.975]))
    return BotStanding(data.names[i], rank, int(games), float(wins), float(places * per_game),
                       float(scores * per_game), rating, low, high,
                       None if held is None else float(held[place]))


@dataclass(frozen=True, slots=True)
class _Tally:
    """Per deal and bot: games, wins, places and scores; per deal, the pairwise wins."""

    names: tuple[str, ...]
    deals: tuple[int, ...]
    games: int
    per_bot: FloatArray  # (deals, 4, bots): games, wins, place sum, score sum
    pairs: FloatArray  # (deals, bots, bots): [d, i, j] = i's wins over j in deal d

    @staticmethod
    def of(games: Sequence[GameResult], bots: Iterable[str]) -> _Tally:
        names = tuple(sorted({*bots, *(b for g in games for b in g.bots)}))
        deals = tuple(sorted({g.unit for g in games}))
        per_bot = np.zeros((len(deals), 4, len(names)))
        pairs = np.zeros((len(deals), len(names), len(names)))
        bot_at = {n: i for i, n in enumerate(names)}
        deal_at = {d: i for i, d in enumerate(deals)}
        by_seats: dict[int, list[GameResult]] = {}
        for g in games:
            by_seats.setdefault(len(g.bots), []).append(g)
        for k, group in sorted(by_seats.items()):
            d = np.array([deal_at[g.unit] for g in group])
            seat = np.array([[bot_at[b] for b in g.bots] for g in group])
            place = np.array([g.places for g in group], dtype=float)
            score = np.array([g.scores for g in group], dtype=float)
            first = place == 1
            share = first / np.maximum(first.sum(axis=1, keepdims=True), 1)
            for row, values in enumerate((np.ones_like(place), share, place, score)):
                rows = np.full_like(seat, row)
                np.add.at(per_bot, (d[:, None], rows, seat), values)
            rated = np.array([g.rated for g in group], dtype=float)
            beats = ((place[:, :, None] < place[:, None, :])
                     + 0.5 * (place[:, :, None] == place[:, None, :]) - 0.5 * np.eye(k))
            np.add.at(pairs, (d[:, None, None], seat[:, :, None], seat[:, None, :]),
                      beats * rated[:, None, None])
        return _Tally(names, deals, len(games), per_bot, pairs)

    def rated(self) -> NDArray[np.bool_]:
        total = self.pairs.sum(axis=0)
        rated: NDArray[np.bool_] = (total.sum(axis=0) + total.sum(axis=1)) > 0
        return rated

    def wins_matrix(self, weights: FloatArray | None) -> FloatArray:
        wins: FloatArray = (self.pairs.sum(axis=0) if weights is None
                            else np.tensordot(weights, self.pairs, axes=1))
        return wins

    def records(self, weights: FloatArray | None) -> tuple[FloatArray, FloatArray]:
        """Win rate and mean score per bot (0 for a bot without games)."""
        sums = self.per_bot.sum(axis=0) if weights is None else np.tensordot(
            weights, self.per_bot, axes=1)
        games = np.maximum(sums[0], 1)
        return sums[1] / games, sums[3] / games

    def totals(self) -> FloatArray:
        """Games, wins, place sum and score sum per bot (4 x bots)."""
        totals: FloatArray = self.per_bot.sum(axis=0)
        return totals


def _fit(wins: FloatArray, rated: NDArray[np.bool_], prior_draws: float,
         start: FloatArray | None = None) -> FloatArray:
    """Elo-scale ratings of the rated bots (NaN for the others), mean 0."""
    out = np.full(len(rated), np.nan)
    idx = np.flatnonzero(rated)
    if len(idx) == 0:
        return out
    if len(idx) == 1:
        out[idx] = 0.0
        return out
    sub = wins[np.ix_(idx, idx)] + prior_draws / 2 * (1 - np.eye(len(idx)))
    init = None if start is None else start[idx] / ELO_PER_UNIT
    theta = choix.ilsr_pairwise_dense(sub, alpha=0.0, initial_params=init, max_iter=10_000,
                                      tol=1e-12)
    out[idx] = (theta - theta.mean()) * ELO_PER_UNIT
    return out


def _order(ratings: FloatArray, win_rate: FloatArray, mean_score: FloatArray,
           names: Sequence[str], higher_is_better: bool) -> tuple[list[int], list[int]]:
    """Bot indices best first, and the rank of each place: rated bots by rating, then the
    others by win rate and mean score. Names only list exact ties, which share a rank
    (1, 1, 3): nothing a game showed tells such bots apart. Ratings are rounded so that
    rounding noise never decides between bots with the same record."""
    sign = -1.0 if higher_is_better else 1.0

    def key(i: int) -> tuple[Any, ...]:
        if math.isfinite(ratings[i]):
            return (0, -round(float(ratings[i]), 6), 0.0, 0.0)
        return (1, 0.0, -round(float(win_rate[i]), 9), sign * round(float(mean_score[i]), 9))

    order = sorted(range(len(names)), key=lambda i: (*key(i), names[i]))
    ranks: list[int] = []
    for place, i in enumerate(order):
        tied = place > 0 and key(i) == key(order[place - 1])
        ranks.append(ranks[-1] if tied else place + 1)
    return order, ranks


def _bootstrap(data: _Tally, rated: NDArray[np.bool_], prior_draws: float, point: FloatArray,
               order: list[int], higher_is_better: bool, resamples: int, seed: int
               ) -> tuple[FloatArray | None, FloatArray | None]:
    """Ratings per resample (resamples x bots) and, per rank, the share of resamples that
    put the same bot there."""
    if resamples == 0 or not data.deals:
        return None, None
    rng = np.random.default_rng(seed)
    n_deals = len(data.deals)
    weights = rng.multinomial(n_deals, np.full(n_deals, 1 / n_deals), size=resamples)
    samples = np.empty((resamples, len(data.names)))
    held = np.zeros(len(data.names))
    for r in range(resamples):
        w = weights[r].astype(float)
        samples[r] = _fit(data.wins_matrix(w), rated, prior_draws, point)
        again, _ = _order(samples[r], *data.records(w), data.names, higher_is_better)
        held += np.array(again) == np.array(order)
    return samples, held / resamples
