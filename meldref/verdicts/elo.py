"""Scores, Elo and normalised Elo with intervals, from deal sets (or any independent units).

A *unit* is the evidence that is independent of every other: a deal set (one deal played in
every seating of the schedule), or a single game when deals are not duplicated. Each unit gives
the first bot's points (1 per game placed better than the other bot, 1/2 for an equal place)
over its games. The score is total points over total games, and its variance comes from the
spread of the units, not of the games: games of one deal set share their cards, so treating
them as independent (as a Wilson interval on games does) gets the width wrong.

With every unit of the same size this is fastchess's pentanomial model (units of 2 games) or
its trinomial one (units of 1 game), figure for figure: the score is the mean unit score, its
variance the population variance of the unit scores over the number of units, the interval
the normal one, the Elo error half the Elo width of that interval, and the normalised Elo the
score's distance from 1/2 in per-game standard deviations (Van den Bergh, "Comments on
Normalized Elo"). Units of unequal size (a deal set cut short) are weighted by their games
(the ratio estimator), which reduces to the same figures when the sizes agree.

The 95% interval is not fastchess's normal one, which assumes the variance known: from n
units it is Student's t, mean +- t(0.975, n-1) * s / sqrt(n) with s the sample deviation
(n-1 in the denominator), exact for normal unit scores and close to 95% for these bounded
ones from `MIN_UNITS` units (bench/bench_coverage.py measures it). At 3 deal sets it is 2.7x
the normal one, which covered 76-79% at 5. Where the data cannot support an interval there is
none (`Estimate.why_no_interval` says why, and every figure made from the interval is
missing): fewer than `MIN_UNITS` units, or units that all scored alike (a 100% score, every
deal set 1-1: no spread to measure the uncertainty by). `se` stays fastchess's (population
variance), so the Elo and nElo point figures keep matching its reference values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..engine.game import JSON

Z95 = 1.959963984540054  # two-sided 95% normal quantile
MIN_UNITS = 5  # independent units (deal sets) below which no interval is given
NELO_SCALE = 800 / math.log(10)  # normalised Elo per unit of t-value (score sd per game)
DIGITS = 6  # every figure in JSON is rounded to this many decimals


def elo_from_score(score: float) -> float:
    """Logistic Elo difference for an expected score; infinite at 0 and 1 (and beyond)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def score_from_elo(elo: float) -> float:
    """Expected score for a logistic Elo difference."""
    return 1 / (1 + 10 ** (-elo / 400))


def finite(x: float, digits: int = DIGITS) -> float | None:
    """`x` rounded for JSON, or None when it is infinite or NaN (JSON has no such numbers)."""
    if not math.isfinite(x):
        return None
    value = round(x, digits)
    return 0.0 if value == 0 else value  # never -0.0


def signed(x: float, decimals: int = 0) -> str:
    """`x` with its sign, never "-0": -0.3 -> "+0", 12.4 -> "+12"; "n/a" when not finite."""
    if not math.isfinite(x):
        return "n/a"
    value = round(x, decimals)
    if value == 0:
        value = 0.0
    return f"{value:+.{decimals}f}"


def format_elo(x: float) -> str:
    """An Elo difference for people: "+35", "+0", "-12"; "n/a" when the score is 0% or 100%
    (the difference is then unbounded, and any number would be invented)."""
    return signed(x, 0)


def t95(units: float) -> float:
    """The two-sided 95% quantile of Student's t for `units` independent units (n - 1
    degrees of freedom); the normal one for infinitely many."""
    if not math.isfinite(units):
        return Z95
    # scipy.stats takes a second to import: only once an interval is asked for (a match prints
    # Elo figures through this module and no interval, tests/test_cli_startup.py).
    from scipy.stats import t as student_t  # noqa: PLC0415 start-up: scipy, not for a match

    return float(student_t.ppf(0.975, units - 1))


@dataclass(frozen=True, slots=True)
class Estimate:
    """A mean with its standard error (population variance over the units, as fastchess)
    from `units` independent units; the 95% interval is Student's t on the sample variance,
    or none, with the reason (`why_no_interval`)."""

    mean: float
    se: float
    units: float = math.inf  # how many independent units (inf: a known variance)

    @property
    def why_no_interval(self) -> str | None:
        """Why the data support no interval, in words for the user; None when they do."""
        if not math.isfinite(self.mean):
            return "no games"
        if self.units < MIN_UNITS:
            n = int(self.units)
            return (f"{n} deal set{'s' if n != 1 else ''}: an interval needs {MIN_UNITS} "
                    "or more")
        if not self.se > 0:
            return "every deal set scored the same: nothing to measure the uncertainty by"
        return None

    @property
    def half_width(self) -> float:
        """t(0.975, n-1) times the sample standard error; NaN without an interval."""
        if self.why_no_interval is not None:
            return math.nan
        n = self.units
        sample = self.se if not math.isfinite(n) else self.se * math.sqrt(n / (n - 1))
        return t95(n) * sample

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def negated(self) -> Estimate:
        return Estimate(-self.mean, self.se, self.units)

    def to_json(self) -> dict[str, JSON]:
        return {"mean": finite(self.mean), "se": finite(self.se),
                "ci95": [finite(self.low), finite(self.high)],
                "no_interval": self.why_no_interval}


def ratio_estimate(totals: Sequence[float], sizes: Sequence[float],
                   weights: Sequence[float] | None = None) -> tuple[Estimate, float]:
    """The mean per game of independent units (`totals[i]` over `sizes[i]` games, each unit
    counted `weights[i]` times) with its standard error, and the total games.

    The variance is the population variance of the units' deviations from the mean, over the
    number of units: fastchess's formula when every unit has the same size.
    """
    weights = weights if weights is not None else [1.0] * len(totals)
    units = math.fsum(weights)
    games = math.fsum(w * g for w, g in zip(weights, sizes, strict=True))
    if units <= 0 or games <= 0:
        return Estimate(math.nan, math.nan, 0), 0.0
    mean = math.fsum(w * t for w, t in zip(weights, totals, strict=True)) / games
    per_unit = games / units
    spread = math.fsum(w * (t - mean * g) ** 2
                       for w, t, g in zip(weights, totals, sizes, strict=True))
    se = math.sqrt(spread / units) / per_unit / math.sqrt(units)
    return Estimate(mean, se, units), games


@dataclass(frozen=True, slots=True)
class ScoreStats:
    """A score (points per game, draws half) from independent units, and what follows from
    it: the 95% interval, Elo and normalised Elo with intervals, and the likelihood of
    superiority (the chance the first bot is the stronger, under a flat prior)."""

    score: Estimate
    games: float  # the games behind the score (normalised Elo is per game)

    @staticmethod
    def from_units(points: Sequence[float], sizes: Sequence[float]) -> ScoreStats:
        """From each unit's points and its number of games."""
        score, games = ratio_estimate(points, sizes)
        return ScoreStats(score, games)

    @staticmethod
    def from_counts(counts: Sequence[float]) -> ScoreStats:
        """From how many units scored each of 0, 1/n, ..., 1 (n = len(counts) - 1): (losses,
        draws, wins) for single games, (LL, LD, LW+DD, DW, WW) for game pairs."""
        n = len(counts) - 1
        if n < 2 or n % 2:
            raise ValueError(f"counts: 2m+1 outcomes for units of m games, not {len(counts)}")
        # A unit of n/2 games (n half-points) scoring j half-points.
        per_unit = n / 2
        points = [j / n * per_unit for j in range(n + 1)]
        score, games = ratio_estimate(points, [per_unit] * (n + 1), counts)
        return ScoreStats(score, games)

    @property
    def score_low(self) -> float:
        low = self.score.low
        return low if math.isnan(low) else min(1.0, max(0.0, low))

    @property
    def score_high(self) -> float:
        high = self.score.high
        return high if math.isnan(high) else min(1.0, max(0.0, high))

    @property
    def elo(self) -> float:
        return elo_from_score(self.score.mean)

    @property
    def elo_low(self) -> float:
        return elo_from_score(self.score_low)

    @property
    def elo_high(self) -> float:
        return elo_from_score(self.score_high)

    @property
    def elo_error(self) -> float:
        """Half the Elo width of the 95% interval (fastchess's "+-")."""
        return (self.elo_high - self.elo_low) / 2

    @property
    def sigma_per_game(self) -> float:
        """The score's standard deviation per game (a unit of m games counts as m)."""
        return self.score.se * math.sqrt(self.games)

    def _nelo(self, score: float) -> float:
        sigma = self.sigma_per_game
        if not sigma > 0:
            return math.nan
        return (score - 0.5) / sigma * NELO_SCALE

    @property
    def nelo(self) -> float:
        return self._nelo(self.score.mean)

    @property
    def nelo_error(self) -> float:
        return (self._nelo(self.score.high) - self._nelo(self.score.low)) / 2

    @property
    def los(self) -> float:
        """P(first bot stronger): the normal approximation, as fastchess; NaN where the data
        support no interval (a "100%" from one deal set would be invented)."""
        mean, se = self.score.mean, self.score.se
        if self.score.why_no_interval is not None:
            return math.nan
        return (1 - math.erf(-(mean - 0.5) / math.sqrt(2 * se * se))) / 2

    def to_json(self) -> dict[str, JSON]:
        return {
            "games": finite(self.games), "score": finite(self.score.mean),
            "score_se": finite(self.score.se),
            "score_ci95": [finite(self.score_low), finite(self.score_high)],
            "elo": finite(self.elo), "elo_ci95": [finite(self.elo_low), finite(self.elo_high)],
            "elo_error": finite(self.elo_error),
            "nelo": finite(self.nelo), "nelo_error": finite(self.nelo_error),
            "los": finite(self.los), "deal_sets": finite(self.score.units),
            "no_interval": self.score.why_no_interval,
        }

    def text(self) -> str:
        """"score 54.1% (95% CI 51.0..57.2%), Elo +29 (+7..+50), nElo +41 +- 28, LOS 99.6%"."""
        if not self.games:
            return "no games"
        why = self.score.why_no_interval
        if why is not None:
            return (f"score {100 * self.score.mean:.1f}%, Elo {format_elo(self.elo)}: no 95% "
                    f"interval ({why})")
        return (f"score {100 * self.score.mean:.1f}% (95% CI {100 * self.score_low:.1f}.."
                f"{100 * self.score_high:.1f}%), Elo {format_elo(self.elo)} "
                f"({format_elo(self.elo_low)}..{format_elo(self.elo_high)}), "
                f"nElo {signed(self.nelo)} +- {_plain(self.nelo_error)}, "
                f"LOS {_percent(self.los)}")


def _plain(x: float) -> str:
    return f"{x:.0f}" if math.isfinite(x) else "n/a"


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%" if math.isfinite(x) else "n/a"


def chance_percent(p: float) -> str:
    """A chance read from the rank draws as the tables print it (`P first`): never "0%" or
    "100%" but "<1%" and ">99%", since a rank the draws did not see is not impossible (and
    0.4% would round to "0%"). The viewer's list.js prints it so too (`chanceText`)."""
    if p < 0.01:
        return "<1%"
    if p > 0.99:
        return ">99%"
    return f"{p:.0%}"
