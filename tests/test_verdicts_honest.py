"""Issue 44, "verdicts a loser would accept": rating intervals honest where printed in many-bot
and wide fields, a reason where not; a near-hopeless bot bounded on its one side; rank figures
that no name decides. Each test failed on the verdicts before the change (said per test)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from meldref.verdicts.games import GameResult
from meldref.verdicts.ratings import ELO_PER_UNIT, BotStanding, standings
from meldref.verdicts.seatings import seatings

LUCK = 0.5  # a seat's luck in a deal, shared by the deal's seatings (bench/bench_coverage.py)


def tournament(strength: dict[str, float], seats: int, deals: int,
               rng: np.random.Generator) -> list[GameResult]:
    """Every table of `seats` bots, `deals` duplicate deals each in every balanced seating,
    each table its own deals: the schedule `meldref tournament` plays."""
    rows = np.array(seatings(seats))
    games = []
    for t, table in enumerate(itertools.combinations(sorted(strength), seats)):
        s = np.array([strength[b] for b in table])
        luck = rng.normal(0, LUCK, (deals, 1, seats))
        keys = s[rows][None] + luck + rng.gumbel(size=(deals, len(rows), seats))
        places = 1 + (keys[..., None, :] > keys[..., :, None]).sum(axis=-1)
        for d in range(deals):
            for r, row in enumerate(rows):
                p = tuple(int(x) for x in places[d, r])
                games.append(GameResult(t * 1000 + d, tuple(table[i] for i in row), p,
                                        tuple(10.0 * x for x in p)))
    return games


def coverage(strength: dict[str, float], seats: int, deals: int, runs: int, seed: int,
             only: str | None = None) -> tuple[int, int, int]:
    """(printed, covered, with a reason) over the rating intervals of `runs` tournaments, the
    truth being the strengths on each run's own scale (its median bots at zero)."""
    rng = np.random.default_rng(seed)
    printed = covered = reasons = 0
    for _ in range(runs):
        rows = standings(tournament(strength, seats, deals, rng), resamples=0).rows
        order = sorted(rows, key=lambda r: r.rating or 0.0)
        n = len(order)
        middle = [order[n // 2]] if n % 2 else order[n // 2 - 1:n // 2 + 1]
        zero = sum(strength[r.bot] for r in middle) / len(middle)
        for r in rows:
            if only is not None and r.bot != only:
                continue
            if r.rating_low is None and r.rating_high is None:
                reasons += r.no_interval is not None
                continue
            truth = (strength[r.bot] - zero) * ELO_PER_UNIT
            printed += 1
            covered += ((r.rating_low is None or r.rating_low <= truth)
                        and (r.rating_high is None or truth <= r.rating_high))
    return printed, covered, reasons


def test_two_games_a_pair_print_no_rating_interval_but_the_reason() -> None:
    # The five bots at two seats, --games 2: one deal a table (two seatings), ten
    # tables. Was: "10 deals" counted over all tables, so every bot printed a 95% interval
    # (and a rank held) from 2 games against each other bot.
    strength = {"expert": 1.5, "greedy": 0.8, "random": 0.0, "rnd3": 0.0, "search": 1.0}
    rows = standings(tournament(strength, 2, 1, np.random.default_rng(3))).rows
    for r in rows:
        assert r.rating is not None
        assert (r.rating_low, r.rating_high, r.rank_held) == (None, None, None)
        assert (r.p_first, r.p_top, r.rank_low, r.rank_high) == (None, None, None, None)
        assert r.no_interval == "4 deals: a rating interval needs 10 or more"


@pytest.mark.parametrize(("strength", "deals"), [
    ({f"b{k}": k * 100 / ELO_PER_UNIT for k in range(8)}, 3),  # 8 bots 100 Elo apart
    ({f"b{k}": k * 150 / ELO_PER_UNIT for k in range(8)}, 3),  # 8 bots 150 Elo apart
])
def test_a_wide_field_of_eight_covers_where_it_prints(strength: dict[str, float],
                                                      deals: int) -> None:
    # Was 81.3% and 47.9% of 96 (the one virtual draw per pair pulled every rating to the
    # middle, and the interval ignored the pull); now 96 of 96 both. The outside check's
    # 57.5% was at 1 deal set a table, where there is now no interval (7 deals a bot).
    printed, covered, reasons = coverage(strength, 2, deals, runs=12, seed=44)
    assert printed + reasons == 12 * 8  # an interval, a bound or the reason: every bot
    assert covered / printed >= 0.9


def test_a_near_hopeless_bot_is_bounded_on_its_one_side() -> None:
    # A bot 1,100 Elo under the weakest of six wins a comparison now and then. Was: once it
    # won one, a two-sided interval round the prior's rating, far too high (covering 11 runs
    # in 20 here); now an upper bound until it placed above a bot in 5 deals (20 of 20).
    field = {**{f"b{k}": k * 100 / ELO_PER_UNIT for k in range(6)},
             "hopeless": -1100 / ELO_PER_UNIT}
    printed, covered, _ = coverage(field, 4, 2, runs=20, seed=7, only="hopeless")
    assert printed == 20 and covered >= 19
    rows = {r.bot: r for r in standings(tournament(field, 4, 2, np.random.default_rng(7)),
                                        resamples=0).rows}
    low, high, why = (rows["hopeless"].rating_low, rows["hopeless"].rating_high,
                      rows["hopeless"].no_interval)
    assert low is None and high is not None and why is not None and "upper bound" in why


def figures(row: BotStanding) -> tuple[object, ...]:
    return (row.rank, row.rating, row.rating_low, row.rating_high, row.rank_held,
            row.p_first, row.p_top, row.rank_low, row.rank_high)


def test_tied_bots_get_the_same_rank_figures_whatever_their_names() -> None:
    # Two bots with one record ("ex" and "twin" play the same games, deal for deal). Was:
    # their rank held differed by the draws' noise (0.2895 / 0.2645 here, 0.499 / 0.472 in
    # the issue), and which got which depended on their names: renaming "ex" to "zzzz"
    # swapped them.
    rng = np.random.default_rng(2)
    others = {"a": 0.0, "b": 0.3, "c": 0.5}
    games = []
    for d in range(30):
        for other, s in others.items():
            won = bool(0.4 + rng.gumbel() > s + rng.gumbel())
            for twin in ("ex", "twin"):  # the same result for both, deal for deal
                games.append(GameResult(d, (twin, other), (1, 2) if won else (2, 1), (0, 9)))
        games.append(GameResult(d, ("ex", "twin"), (1, 1), (0, 0)))
    renamed = [GameResult(g.deal, tuple("zzzz" if b == "ex" else b for b in g.bots),
                          g.places, g.scores) for g in games]
    before = {r.bot: r for r in standings(games).rows}
    after = {r.bot: r for r in standings(renamed).rows}
    assert figures(before["ex"]) == figures(before["twin"])
    assert figures(after["zzzz"]) == figures(after["twin"]) == figures(before["ex"])
    for name in others:
        assert figures(before[name]) == figures(after[name])


def test_rank_figures_are_given_with_the_intervals() -> None:
    strength = {"a": 0.0, "b": 0.5, "c": 1.0, "d": 3.0}
    result = standings(tournament(strength, 2, 10, np.random.default_rng(1)), top_k=2)
    rows = {r.bot: r for r in result.rows}
    assert rows["d"].p_first is not None and rows["d"].p_first > 0.9
    assert sum(r.p_first or 0.0 for r in result.rows) == pytest.approx(1.0)
    assert sum(r.p_top or 0.0 for r in result.rows) == pytest.approx(2.0)
    for r in result.rows:
        assert r.rank_low is not None and r.rank_high is not None
        assert r.rank_low <= r.rank <= r.rank_high
    data = result.to_json()
    assert data["top_k"] == 2
    assert set(data["standings"][0]) >= {"p_first", "p_top", "rank_ci95"}
    assert math.isfinite(data["standings"][0]["p_first"])
