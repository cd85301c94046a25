"""Which table the ladder plays next: every choice is a whole deal set, in balanced seatings.

How the choice is made (docs/contest.md says it for organisers), the first rule that applies:
1. **Placement.** A version with fewer than `placement` deal sets (done or in flight) plays
   first. Its opponents are spread over the current ranking: its b-th placement deal set
   seats it with the versions found at evenly spaced places of the ranking, shifted by b, so a
   few deal sets see the top, the middle and the bottom, and its rating lands near its place
   at once, whatever that place is.
2. **Settling.** A version past its burst with fewer than `SETTLING` x `placement` deal sets
   (done or in flight; the least of them first) plays the version within two places of it
   in the ranking whose difference from it is least measured (rule 3's measure: the
   spread in the contest, the doubt without its bounds; ties to the nearest). The burst
   lands it near its place, often a place or two off; these deal sets are the ones that can
   still move it there, where a round robin spreads them over bots far above and below it.
   Two places, not one: a version one place too high has its true place's holder two
   below.
3. **Where the ranking is least measured.** Otherwise, among every two versions at most two
   places apart in the ranking, the pair whose rating difference the games have measured
   least: the spread (standard deviation) of their difference in the ladder's fit
   (`ratings.LadderRatings.spread`: from who met whom how often, never from who won),
   weighted by the upper version's depth, 1/(1 + x) with x its place in the ranking scaled
   to 0..1 (the top 1, the bottom 1/2, `lean_weight`): a leaderboard is read from the top,
   and the final takes its top K; gently, since a version's games must not hang on the
   place its luck gave it. It is divided by 1 + the pair's deal sets in flight (evidence on its
   way), so parallel jobs do not all pile onto one pair. The pair with the largest share
   plays, ties to the pair with fewer deal sets played; the rest of a table of k seats is
   filled with the versions nearest the upper one (`least_measured_pair`).
   Why the spread and not the doubt about the order (how likely the fit makes it that the
   two stand the other way round, what this rule read before): the doubt is read from the
   difference itself, so a pair played on while it looked close and stopped once it looked
   apart, whichever way its luck had gone, and its gap was read too wide: two equal
   leaders came out 7 and 12 Elo too high, the last version 5 too low, 2-5 standard
   errors (bench/bench_matchmaking.py). The spread says how many games the pair had, not
   how they went. (Without the organiser's bounds, `share` None, this rule is as before:
   the neighbouring pair in most doubt, `uncertain_pair`, the overlap of the intervals
   standing in where no doubt is given.)
Versions that are not in play (superseded, retired, suspended) are not candidates.

Two organiser's settings (`Share`, fixed at `contest init`) bound rules 3 and 4 over the
ladder's last `window` deal sets (WINDOW x the versions in play; `recent`):
- **Minimum share.** A version in play whose deal sets among the recent ones are fewer than
  `min_share` x its fair share (seats / versions of them) plays next (the furthest below
  first), against opponents spread over the ranking as in placement (`spread`), those it is
  capped with left out. Spread, not the rival in most doubt: the deal sets that keep a
  version measured should not depend on how its last results fell (bench/bench_matchmaking.py
  measured both: the same bias within its noise). Before (issue 44), two equal leaders took
  952 of the last 1,000 games and every other version stopped playing after ~48: a rating
  that stops moving keeps whatever luck it had when it stopped.
- **Pair cap.** A pair (rule 3's, or a minimum share's opponent) that sat together in
  `pair_cap` x `window` of the recent deal sets or more is not chosen while another can be;
  with every neighbouring pair capped, the pair with the fewest recent deal sets plays.

Why: a round robin spends most of its games on pairs whose order is already sure (the top
against the bottom); a deal set between two versions whose order is in doubt is the one
whose outcome can still reorder them, and a ranking is known once each neighbouring pair is.
`bench/bench_contest.py` measures the games this saves.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

SETTLING: Final = 4  # a version settles until it has 4 x the placement burst's deal sets
DEPTH: Final = 5.0  # the least certain pair is weighted 1/(1 + DEPTH x)^2, x its depth 0..1
WINDOW: Final = 10  # the recent deal sets the share and cap count: WINDOW x versions in play
MIN_SHARE: Final = 0.5  # of a version's fair share (seats / versions) of the recent deal sets
PAIR_CAP: Final = 0.25  # of the recent deal sets, at most, for any one pair
LEAN: Final = 1.0  # the contest's rule 3: the top pair weighs 1 + LEAN times the bottom one


@dataclass(frozen=True, slots=True)
class Share:
    """The organiser's bounds on who plays how much (fixed at `contest init`), and the
    tables of the ladder's recent deal sets (version ids, oldest first, in flight among
    them) they are counted over: at most `window(n)` of them."""

    min_share: float = MIN_SHARE
    pair_cap: float = PAIR_CAP
    recent: Sequence[tuple[int, ...]] = ()
    seats: Counter[int] = field(init=False, compare=False)
    pairs: Counter[frozenset[int]] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        seats: Counter[int] = Counter(v for table in self.recent for v in table)
        pairs: Counter[frozenset[int]] = Counter(
            frozenset(p) for table in self.recent for p in itertools.combinations(table, 2))
        object.__setattr__(self, "seats", seats)
        object.__setattr__(self, "pairs", pairs)

    @staticmethod
    def window(versions: int) -> int:
        """How many recent deal sets are counted with `versions` in play."""
        return WINDOW * max(versions, 2)

    def owed(self, ranking: Sequence[Candidate], seats: int) -> Candidate | None:
        """The version furthest below its minimum share of the recent deal sets, if any."""
        if not self.recent:
            return None
        floor = self.min_share * len(self.recent) * seats / len(ranking)
        below = [c for c in ranking if self.seats[c.key] < floor]
        return min(below, key=lambda c: (self.seats[c.key], c.deal_sets, c.key), default=None)

    def capped(self, a: int, b: int, versions: int) -> bool:
        """Whether versions a and b sat together in their cap's worth of recent deal sets."""
        return self.pairs[frozenset((a, b))] >= self.pair_cap * self.window(versions)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A version in play as matchmaking sees it: its place in the ranking (0 = top), its
    95% interval (None: not rated), and its deal sets done and in flight."""

    key: int  # the version's id
    low: float | None
    high: float | None
    done: int
    pending: int

    @property
    def deal_sets(self) -> int:
        return self.done + self.pending


def next_table(ranking: Sequence[Candidate], seats: int, placement: int,
               doubt: Sequence[float] | None = None,
               doubt2: Sequence[float] | None = None,
               share: Share | None = None) -> tuple[int, ...] | None:
    """The versions (ids) of the next deal set's table, or None with fewer than `seats`
    versions in play. `ranking` is best first; `doubt[i]`, when given, is how little is
    known of `ranking[i]` against `ranking[i + 1]`, and `doubt2[i]` the same for
    `ranking[i]` and `ranking[i + 2]`, larger meaning less: with `share` (the contest) the
    spread of their difference (`ratings.LadderRatings.spread` with `apart` 1 and 2), without
    it the doubt about their order (`LadderRatings.doubt`); where not given, the overlap of
    their intervals stands for it. `share`: the minimum share and pair cap over the recent
    deal sets (None: neither, and rule 3 as before issue 44)."""
    if len(ranking) < seats:
        return None
    newcomers = [c for c in ranking if c.deal_sets < placement]
    if newcomers:
        new = min(newcomers, key=lambda c: (c.deal_sets, c.key))
        return (new.key, *spread(ranking, new, seats - 1))
    unrated = [c for c in ranking if c.low is None or c.high is None]
    if unrated:  # a version that played only against versions now out of play
        new = min(unrated, key=lambda c: (c.deal_sets, c.key))
        return (new.key, *spread(ranking, new, seats - 1))
    unsure = Doubts(ranking, doubt, doubt2)
    settling = [c for c in ranking if c.deal_sets < SETTLING * placement]
    if settling:
        new = min(settling, key=lambda c: (c.deal_sets, c.key))
        place = ranking.index(new)
        rival = settling_rival(place, len(ranking), unsure)
        return tuple(ranking[i].key for i in nearest(place, rival, len(ranking), seats))
    if share is None:
        at = uncertain_pair(ranking, doubt)
        assert at is not None  # no cap: every pair is free
        return tuple(ranking[i].key for i in around(at, len(ranking), seats))
    owed = share.owed(ranking, seats)
    if owed is not None:
        return (owed.key, *spread(ranking, owed, seats - 1, share))
    pair = least_measured_pair(ranking, unsure, share)
    if pair is None:  # every near pair at its cap: the pair least seen lately
        pair = min(itertools.combinations(range(len(ranking)), 2),
                   key=lambda p: (share.pairs[frozenset((ranking[p[0]].key,
                                                         ranking[p[1]].key))], p))
    return tuple(ranking[i].key for i in nearest(*pair, len(ranking), seats))


class Doubts:
    """The doubt about the order of the versions at two places of the ranking, at most two
    apart: the bootstrap's where given, else the overlap of their intervals."""

    def __init__(self, ranking: Sequence[Candidate], doubt: Sequence[float] | None,
                 doubt2: Sequence[float] | None) -> None:
        self.ranking, self.given = ranking, {1: doubt, 2: doubt2}

    def __call__(self, i: int, j: int) -> float:
        top, apart = min(i, j), abs(i - j)
        given = self.given.get(apart)
        if given is not None:
            return given[top]
        return overlap(self.ranking[i], self.ranking[j])


def settling_rival(place: int, n: int, unsure: Doubts) -> int:
    """The place, within two of `place`, of the version whose order against it is in most
    doubt, ties to the nearest (then the higher)."""
    near = [q for q in range(place - 2, place + 3) if q != place and 0 <= q < n]
    return min(near, key=lambda q: (-unsure(place, q), abs(q - place), q))


def nearest(place: int, rival: int, n: int, seats: int) -> list[int]:
    """`place` and `rival`, then the places nearest `place` (the higher first) up to
    `seats`."""
    rest = sorted((q for q in range(n) if q not in (place, rival)),
                  key=lambda q: (abs(q - place), q))
    return [place, rival, *rest[:seats - 2]]


def spread(ranking: Sequence[Candidate], new: Candidate, count: int,
           share: Share | None = None) -> list[int]:
    """`count` opponents at evenly spaced places of the ranking (the new version left out),
    shifted by the deal sets it has had, so its next placement deal set sees other places;
    with `share`, the versions it is capped with left out while others remain."""
    others = [c for c in ranking if c.key != new.key]
    if share is not None:
        free = [c for c in others if not share.capped(new.key, c.key, len(ranking))]
        others = free if len(free) >= count else others
    n, step = len(others), len(others) / count
    shift = (new.deal_sets * 0.618034) % 1.0  # golden-ratio steps: every place, evenly, soon
    picked: list[int] = []
    for s in range(count):
        k = int((s + shift) * step) % n
        while others[k].key in picked:
            k = (k + 1) % n
        picked.append(others[k].key)
    return picked


def overlap(a: Candidate, b: Candidate) -> float:
    """How much two intervals overlap, as a share of the narrower (0: apart, 1: nested)."""
    assert a.low is not None and a.high is not None and b.low is not None and b.high is not None
    shared = min(a.high, b.high) - max(a.low, b.low)
    narrow = max(min(a.high - a.low, b.high - b.low), 1e-9)
    return max(0.0, shared / narrow)


def depth_weight(i: int, pairs: int) -> float:
    """How much the order of the pair at place i of `pairs` neighbouring pairs counts:
    1/(1 + 5x)^2, x its place scaled to 0..1 (the top pair 1, the bottom one 1/36)."""
    x = i / (pairs - 1) if pairs > 1 else 0.0
    return 1.0 / (1.0 + DEPTH * x) ** 2


def uncertain_pair(ranking: Sequence[Candidate], doubt: Sequence[float] | None = None,
                   share: Share | None = None) -> int | None:
    """The place i of the neighbouring pair (i, i + 1) whose order is least certain, weighted
    top first (`depth_weight`), among the pairs under their cap (`share`); None if every one
    is at its cap."""
    pairs = len(ranking) - 1
    n = len(ranking)
    free = [i for i in range(pairs)
            if share is None or not share.capped(ranking[i].key, ranking[i + 1].key, n)]
    if not free:
        return None

    def key(i: int) -> tuple[float, int]:
        a, b = ranking[i], ranking[i + 1]
        unsure = doubt[i] if doubt is not None else overlap(a, b)
        # A deal set in flight is evidence on its way: the pair's claim shrinks with each.
        return (-unsure * depth_weight(i, pairs) / (1 + a.pending + b.pending),
                a.deal_sets + b.deal_sets)

    return min(free, key=key)


def lean_weight(i: int, pairs: int) -> float:
    """How much the pair whose upper version stands at place i counts in the contest's rule
    3: 1/(1 + LEAN x), x the place scaled to 0..1 over the `pairs` places (the top 1, the
    bottom 1/2). Gentler than `depth_weight` on purpose: where a version's games depend
    steeply on the place its luck gave it, its luck decides how much it is measured
    (bench/bench_matchmaking.py, 60 ladders: ranks within 1.1 standard errors with this
    weight; rank 3 at +6.0 Elo, 3.4 standard errors, with none)."""
    x = i / (pairs - 1) if pairs > 1 else 0.0
    return 1.0 / (1.0 + LEAN * x)


def least_measured_pair(ranking: Sequence[Candidate], unsure: Doubts, share: Share
                        ) -> tuple[int, int] | None:
    """The places (i, j) of the pair at most two places apart whose rating difference is
    least measured (`unsure`: the spread of the difference), weighted top first by the
    upper place (`lean_weight`) and divided by 1 + its deal sets in flight, among the pairs
    under their cap; None if every one is at its cap.

    Why the spread and not the doubt about the order: the doubt is read from the difference
    itself, so a pair kept playing while it looked close stopped once it looked apart,
    whichever way its luck had gone; its difference was then read too wide (a run of luck
    that pulls two versions apart ends their games and stays; one that pulls them together
    brings more games, which undo it). Down the ranking every gap widened: in
    bench/bench_matchmaking.py the two equal leaders came out +7 and +12 Elo too high and the
    last -5 too low, 2-5 standard errors. The spread says only how many games the pair had
    and between whom, not how they went. Two places apart, not one: with the nearest pair
    at its cap (two equal leaders), the version placed second by luck would be the only
    one to meet the third, and a leader placed first by luck would keep it."""
    n = len(ranking)
    pairs = n - 1
    near = [(i, j) for i in range(n) for j in (i + 1, i + 2) if j < n
            and not share.capped(ranking[i].key, ranking[j].key, n)]
    if not near:
        return None

    def key(pair: tuple[int, int]) -> tuple[float, int, tuple[int, int]]:
        a, b = ranking[pair[0]], ranking[pair[1]]
        return (-unsure(*pair) * lean_weight(pair[0], pairs) / (1 + a.pending + b.pending),
                a.deal_sets + b.deal_sets, pair)

    return min(near, key=key)


def around(i: int, n: int, seats: int) -> list[int]:
    """Places i and i + 1, then their nearest neighbours (above, below, ...) up to `seats`."""
    picked = [i, i + 1]
    up, down = i - 1, i + 2
    while len(picked) < seats:
        if up >= 0 and (len(picked) % 2 == 0 or down >= n):
            picked.append(up)
            up -= 1
        elif down < n:
            picked.append(down)
            down += 1
        else:
            picked.append(up)
            up -= 1
    return picked
