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

Before a run, `plan` gives a test's expected deal sets and its chance to accept H1 at any
true Elo; after a stop, `stopped_estimate` (`SprtTest.estimate`) the Elo corrected for the
stopping rule (a test that stops early at H1 stopped on a lucky run: its plain estimate is
too high). Both read the LLR as a Brownian motion between the bounds (`brownian`), as
fishtest's sprt.py does; tests check them against simulated tests.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from scipy.optimize import brentq

from ..engine.game import JSON
from .brownian import Bounded
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

    def to_json(self) -> dict[str, JSON]:
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
    p0, p1 = (tilted(probs, e, model) for e in (elo0, elo1))
    return total * math.fsum(p * math.log(b / a) for p, a, b in zip(probs, p0, p1,
                                                                    strict=True))


def tilted(probs: Sequence[float], elo: float, model: Model = "logistic") -> list[float]:
    """The distribution over the scores j/n (n = len(probs) - 1) with `elo` (logistic:
    expected score; normalized: t-value) most likely to give `probs` (all positive)."""
    n = len(probs) - 1
    values = [j / n for j in range(n + 1)]
    if model == "logistic":
        return _mle_mean(values, probs, score_from_elo(elo))
    # The per-game deviation is sqrt(m) deal-set deviations: t per unit = sqrt(m) nElo.
    return _mle_t(values, probs, math.sqrt(n / 2) * elo / NELO_SCALE)


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

    def estimate(self) -> SprtEstimate:
        """The Elo so far: corrected for the stopping rule once the test has stopped
        (`stopped_estimate`), the plain estimate before."""
        return stopped_estimate(self.spec, self.counts)

    def plan(self, true_elo: float) -> SprtPlan:
        """What this test costs at `true_elo`, on the shape of the deal sets seen so far
        (independent games without draws before the first)."""
        return plan(self.spec, true_elo, self.seatings,
                    shape=self.counts if self.deal_sets else None)

    def to_json(self) -> dict[str, JSON]:
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


# ----------------------------------------------------------------------------------------------
# Before a run: what it will cost; after a stop: the Elo the stopping rule did not bias


ELO_LIMIT = 1500.0  # the corrected estimate is searched within +-this
OVERSHOOT = 0.5826  # Siegmund: a random walk passes a bound by about this many step deviations


def _walk(truth: Sequence[float], spec: SprtSpec) -> Bounded:
    """The LLR as a Brownian motion (`brownian.Bounded`) when the deal sets follow `truth`.
    Its step per deal set is the GSPRT's local form, as fishtest's (Van den Bergh):
    (s1 - s0) / v * (x - (s0 + s1) / 2) for a deal set scoring x, v the deal sets' variance
    and s0, s1 the expected scores of elo0 and elo1 (for the normalised model, 1/2 plus
    their t-values times the deviation); the bounds are moved out by the expected
    overshoot."""
    n = len(truth) - 1
    values = [j / n for j in range(n + 1)]
    mean = math.fsum(q * x for q, x in zip(truth, values, strict=True))
    var = math.fsum(q * (x - mean) ** 2 for q, x in zip(truth, values, strict=True))
    var = max(var, 1e-12)
    if spec.model == "logistic":
        s0, s1 = score_from_elo(spec.elo0), score_from_elo(spec.elo1)
    else:
        root = math.sqrt(n / 2) * math.sqrt(var) / NELO_SCALE
        s0, s1 = 0.5 + root * spec.elo0, 0.5 + root * spec.elo1
    scale = (s1 - s0) / var
    mu = scale * (mean - (s0 + s1) / 2)
    sigma = abs(scale) * math.sqrt(var)
    return Bounded(mu, sigma, spec.lower - OVERSHOOT * sigma, spec.upper + OVERSHOOT * sigma)


def _jumps_walk(truth: Sequence[float], spec: SprtSpec) -> Bounded:
    """The LLR as a Brownian motion whose drift and spread are those of its exact steps when
    the deal sets follow `truth`: a deal set scoring j moves it by log(p1_j / p0_j), p0 and p1
    the distributions of elo0 and elo1 closest to `truth` (fishtest's
    `LLRcalc.LLR_drift_variance`). Beyond the bounds the local form of `_walk` takes the
    drift as growing in step with the score, faster than the LLR's own: at 150 Elo, a test
    [0, 100] was given 16.6 deal sets to stop where it takes 20.4, and an Elo corrected on
    that form came out 30 Elo low, more than the plain estimate was high (+17)."""
    p0, p1 = tilted(truth, spec.elo0, spec.model), tilted(truth, spec.elo1, spec.model)
    jumps = [math.log(b / a) for a, b in zip(p0, p1, strict=True)]
    mu = math.fsum(q * x for q, x in zip(truth, jumps, strict=True))
    var = math.fsum(q * (x - mu) ** 2 for q, x in zip(truth, jumps, strict=True))
    sigma = math.sqrt(max(var, 1e-24))
    return Bounded(mu, sigma, spec.lower - OVERSHOOT * sigma, spec.upper + OVERSHOOT * sigma)


def reference(seatings: int, draws: float = 0.0) -> list[float]:
    """A deal set's outcomes 0..2m when its m games are independent, each won, drawn or lost
    with chances (1 - draws)/2, draws, (1 - draws)/2: the shape `plan` tilts to the Elo it
    is asked about when no observed distribution is given."""
    if not 0 <= draws < 1:
        raise ValueError(f"draws: a share in [0, 1), not {draws}")
    game = [(1 - draws) / 2, draws, (1 - draws) / 2]
    out = [1.0]
    for _ in range(seatings):
        nxt = [0.0] * (len(out) + 2)
        for i, a in enumerate(out):
            for j, b in enumerate(game):
                nxt[i + j] += a * b
        out = nxt
    return [max(x, REGULARIZE * 1e-3) for x in out]


@dataclass(frozen=True, slots=True)
class SprtPlan:
    """What an SPRT costs at one true Elo: its expected deal sets and its chance to accept
    H1 (its power at elo >= elo1, its false-positive rate at elo <= elo0)."""

    spec: SprtSpec
    true_elo: float
    seatings: int
    expected_deal_sets: float
    p_h1: float

    def to_json(self) -> dict[str, JSON]:
        return {**self.spec.to_json(), "true_elo": self.true_elo, "seatings": self.seatings,
                "expected_deal_sets": finite(self.expected_deal_sets),
                "expected_games": finite(self.expected_deal_sets * self.seatings),
                "p_h1": finite(self.p_h1)}

    def text(self) -> str:
        return (f"at Elo {self.true_elo:+g}: about {self.expected_deal_sets:.0f} deal sets "
                f"({self.expected_deal_sets * self.seatings:.0f} games), H1 accepted "
                f"{100 * self.p_h1:.1f}% of the time")


def plan(spec: SprtSpec, true_elo: float, seatings: int = 2, draws: float = 0.0,
         shape: Sequence[float] | None = None) -> SprtPlan:
    """The expected deal sets and P(accept H1) of the SPRT `spec` on deal sets of `seatings`
    games when the true Elo is `true_elo` (normalised Elo for the normalised model).

    The deal sets' distribution is `shape` (counts or chances of the 2m+1 outcomes, e.g. a
    previous run's pentanomial) tilted to `true_elo`, or else independent games with `draws`
    drawn (`reference`). The LLR is taken as a Brownian motion with the drift and spread of
    its per-deal-set steps (`_walk`; Wald's approximations, the bounds moved out by
    Siegmund's overshoot); a test checks both figures against simulated SPRTs."""
    if seatings < 1:
        raise ValueError(f"seatings: at least 1, not {seatings}")
    base = list(shape) if shape is not None else reference(seatings, draws)
    if len(base) != 2 * seatings + 1 or any(x < 0 for x in base) or not sum(base) > 0:
        raise ValueError(f"shape: {2 * seatings + 1} non-negative figures, not {base}")
    total = math.fsum(c if c > 0 else REGULARIZE for c in base)
    probs = [(c if c > 0 else REGULARIZE) / total for c in base]
    walk = _walk(tilted(probs, true_elo, spec.model), spec)
    return SprtPlan(spec, true_elo, seatings, walk.expected_time, walk.p_upper)


@dataclass(frozen=True, slots=True)
class SprtEstimate:
    """The Elo after an SPRT: median-unbiased for the stopping rule once it stopped, with a
    95% interval; the plain estimate beside it (biased away from the bound it stopped at)."""

    elo: float
    low: float | None
    high: float | None
    plain: float
    corrected: bool  # False while undecided: `elo` is then the plain estimate

    def to_json(self) -> dict[str, JSON]:
        return {"elo": finite(self.elo),
                "elo_ci95": [None if self.low is None else finite(self.low),
                             None if self.high is None else finite(self.high)],
                "plain_elo": finite(self.plain), "corrected_for_stopping": self.corrected}


def stopped_estimate(spec: SprtSpec, counts: Sequence[float]) -> SprtEstimate:
    """The Elo of deal sets `counts` (0..2m half-points) fed to the SPRT `spec` until it
    stopped. Once it has stopped, the median-unbiased estimate under the stopping rule, as
    fishtest's sprt.py (its "elo" and "ci" after a stop): order the outcomes a run can end
    in (any stop at H0 below any stop at H1; at H1 an earlier stop is stronger evidence, at
    H0 a later one), and take the Elo at which the run's own outcome is the median (the 2.5%
    and 97.5% points for the interval). The LLR's path at each Elo is a Brownian motion
    (`brownian.Bounded`) with the drift and spread of its steps when the deal sets follow
    the observed distribution tilted to that Elo, its steps the LLR's exact ones
    (`_jumps_walk`: the local form of `plan` over-corrected beyond elo1)."""
    n = len(counts) - 1
    total = math.fsum(c if c > 0 else REGULARIZE for c in counts)
    probs = [(c if c > 0 else REGULARIZE) / total for c in counts]
    plain = _plain_elo(probs, spec.model)
    verdict = spec.verdict(spec.llr(counts)) if sum(counts) else None
    if verdict is None or n < 2:
        return SprtEstimate(plain, None, None, plain, False)
    deal_sets = math.fsum(counts)

    def worse(elo: float) -> float:
        """The chance, at `elo`, of an outcome below the run's own."""
        walk = _jumps_walk(tilted(probs, elo, spec.model), spec)
        if verdict == "H1":
            return 1 - walk.stopped_by(deal_sets, upper=True)
        return walk.stopped_by(deal_sets, upper=False)

    # Far enough out for any run's outcome, near enough that the steps keep a spread.
    span = 4 * (spec.elo1 - spec.elo0) + 400
    low_end, high_end = max(spec.elo0 - span, -ELO_LIMIT), min(spec.elo1 + span, ELO_LIMIT)
    ends = (worse(low_end), worse(high_end))

    def solve(target: float) -> float:
        if ends[0] <= target:
            return low_end
        if ends[1] >= target:
            return high_end
        return float(brentq(lambda e: worse(e) - target, low_end, high_end, xtol=1e-6))

    return SprtEstimate(solve(0.5), solve(0.975), solve(0.025), plain, True)


def _plain_elo(probs: Sequence[float], model: Model) -> float:
    n = len(probs) - 1
    mean = math.fsum(p * j / n for j, p in enumerate(probs))
    if model == "logistic":
        return -400 * math.log10(1 / mean - 1) if 0 < mean < 1 else math.copysign(
            math.inf, mean - 0.5)
    sd = math.sqrt(math.fsum(p * (j / n - mean) ** 2 for j, p in enumerate(probs)))
    return (mean - 0.5) / sd / math.sqrt(n / 2) * NELO_SCALE if sd > 0 else math.nan
