"""Standings by score margin: each bot's mean margin per game over the median bot, fitted on
all seat pairs at once, with the same kind of interval as the ratings.

Places throw away how far apart two bots finished; the margin (the other's penalty points
minus one's own in Phase 10 and Five Crowns, piles closed for Solitaire's sign) keeps it, and
separates bots in fewer games (Five Crowns: 4.7 games against 11.9 by win rate,
bench/bench_verdicts.py). The model: in every rated game, each pair of seats (i, j) gives the
margin y of i over j, and y = m_i - m_j + noise; the m are the least-squares fit (the
Laplacian of the pair counts, solved on the sum-zero subspace), taken relative to the median
bot (`ratings.median_weights`). The variance is cluster-robust with the deal as the cluster,
times n/(n-1), and the interval Student's t with n-1 degrees of freedom, given from
`ratings.MIN_UNITS` deals (below, the reason instead).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class MarginFit:
    """Each rated bot's mean margin m (sum zero; NaN for the others) and its covariance."""

    value: FloatArray  # (bots,)
    cov: FloatArray  # (rated, rated)
    rated: NDArray[np.intp]

    @staticmethod
    def of(counts: FloatArray, margins: FloatArray, rated: NDArray[np.bool_]) -> MarginFit:
        """From per-deal comparison counts and summed margins, (deals, bots, bots) each:
        counts[u, i, j] the seat pairs of i and j in deal u, margins[u, i, j] i's summed
        margin over j there (antisymmetric)."""
        idx = np.flatnonzero(rated)
        value = np.full(counts.shape[1], np.nan)
        cov = np.zeros((len(idx), len(idx)))
        if len(idx) == 0:
            return MarginFit(value, cov, idx)
        c = counts[:, idx][:, :, idx]
        y = margins[:, idx][:, :, idx]
        used = c.sum(axis=(1, 2)) > 0
        c, y = c[used], y[used]
        total = c.sum(axis=0)
        laplacian = np.diag(total.sum(axis=1)) - total
        inverse = np.linalg.pinv(laplacian)
        m = inverse @ y.sum(axis=(0, 2))
        m -= m.mean()
        value[idx] = m
        units = len(c)
        if units >= 2:
            # A deal's gradient of the squared error, centred: the sandwich's meat.
            g = y.sum(axis=2) - (c * (m[:, None] - m[None, :])).sum(axis=2)
            g -= g.mean(axis=0)
            cov = inverse @ (g.T @ g * units / (units - 1)) @ inverse
        return MarginFit(value, cov, idx)
