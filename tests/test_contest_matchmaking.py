"""Matchmaking's rules after the placement burst (meldref/contest/matchmaking.py): a version
settling into its place plays the opponent within two places whose order against it is in
most doubt; the least certain pair is weighted top first; the ladder's doubt about two
versions any number of places apart; with the organiser's bounds (the contest), the next
table read from who met whom, never from who won (issue 44). (The burst itself and the
in-flight rule: tests/test_contest.py.)"""

from __future__ import annotations

import pytest

from meldref.contest.ladder.choose import choose_table
from meldref.contest.matchmaking import (
    MIN_SHARE,
    PAIR_CAP,
    SETTLING,
    Candidate,
    depth_weight,
    next_table,
)
from meldref.contest.ratings import LadderRatings
from meldref.verdicts.games import GameResult

PLACEMENT = 2


def ladder_of(count: int, done: int = 10 * PLACEMENT) -> list[Candidate]:
    """`count` settled versions, ids = places, intervals that all overlap."""
    return [Candidate(k, -10.0 * k, 100 - 10.0 * k, done, 0) for k in range(count)]


# ----------------------------------------------------------------------------------------------
# (a) Settling: past its burst, a version plays the nearest in doubt within two places


def settling_ranking() -> list[Candidate]:
    """Six versions; the one at place 3 (id 3) is past its burst but not settled."""
    ranking = ladder_of(6)
    ranking[3] = Candidate(3, -30.0, 70.0, PLACEMENT, 0)
    return ranking


# The top pair is in most doubt of the neighbours; of the versions within two places of
# place 3, the one at place 1 (two above) is the one its order against is least sure of.
NEIGHBOURS = [0.5, 0.05, 0.02, 0.03, 0.01]
TWO_APART = [0.01, 0.3, 0.01, 0.01]


def test_a_version_past_its_burst_plays_the_one_in_most_doubt_within_two_places() -> None:
    assert next_table(settling_ranking(), 2, PLACEMENT, NEIGHBOURS, TWO_APART) == (3, 1)
    # More seats: the places nearest its own, the higher first.
    assert next_table(settling_ranking(), 3, PLACEMENT, NEIGHBOURS, TWO_APART) == (3, 1, 2)


def test_settling_ties_go_to_the_nearest() -> None:
    even = [0.2] * 5
    assert next_table(settling_ranking(), 2, PLACEMENT, even, [0.2] * 4) == (3, 2)


def test_settling_lasts_until_four_times_the_burst() -> None:
    ranking = settling_ranking()
    ranking[3] = Candidate(3, -30.0, 70.0, SETTLING * PLACEMENT - 1, 0)
    assert next_table(ranking, 2, PLACEMENT, NEIGHBOURS, TWO_APART) == (3, 1)
    ranking[3] = Candidate(3, -30.0, 70.0, SETTLING * PLACEMENT, 0)
    # Settled: the least certain pair plays again (the top one).
    assert next_table(ranking, 2, PLACEMENT, NEIGHBOURS, TWO_APART) == (0, 1)


def test_deal_sets_in_flight_count_towards_settling() -> None:
    ranking = settling_ranking()
    ranking[3] = Candidate(3, -30.0, 70.0, PLACEMENT, SETTLING * PLACEMENT)
    assert next_table(ranking, 2, PLACEMENT, NEIGHBOURS, TWO_APART) == (0, 1)


def test_the_least_settled_version_settles_first() -> None:
    ranking = settling_ranking()
    ranking[0] = Candidate(0, 0.0, 100.0, PLACEMENT + 1, 0)
    table = next_table(ranking, 2, PLACEMENT, NEIGHBOURS, TWO_APART)
    assert table is not None and table[0] == 3
    ranking[0] = Candidate(0, 0.0, 100.0, PLACEMENT, 0)
    ranking[3] = Candidate(3, -30.0, 70.0, PLACEMENT + 1, 0)
    # Place 0's rivals: places 1 (doubt 0.5) and 2 (0.01).
    assert next_table(ranking, 2, PLACEMENT, NEIGHBOURS, TWO_APART) == (0, 1)


def test_without_the_bootstrap_the_intervals_overlap_stands_in_for_settling() -> None:
    # Place 3 overlaps place 5 entirely and its other neighbours hardly at all.
    ranking = [Candidate(0, 300, 320, 20, 0), Candidate(1, 200, 220, 20, 0),
               Candidate(2, 100, 140, 20, 0), Candidate(3, 40, 60, PLACEMENT, 0),
               Candidate(4, -100, 45, 20, 0), Candidate(5, 35, 65, 20, 0)]
    assert next_table(ranking, 2, PLACEMENT) == (3, 5)


# ----------------------------------------------------------------------------------------------
# (b) The least certain pair, weighted top first


def test_the_depth_weight_runs_from_one_at_the_top_to_a_36th_at_the_bottom() -> None:
    assert depth_weight(0, 5) == 1.0
    assert depth_weight(4, 5) == pytest.approx(1 / 36)
    assert depth_weight(2, 5) == pytest.approx(1 / 3.5 ** 2)
    assert depth_weight(0, 1) == 1.0  # one pair: it is the top


def test_a_pair_near_the_top_plays_before_a_bottom_pair_in_more_doubt() -> None:
    # The bottom pair is in more doubt (0.45) than the top one (0.3), but the top counts
    # 36 times as much: 0.3 against 0.45 / 36.
    assert next_table(ladder_of(4), 2, PLACEMENT, [0.3, 0.01, 0.45]) == (0, 1)
    # Deep enough doubt still wins: the bottom pair alone in doubt.
    assert next_table(ladder_of(4), 2, PLACEMENT, [0.001, 0.01, 0.45]) == (2, 3)


# ----------------------------------------------------------------------------------------------
# (c) The ladder's doubt about two versions any number of places apart


def chain_ladder() -> LadderRatings:
    """a beats b and b beats c two deal sets in three; a and c never meet."""
    ladder = LadderRatings()
    for top, bottom in (("a", "b"), ("b", "c")):
        for k in range(30):
            won = k % 3 != 0
            ladder.add_deal_set([GameResult(0, (top, bottom), (1, 2) if won else (2, 1),
                                            (0.0, 1.0))])
    ladder.fit(["a", "b", "c"], resamples=200)
    return ladder


def test_the_doubt_two_places_apart_is_read_like_the_neighbours() -> None:
    ladder = chain_ladder()
    (a_c,) = ladder.doubt(["a", "b", "c"], apart=2)
    assert a_c == pytest.approx(ladder.doubt(["a", "c"])[0])
    assert ladder.doubt(["c", "b", "a"], apart=2) == [pytest.approx(1 - a_c)]
    # Two steps of evidence in the same direction: surer than either step alone.
    a_b, b_c = ladder.doubt(["a", "b", "c"])
    assert 0 <= a_c < min(a_b, b_c)
    assert ladder.doubt(["a", "b", "c"], apart=1) == [a_b, b_c]
    assert ladder.doubt(["a", "b", "c"], apart=3) == []


def test_the_doubt_about_a_version_not_fitted_yet_is_one() -> None:
    assert chain_ladder().doubt(["a", "b", "new"], apart=2) == [1.0]


def test_the_doubt_needs_two_distinct_places() -> None:
    with pytest.raises(ValueError, match="apart"):
        chain_ladder().doubt(["a", "b"], apart=0)


# ----------------------------------------------------------------------------------------------
# (d) Issue 44: the contest's matchmaking chooses by who met whom, never by who won


def ladder_with(results: dict[tuple[str, str], tuple[int, int]]) -> LadderRatings:
    """Deal sets of two games, pair (x, y) winning (x's wins, y's wins) of them in all."""
    ladder = LadderRatings()
    for (x, y), (x_wins, y_wins) in results.items():
        outcomes = [True] * x_wins + [False] * y_wins
        for k in range(0, len(outcomes), 2):
            ladder.add_deal_set([
                GameResult(k, (x, y) if s == 0 else (y, x),
                           (1, 2) if won == (s == 0) else (2, 1), (0.0, 0.0))
                for s, won in enumerate(outcomes[k:k + 2])])
    return ladder


def table_of(ladder: LadderRatings, bounds: tuple[float, float] | None) -> tuple[int, ...]:
    names = ["a", "b", "c", "d"]
    fitted = ladder.fit(names)
    assert [n for n in sorted(names, key=lambda n: -(fitted[n].rating or 0))] == names
    table = choose_table(ladder, fitted, {n: k for k, n in enumerate(names)},
                         dict.fromkeys(range(4), (30, 0)), [], 2, PLACEMENT, bounds)
    assert table is not None
    return table


def test_the_contests_next_table_reads_the_games_counts_not_their_results() -> None:
    # Two ladders with the same games between the same versions, in the same order, b and
    # c close in one (7-5) and far apart in the other (11-1). A rule that reads the
    # results plays b and c on while they look close and stops once they look apart, and
    # the gap it leaves is read too wide (bench/bench_matchmaking.py: the leaders 7-12 Elo
    # too high, 2-5 standard errors, when the contest read the doubt about their order).
    counts = {("a", "b"): (11, 1), ("c", "d"): (7, 5), ("a", "c"): (3, 1), ("b", "d"): (3, 1)}
    close = ladder_with({**counts, ("b", "c"): (7, 5)})
    apart = ladder_with({**counts, ("b", "c"): (11, 1)})
    bounds = (MIN_SHARE, PAIR_CAP)
    assert table_of(close, bounds) == table_of(apart, bounds)
    # The doubt (the rule without the organiser's bounds, and the contest's before): the
    # results decide.
    assert table_of(close, None) != table_of(apart, None)
