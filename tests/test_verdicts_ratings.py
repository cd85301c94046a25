"""Standings for N bots: the same games give the same standings in any order (issue 8:
openskill's online updates gave identical bots 19.51 and 15.74, and swapped ranks when the
configuration listed the bots the other way round)."""

from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import pytest
from scipy.optimize import minimize

from meldref.verdicts.games import GameResult
from meldref.verdicts.ratings import ELO_PER_UNIT, standings

STRENGTH = {"ann": 0.0, "bob": 0.4, "cat": 0.8, "dan": 0.8}


def plackett_luce_games(seats: int, deals: int, seed: int,
                        strength: dict[str, float] = STRENGTH) -> list[GameResult]:
    """Every table of `seats` bots, each deal in every rotation; finishing orders drawn from
    Plackett-Luce (Gumbel keys), places of equal keys shared; scores = 10 x place."""
    rng = random.Random(seed)
    games = []
    for table in itertools.combinations(sorted(strength), seats):
        for d in range(deals):
            for r in range(seats):
                seated = table[r:] + table[:r]
                keys = [round(strength[b] - math.log(-math.log(rng.random())), 1)
                        for b in seated]
                places = tuple(1 + sum(1 for k in keys if k > x) for x in keys)
                games.append(GameResult(d, seated, places, tuple(10.0 * p for p in places)))
    return games


def dump(games: list[GameResult], bots: list[str], **kw: object) -> str:
    return json.dumps(standings(games, bots, resamples=50, **kw).to_json(),  # type: ignore
                      sort_keys=True)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_order_of_games_and_bots_changes_nothing(seats: int) -> None:
    games = plackett_luce_games(seats, deals=30, seed=seats)
    reference = dump(games, ["ann", "bob", "cat", "dan"])
    rng = random.Random(5)
    for _ in range(2):
        shuffled = games[:]
        rng.shuffle(shuffled)
        bots = ["ann", "bob", "cat", "dan"]
        rng.shuffle(bots)
        assert dump(shuffled, bots) == reference


def test_swapping_the_configuration_order_of_two_bots_changes_nothing() -> None:
    # The schedule of (bob, ann) plays the same games as (ann, bob), with other indexes and
    # table numbers: the standings do not see either.
    games = plackett_luce_games(2, deals=40, seed=9, strength={"ann": 0.0, "bob": 0.1})
    reordered = sorted(games, key=lambda g: (g.deal, g.bots != ("bob", "ann")))
    assert dump(games, ["ann", "bob"]) == dump(reordered, ["bob", "ann"])


def test_identical_records_give_identical_ratings() -> None:
    # "twin1" and "twin2" play the same games against "other", deal for deal; against each
    # other they split every deal set.
    games = []
    for d in range(20):
        for twin in ("twin1", "twin2"):
            won = d % 3 != 0  # the twins win 2 deals in 3 against "other"
            games += [GameResult(d, (twin, "other"), (1, 2) if won else (2, 1), (0, 50)),
                      GameResult(d, ("other", twin), (2, 1) if won else (1, 2), (40, 0))]
        games += [GameResult(d, ("twin1", "twin2"), (1, 2), (0, 5)),
                  GameResult(d, ("twin2", "twin1"), (1, 2), (0, 5))]
    for order in (games, games[::-1]):
        rows = {r.bot: r for r in standings(order, resamples=200).rows}
        one, two = rows["twin1"], rows["twin2"]
        assert one.rating == two.rating
        assert (one.rating_low, one.rating_high) == (two.rating_low, two.rating_high)
        assert one.rating is not None and rows["other"].rating is not None
        assert one.rating > rows["other"].rating
        # Was: ranks 1 and 2, by name: nothing the games showed tells the twins apart.
        assert one.rank == two.rank == 1 and rows["other"].rank == 3


def _brute_force(wins: np.ndarray, prior_draws: float) -> np.ndarray:
    n = len(wins)
    w = wins + prior_draws / 2 * (1 - np.eye(n))

    def minus_log_likelihood(theta: np.ndarray) -> float:
        diff = theta[:, None] - theta[None, :]
        return float(np.sum(w * np.logaddexp(0, -diff)))

    theta = minimize(minus_log_likelihood, np.zeros(n), method="BFGS",
                     options={"gtol": 1e-10}).x
    return (theta - np.median(theta)) * ELO_PER_UNIT  # the scale's zero: the median bot


def test_ratings_are_the_pairwise_maximum_likelihood() -> None:
    # Three bots at one three-seat table, with shared places.
    games = [
        GameResult(0, ("a", "b", "c"), (1, 2, 3), (0, 1, 2)),
        GameResult(0, ("b", "c", "a"), (1, 1, 3), (0, 0, 2)),
        GameResult(1, ("c", "a", "b"), (1, 2, 2), (0, 1, 1)),
        GameResult(1, ("a", "b", "c"), (2, 1, 3), (1, 0, 2)),
        GameResult(2, ("b", "c", "a"), (3, 1, 2), (2, 0, 1)),
    ]
    wins = np.zeros((3, 3))  # [i, j]: i placed better than j (shared places: half each)
    for g in games:
        for (i, pi), (j, pj) in itertools.permutations(zip(g.bots, g.places, strict=True), 2):
            wins["abc".index(i), "abc".index(j)] += 1.0 if pi < pj else 0.5 if pi == pj else 0
    # Every bot placed above and below the others: the maximum exists, and no prior is added.
    expected = _brute_force(wins, prior_draws=0.0)
    rows = {r.bot: r.rating for r in standings(games, resamples=0).rows}
    assert [rows["a"], rows["b"], rows["c"]] == pytest.approx(list(expected), abs=1e-4)


def test_plackett_luce_strengths_are_recovered() -> None:
    games = plackett_luce_games(4, deals=400, seed=1)
    rows = {r.bot: r for r in standings(games, resamples=50).rows}
    centre = float(np.median(list(STRENGTH.values())))  # the scale's zero: the median bot
    for bot, s in STRENGTH.items():
        rating = rows[bot].rating
        assert rating is not None
        # Keys rounded to 0.1 make some shared places, which pull ratings together a little.
        assert rating == pytest.approx((s - centre) * ELO_PER_UNIT, abs=15)


def test_an_undefeated_bot_gets_a_finite_rating_and_a_one_sided_bound() -> None:
    # Was: an interval around the prior's rating (random at -598, interval -603..-596): the
    # data bound such a bot on one side only.
    games = [GameResult(d, seats, (1, 2) if seats[0] == "champ" else (2, 1), (0, 9))
             for d in range(10) for seats in (("champ", "chump"), ("chump", "champ"))]
    result = standings(games, resamples=200)
    top, bottom = result.rows
    assert top.bot == "champ" and top.rating is not None and bottom.rating is not None
    assert math.isfinite(top.rating) and top.rating > 200
    assert top.rating_high is None and top.rating_low is not None
    assert bottom.rating_low is None and bottom.rating_high is not None
    assert top.no_interval is not None and "only a lower bound" in top.no_interval
    assert bottom.no_interval is not None and "only an upper bound" in bottom.no_interval
    # Lost every comparison in 10 deals: the chance of a win is below 1 - 0.025^(1/10).
    gap = -400 * math.log10(1 / (1 - 0.025 ** 0.1) - 1)
    assert bottom.rating_high == pytest.approx(top.rating + gap, abs=1e-5)
    assert top.rank_held == 1.0
    assert json.dumps(result.to_json())  # no inf/NaN in the JSON


def test_bootstrap_is_seeded() -> None:
    games = plackett_luce_games(2, deals=15, seed=3)
    assert dump(games, [], seed=4) == dump(games, [], seed=4)
    assert dump(games, [], seed=4) != dump(games, [], seed=5)


def test_close_bots_do_not_always_hold_their_rank() -> None:
    games = plackett_luce_games(4, deals=20, seed=2)
    rows = {r.bot: r for r in standings(games, resamples=200).rows}
    # cat and dan are equally strong: neither keeps its rank in every resample.
    assert rows["cat"].rank_held is not None and rows["cat"].rank_held < 0.95
    assert rows["dan"].rank_held is not None and rows["dan"].rank_held < 0.95


def test_solitaire_bots_are_ranked_by_win_rate_without_a_rating() -> None:
    games = [GameResult(d, ("lucky",), (1 if d % 2 else 2,), (11 if d % 2 else 5,))
             for d in range(10)]
    games += [GameResult(d, ("steady",), (1 if d % 5 == 0 else 2,), (9,)) for d in range(10)]
    games += [GameResult(d, ("third",), (1 if d % 5 == 0 else 2,), (8,)) for d in range(10)]
    rows = standings(games, ["idle"], higher_is_better=True, resamples=50).rows
    assert [r.bot for r in rows] == ["lucky", "steady", "third", "idle"]
    assert all(r.rating is None for r in rows)
    assert rows[0].win_rate == 0.5 and rows[3].games == 0
    # No comparison between them, so no rank confidence is claimed.
    assert all(r.rank_held is None for r in rows)


def test_a_bot_without_games_is_listed_last() -> None:
    games = plackett_luce_games(2, deals=5, seed=1, strength={"a": 0.0, "b": 0.0})
    rows = standings(games, ["zed", "a", "b"], resamples=20).rows
    assert rows[-1].bot == "zed" and rows[-1].rating is None and rows[-1].games == 0
    # Two rated bots: the median is their mean.
    assert sum(r.rating or 0.0 for r in rows[:2]) == pytest.approx(0.0, abs=1e-9)


def test_no_games_yet() -> None:
    result = standings([], ["b", "a"])
    assert [r.bot for r in result.rows] == ["a", "b"]
    assert all(r.rating is None and r.rank_held is None and r.games == 0 for r in result.rows)
    assert result.to_json()["deals"] == 0


def test_renaming_a_bot_changes_no_figure() -> None:
    # Was: bootstrap ties broken alphabetically; renaming expert to zexpert in the same
    # results dropped its rank held from 100% to 72.4%.
    games = plackett_luce_games(2, deals=12, seed=6, strength={"expert": 2.0, "greedy": 0.5,
                                                               "random": 0.0, "rnd3": 0.0})
    renamed = [GameResult(g.deal, tuple("zexpert" if b == "expert" else b for b in g.bots),
                          g.places, g.scores, g.seed) for g in games]
    def figures(rows: tuple[object, ...]) -> list[tuple[object, ...]]:
        return sorted((r.rank, r.rating, r.rating_low, r.rating_high, r.rank_held,  # type: ignore
                       r.games, r.wins) for r in rows)
    before, after = standings(games).rows, standings(renamed).rows
    assert figures(before) == figures(after)
    row = {r.bot: r for r in before}["expert"]
    assert row.rank_held == {r.bot: r for r in after}["zexpert"].rank_held


def test_a_hopeless_bot_does_not_move_the_others_ratings() -> None:
    # Was: mean-zero ratings; a bot that never wins moved every other bot's rating by about
    # 200 Elo. The median anchor moves by one place at most.
    field = {"ann": 0.0, "bob": 0.5, "cat": 1.0}
    without = {r.bot: r.rating for r in standings(
        plackett_luce_games(2, deals=40, seed=8, strength=field), resamples=0).rows}
    games = plackett_luce_games(2, deals=40, seed=8, strength=field)
    for d in range(40):  # "dud" loses every game to everyone
        for other in field:
            games += [GameResult(d, ("dud", other), (2, 1), (9, 0)),
                      GameResult(d, (other, "dud"), (1, 2), (0, 9))]
    rows = {r.bot: r for r in standings(games, resamples=0).rows}
    shift = [abs((rows[b].rating or 0) - (without[b] or 0)) for b in field]
    # The median of four is between bob and the next: half a step, not a mean's pull.
    assert max(shift) < 0.6 * abs((without["bob"] or 0) - (without["ann"] or 0)) + 1
    dud = rows["dud"]
    assert dud.rating_low is None and dud.rating_high is not None  # one-sided, and honest
    assert dud.rating is not None and dud.rating < dud.rating_high < (rows["ann"].rating or 0)


def test_a_named_anchor_is_the_scales_zero() -> None:
    games = plackett_luce_games(2, deals=20, seed=3)
    result = standings(games, anchor="bob", resamples=0)
    rows = {r.bot: r for r in result.rows}
    assert rows["bob"].rating == 0 and result.to_json()["anchor"] == "bob"
    assert rows["bob"].rating_low is None and "anchor" in (rows["bob"].no_interval or "")
    median = {r.bot: r.rating for r in standings(games, resamples=0).rows}
    assert (rows["cat"].rating or 0) - (rows["ann"].rating or 0) == pytest.approx(
        (median["cat"] or 0) - (median["ann"] or 0), abs=1e-5)


@pytest.mark.parametrize("deals", [1, 3, 9])
def test_few_deals_give_no_rating_interval_and_say_why(deals: int) -> None:
    # Was: bootstrap intervals from 1 deal (coverage 0%) and rank held 100%.
    rows = standings(plackett_luce_games(2, deals=deals, seed=2)).rows
    assert all(r.rating is not None for r in rows)
    for r in rows:
        assert r.rating_low is None and r.rating_high is None and r.rank_held is None
        assert r.no_interval == f"{deals} deal{'s' if deals > 1 else ''}: a rating interval " \
            "needs 10 or more"


def test_rank_by_margin_ranks_by_the_fitted_mean_margin() -> None:
    # Issue 21: standings by score margin as well as places (the margin separates bots in
    # fewer games). Bot x wins every game by 1 point, y loses every game by 40: by places x
    # and "z" (which wins half its games by 30) differ; by margin the fit is additive.
    skill = {"x": 10.0, "y": -30.0, "z": 0.0}
    rng = random.Random(4)
    games = []
    for d in range(30):
        for seated in itertools.permutations(skill, 2):
            noise = [rng.gauss(0, 5) for _ in seated]
            points = [50 - skill[b] + e for b, e in zip(seated, noise, strict=True)]
            places = (1, 2) if points[0] < points[1] else (2, 1)  # penalty points: low wins
            games.append(GameResult(d, seated, places, tuple(points)))
    result = standings(games, rank_by="margin")
    rows = {r.bot: r for r in result.rows}
    assert [r.bot for r in result.rows] == ["x", "z", "y"] and result.rank_by == "margin"
    assert rows["z"].margin == 0.0  # the median bot: the scale's zero
    for bot, value in skill.items():
        row = rows[bot]
        assert row.margin == pytest.approx(value, abs=3)
        if bot != "z":
            assert row.margin_low is not None and row.margin_high is not None
            assert row.margin_low < value < row.margin_high
    data = result.to_json()
    assert data["rank_by"] == "margin" and data["standings"][0]["margin_ci95"][0] is not None
    with pytest.raises(ValueError, match="places or margin"):
        standings(games, rank_by="wins")  # type: ignore[arg-type]
