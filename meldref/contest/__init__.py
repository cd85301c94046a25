"""A contest that runs for weeks: submissions, a standing ladder, and a live leaderboard.

- `settings`: what is fixed at `init` (game, seats, rules, limits, sandbox, thresholds).
- `store`: the SQLite database of the contest folder (bots, versions, deal sets, games,
  ratings), its check on open, and the replay folder it must agree with.
- `submit`: a bot program copied in, checked as `bot check` checks, given a version.
- `ratings`: the order-free fit of the ladder's games, with intervals, fast at 200 bots.
- `matchmaking`: which deal set the ladder plays next, and why.
- `ladder`: `contest run`, the ladder played on the local pool or a cluster.
- `final`: the closing round robin of the top versions on fresh deal sets.
- `serve`: the leaderboard, a page per bot, and every game in the viewer.
"""

from __future__ import annotations

import os

BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """Hold numpy's linear algebra to one thread, unless the environment says otherwise; call
    it before numpy is imported (`contest run` and `final` do, before the ratings). The
    ladder's fits are many small solves (200 x 200 at 200 bots), which threads do not speed
    up, while the run's workers hold the other cores: on 2 shared cores a refresh after a deal
    set took 14.96 s with OpenBLAS's threads and 3.66 s with one
    (`python bench/bench_contest.py --only refresh`, which calls this too)."""
    for name in BLAS_THREADS:
        os.environ.setdefault(name, "1")
