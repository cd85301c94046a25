"""The sequential probability ratio test on deal sets: stop as soon as the evidence decides.

Each deal set (one deal in every seating, m games between the two bots) scores the first bot
j/(2m) for j = 0..2m half-points: a multinomial over 2m+1 outcomes, whatever the game. The
deal sets are independent and identically distributed, so the generalised SPRT applies to
them exactly: m = 1 is the trinomial (losses, draws, wins) of independent games, m = 2
fastchess's pentanomial model of game pairs.

The log-likelihood ratio is the exact constrained maximum-likelihood one (Michel Van den Bergh,
"Comments on Normalized Elo"; fastchess's getLLR_logistic and getLLR_normalized, fishtest's
LLRcalc): N times the sum over outcomes of p_j log(p1_j / p0_j), where p is the observed
distribution and p0, p1 the distributions closest to it (in likelihood) whose expected score
(logistic model) or t-value (normalised model) is that of elo0 and elo1. Why that is exact:
maximising sum p_j log q_j under sum q_j = 1 and sum q_j c_j = 0 gives q_j = p_j / (1 + x c_j)
by Lagrange, with x the one root of sum p_j c_j / (1 + x c_j) = 0 that keeps every q_j
positive (the left side falls strictly on that interval); the t-value constraint is met by
iterating the same step with c_j rewritten around the current mean and deviation.

Counts of zero are replaced by 1e-3 first, as fastchess and fishtest do, so the ratio is
finite from the first deal set. The verdict is taken only at deal-set boundaries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from scipy.optimize import brentq

from .elo import NELO_SCALE, finite, score_from_elo
from .games import DealSet

Model = Literal["logistic", "normalized"]
Verdict = Literal["H0", "H1"]
REGULARIZE = 1e-3  # what a zero count becomes (fastchess, fishtest)


class SprtSpecError(ValueError):
    """An SPRT specification that cannot be tested; the message says why."""


@dataclass(frozen=True, slots=True)
class SprtSpec:
    """Test H0: elo = elo0 against H1: elo = elo1 with error rates alpha and beta.

    `model` "logistic" reads elo0 and elo1 as logistic Elo (expected score); "normalized" as
    normalised Elo (score minus 1/2 over the per-game standard deviation, times 800/ln 10).
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "logistic"

    def __post_init__(self) -> None:
        if not all(math.isfinite(x) for x in (self.elo0, self.elo1, self.alpha, self.beta)):
            raise SprtSpecError("SPRT: elo0, elo1, alpha and beta must be finite numbers")
        if self.elo0 >= self.elo1:
            raise SprtSpecError(f"SPRT: elo0 ({self.elo0:g}) must be below elo1 "
                                f"({self.elo1:g})")
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise SprtSpecError(f"SPRT: alpha ({self.alpha:g}) and beta ({self.beta:g}) must "
                                "be between 0 and 0.5")
        if self.model not in ("logistic", "normalized"):
            raise SprtSpecError(f"SPRT: model {self.model!r} is not logistic or normalized")

    @staticmethod
    def parse(text: str, model: Model = "logistic") -> SprtSpec:
        """From "elo0,elo1[,alpha,beta]", e.g. "0,10" or "0,10,0.05,0.05"."""
        parts = [p.strip() for p in text.split(",")]
        if len(parts) not in (2, 4) or not all(parts):
            raise SprtSpecError(f"SPRT {text!r}: expected elo0,elo1 or elo0,elo1,alpha,beta")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise SprtSpecError(f"SPRT {text!r}: numbers expected") from None
        alpha, beta = (values[2], values[3]) if len(values) == 4 else (0.05, 0.05)
        try:
            return SprtSpec(values[0], values[1], alpha, beta, model=model)
        except SprtSpecError as exc:
            raise SprtSpecError(f"SPRT {text!r}: {str(exc).removeprefix('SPRT: ')}") from None

    def __str__(self) -> str:
        return f"{self.elo0:g},{self.elo1:g},{self.alpha:g},{self.beta:g}"

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, counts: Sequence[float]) -> float:
        """The log-likelihood ratio of H1 to H0 for `counts[j]` units scoring j/(len-1)."""
        return llr(counts, self.elo0, self.elo1, self.model)

    def verdict(self, value: float) -> Verdict | None:
        """"H1" (elo1 accepted), "H0" (elo0 accepted), or None while the LLR is between."""
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return None

    def to_json(self) -> dict[str, Any]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                "model": self.model, "bounds": [finite(self.lower), finite(self.upper)]}


# ----------------------------------------------------------------------------------------------
# The constrained maximum likelihood


def llr(counts: Sequence[float], elo0: float, elo1: float, model: Model = "logistic") -> float:
    """Generalised log-likelihood ratio of elo1 to elo0 for a multinomial over the scores
    j/n, j = 0..n (n = len(counts) - 1, even: n/2 games per unit)."""
    n = len(counts) - 1
    if n < 2 or n % 2:
        raise ValueError(f"counts: 2m+1 outcome counts for units of m games, not {len(counts)}")
    if any(c < 0 for c in counts):
        raise ValueError("counts: negative count")
    if sum(counts) == 0:
        return 0.0
    regular = [c if c > 0 else REGULARIZE for c in counts]
    total = math.fsum(regular)
    probs = [c / total for c in regular]
    values = [j / n for j in range(n + 1)]
    if model == "logistic":
        p0, p1 = (_mle_mean(values, probs, score_from_elo(e)) for e in (elo0, elo1))
    else:
        # The per-game deviation is sqrt(m) deal-set deviations: t per unit = sqrt(m) nElo.
        root = math.sqrt(n / 2)
        p0, p1 = (_mle_t(values, probs, root * e / NELO_SCALE) for e in (elo0, elo1))
    return total * math.fsum(p * math.log(b / a) for p, a, b in zip(probs, p0, p1,
                                                                    strict=True))


def _secular(shifted: Sequence[float], probs: Sequence[float]) -> float:
    # The root x of sum p c / (1 + x c) = 0 with every 1 + x c > 0; it exists when the
    # shifted values take both signs (always here: 0 < expected score < 1 and every p > 0).
    # f falls from +inf at `low` to -inf at `high`, but with a regularised empty cell (p of
    # 1e-3 in a million deal sets) the root lies within 1e-9 of an end: the bracket is
    # narrowed towards the ends until f changes sign across it (a fixed margin of 1e-9 of
    # the interval made brentq raise there).
    low, high = -1 / max(shifted), -1 / min(shifted)

    def f(x: float) -> float:
        return math.fsum(p * c / (1 + x * c) for p, c in zip(probs, shifted, strict=True))

    width = high - low
    a = b = math.nan
    for power in range(3, 17):
        eps = width * 10.0 ** -power
        a, b = low + eps, high - eps
        if f(a) > 0 > f(b):
            break
    else:
        # Closer than float resolution to an end: that end is the root to our precision.
        return a if f(a) <= 0 else b
    return float(brentq(f, a, b, xtol=1e-15 * max(1.0, abs(width)), rtol=1e-14, maxiter=500))


def _tilt(probs: Sequence[float], shifted: Sequence[float]) -> list[float]:
    x = _secular(shifted, probs)
    return [p / (1 + x * c) for p, c in zip(probs, shifted, strict=True)]


def _mle_mean(values: Sequence[float], probs: Sequence[float], mean: float) -> list[float]:
    """The distribution on `values` with expected value `mean` most likely to give `probs`."""
    return _tilt(probs, [v - mean for v in values])


def _mle_t(values: Sequence[float], probs: Sequence[float], t: float) -> list[float]:
    """The distribution on `values` with (mean - 1/2) / sd = `t` most likely to give `probs`
    (Van den Bergh's fixed point, started from the uniform distribution as fishtest)."""
    q = [1 / len(values)] * len(values)
    for _ in range(50):  # converges quadratically: 4-6 rounds to the root finder's precision
        mean = math.fsum(p * v for p, v in zip(q, values, strict=True))
        sd = math.sqrt(math.fsum(p * (v - mean) ** 2 for p, v in zip(q, values, strict=True)))
        shifted = [v - 0.5 - t * sd * (1 + ((mean - v) / sd) ** 2) / 2 for v in values]
        new = _tilt(probs, shifted)
        done = max(abs(a - b) for a, b in zip(q, new, strict=True)) < 1e-10
        q = new
        if done:
            break
    return q


# ----------------------------------------------------------------------------------------------
# The running test


@dataclass(slots=True)
class SprtTest:
    """An SPRT fed one finished deal set at a time: counts per outcome, the LLR on demand.

    `seatings` is m, the games of a deal set between the two bots (2 with duplicate deals at
    two seats, 1 without duplicates). Feed the deal sets in schedule order as each completes.
    """

    spec: SprtSpec
    seatings: int
    counts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.seatings < 1:
            raise ValueError(f"seatings: at least 1 game per deal set, not {self.seatings}")
        if not self.counts:
            self.counts = [0] * (2 * self.seatings + 1)
        if len(self.counts) != 2 * self.seatings + 1:
            raise ValueError(f"counts: {2 * self.seatings + 1} outcomes for {self.seatings} "
                             f"seatings, not {len(self.counts)}")

    @staticmethod
    def of(spec: SprtSpec, seatings: int, deal_sets: Iterable[DealSet]) -> SprtTest:
        """A test fed the complete deal sets among `deal_sets` (those of `seatings` games,
        from the first bot's side, e.g. `verdicts_games.deal_sets_of`); a resumed
        tournament rebuilds its test this way."""
        test = SprtTest(spec, seatings)
        for deal_set in deal_sets:
            if deal_set.games == seatings:
                test.add(deal_set.half_points)
        return test

    def add(self, half_points: int) -> None:
        """One deal set in which the first bot made `half_points` (2 per game placed better
        than the second bot, 1 per equal place): 0..2m."""
        if not 0 <= half_points <= 2 * self.seatings:
            raise ValueError(f"half_points: 0..{2 * self.seatings}, not {half_points}")
        self.counts[half_points] += 1

    def add_games(self, points: Sequence[float]) -> None:
        """One deal set from its games' points for the first bot (1, 1/2 or 0 each)."""
        if len(points) != self.seatings:
            raise ValueError(f"a deal set has {self.seatings} games, not {len(points)}")
        if any(p not in (0, 0.5, 1) for p in points):
            raise ValueError(f"points per game are 0, 0.5 or 1, not {list(points)}")
        self.add(round(2 * sum(points)))

    @property
    def deal_sets(self) -> int:
        return sum(self.counts)

    def llr(self) -> float:
        return self.spec.llr(self.counts)

    def verdict(self) -> Verdict | None:
        return self.spec.verdict(self.llr()) if self.deal_sets else None

    def to_json(self) -> dict[str, Any]:
        value = self.llr()
        return {**self.spec.to_json(), "seatings": self.seatings, "deal_sets": self.deal_sets,
                "counts": list(self.counts), "llr": finite(value),
                "verdict": self.spec.verdict(value) if self.deal_sets else None}

    def text(self) -> str:
        """"SPRT [0, 10] logistic, alpha 0.05 beta 0.05: LLR 1.23 (-2.94, 2.94) undecided"."""
        s = self.spec
        value = self.llr()
        state = {"H1": f"H1 accepted (elo >= {s.elo1:g})",
                 "H0": f"H0 accepted (elo <= {s.elo0:g})"}.get(self.verdict() or "",
                                                               "undecided")
        return (f"SPRT [{s.elo0:g}, {s.elo1:g}] {s.model}, alpha {s.alpha:g} beta {s.beta:g}: "
                f"LLR {value:.2f} ({s.lower:.2f}, {s.upper:.2f}) after {self.deal_sets} deal "
                f"sets: {state}")
