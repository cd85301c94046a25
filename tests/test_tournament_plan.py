"""The tournament's schedule, configuration checks and standings arithmetic (no games played)."""

from __future__ import annotations

import dataclasses
import itertools
import random
import re
import tracemalloc
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest

from meldref.engine.phase10 import Phase10Rules
from meldref.protocol.records import ResultLine
from meldref.protocol.seats import BotSpec
from meldref.tournament.config import ConfigError, build_config, parse_pairs, read_toml
from meldref.tournament.run import failure_lines, read_results
from meldref.tournament.schedule import BotEntry, Plan, bot_entries, deal_seed, default_name
from meldref.tournament.standings import compute_standings
from meldref.verdicts.seatings import balance, seatings
from meldref.verdicts.sprt import SprtSpec

A, B, C, D = (BotEntry(n, BotSpec(f"builtin:{n}")) for n in "abcd")


@pytest.mark.parametrize(("players", "per_deal"), [(2, 2), (3, 6), (4, 12)])
def test_every_balanced_seating_is_played_as_planned(players: int, per_deal: int) -> None:
    # Was: cyclic rotations only (at 4 seats, 4 of 24 orders; who follows whom unbalanced).
    bots = (A, B, C, D)[:players]
    plan = Plan("phase10", bots, players=players, games=2 * per_deal - 1, duplicate=True,
                seed=10)
    jobs = list(plan.jobs())
    assert len(jobs) == 2 * per_deal == plan.game_count()  # rounded up to whole deal sets
    by_deal: dict[int, list[tuple[int, ...]]] = {}
    for job in jobs:
        seating = len(by_deal.get(job.deal, []))
        assert job.seed == deal_seed(10, bots, job.deal)
        assert job.game_id.endswith(f"-s{seating:02d}") and job.game_id == plan.game_id(
            job.index)
        by_deal.setdefault(job.deal, []).append(tuple(bots.index(b) for b in job.bots))
    assert sorted(by_deal) == [0, 1]
    for rows in by_deal.values():
        # The planned seatings, applied to the bots in an order drawn from the deal's seed.
        first = rows[0]
        assert tuple(tuple(first[i] for i in row) for row in seatings(players)) == tuple(rows)
        check = balance(rows)
        assert check.seats_balanced and check.neighbours_balanced
    if players == 3:
        assert sorted(by_deal[0]) == sorted(itertools.permutations(range(3)))


def test_without_duplicate_every_game_is_a_new_deal() -> None:
    plan = Plan("phase10", (A, B), players=2, games=4, duplicate=False, seed=1)
    assert [j.seed for j in plan.jobs()] == [deal_seed(1, (A, B), d) for d in range(4)]
    assert Counter(j.bots[0].name for j in plan.jobs()) == {"a": 2, "b": 2}


def test_nearby_seeds_and_other_tables_share_no_deal() -> None:
    # Was: deal d's seed was seed + d at every table: seeds 1000 and 1001 shared 198 of 200
    # games, and every table of a tournament played the same cards.
    bots = (A, B, C, D)
    one, two = (Plan("phase10", bots, players=2, games=100, seed=s) for s in (1000, 1001))
    seeds_one = [j.seed for j in one.jobs()]
    assert not set(seeds_one) & {j.seed for j in two.jobs()}
    per_table: dict[str, set[int]] = {}
    for job in one.jobs():
        per_table.setdefault(job.game_id[:3], set()).add(job.seed)
    assert len(per_table) == 6 and all(len(s) == 50 for s in per_table.values())
    assert len(set(seeds_one)) == 6 * 50  # each table its own deals: 300 units, not 50
    assert all(0 <= s < 2 ** 48 for s in seeds_one)


def _games(plan: Plan) -> list[tuple[str, int, tuple[str, ...]]]:
    return sorted((j.game_id, j.seed, tuple(b.name for b in j.bots)) for j in plan.jobs())


@pytest.mark.parametrize("players", [2, 3, 4, 5, 8])
def test_the_listed_order_of_the_bots_changes_no_game(players: int) -> None:
    # Was: at 4 seats and more the seatings were applied to the listed order: only 2 of 24
    # orders of four bots gave the same games.
    bots = tuple(BotEntry(n, BotSpec("builtin:random")) for n in "abcdefghi"[:players + 1])
    plan = Plan("fivecrowns", bots, players=players, games=len(seatings(players)), seed=4)
    expected = _games(plan)
    orders = [bots[::-1], bots[1:] + bots[:1], bots[2:] + bots[:2]]
    orders += [tuple(random.Random(k).sample(bots, len(bots))) for k in range(3)]
    for order in orders:
        assert _games(dataclasses.replace(plan, bots=order)) == expected
    # The standings from those games do not move either (places fixed by seed and seat).
    def results(p: Plan) -> list[dict[str, object]]:
        out = []
        for job in p.jobs():
            names = [b.name for b in job.bots]
            luck = [random.Random(f"{job.seed}:{names[s]}:{s}").random() for s in range(players)]
            ranked = sorted(range(players), key=luck.__getitem__)
            places = [ranked.index(s) + 1 for s in range(players)]
            out.append(_result(job.index, names, places, [10 * x for x in places],
                               deal=job.deal) | {"seed": job.seed, "game_id": job.game_id})
        return out
    want = compute_standings(typed(results(plan)), [b.name for b in bots]).to_json()
    for order in orders:
        got = compute_standings(typed(results(dataclasses.replace(plan, bots=order))),
                                [b.name for b in order]).to_json()
        assert got == want


def test_gauntlet_tables_keep_the_head_whatever_the_order_of_the_rest() -> None:
    plan = Plan("phase10", (A, B, C, D), players=3, games=6, format="gauntlet", seed=2)
    assert _games(plan) == _games(dataclasses.replace(plan, bots=(A, D, B, C)))


def test_a_million_game_plan_builds_no_job_until_asked() -> None:
    # Was: the plan listed every job first: games = 1000000 took 152.8 s and 508 MB before
    # the first game. Now the jobs are made as they are taken.
    plan = Plan("phase10", (A, B, C), players=2, games=1_000_000, seed=1)
    tracemalloc.start()
    try:
        jobs = plan.jobs()
        first = [next(jobs) for _ in range(3)]
        last = plan.job(plan.game_count() - 1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert plan.game_count() == 3_000_000 and peak < 1_000_000  # bytes: a few jobs' worth
    assert [j.index for j in first] == [0, 1, 2] and last.index == 2_999_999
    assert last.game_id == plan.game_id(last.index) == "t02-d499999-s01"


def test_round_robin_and_gauntlet_tables() -> None:
    rr = Plan("phase10", (A, B, C, D), players=2, games=2)
    assert len(rr.tables()) == 6
    gauntlet = Plan("phase10", (A, B, C, D), players=2, games=2, format="gauntlet")
    assert [tuple(b.name for b in t) for t in gauntlet.tables()] == [
        ("a", "b"), ("a", "c"), ("a", "d")]
    three = Plan("phase10", (A, B, C, D), players=3, games=3, format="gauntlet")
    assert all(t[0] is A for t in three.tables()) and len(three.tables()) == 3


def test_game_ids_are_unique_and_fixed_by_the_plan() -> None:
    plan = Plan("phase10", (A, B, C), players=2, games=4)
    ids = [j.game_id for j in plan.jobs()]
    assert ids == [plan.game_id(i) for i in range(plan.game_count())]
    assert len(set(ids)) == len(ids)
    assert ids == [j.game_id for j in Plan("phase10", (A, B, C), players=2, games=4).jobs()]
    assert plan.fingerprint() == Plan("phase10", (A, B, C), players=2, games=4).fingerprint()
    assert plan.fingerprint() != Plan("phase10", (A, B, C), players=2, games=6).fingerprint()


def test_bot_names() -> None:
    assert default_name(BotSpec("builtin:greedy")) == "greedy"
    assert default_name(BotSpec("python3 bots/random_bot.py --seed 3")) == "random_bot"
    assert default_name(BotSpec("python3 -m mybot.main")) == "mybot.main"
    assert default_name(BotSpec("./engines/x7")) == "x7"
    names = [b.name for b in bot_entries([BotSpec("builtin:greedy"), BotSpec("builtin:greedy"),
                                                BotSpec("builtin:random")])]
    assert names == ["greedy#1", "greedy#2", "random"]


def test_config_file_and_flags(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text(
        'game = "phase10"\nplayers = 2\ngames = 4\njobs = 2\nsprt = "0,50"\n'
        '[rules]\nphases-to-win = 2\nrun-wrap = true\n[limits]\nmove-time = 0.5\n'
        '[[bot]]\nname = "g"\ncmd = "builtin:greedy"\n[[bot]]\ncmd = "builtin:random"\n')
    cfg = build_config(read_toml(path), {"games": 6})
    assert [b.name for b in cfg.plan.bots] == ["g", "random"]
    assert cfg.plan.games == 6 and cfg.jobs == 2
    assert cfg.plan.rules == Phase10Rules(phases_to_win=2, run_wrap=True)
    assert cfg.limits.given() == {"move-time": 0.5}
    assert cfg.policy.move_time == 0.5
    assert cfg.sprt == SprtSpec(0, 50)
    assert cfg.folder.name.startswith("phase10-")


@pytest.mark.parametrize("bots", [2, 3])
def test_an_empty_sprt_table_asks_for_no_sprt(bots: int) -> None:
    """`[sprt]` with nothing in it is no SPRT, as before the sources were merged typed (then
    it read as `SPRT ''` with two bots, and as "sprt needs exactly two bots" with three)."""
    names = ["builtin:greedy", "builtin:random", "builtin:expert"][:bots]
    cfg = build_config({"bots": names, "sprt": {}}, {})
    assert cfg.sprt is None


@pytest.mark.parametrize(("text", "overrides", "message"), [
    ('games = 2\nbots = ["builtin:greedy", "builtin:random"]\n[rules]\nno-such = 1\n', {},
     "unknown rule option"),
    ('bots = ["builtin:greedy", "builtin:random"]\nplayers = 9\n', {}, "2..6"),
    ('bots = ["builtin:greedy"]\nplayers = 2\n', {}, "cannot fill"),
    ('bots = ["builtin:greedy", "builtin:random"]\ncolour = "red"\n', {}, "colour: unknown"),
    ('bots = ["builtin:greedy", "builtin:random"]\ngames = 0\n', {}, "games = 0"),
    ('bots = ["builtin:greedy", "builtin:random"]\nformat = "swiss"\n', {}, "gauntlet"),
    ('bots = ["builtin:greedy", "builtin:random"]\ngame = "chess"\n', {}, "unknown game"),
    ('bots = ["a", "b", "c"]\nsprt = "0,10"\n', {}, "exactly two bots"),
    ('bots = ["builtin:greedy", "builtin:random"]\n[limits]\nspeed = 3\n', {},
     "[limits] speed: unknown"),
    ("bots = [", {}, "not valid TOML"),
    ('bots = ["builtin:greedy", "builtin:random"]\nduplicate = "yes"\n', {},
     "duplicate = 'yes': true or false"),
    ('bots = ["builtin:greedy", "builtin:random"]\nsprt = "nan,inf"\n', {}, "finite numbers"),
    ('bots = ["builtin:greedy", "builtin:random"]\nout = 5\n', {}, "out = 5: a text"),
    ('bots = ["builtin:greedy", "builtin:random"]\ngames = 1000000000\n', {},
     "games = 1000000000: at most 1,000,000"),
    ('bots = ["builtin:greedy", "builtin:random"]\n[limits]\nmove-time = nan\n', {},
     "[limits] move-time = nan: a finite number"),
    ('bots = ["builtin:greedy", "builtin:random"]\n', {"players": 0}, "--players = 0: at least 1"),
    ('bots = ["builtin:greedy", "builtin:random"]\n', {"sprt": "0,nan"}, "finite numbers"),
])
def test_config_errors_say_why(tmp_path: Path, text: str, overrides: dict[str, object],
                               message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        build_config(read_toml(path), overrides)


def test_unreadable_config(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        read_toml(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_pairs(["phases-to-win"])


def typed(lines: Iterable[dict]) -> list[ResultLine]:
    """Result lines as a results file gives them, read."""
    return [ResultLine.from_json(line) for line in lines]


def _result(index: int, bots: list[str], places: list[int], scores: list[int],
            deal: int | None = None) -> dict:
    return {"index": index, "game_id": f"g{index}", "deal": index if deal is None else deal,
            "bots": bots, "places": places, "scores": scores, "status": "ok",
            "faults": [[] for _ in bots]}


def test_standings_rank_the_winner_first_and_do_not_depend_on_finish_order() -> None:
    results = [_result(i, ["a", "b", "c"] if i % 2 else ["c", "a", "b"],
                       [1, 2, 3] if i % 2 else [3, 1, 2], [0, 10, 20] if i % 2 else [20, 0, 10])
               for i in range(12)]
    forward = compute_standings(typed(results), ["a", "b", "c"])
    backward = compute_standings(typed(reversed(results)), ["c", "b", "a"])
    assert [row.bot for row in forward.standings.rows] == ["a", "b", "c"]
    assert forward.to_json() == backward.to_json()
    a = forward.standings.rows[0]
    assert a.games == 12 and a.wins == 12 and a.mean_place == 1.0


def test_shared_wins_split_and_the_referees_errors_are_counted_apart() -> None:
    results = [_result(0, ["a", "b"], [1, 1], [5, 5]), _result(1, ["b", "a"], [1, 2], [0, 9]),
               {**_result(2, ["a", "b"], [1, 2], [0, 9]), "status": "error"}]
    report = compute_standings(typed(results), ["a", "b"])
    rows = {row.bot: row for row in report.standings.rows}
    assert rows["a"].wins == 0.5 and rows["b"].wins == 1.5
    assert report.failed_games == 1
    data = report.to_json()
    pair = data["head_to_head"]
    assert (pair["wins"], pair["draws"], pair["losses"]) == (0, 1, 1)
    assert pair["score"] == 0.25 and pair["games"] == 2


def test_solitaire_wins_are_won_games_only() -> None:
    # A lost Solitaire game places the player 2nd (the deck won) with no winner; a won one 1st.
    results = [_result(i, [bot], [place], [score], deal=0)
               for i, (bot, place, score) in enumerate([("a", 1, 11), ("a", 2, 7), ("b", 2, 9)])]
    report = compute_standings(typed(results), ["a", "b"], higher_is_better=True)
    rows = {row.bot: row for row in report.standings.rows}
    assert rows["a"].wins == 1 and rows["a"].mean_place == 1.5
    assert rows["b"].wins == 0 and rows["b"].games == 1
    # Bots that never share a table get no head-to-head (was: "+2 =0 -0, Elo +inf"), but a
    # comparison on the deals both played.
    pair = report.to_json()["head_to_head"]
    assert "wins" not in pair and pair["deals"] == 1
    from meldref.tournament.match import totals
    from meldref.tournament.schedule import BotEntry

    rows2 = totals(typed(results), [BotEntry("a", BotSpec("builtin:greedy")),
                                    BotEntry("b", BotSpec("builtin:random"))])
    assert {row["bot"]: row["wins"] for row in rows2} == {"a": 1, "b": 0}


def test_results_file_loses_only_a_cut_last_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_bytes(b'{"game_id": "a", "bots": []}\n{"game_id": "b", "bots": []}\n'
                     b'{"game_id": "c", "sta')
    assert [r.game_id for r in read_results(path)] == ["a", "b"]
    assert path.read_bytes().endswith(b'"bots": []}\n')


def test_failure_lines_name_the_seat_the_outcome_and_the_log() -> None:
    result = {**_result(0, ["a", "b"], [1, 2], [0, 5]), "replay": "replays/g0.jsonl",
              "logs": [None, "logs/g0/seat1-b.stderr"]}
    result["faults"] = [[], [{"outcome": "timeout", "detail": "slow", "fatal": True}]]
    (line,) = failure_lines(ResultLine.from_json(result))
    assert line.split("\t") == ["g0", "seat 1", "b", "timeout", "logs/g0/seat1-b.stderr",
                                "replays/g0.jsonl"]
    error = ResultLine.from_json({**result, "status": "error", "error": "boom"})
    assert failure_lines(error)[0].startswith("g0\t-")
