"""The ladder's next table from its fit as it stands: the one place where the ratings, the
deal sets each version has, and the recent tables meet matchmaking (`contest run` and the
benchmarks choose through it, so what is measured is what runs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..matchmaking import Candidate, Share, next_table
from ..ranking import Rating, ranked
from ..ratings import LadderRatings

NOT_RATED = Rating(None, None, None, 0)


def choose_table(ratings: LadderRatings, fitted: Mapping[str, Rating],
                 keys: Mapping[str, int], counts: Mapping[int, tuple[int, int]],
                 recent: Sequence[tuple[int, ...]], seats: int, placement: int,
                 bounds: tuple[float, float] | None) -> tuple[int, ...] | None:
    """The keys of the next table's versions (`keys`: each version's label to its key, the
    versions in play), or None with too few in play. `fitted`: the last fit's ratings by
    label; `counts`: each key's deal sets done and in flight; `recent`: the last tables, as
    keys, oldest first (at most `Share.window` of them are read). `bounds`: the minimum
    share and pair cap (the contest's), rule 3 then reading the spread of each pair's
    difference (`LadderRatings.spread`); None: neither, and the doubt about each pair's order
    (matchmaking before issue 44)."""
    order = ranked({label: fitted.get(label) or NOT_RATED for label in keys})
    candidates = []
    for label in order:
        done, pending = counts.get(keys[label], (0, 0))
        rating = fitted.get(label) or NOT_RATED
        candidates.append(Candidate(keys[label], *rating.resampled, done, pending))
    share = None
    unsure = ratings.doubt
    if bounds is not None:
        share = Share(*bounds, recent=recent[-Share.window(len(order)):])
        unsure = ratings.spread
    return next_table(candidates, seats, placement, unsure(order), unsure(order, apart=2),
                      share)
