"""Brownian motion with drift between two absorbing bounds: the SPRT's log-likelihood ratio in
the limit of many small steps, as fishtest's `stats/brownian.py` models it.

X_t = mu t + sigma W_t from 0, stopped at the first exit from (a, b), a < 0 < b. Closed forms
(Wald; Cox and Miller, "The Theory of Stochastic Processes", 5.7), with g = 2 mu / sigma^2:
- P(exit at b) = (1 - e^(-g a)) / (e^(-g b) - e^(-g a)), and -a / (b - a) when mu = 0;
- E[T] = (P(b) b + (1 - P(b)) a) / mu, and -a b / sigma^2 when mu = 0.
The density of exiting at b at time t is the driftless one reweighted by Girsanov's factor,
exp(nu (b - x) - nu^2 t / 2) with nu = mu / sigma, and the driftless one is the series of
images (Borodin and Salminen, "Handbook of Brownian Motion", 3.0.6): in units of sigma, with u
the start's distance from the other bound and v = b - a,
ss_t(u, v) = sum over k of (v - u + 2kv) / sqrt(2 pi t^3) exp(-(v - u + 2kv)^2 / (2t)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.integrate import quad

SMALL = 1e-12  # |g (b - a)| below which the drift is taken as zero
CUT = 40.0  # images are summed until (2 k v)^2 / (2 t) passes this: e^-40 is nothing


@dataclass(frozen=True, slots=True)
class Bounded:
    """The process mu t + sigma W_t, from 0, stopped at a < 0 or b > 0."""

    mu: float
    sigma: float
    a: float
    b: float

    def __post_init__(self) -> None:
        if not (self.a < 0 < self.b and self.sigma > 0):
            raise ValueError("Bounded: a < 0 < b and sigma > 0")

    @property
    def p_upper(self) -> float:
        """The chance to stop at b."""
        g = 2 * self.mu / self.sigma ** 2
        if abs(g * (self.b - self.a)) < SMALL:
            return -self.a / (self.b - self.a)
        # Divided through by the larger exponential, so that it stays finite for large |g|.
        if g > 0:
            return math.expm1(g * self.a) / math.expm1(-g * (self.b - self.a))
        return math.expm1(-g * self.a) * math.exp(g * self.b) / math.expm1(g * (self.b - self.a))

    @property
    def expected_time(self) -> float:
        """E[T], the expected time to stop."""
        if abs(2 * self.mu / self.sigma ** 2 * (self.b - self.a)) < SMALL:
            return -self.a * self.b / self.sigma ** 2
        p = self.p_upper
        return (p * self.b + (1 - p) * self.a) / self.mu

    def density(self, t: float, upper: bool) -> float:
        """The density of stopping at time t at b (`upper`) or at a."""
        if t <= 0:
            return 0.0
        nu = self.mu / self.sigma
        v = (self.b - self.a) / self.sigma
        gap = (self.b if upper else -self.a) / self.sigma  # distance to that bound
        drift = nu if upper else -nu
        terms = 2 + math.ceil(math.sqrt(2 * CUT * t) / (2 * v))
        total = 0.0
        for k in range(-terms, terms + 1):
            d = gap + 2 * k * v
            # One exponent per term: |d| >= gap keeps each at or below 0 (no overflow).
            total += d * math.exp(drift * gap - nu * nu * t / 2 - d * d / (2 * t))
        return total / math.sqrt(2 * math.pi * t ** 3)

    def stopped_by(self, t: float, upper: bool) -> float:
        """The chance to have stopped at that bound by time t."""
        if t <= 0:
            return 0.0
        # The density peaks near the mean time to stop: tell the quadrature where.
        peak = self.expected_time
        points = [peak] if 0 < peak < t else None
        got, _ = quad(self.density, 0.0, t, args=(upper,), limit=200, epsabs=1e-12,
                      points=points)
        return min(max(float(got), 0.0), 1.0)
