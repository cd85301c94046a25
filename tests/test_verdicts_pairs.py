"""Result lines into games and deal sets; head-to-head records and the cross table."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from meldref.verdicts.games import (
    DealSet,
    GameResult,
    ResultLineError,
    complete_deal_sets,
    deal_sets_of,
    pair_deal_sets,
    read_games,
)
from meldref.verdicts.pairs import HeadToHead, SameDeals, cross_table, head_to_head


def line(index: int, deal: int, bots: list[str], places: list[int], scores: list[int],
         status: str = "ok", table: int = 0, rotation: int = 0) -> dict[str, Any]:
    return {"index": index, "game_id": f"t{table:02d}-d{deal:04d}-r{rotation}", "deal": deal,
            "bots": bots, "places": places, "scores": scores, "status": status}


def test_read_games_keeps_finished_games_in_canonical_order() -> None:
    lines = [
        line(0, 1, ["b", "a"], [1, 2], [10, 40]),
        line(1, 0, ["a", "b"], [2, 1], [30, 5]),
        line(2, 0, ["b", "a"], [1, 1], [7, 7]),
        {**line(3, 2, ["a", "b"], [1, 2], [0, 1]), "status": "error", "places": None},
    ]
    games = read_games(lines)
    assert len(games) == 3
    assert read_games(reversed(lines)) == games
    assert [g.deal for g in games] == [0, 0, 1]
    assert games[0] == GameResult(0, ("a", "b"), (2, 1), (30.0, 5.0))


@pytest.mark.parametrize("broken", [
    {"bots": ["a"], "places": [1], "scores": [1]},  # no deal
    {"deal": 1, "bots": ["a", "b"], "places": [1], "scores": [1, 2]},
    {"deal": "1", "bots": ["a"], "places": [1], "scores": [1]},
    {"deal": 1, "bots": ["a"], "places": [1]},
])
def test_a_broken_result_line_is_named(broken: dict[str, Any]) -> None:
    with pytest.raises(ResultLineError):
        read_games([{**broken, "status": "ok", "game_id": "t00-d0001-r0"}])


# Two bots, duplicate deals: deal 0 split 1-1, deal 1 won twice by "new", deal 2 one win and
# one shared place. Phase 10 scores are penalty points: lower is better.
TWO_BOTS = [
    line(0, 0, ["new", "old"], [1, 2], [20, 100], rotation=0),
    line(1, 0, ["old", "new"], [1, 2], [30, 60], rotation=1),
    line(2, 1, ["new", "old"], [1, 2], [0, 50], rotation=0),
    line(3, 1, ["old", "new"], [2, 1], [80, 10], rotation=1),
    line(4, 2, ["new", "old"], [1, 1], [40, 40], rotation=0),
    line(5, 2, ["old", "new"], [2, 1], [90, 15], rotation=1),
]


def test_head_to_head_of_two_bots_on_duplicate_deals() -> None:
    h = head_to_head(read_games(TWO_BOTS), "new", "old", higher_is_better=False)
    assert h is not None
    assert (h.wins, h.draws, h.losses) == (4, 1, 1)
    assert h.deal_sets == (DealSet(0, 2, 1, 0, 80 - 30), DealSet(1, 2, 2, 0, 50 + 70),
                           DealSet(2, 2, 1, 1, 0 + 75))
    assert [d.half_points for d in h.deal_sets] == [2, 4, 3]
    assert h.deal_record == (2, 1, 0)
    assert h.seatings == 2
    assert h.counts == (0, 0, 1, 1, 1)  # LL, LD, WL+DD, WD, WW
    assert h.stats.score.mean == pytest.approx(9 / 12)
    # The deal-set scores 1/2, 1, 3/4: population sd over sqrt(3).
    assert h.stats.score.se == pytest.approx((1 / 24) ** 0.5 / 3**0.5)
    assert h.margin.mean == pytest.approx((50 + 120 + 75) / 6)
    data = h.to_json()
    assert data["counts"] == [0, 0, 1, 1, 1] and data["deal_sets"] == 3
    assert data["margin"]["mean"] == round(245 / 6, 6)
    back = h.flipped()
    assert (back.wins, back.losses, back.counts) == (1, 4, (1, 1, 1, 0, 0))
    assert back.margin.mean == pytest.approx(-h.margin.mean)
    assert back.stats.score.mean == pytest.approx(1 - h.stats.score.mean)
    # Three deal sets support no interval, and the text says so instead of printing one.
    assert ("score margin +40.8 per game (no 95% interval: 3 deal sets: an interval needs 5 "
            "or more)" in h.text())


def test_higher_is_better_turns_the_margin() -> None:
    games = read_games(TWO_BOTS)
    low = head_to_head(games, "new", "old", higher_is_better=False)
    high = head_to_head(games, "new", "old", higher_is_better=True)
    assert low is not None and high is not None
    assert high.margin.mean == pytest.approx(-low.margin.mean)


def test_cut_short_deal_sets_are_left_out_of_complete_ones() -> None:
    games = read_games(TWO_BOTS[:5])  # deal 2 has one of its two games
    sets = deal_sets_of(games, "old", "new", higher_is_better=False)
    assert [d.games for d in sets] == [2, 2, 1]
    assert [d.deal for d in complete_deal_sets(sets, 2)] == [0, 1]
    assert sets[0] == DealSet(0, 2, 1, 0, 30 - 80)


def _four_bot_games(seats: int, deals: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    bots = ["ann", "bob", "cat", "dan"]
    out = []
    for t, table in enumerate(itertools.combinations(bots, seats)):
        for d in range(deals):
            for r in range(seats):
                seated = list(table[r:] + table[:r])
                scores = [rng.randrange(0, 60, 5) for _ in seated]
                places = [1 + sum(1 for s in scores if s < x) for x in scores]
                out.append(line(len(out), d, seated, places, scores, table=t, rotation=r))
    return out


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_cross_table_of_four_bots(seats: int) -> None:
    lines = _four_bot_games(seats, deals=5, seed=seats)
    games = read_games(lines)
    table = cross_table(games, higher_is_better=False)
    assert table.bots == ("ann", "bob", "cat", "dan")
    assert len(table.pairs) == 6
    for a, b in itertools.combinations(table.bots, 2):
        pair = table.get(a, b)
        assert isinstance(pair, HeadToHead)
        shared = [g for g in games if a in g.bots and b in g.bots]
        # Counted again here, game by game, from the result lines.
        wins = sum(1 for g in shared if g.places[g.bots.index(a)] < g.places[g.bots.index(b)])
        losses = sum(1 for g in shared
                     if g.places[g.bots.index(a)] > g.places[g.bots.index(b)])
        assert (pair.wins, pair.losses, pair.games) == (wins, losses, len(shared))
        # Tables that share the pair play the same deals: one deal set per deal.
        assert len(pair.deal_sets) == 5
        assert sum(d.games for d in pair.deal_sets) == len(shared)
        margin = sum(g.scores[g.bots.index(b)] - g.scores[g.bots.index(a)] for g in shared)
        assert pair.margin.mean == pytest.approx(margin / len(shared))
        mirror = table.get(b, a)
        assert isinstance(mirror, HeadToHead)
        assert (mirror.wins, mirror.losses) == (pair.losses, pair.wins)
    assert table.to_json()["pairs"][0]["first"] == "ann"


def test_cross_table_does_not_depend_on_the_order_of_games_or_bots() -> None:
    lines = _four_bot_games(3, deals=4, seed=7)
    shuffled = lines[:]
    random.Random(1).shuffle(shuffled)
    a = cross_table(read_games(lines), ["dan", "ann", "bob", "cat"]).to_json()
    b = cross_table(read_games(shuffled), ["cat", "bob", "ann", "dan"]).to_json()
    assert a == b


def test_a_bot_in_two_seats_tells_nothing() -> None:
    games = read_games([line(0, 0, ["a", "a", "b"], [1, 2, 3], [0, 5, 9])])
    assert pair_deal_sets(games, higher_is_better=False) == {}
    assert cross_table(games).pairs == ()


def test_solitaire_bots_are_compared_on_the_same_deals_not_head_to_head() -> None:
    # Issue 8: Solitaire printed "+2 =0 -0, Elo +inf" between bots that never share a table.
    # Place 1: the bot closed every pile; place 2: the deck won. Scores: piles closed.
    lines = [
        line(0, 0, ["x"], [1], [11], table=0), line(1, 1, ["x"], [2], [7], table=0),
        line(2, 2, ["x"], [2], [9], table=0),
        line(3, 0, ["y"], [2], [8], table=1), line(4, 1, ["y"], [2], [6], table=1),
        line(5, 3, ["y"], [1], [11], table=1),  # deal 3: x never played it
    ]
    games = read_games(lines)
    assert head_to_head(games, "x", "y", higher_is_better=True) is None
    pair = cross_table(games, higher_is_better=True).get("x", "y")
    assert isinstance(pair, SameDeals)
    assert pair.deals == 2  # deals 0 and 1
    assert pair.win_rate.mean == pytest.approx((1 + 0) / 2)
    assert pair.score.mean == pytest.approx((3 + 1) / 2)
    assert pair.score.se == pytest.approx(1 / 2**0.5)  # differences 3 and 1: sd 1, n 2
    data = pair.to_json()
    assert "elo" not in data and "wins" not in data
    mirrored = cross_table(games, higher_is_better=True).get("y", "x")
    assert isinstance(mirrored, SameDeals) and mirrored.score.mean == -pair.score.mean
    assert "+2 =0 -0" not in pair.text()


def test_bots_that_never_met_have_no_pair() -> None:
    games = read_games([line(0, 0, ["a", "b"], [1, 2], [0, 9])])
    table = cross_table(games, ["a", "b", "c"])
    assert table.bots == ("a", "b", "c")
    assert table.get("a", "c") is None
    assert table.get("b", "a") is not None
