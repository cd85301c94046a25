"""Standings a contest can defend, end to end: the same games give the same standings and the
same SPRT stop whatever -j is and whatever order the bots are listed in; the SPRT stops only
after whole deal sets; more than two bots get a cross table."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from meldref.cli import app
from meldref.protocol.seats import BotSpec
from meldref.tournament.schedule import BotEntry, GameJob
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
    bots = ["builtin:greedy", "builtin:random", "builtin:greedy"]
    common = ["--games", "4", *SHORT, "--seed", "5"]
    forward = tournament(*[a for b in bots for a in ("--bot", b)], *common, "--out",
                         str(tmp_path / "f"))
    backward = tournament(*[a for b in reversed(bots) for a in ("--bot", b)], *common,
                          "--out", str(tmp_path / "b"))
    rows = {r["bot"]: r for r in forward["standings"]}
    assert rows["greedy#1"]["rating"] == rows["greedy#2"]["rating"]  # identical records
    def strip(data: dict) -> list[dict]:  # names aside (#1, #2 follow the listing order)
        return sorted((r["rank"], r["rating"], r["games"], r["wins"]) for r in data["standings"])
    assert strip(forward) == strip(backward)


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
    jobs = [GameJob(2 * d + s, f"t00-d{d:04d}-s{s:02d}", "phase10", None, d, d,
                    bots if s == 0 else bots[::-1]) for d in range(40) for s in range(2)]

    def line(job: GameJob) -> dict:  # "a" always places first
        places = [1, 2] if job.bots[0].name == "a" else [2, 1]
        return {"index": job.index, "deal": job.deal, "status": "ok", "places": places,
                "scores": [0, 50], "bots": [b.name for b in job.bots]}

    stops = []
    for order in (jobs, list(reversed(jobs)), jobs[1::2] + jobs[0::2]):
        watch = SprtWatch.of(SprtSpec(0, 100), jobs, "a", "b")
        for job in order:
            if watch.add(line(job)):
                break
        stops.append(watch.stop)
        assert watch.test.deal_sets * 2 == watch.stop + 1  # whole deal sets only
    assert stops[0] == stops[1] == stops[2] is not None
