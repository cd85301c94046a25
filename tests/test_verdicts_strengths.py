"""The strengths behind the standings (issue 44): no prior where the maximum likelihood
exists, bots peeled layer by layer where it does not, and no interval for a field without a
maximum."""

from __future__ import annotations

import numpy as np

from meldref.verdicts.games import GameResult
from meldref.verdicts.ratings import standings
from meldref.verdicts.strengths import NO_MAXIMUM, fit_strengths, peel


def wins_of(pairs: dict[tuple[int, int], float], n: int) -> np.ndarray:
    out = np.zeros((n, n))
    for (i, j), w in pairs.items():
        out[i, j] = w
    return out


def test_layers_are_peeled_from_the_outside_in() -> None:
    # 0, 1, 2 beat one another; 3 beat only 4; 4 beat nobody; 5 lost to nobody.
    wins = wins_of({(0, 1): 2, (1, 0): 1, (1, 2): 2, (2, 1): 1, (2, 0): 1, (0, 2): 1,
                    (0, 3): 3, (1, 3): 2, (3, 4): 2, (2, 4): 1, (5, 0): 2, (5, 3): 1}, 6)
    rated = np.ones(6, dtype=bool)
    assert peel(wins, rated).tolist() == [0, 0, 0, -2, -1, 1]
    fit = fit_strengths(wins, rated, prior_draws=1.0)
    assert fit.why is None
    theta = fit.theta
    assert theta[4] < theta[3] < min(theta[:3]) and theta[5] > max(theta[:3])
    # The core's fit is its own maximum likelihood: the peeled bots' games do not move it.
    alone = fit_strengths(wins[:3, :3], np.ones(3, dtype=bool), prior_draws=1.0).theta
    core = theta[:3] - theta[:3].mean()
    assert np.allclose(core, alone - alone.mean(), atol=1e-8)


def test_a_field_without_a_maximum_gets_no_interval_and_says_why() -> None:
    # {a, b} and {c, d} each split their games; a and b always beat c and d... and c and d
    # never placed above a or b: no finite maximum separates the groups.
    games = []
    for d in range(12):
        games += [GameResult(d, ("a", "b"), (1, 2) if d % 2 else (2, 1), (0, 1)),
                  GameResult(d, ("c", "d"), (1, 2) if d % 2 else (2, 1), (0, 1))]
        games += [GameResult(d, (x, y), (1, 2), (0, 1)) for x in "ab" for y in "cd"]
    rows = standings(games).rows
    assert [r.bot for r in rows][:2] in (["a", "b"], ["b", "a"])
    for r in rows:
        assert r.rating is not None and r.rating_low is None and r.rating_high is None
        assert r.no_interval == NO_MAXIMUM and r.rank_held is None
