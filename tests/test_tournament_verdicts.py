"""Standings a contest can defend, end to end: the same games give the same standings and the
same SPRT stop whatever -j is and whatever order the bots are listed in; the SPRT stops only
after whole deal sets; more than two bots get a cross table."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from meldref.cli import app
from meldref.protocol.records import Figures, ResultLine
from meldref.protocol.seats import BotSpec
from meldref.tournament.schedule import BotEntry, GameJob, Plan
from meldref.tournament.standings import SprtWatch
from meldref.verdicts.sprt import SprtSpec

runner = CliRunner()
SHORT = ["--rules", "phases-to-win=1", "--players", "2"]


def tournament(*args: str) -> dict:
    result = runner.invoke(app, ["tournament", *args, "--json", "--no-progress"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def standings_file(folder: Path) -> dict:
    return json.loads((folder / "standings.json").read_text())


def test_one_job_and_two_give_the_same_standings_and_the_same_sprt_stop(tmp_path: Path) -> None:
    # Was: seed 13 stopped at 13 games with -j 1 and at 16 with -j 2.
    args = ["--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "400", *SHORT,
            "--sprt", "0,150", "--seed", "13"]
    one = tournament(*args, "-j", "1", "--out", str(tmp_path / "one"))
    two = tournament(*args, "-j", "2", "--out", str(tmp_path / "two"))
    assert one["stopped"] == two["stopped"] == "sprt"
    assert one["sprt"] == two["sprt"] and one["sprt"]["verdict"] == "H1"
    assert one["standings"] == two["standings"]
    assert one["head_to_head"] == two["head_to_head"]
    # Never inside a deal set: the games counted are whole deal sets of both seatings.
    assert one["head_to_head"]["games"] == 2 * one["sprt"]["deal_sets"]
    assert standings_file(tmp_path / "one")["standings"] == standings_file(
        tmp_path / "two")["standings"]


def test_the_bots_order_does_not_change_the_standings(tmp_path: Path) -> None:
    # Was: two identical greedy bots got ordinals 19.51 and 15.74, swapped with their order.
    # (They had identical records only because built-in bots were seeded by seat; each copy
    # now draws its own choices, so the test asks for equal standings, names and all.)
    bots = ["builtin:greedy", "builtin:random", "builtin:greedy"]
    common = ["--games", "4", *SHORT, "--seed", "5"]
    forward = tournament(*[a for b in bots for a in ("--bot", b)], *common, "--out",
                         str(tmp_path / "f"))
    backward = tournament(*[a for b in reversed(bots) for a in ("--bot", b)], *common,
                          "--out", str(tmp_path / "b"))
    assert forward["standings"] == backward["standings"]
    assert forward["cross_table"] == backward["cross_table"]


def test_at_four_seats_the_bots_order_changes_neither_games_nor_standings(
        tmp_path: Path) -> None:
    # Was: greedy, greedy, expert, random against greedy, expert, greedy, random at 4 seats:
    # expert +232 against +263, the two copies of greedy ranked 2 and 3 either way round.
    common = ["--games", "12", "--rules", "phases-to-win=1", "--players", "4", "--seed", "7"]
    runs = []
    for order in (["greedy", "greedy", "expert", "random"],
                  ["greedy", "expert", "greedy", "random"],
                  ["random", "expert", "greedy", "greedy"]):
        folder = tmp_path / "-".join(order)
        data = tournament(*[a for b in order for a in ("--bot", f"builtin:{b}")], *common,
                          "--out", str(folder))
        lines = [json.loads(x) for x in (folder / "results.jsonl").read_text().splitlines()]
        games = sorted((r["game_id"], r["seed"], tuple(r["bots"]), tuple(r["places"]))
                       for r in lines)
        runs.append((data["standings"], games))
    assert runs[0] == runs[1] == runs[2]


def test_four_bots_get_a_cross_table(tmp_path: Path) -> None:
    data = tournament("--bot", "builtin:greedy", "--bot", "builtin:random", "--bot",
                      "builtin:greedy", "--bot", "builtin:random", "--games", "2", *SHORT,
                      "--seed", "3", "--out", str(tmp_path / "x"))
    cross = data["cross_table"]
    assert len(cross["bots"]) == 4 and len(cross["pairs"]) == 6
    for pair in cross["pairs"]:
        assert pair["games"] == 2 and {"score", "elo", "margin"} <= set(pair)
    table = runner.invoke(app, ["tournament", "--bot", "builtin:greedy", "--bot",
                                "builtin:random", "--bot", "builtin:greedy", "--bot",
                                "builtin:random", "--games", "2", *SHORT, "--seed", "3",
                                "--out", str(tmp_path / "x"), "--no-progress"])
    assert "cross table" in table.stdout and "random#2" in table.stdout


def test_the_sprt_counts_whole_deal_sets_in_schedule_order_whatever_the_finish_order() -> None:
    bots = (BotEntry("a", BotSpec("builtin:a")), BotEntry("b", BotSpec("builtin:b")))
    plan = Plan("phase10", bots, players=2, games=80, seed=1)
    jobs = list(plan.jobs())

    def line(job: GameJob) -> ResultLine:  # "a" always places first
        places = [1, 2] if job.bots[0].name == "a" else [2, 1]
        return job.result(Figures.from_json({"places": places, "scores": [0, 50]}))

    stops = []
    for order in (jobs, list(reversed(jobs)), jobs[1::2] + jobs[0::2]):
        watch = SprtWatch.of(SprtSpec(0, 100), plan, "a", "b")
        for job in order:
            if watch.add(line(job)):
                break
        stops.append(watch.stop)
        assert watch.test.deal_sets * 2 == watch.stop + 1  # whole deal sets only
    assert stops[0] == stops[1] == stops[2] is not None


def test_greedy_against_its_own_copy_is_not_decided_by_construction(tmp_path: Path) -> None:
    # Was: built-in bots were seeded by seat alone, so in the two seatings of a deal each seat
    # made the same choices: every deal set ended 1-1, and the SPRT always accepted H0 after
    # exactly 102 deal sets, whatever the truth.
    data = tournament("--bot", "builtin:greedy", "--bot", "builtin:greedy", "--games", "24",
                      *SHORT, "--seed", "2", "--sprt", "0,50", "--out", str(tmp_path / "x"))
    pair = data["head_to_head"]
    assert pair["deal_sets"] == 12 and pair["counts"][2] < 12  # not every deal set 1-1
    assert pair["deal_sets_won"] + pair["deal_sets_lost"] > 0
    lines = [json.loads(x) for x in (tmp_path / "x" / "results.jsonl").read_text().splitlines()]
    by_deal: dict[int, list[tuple[tuple[str, ...], tuple[int, ...]]]] = {}
    for r in lines:
        by_deal.setdefault(r["deal"], []).append((tuple(r["bots"]), tuple(r["places"])))
    # Some deal gives the same copy the win from both seats (or neither): a real result.
    assert any(len({bots[places.index(1)] for bots, places in games}) == 1
               for games in by_deal.values())


def test_the_issues_four_bot_run_prints_no_point_as_an_interval(tmp_path: Path) -> None:
    # Was: every interval printed as a point ("-603..-596") and every rank "held 100%", from
    # one deal per table.
    args = ["tournament", "--bot", "builtin:expert", "--bot", "builtin:greedy", "--bot",
            "builtin:random", "--bot", "python3 bots/random_bot.py --seed 3", "--players", "2",
            "--games", "2", "--seed", "3", "--out", str(tmp_path / "x"), "--no-progress"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "100%" not in result.stdout.split("cross table")[0]  # no rank held 100%
    assert "no 95% interval: 3 deals: a rating interval needs 10 or more" in result.stdout
    data = standings_file(tmp_path / "x")
    for row in data["standings"]:
        assert row["rating_ci95"] == [None, None] and row["rank_held"] is None
        assert row["no_interval"] == "3 deals: a rating interval needs 10 or more"
    for pair in data["cross_table"]["pairs"]:
        assert pair["score_ci95"] == [None, None] and pair["los"] is None
        assert pair["no_interval"] == "1 deal set: an interval needs 5 or more"


def test_an_sprt_stop_at_two_jobs_leaves_every_replay_whole(tmp_path: Path) -> None:
    # Was: the games in flight at the stop were killed, their replays cut short: `meldref
    # replay verify` exited 1 on the folder.
    out = tmp_path / "J2"
    data = tournament("--bot", "builtin:expert", "--bot", "builtin:greedy", "--games", "400",
                      "--seed", "11", "--sprt", "100,250", "-j", "2", *SHORT, "--out", str(out))
    assert data["stopped"] == "sprt"
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    replays = sorted((out / "replays").glob("*.jsonl"))
    assert len(replays) == len(lines) < 400  # every replay has its result line
    verified = runner.invoke(app, ["replay", "verify", str(out)])
    assert verified.exit_code == 0, verified.output
    # The games finished after the deciding deal set are recorded, not counted.
    assert data["after_stop"] == len(lines) - 2 * data["sprt"]["deal_sets"]


def test_a_stop_after_at_two_jobs_leaves_every_replay_whole_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "S2"
    args = ["--bot", "builtin:expert", "--bot", "builtin:greedy", "--games", "12", "--seed",
            "11", "-j", "2", *SHORT, "--out", str(out)]
    first = tournament(*args, "--stop-after", "3")
    assert first["stopped"] == "stop-after" and 3 <= first["played_now"] <= 3 + 4
    assert len(list((out / "replays").glob("*.jsonl"))) == first["played_now"]
    assert runner.invoke(app, ["replay", "verify", str(out)]).exit_code == 0
    rest = tournament(*args)
    assert rest["found_done"] == first["played_now"] and rest["missing"] == 0
    assert runner.invoke(app, ["replay", "verify", str(out)]).exit_code == 0


def test_rank_by_margin_orders_the_standings_by_mean_margin(tmp_path: Path) -> None:
    data = tournament("--bot", "builtin:expert", "--bot", "builtin:greedy", "--bot",
                      "builtin:random", "--games", "4", *SHORT, "--seed", "3", "--rank-by",
                      "margin", "--out", str(tmp_path / "m"))
    margins = [row["margin"] for row in data["standings"]]
    assert margins == sorted(margins, reverse=True) and data["ratings"]["rank_by"] == "margin"
    assert standings_file(tmp_path / "m")["ratings"]["rank_by"] == "margin"
    bad = runner.invoke(app, ["tournament", "--bot", "builtin:greedy", "--bot",
                              "builtin:random", "--rank-by", "wins", "--out",
                              str(tmp_path / "w")])
    assert bad.exit_code == 2 and "places, margin" in bad.output


def test_plan_prints_what_the_sprt_costs_and_plays_nothing(tmp_path: Path) -> None:
    """Issue 44: no way to see an SPRT's expected length and power before a run."""
    out = tmp_path / "t"
    result = runner.invoke(app, ["tournament", "--bot", "builtin:greedy", "--bot",
                                 "builtin:random", "--sprt", "0,10", "--plan", "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "SPRT [0, 10], alpha 0.05 beta 0.05, deal sets of 2 games:"
    assert "at Elo +0: about 3234 deal sets" in lines[1] and "4.9%" in lines[1]
    assert "at Elo +10" in lines[3] and "95.1%" in lines[3]
    assert not out.exists()
    refused = runner.invoke(app, ["tournament", "--bot", "builtin:greedy", "--plan"])
    assert refused.exit_code == 2 and "--sprt" in refused.output
