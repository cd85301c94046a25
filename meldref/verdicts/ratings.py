"""Standings for any number of bots, fitted on all games at once: the same games give the
same standings whatever order they finished in and whatever order the bots were listed in.

The model. Each game at a table of k distinct bots is broken into its k(k-1)/2 pairs of
seats, each pair a Bradley-Terry comparison: the bot placed better wins it, equal places are
half a win each. Ratings are the maximum-likelihood strengths of these comparisons wherever
that maximum exists, with no prior; bots that never placed above (or below) the rest are
peeled off and get the prior's rating (`prior_draws` virtual draws, as BayesElo's) and a
one-sided bound (`strengths`: the prior pulled every rating to the middle, and the interval
ignored the pull).

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
Counting every pair of a game as if independent would overstate the evidence. The intervals
therefore come from the cluster-robust ("sandwich") variance of the fit with the deal as the
cluster (all games of one deal share their cards): H^-1 (sum over deals of g g^T) H^-1, g a
deal's centred score vector and H the information of the fit, times n/(n-1) for n deals, and
Student's t with the bot's own deals less one as degrees of freedom. Counted per bot: there
is no interval for a bot with fewer than `MIN_UNITS` deals (a field of many bots has many
deals, but a bot's variance rests on its own: 2 games a pair gave every bot an interval),
and the reason says so. A bot that placed above another bot in fewer than `MIN_SIDE` of its
deals (or below) gets only a one-sided bound, from the exact binomial argument: if it placed
above a bot in x of its n deals, its chance to do so in a deal, at least its chance to win
any one comparison, is below the Clopper-Pearson bound at 97.5% (1 - 0.025^(1/n) at x = 0),
read as Elo above the mean rating of the bots it met. (A two-sided interval once it had won
a comparison or two covered 44-75%, centred on the prior.)

Ratings are on the Elo scale (400/ln 10 per unit of log-strength), anchored at the median of
the rated bots (the middle bot, or the mean of the two middle ones: a hopeless bot moves the
median by at most one place, where it moved a mean-zero scale by about 200 Elo), or at a
named bot (`anchor`). The anchor's own rating is 0 by definition and has no interval.
The rank figures (`rank_held`, `p_first`, `p_top`, the 95% rank interval) come from 2,000
seeded draws of the fitted ratings' normal approximation (`ranks`), ranks counted with ties
shared, bots that the fit cannot tell apart pooled, so no name decides anything.
A bot is rated once it has a comparison with another bot; bots without (Solitaire: one seat,
or no games yet) are ranked after the rated ones by win rate, then mean score, without a rank
confidence.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.special import betaincinv

from ..engine.game import JSON
from .elo import DIGITS, elo_from_score, finite, t95
from .games import GameResult
from .margins import MarginFit
from .ranks import RankFigures, median_variance, rank_figures
from .strengths import NO_MAXIMUM, fit_strengths, peel, strongly_connected

ELO_PER_UNIT = 400 / math.log(10)  # Elo per unit of natural log-strength
RESAMPLES = 2000  # draws for rank_held
MIN_UNITS = 10  # a bot's deals below which its rating gets no interval
MIN_SIDE = 5  # deals with a comparison won (and lost) below which a bot gets a bound only
TOP_K = 3  # the k of "in the top k"
FloatArray = NDArray[np.float64]
RankBy = Literal["places", "margin"]


@dataclass(frozen=True, slots=True)
class BotStanding:
    """One bot's row: its record, rating with 95% interval (or a one-sided bound, or none,
    with the reason), and how often it kept its rank."""

    bot: str
    rank: int
    games: int
    wins: float  # a win shared by k seats counts 1/k
    mean_place: float
    mean_score: float
    rating: float | None = None  # None: no comparison with another bot
    rating_low: float | None = None
    rating_high: float | None = None
    rank_held: float | None = None  # share of draws with this bot at its rank
    no_interval: str | None = None  # why the interval is missing or one-sided
    margin: float | None = None  # mean score margin per game over the median bot
    margin_low: float | None = None
    margin_high: float | None = None
    p_first: float | None = None  # share of draws with this bot first (ties shared)
    p_top: float | None = None  # share of draws with this bot in the top `Standings.top_k`
    rank_low: int | None = None  # 95% rank interval: the 2.5% and 97.5% points of its rank
    rank_high: int | None = None

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def to_json(self) -> dict[str, JSON]:
        def opt(x: float | None) -> float | None:
            return None if x is None else finite(x)

        return {"rank": self.rank, "bot": self.bot, "games": self.games,
                "wins": finite(self.wins), "win_rate": finite(self.win_rate),
                "mean_place": finite(self.mean_place), "mean_score": finite(self.mean_score),
                "rating": opt(self.rating),
                "rating_ci95": [opt(self.rating_low), opt(self.rating_high)],
                "rank_held": opt(self.rank_held), "no_interval": self.no_interval,
                "margin": opt(self.margin),
                "margin_ci95": [opt(self.margin_low), opt(self.margin_high)],
                "p_first": opt(self.p_first), "p_top": opt(self.p_top),
                "rank_ci95": [self.rank_low, self.rank_high]}


@dataclass(frozen=True, slots=True)
class Standings:
    """Every bot ranked; how the figures were made (deals, draws, seed, prior, anchor)."""

    rows: tuple[BotStanding, ...]
    games: int
    deals: int
    resamples: int
    seed: int
    prior_draws: float
    anchor: str = "median"  # "median", or the name of the bot rated 0
    rank_by: RankBy = "places"
    top_k: int = 3  # the k of `BotStanding.p_top`

    def to_json(self) -> dict[str, JSON]:
        return {"standings": [r.to_json() for r in self.rows], "games": self.games,
                "deals": self.deals, "resamples": self.resamples, "seed": self.seed,
                "prior_draws": self.prior_draws, "anchor": self.anchor,
                "rank_by": self.rank_by, "top_k": self.top_k,
                "min_deals_for_an_interval": MIN_UNITS,
                "min_deals_each_way_for_two_sides": MIN_SIDE,
                "model": "bradley-terry on seat pairs, maximum likelihood where it exists, "
                         "cluster-robust variance over deals, student t per bot"}


def standings(games: Iterable[GameResult], bots: Iterable[str] = (), *,
              higher_is_better: bool = False, resamples: int = RESAMPLES, seed: int = 1,
              prior_draws: float = 1.0, anchor: str | None = None,
              rank_by: RankBy = "places", top_k: int = TOP_K) -> Standings:
    """Rank every bot of `games` (and of `bots`, even without games).

    `higher_is_better` orders mean scores for bots ranked without a rating (Solitaire piles
    closed: True; penalty points: False). `resamples` draws from the ratings' normal
    approximation, from a generator seeded with `seed`, give `rank_held`. The scale's zero is
    the median rated bot, or `anchor` (a bot's name) when given and rated. `rank_by`
    "places" ranks by rating (who placed above whom), "margin" by the mean score margin.
    `top_k`: the k of each bot's chance to stand in the top k (`BotStanding.p_top`).
    """
    if resamples < 0 or prior_draws <= 0 or top_k < 1:
        raise ValueError("resamples must be >= 0, prior_draws > 0 and top_k >= 1")
    if rank_by not in ("places", "margin"):
        raise ValueError(f"rank_by: places or margin, not {rank_by!r}")
    data = _Tally.of(sorted(games, key=lambda g: g.key), bots, higher_is_better)
    rated = data.rated()
    theta = fit_strengths(data.wins_matrix(None), rated, prior_draws).theta
    if anchor is not None and anchor in data.names and rated[data.names.index(anchor)]:
        weights = np.zeros(len(data.names))
        weights[data.names.index(anchor)] = 1.0
    else:
        anchor, weights = None, median_weights(theta, rated)
    point = _anchored(theta, weights, rated) * ELO_PER_UNIT
    fit = Spread.of(data, rated, theta, prior_draws)
    median_var = None if anchor else median_variance(theta, fit.cov, fit.rated, seed=seed)
    margins = MarginFit.of(data.pairs + data.pairs.transpose(0, 2, 1), data.margins, rated)
    by_margin = rank_by == "margin"
    margin_weights = weights if anchor else median_weights(margins.value, rated)
    margin = _anchored(margins.value, margin_weights, rated)
    order, ranks = _order(margin if by_margin else point, *data.records(None), data.names,
                          higher_is_better)
    figures = None
    if fit.why is None:
        ranked, cov = (margins.value, margins.cov) if by_margin else (theta, fit.cov)
        figures = rank_figures(ranked, cov, fit.rated, resamples, seed, top_k)
    rows = []
    for rank, i in zip(ranks, order, strict=True):
        value, low, high = _margin_cells(i, margin, margin_weights, margins, fit)
        rows.append(dataclasses.replace(_row(data, rank, i, point, weights, fit, figures,
                                             median_var),
                                        margin=value, margin_low=low, margin_high=high))
    return Standings(tuple(rows), data.games, len(data.deals), resamples, seed, prior_draws,
                     anchor or "median", rank_by, top_k)


def _anchored(values: FloatArray, weights: FloatArray, rated: NDArray[np.bool_]
              ) -> FloatArray:
    out: FloatArray = values - float(np.sum(weights * np.nan_to_num(values)))
    out[~rated] = np.nan
    return out


def _margin_cells(i: int, margin: FloatArray, weights: FloatArray, fit: MarginFit,
                  spread: Spread) -> tuple[float | None, float | None, float | None]:
    """Bot i's margin and its 95% interval (None where the ratings have none)."""
    if not math.isfinite(margin[i]):
        return None, None, None
    value = round(float(margin[i]), DIGITS)
    c = -weights[fit.rated]
    c[np.flatnonzero(fit.rated == i)] += 1.0
    var = float(c @ fit.cov @ c)
    units = int(spread.deals_of[i])
    if too_few(units, "deal") is not None or spread.no_maximum or not var > 0:
        return value, None, None
    half = t95(units) * math.sqrt(var)
    return value, round(value - half, DIGITS), round(value + half, DIGITS)


def median_weights(theta: FloatArray, rated: NDArray[np.bool_]) -> FloatArray:
    """Weights over bots whose weighted mean is the median rating: the middle bot (or the
    two middle ones, half each), shared among bots of equal rating, so no name picks it."""
    weights = np.zeros(len(theta))
    idx = np.flatnonzero(rated)
    if len(idx) == 0:
        return weights
    values = np.sort(np.round(theta[idx], 9))
    n = len(values)
    middles = [values[n // 2]] if n % 2 else [values[n // 2 - 1], values[n // 2]]
    for value in middles:
        tied = idx[np.round(theta[idx], 9) == value]
        weights[tied] += 1 / (len(middles) * len(tied))
    return weights


def _row(data: _Tally, rank: int, i: int, point: FloatArray, weights: FloatArray,
         fit: Spread, figures: RankFigures | None, median_var: FloatArray | None
         ) -> BotStanding:
    games, wins, places, scores = data.totals()[:, i]
    per_game = 1 / games if games else 0.0
    rating = low = high = None
    why: str | None = None
    if math.isfinite(point[i]):
        # Rounded to the reported digits: bots with one record differ by float noise.
        rating = round(float(point[i]), DIGITS)
        low, high, why = fit.interval(i, point, weights, median_var=median_var)
    row = BotStanding(data.names[i], rank, int(games), float(wins), float(places * per_game),
                      float(scores * per_game), rating, low, high, None, why)
    if figures is None or rating is None:
        return row
    return dataclasses.replace(row, rank_held=float(figures.held[i]),
                               p_first=float(figures.first[i]), p_top=float(figures.top[i]),
                               rank_low=int(figures.low[i]), rank_high=int(figures.high[i]))


def too_few(units: int, unit: str) -> str | None:
    """Why there is no rating interval on `units` deals (or deal sets): None if enough."""
    if units < MIN_UNITS:
        return (f"{units} {unit}{'s' if units != 1 else ''}: a rating interval needs "
                f"{MIN_UNITS} or more")
    return None


@dataclass(frozen=True, slots=True)
class Spread:
    """The fit's cluster-robust covariance (deals as clusters) on the rated bots, and what a
    bot's record allows: a two-sided interval, a one-sided bound, or none (`why`)."""

    rated: NDArray[np.intp]  # indexes of the rated bots
    cov: FloatArray  # (rated, rated), natural log-strength units
    units: int  # deals with a rated comparison
    comparisons: FloatArray  # (bots, bots): comparisons between i and j (prior aside)
    won: FloatArray  # per bot: comparisons won (halves for shared places)
    deals_of: FloatArray  # per bot: deals in which it had a comparison
    deals_won: FloatArray  # per bot: deals in which it placed above (or with) another bot
    deals_lost: FloatArray  # per bot: deals in which it placed below (or with) another bot
    side: NDArray[np.int_]  # per bot: 0 in the maximum-likelihood core, else peeled (strengths)
    no_maximum: bool  # the field's likelihood has no maximum: no interval for anyone

    @property
    def why(self) -> str | None:
        """Why the field gets no rank figures: a rated bot with too few deals, or no
        maximum of the likelihood; None when every rated bot has enough."""
        if self.no_maximum:
            return NO_MAXIMUM
        if len(self.rated) == 0:
            return too_few(0, "deal")
        return too_few(int(self.deals_of[self.rated].min()), "deal")

    @staticmethod
    def of(data: _Tally, rated: NDArray[np.bool_], theta: FloatArray,
           prior_draws: float) -> Spread:
        deal, i, j = np.nonzero(data.pairs)
        return Spread.of_counts(deal, i, j, data.pairs[deal, i, j], rated, theta, prior_draws)

    @staticmethod
    def of_counts(deal: NDArray[np.intp], i: NDArray[np.intp], j: NDArray[np.intp],
                  w: FloatArray, rated: NDArray[np.bool_], theta: FloatArray,
                  prior_draws: float) -> Spread:
        """From flat counts (entry e: bot i[e]'s wins w[e] over bot j[e] in deal deal[e]),
        so a caller with thousands of deals (the contest ladder) never holds a deals x bots x
        bots array. `theta`: the fit's log-strengths (NaN for bots not rated). The prior's
        virtual draws enter the information only on pairs with a peeled bot (or everywhere
        when the field has no maximum), as they enter the fit (`strengths`)."""
        n = len(rated)
        total = np.bincount(i * n + j, weights=w, minlength=n * n).astype(float).reshape(n, n)
        won = total.sum(axis=1)
        comparisons = total + total.T
        seen = np.unique(np.concatenate([deal * n + i, deal * n + j]))
        deals_of = np.bincount(seen % n, minlength=n).astype(float)
        positive = w > 0
        deals_won = np.bincount(np.unique(deal[positive] * n + i[positive]) % n,
                                minlength=n).astype(float)
        deals_lost = np.bincount(np.unique(deal[positive] * n + j[positive]) % n,
                                 minlength=n).astype(float)
        side = peel(total, rated)
        core = rated & (side == 0)
        no_maximum = bool(core.sum() >= 2 and not strongly_connected(total[np.ix_(core, core)]))
        idx = np.flatnonzero(rated)
        pos = np.full(n, -1)
        pos[idx] = np.arange(len(idx))
        inside = (pos[i] >= 0) & (pos[j] >= 0)
        used, unit = np.unique(deal[inside], return_inverse=True)
        units = len(used)
        cov = np.zeros((len(idx), len(idx)))
        if len(idx) >= 2 and units >= 2:
            a_, b_, wins = pos[i[inside]], pos[j[inside]], w[inside]
            t = theta[idx]
            p = 1 / (1 + np.exp(-(t[:, None] - t[None, :])))  # p[i, j]: i beats j
            # A deal's score vector: d/dtheta_k of sum w_ij log p_ij.
            share = wins * (1 - p[a_, b_])
            m_ = len(idx)
            g = (np.bincount(unit * m_ + a_, weights=share, minlength=units * m_)
                 - np.bincount(unit * m_ + b_, weights=share, minlength=units * m_)
                 ).reshape(units, m_)
            g -= g.mean(axis=0)
            meat = g.T @ g * units / (units - 1)
            # `not`, never `~`, on the Python bool: ~False is -1, and -1 & True made
            # every core pair carry minus one virtual draw (issue 44: intervals 1.5x
            # too wide at 6 games a pair).
            inner = core[idx] & (not no_maximum)
            prior = prior_draws / 2 * (1 - np.eye(m_)) * ~(inner[:, None] & inner[None, :])
            w_ = (np.bincount(a_ * m_ + b_, weights=wins, minlength=m_ * m_).reshape(m_, m_)
                  + prior)
            m = (w_ + w_.T) * p * p.T
            np.fill_diagonal(m, 0.0)
            bread = np.linalg.pinv(np.diag(m.sum(axis=1)) - m)
            cov = bread @ meat @ bread
        return Spread(idx, cov, units, comparisons, won, deals_of, deals_won, deals_lost,
                      side, no_maximum)

    def interval(self, i: int, point: FloatArray, weights: FloatArray, unit: str = "deal",
                 median_var: FloatArray | None = None
                 ) -> tuple[float | None, float | None, str | None]:
        """Bot i's 95% interval (low, high, why-not); either end None when unsupported.
        Counted in the bot's own deals (`unit`: "deal", or the contest ladder's "deal set"):
        a field of many bots has many deals, and a bot's variance rests on its own few.
        `median_var`: per bot, the variance of its rating less the median
        (`ranks.median_variance`), for a scale anchored at the median."""
        why = too_few(int(self.deals_of[i]), unit)
        if why is not None:
            return None, None, why
        if self.no_maximum:
            return None, None, NO_MAXIMUM
        if self.side[i] < 0 or self.deals_won[i] < MIN_SIDE:
            return self._one_sided(i, point, won=False)
        if self.side[i] > 0 or self.deals_lost[i] < MIN_SIDE:
            return self._one_sided(i, point, won=True)
        c = -weights[self.rated]
        c[np.flatnonzero(self.rated == i)] += 1.0
        var = float(c @ self.cov @ c)
        if median_var is not None and var > 0 and math.isfinite(median_var[i]):
            var = float(median_var[i])
        if not var > 0:
            return None, None, "the scale's zero (the anchor): 0 by definition"
        half = t95(self.deals_of[i]) * math.sqrt(var) * ELO_PER_UNIT
        return (round(float(point[i] - half), DIGITS), round(float(point[i] + half), DIGITS),
                None)

    def _one_sided(self, i: int, point: FloatArray, won: bool
                   ) -> tuple[float | None, float | None, str | None]:
        # Placed above another bot (or below, `won`) in x of its n deals: the chance to do
        # so in a deal, at least its chance to win (lose) any one comparison, is below the
        # Clopper-Pearson bound at 97.5% (1 - 0.025^(1/n) at x = 0), read as Elo against the
        # mean rating of the bots it met (the logistic curve is convex on that side).
        n = max(self.deals_of[i], 1.0)
        x = self.deals_lost[i] if won else self.deals_won[i]
        bound = elo_from_score(float(betaincinv(x + 1, n - x, 0.975)))
        met = self.comparisons[i]
        others = np.nan_to_num(point) * met
        mean_met = float(others.sum() / met.sum())
        never = x == 0
        if won:
            return (round(mean_met - bound, DIGITS), None,
                    "never placed below another bot: only a lower bound" if never else
                    f"placed below another bot in {x:.0f} of {n:.0f} deals (a two-sided "
                    f"interval needs {MIN_SIDE}): only a lower bound")
        return (None, round(mean_met + bound, DIGITS),
                "never placed above another bot: only an upper bound" if never else
                f"placed above another bot in {x:.0f} of {n:.0f} deals (a two-sided "
                f"interval needs {MIN_SIDE}): only an upper bound")


@dataclass(frozen=True, slots=True)
class _Tally:
    """Per deal and bot: games, wins, places and scores; per deal, the pairwise wins."""

    names: tuple[str, ...]
    deals: tuple[int, ...]
    games: int
    per_bot: FloatArray  # (deals, 4, bots): games, wins, place sum, score sum
    pairs: FloatArray  # (deals, bots, bots): [d, i, j] = i's wins over j in deal d
    margins: FloatArray  # (deals, bots, bots): [d, i, j] = i's summed score margin over j

    @staticmethod
    def of(games: Sequence[GameResult], bots: Iterable[str], higher_is_better: bool) -> _Tally:
        names = tuple(sorted({*bots, *(b for g in games for b in g.bots)}))
        deals = tuple(sorted({g.unit for g in games}))
        per_bot = np.zeros((len(deals), 4, len(names)))
        pairs = np.zeros((len(deals), len(names), len(names)))
        margins = np.zeros_like(pairs)
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
            at = (d[:, None, None], seat[:, :, None], seat[:, None, :])
            np.add.at(pairs, at, beats * rated[:, None, None])
            better = score[:, :, None] - score[:, None, :]  # i's margin over j
            np.add.at(margins, at, (better if higher_is_better else -better)
                      * rated[:, None, None])
        return _Tally(names, deals, len(games), per_bot, pairs, margins)

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


def _order(ratings: FloatArray, win_rate: FloatArray, mean_score: FloatArray,
           names: Sequence[str], higher_is_better: bool) -> tuple[list[int], list[int]]:
    """Bot indices best first, and the rank of each place: rated bots by rating, then the
    others by win rate and mean score. Names only list exact ties, which share a rank
    (1, 1, 3): nothing a game showed tells such bots apart. Ratings are rounded so that
    rounding noise never decides between bots with the same record."""
    sign = -1.0 if higher_is_better else 1.0

    def key(i: int) -> tuple[int, float, float, float]:
        if math.isfinite(ratings[i]):
            return (0, -round(float(ratings[i]), 6), 0.0, 0.0)
        return (1, 0.0, -round(float(win_rate[i]), 9), sign * round(float(mean_score[i]), 9))

    order = sorted(range(len(names)), key=lambda i: (*key(i), names[i]))
    ranks: list[int] = []
    for place, i in enumerate(order):
        tied = place > 0 and key(i) == key(order[place - 1])
        ranks.append(ranks[-1] if tied else place + 1)
    return order, ranks
