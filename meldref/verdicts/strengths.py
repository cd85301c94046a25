"""The Bradley-Terry strengths behind the standings: the maximum-likelihood estimate wherever
it exists, the prior only where it does not.

Why not one virtual draw between every two bots, as before: the prior pulls every rating
towards the middle, by more the more bots there are (each bot gets N-1 virtual draws) and the
fewer games each pair played, and the interval around the pulled rating ignored the pull. An
outside check found rating intervals covering 57.5% (8 bots 100 Elo apart, 1 deal set a
table) and 79-91% (6 bots at 2 seats); with the prior's weight near zero the same games
covered 93.8%.

When the estimate exists. The likelihood of pairwise wins has a finite maximum exactly when
the graph "i placed above j at least once" (half wins count) is strongly connected: no group
of bots that never placed below the rest (Zermelo, Ford). Where it is not, the maximum sends
some bots to plus or minus infinity. Those bots are peeled off, one layer at a time: a bot
that never placed above any bot still in the field goes to the bottom, one never placed below
to the top, and the rest is looked at again (a bot that beat only the hopeless bot is the next
layer). The comparisons of a peeled bot say nothing about the others' strengths at the
maximum (it wins or loses them with probability 1), so the bots left (the *core*) get the
maximum-likelihood fit of their comparisons among themselves, with no prior at all.

A peeled bot's point rating is the prior's: one virtual draw with each bot already placed
(the core, then the layers peeled after it), its own comparisons with them, the others held
at their fitted values. It is finite and below (above) every bot it never beat (never lost
to); its interval is the one-sided bound of `ratings.Spread`. If the core is not strongly
connected either (two groups that never met both ways), there is no maximum for the field:
every strength is the prior's fit, as before, and no interval is given (`why`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import choix
import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.sparse.csgraph import connected_components

FloatArray = NDArray[np.float64]
NO_MAXIMUM = ("the results split the bots into groups that never placed below one another: "
              "no rating is estimable, only the prior's")


@dataclass(frozen=True, slots=True)
class Strengths:
    """Log-strengths (mean 0 over the rated bots, NaN for the others), and per bot whether
    it is in the core (0), peeled to the bottom (-n) or to the top (+n) in layer n (1 the
    outermost)."""

    theta: FloatArray
    side: NDArray[np.int_]
    why: str | None = None  # the field has no maximum: why no interval


def peel(wins: FloatArray, rated: NDArray[np.bool_]) -> NDArray[np.int_]:
    """Per bot: 0 in the core, -n (+n) peeled in layer n for never placing above (below) a
    bot still in the field; layer by layer until none is left to peel. Bots not rated: 0."""
    side = np.zeros(len(rated), dtype=int)
    for layer in range(1, len(rated) + 1):
        active = rated & (side == 0)
        sub = wins * active[None, :] * active[:, None]
        won, lost = sub.sum(axis=1), sub.sum(axis=0)
        bottom = active & (won == 0) & (lost > 0)
        top = active & (lost == 0) & (won > 0)
        if not (bottom.any() or top.any()):
            break
        side[bottom] = -layer
        side[top] = layer
    return side


def fit_strengths(wins: FloatArray, rated: NDArray[np.bool_], prior_draws: float
                  ) -> Strengths:
    """The strengths of `wins` ([i, j]: i's wins over j, half wins for shared places); see
    the module docstring."""
    theta = np.full(len(rated), np.nan)
    idx = np.flatnonzero(rated)
    if len(idx) <= 1:
        theta[idx] = 0.0
        return Strengths(theta, np.zeros(len(rated), dtype=int))
    side = peel(wins, rated)
    core = np.flatnonzero(rated & (side == 0))
    sub = wins[np.ix_(core, core)]
    if len(core) == 1:
        theta[core] = 0.0
    elif len(core) == 0:  # every bot peeled: each a bound only, the points the prior's
        return Strengths(_prior_fit(wins, rated, prior_draws), side)
    elif not strongly_connected(sub):
        return Strengths(_prior_fit(wins, rated, prior_draws), side, NO_MAXIMUM)
    else:
        theta[core] = choix.ilsr_pairwise_dense(sub, alpha=0.0, max_iter=10_000, tol=1e-12)
    # The peeled layers, innermost first (the last peeled sits next to the core).
    # Each layer against the bots placed before it (never against its own layer: no name
    # decides which of two bots in one layer is placed first).
    for layer in sorted({abs(int(x)) for x in side if x}, reverse=True):
        placed = theta.copy()
        for i in np.flatnonzero(rated & (np.abs(side) == layer)):
            theta[i] = _placed(wins, placed, int(i), prior_draws)
    theta[idx] -= theta[idx].mean()
    return Strengths(theta, side)


def strongly_connected(wins: FloatArray) -> bool:
    """Whether every bot placed above every other through some chain of bots (`wins` [i, j]:
    i's wins over j): the condition for the likelihood to have a finite maximum."""
    return bool(connected_components(wins > 0, directed=True, connection="strong")[0] == 1)


def _placed(wins: FloatArray, theta: FloatArray, i: int, prior_draws: float) -> float:
    """Bot i's log-strength against the bots placed so far (held fixed): its comparisons
    with them plus one virtual draw each, maximised in one variable."""
    others = np.flatnonzero(np.isfinite(theta))
    won = wins[i, others] + prior_draws / 2
    lost = wins[others, i] + prior_draws / 2
    t = theta[others]

    def gradient(x: float) -> float:
        p = 1 / (1 + np.exp(-(x - t)))
        return float(np.sum(won * (1 - p) - lost * p))

    low, high = float(t.min()) - 50, float(t.max()) + 50
    return float(brentq(gradient, low, high, xtol=1e-12)) if math.isfinite(low) else 0.0


def _prior_fit(wins: FloatArray, rated: NDArray[np.bool_], prior_draws: float) -> FloatArray:
    """Every rated bot's log-strength with one virtual draw per pair (BayesElo's prior)."""
    out = np.full(len(rated), np.nan)
    idx = np.flatnonzero(rated)
    sub = wins[np.ix_(idx, idx)] + prior_draws / 2 * (1 - np.eye(len(idx)))
    theta = choix.ilsr_pairwise_dense(sub, alpha=0.0, max_iter=10_000, tol=1e-12)
    out[idx] = theta - theta.mean()
    return out
