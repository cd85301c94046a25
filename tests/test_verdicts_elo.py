"""Scores, Elo, normalised Elo and LOS from deal sets: fastchess's published figures, and
the findings of issue 8 (intervals from the games of a deal as if independent; "Elo -0")."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sps

from meldref.verdicts.elo import (
    Estimate,
    ScoreStats,
    elo_from_score,
    finite,
    format_elo,
    ratio_estimate,
    score_from_elo,
    signed,
)


def wdl(wins: int, losses: int, draws: int) -> ScoreStats:
    return ScoreStats.from_counts([losses, draws, wins])


def penta(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> ScoreStats:
    return ScoreStats.from_counts([ll, ld, wl + dd, wd, ww])


# fastchess app/tests/elo_test.cpp: (stats, nElo, nElo error, Elo, Elo error, LOS %); None
# where the test gives no figure.
FASTCHESS = [
    (wdl(76, 89, 123), -20.76, 40.13, None, None, 15.53),
    (wdl(136, 96, 111), 49.77, 36.77, 40.70, 30.43, 99.60),
    (wdl(34, 356, 0), -508.44, 34.48, None, None, None),
    (penta(34, 54, 31, 32, 64, 75), 57.94, 28.28, 55.58, 27.65, 100.00),
    (penta(332, 433, 457, 41, 333, 334), -9.17, 10.96, -8.64, 10.33, 5.05),
    (penta(7895, 8757, 5485, 200, 568, 9999), -19.01, 2.65, -21.04, 2.95, None),
]


@pytest.mark.parametrize(("s", "nelo", "nelo_err", "elo", "elo_err", "los"), FASTCHESS)
def test_fastchess_reference_figures(s: ScoreStats, nelo: float, nelo_err: float,
                                     elo: float | None, elo_err: float | None,
                                     los: float | None) -> None:
    # fastchess's errors are normal intervals on the population variance: ours with the
    # variance taken as known (infinitely many units). Ours proper use Student's t on the
    # sample variance: wider, by t(0.975, n-1) / 1.96 * sqrt(n / (n-1)).
    known = ScoreStats(Estimate(s.score.mean, s.score.se), s.games)
    assert s.nelo == pytest.approx(nelo, abs=0.01)
    assert known.nelo_error == pytest.approx(nelo_err, abs=0.01)
    n = s.score.units
    widen = sps.t.ppf(0.975, n - 1) / sps.norm.ppf(0.975) * math.sqrt(n / (n - 1))
    assert s.nelo_error == pytest.approx(known.nelo_error * widen, rel=1e-9)
    if elo is not None:
        assert s.elo == pytest.approx(elo, abs=0.01)
        assert known.elo_error == pytest.approx(elo_err, abs=0.01)
        assert s.elo_error > known.elo_error
    if los is not None:
        assert 100 * s.los == pytest.approx(los, abs=0.01)


def test_deal_sets_of_equal_size_are_the_pentanomial() -> None:
    # Each deal set: 2 games; half-points 0..4. from_units and from_counts must agree.
    counts = [34, 54, 31 + 32, 64, 75]
    points, sizes = [], []
    for half, n in enumerate(counts):
        points += [half / 2] * n
        sizes += [2] * n
    a, b = ScoreStats.from_units(points, sizes), ScoreStats.from_counts(counts)
    assert a.score.mean == pytest.approx(b.score.mean, abs=1e-12)
    assert a.score.se == pytest.approx(b.score.se, abs=1e-12)
    assert a.games == b.games == 2 * sum(counts)


def test_interval_is_scipys_t_interval_on_deal_set_scores() -> None:
    # Was the normal interval on the population variance: at 5 deal sets it covered 76-79%,
    # and at 3 it was 2.7 times too narrow.
    deal_scores = [0.5, 0.5, 1.0, 0.75, 0.5, 0.25, 1.0, 0.5, 0.75, 0.5]
    s = ScoreStats.from_units([2 * x for x in deal_scores], [2] * len(deal_scores))
    n = len(deal_scores)
    sd = sps.tstd(deal_scores)  # the sample deviation (n - 1)
    low, high = sps.t.interval(0.95, n - 1, loc=sum(deal_scores) / n, scale=sd / math.sqrt(n))
    assert (s.score.low, s.score.high) == pytest.approx((low, high), abs=1e-12)
    three = ScoreStats.from_units([1.0, 2.0, 1.5, 0.5, 2.0], [2] * 5)
    sd3 = sps.tstd([0.5, 1.0, 0.75, 0.25, 1.0])
    assert three.score.high - three.score.low == pytest.approx(
        2 * sps.t.ppf(0.975, 4) * sd3 / math.sqrt(5), rel=1e-12)


@pytest.mark.parametrize(("points", "why"), [
    ([2.0], "1 deal set: an interval needs 5 or more"),
    ([2.0, 1.0, 0.0, 2.0], "4 deal sets: an interval needs 5 or more"),
    ([2.0] * 12, "every deal set scored the same"),  # a 100% score
    ([1.0] * 30, "every deal set scored the same"),  # every deal set 1-1
])
def test_where_the_data_support_no_interval_there_is_none_and_the_reason(
        points: list[float], why: str) -> None:
    # Was: a point printed as an interval ("100.0% (95% CI 100.0..100.0%)"), LOS 100%.
    s = ScoreStats.from_units(points, [2] * len(points))
    data = s.to_json()
    assert data["score_ci95"] == [None, None] and data["elo_ci95"] == [None, None]
    assert data["los"] is None and data["nelo_error"] is None
    assert data["no_interval"] is not None and why in data["no_interval"]
    assert "no 95% interval" in s.text() and why in s.text() and "CI" not in s.text()


def test_duplicate_pairs_get_a_narrower_interval_than_games_counted_alone() -> None:
    # Issue 8: on duplicate deals the games of a deal set are anti-correlated (the good
    # cards change hands), so a per-game interval is too wide. 100 deal sets: 70 split 1-1,
    # 20 won 2-0, 10 lost 0-2.
    counts = [10, 0, 70, 0, 20]
    paired = ScoreStats.from_counts(counts)
    games = ScoreStats.from_counts([10 * 2 + 70, 0, 20 * 2 + 70])  # the same 200 games
    assert paired.score.mean == games.score.mean == 0.55
    assert paired.score.se == pytest.approx(math.sqrt(0.0725 / 100), rel=1e-12)
    assert games.score.se == pytest.approx(math.sqrt(0.55 * 0.45 / 200), rel=1e-12)
    assert paired.score.se < 0.8 * games.score.se


def test_elo_error_from_the_real_variance_is_narrower_than_wilsons_with_draws() -> None:
    # Issue 8: with many draws the Wilson band (p(1-p) with p = score) is too wide.
    s = wdl(30, 20, 150)
    p, n, z = s.score.mean, s.games, 1.959963984540054
    wilson_half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    wilson_elo = (elo_from_score(p + wilson_half) - elo_from_score(p - wilson_half)) / 2
    assert s.elo_error < 0.6 * wilson_elo
    var = (30 * (1 - p) ** 2 + 150 * (0.5 - p) ** 2 + 20 * p**2) / 200
    assert s.score.se == pytest.approx(math.sqrt(var / 200), rel=1e-12)


def test_never_minus_zero_and_infinite_elo_is_never_a_number() -> None:
    assert format_elo(-0.3) == "+0"
    assert format_elo(-0.0) == "+0"
    assert format_elo(0.4) == "+0"
    assert format_elo(-12.6) == "-13"
    assert signed(-0.04, 1) == "+0.0"
    assert format_elo(math.inf) == format_elo(-math.inf) == "n/a"
    tiny = finite(-1e-9)
    assert tiny == 0 and tiny is not None and math.copysign(1, tiny) == 1
    assert finite(math.inf) is None and finite(math.nan) is None
    everything_won = ScoreStats.from_counts([0, 0, 12])
    data = everything_won.to_json()
    assert data["elo"] is None and data["elo_ci95"] == [None, None]
    assert "n/a" in everything_won.text() and "inf" not in everything_won.text()
    assert data["score"] == 1.0 and data["los"] is None  # was 1.0: from 12 games, invented


def test_even_score_prints_plus_zero() -> None:
    s = wdl(10, 10, 5)
    assert s.elo == 0.0
    assert "Elo +0 " in s.text() and "-0" not in s.text()


def test_unequal_deal_sets_weigh_by_games() -> None:
    # A deal set cut short (1 game) next to whole ones (2 games): points per game overall.
    est, games = ratio_estimate([2.0, 1.0, 1.0], [2, 2, 1])
    assert games == 5
    assert est.mean == pytest.approx(4 / 5)
    assert est.se > 0


def test_no_games_gives_no_numbers() -> None:
    s = ScoreStats.from_units([], [])
    assert s.games == 0
    assert s.to_json()["score"] is None
    assert s.text() == "no games"


def test_elo_and_score_round_trip() -> None:
    for elo in (-400.0, -35.5, 0.0, 12.25, 300.0):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo, abs=1e-9)


def test_estimate_json_is_rounded() -> None:
    assert Estimate(1 / 3, 0.1).to_json() == {
        "mean": 0.333333, "se": 0.1, "no_interval": None,
        "ci95": [round(1 / 3 - 0.1959963984540054, 6), round(1 / 3 + 0.1959963984540054, 6)]}
