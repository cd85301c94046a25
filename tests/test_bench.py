"""bench/run.py still runs: every part of it on a tiny input (no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).parents[1] / "bench"


def load_run() -> ModuleType:
    sys.path.insert(0, str(BENCH))  # run.py imports its neighbours (bench_solver, bench_engine)
    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def tiny_sizes(run: ModuleType, rounds: int = 1, solitaire: int = 1) -> Any:
    """bench/run.py's `Sizes` at their smallest: a game or two of each, one round."""
    return run.Sizes(rounds=rounds, seeds={"phase10": 1, "fivecrowns": 1, "solitaire": solitaire},
                     engine_seconds=0.02, trips=200, tournament_games=2, rss_games=(2, 4),
                     profile_games=1, solver_climb=0)


# Over 100 s of CPU even on its tiny input (it builds C bots, plays tournaments, profiles):
# out of the default run, which it held for a fifth of its time; .ci/run runs it on its own.
@pytest.mark.slow
def test_every_figure_of_bench_run(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is missing: bench/run.py builds its C bots and pipe pair with it")
    run = load_run()
    tiny = tiny_sizes(run, solitaire=2)
    figures = run.Figures(out=lambda line: None)
    run.run(tiny, run.PARTS, list(run.GAMES), figures, tmp_path)
    names = {row["figure"] for row in figures.rows}
    assert {"pipe_round_trip", "decision_in_process", "decision_pipes", "pipes_overhead",
            "engine_rate", "tournament_rate", "rss", "solver_worst", "profile", "piece"} <= names
    for game in run.GAMES:
        assert figures.get("decision_pipes", game=game) > 0
        assert figures.get("engine_rate", game=game) > 0
    table = run.markdown(figures, run.machine())
    assert "| phase10 |" in table and "peak RSS" in table and "solver" in table
    saved = tmp_path / "figures.jsonl"
    saved.write_text("".join(json.dumps(row) + "\n" for row in
                             [{"figure": "machine", "value": run.machine()}, *figures.rows]))
    readme = tmp_path / "README.md"
    marks = "<!-- performance-table -->\nSTALE\n<!-- /performance-table -->"
    readme.write_text(f"# x\n\n{marks}\ntail\n")
    assert run.render(saved, tmp_path / "again.md", readme) == 0
    assert (tmp_path / "again.md").read_text() == table
    text = readme.read_text()
    assert "STALE" not in text and text.startswith("# x\n") and text.endswith("-->\ntail\n")
    # README's share is a first page's: the machine and a row per game, no more (the other
    # figures, the targets and the profile are docs/performance.md's).
    block = text.split("<!-- performance-table -->\n", 1)[1].split("<!-- /performance-table", 1)[0]
    rows = [line for line in block.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows] == ["| game", *(f"| {g}" for g in run.GAMES)]
    assert all(cell.endswith(" us") for row in rows[1:] for cell in row.split(" | ")[1:3])
    assert "peak RSS" not in block and "Targets" not in block and len(block.splitlines()) <= 8


def test_the_instant_bot_and_its_twin_pick_alike() -> None:
    run = load_run()
    twin = run.LcgChoice(7)
    # The C generator: state = state * 6364136223846793005 + 1442695040888963407 (mod 2**64),
    # index = (state >> 33) % count; the first picks for seed 7 among 10, worked out by hand.
    state, picks = 7, []
    for _ in range(5):
        state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
        picks.append((state >> 33) % 10)
    assert [twin.index(10) for _ in range(5)] == picks


def test_a_readme_without_the_marks_is_refused_untouched(tmp_path: Path) -> None:
    run = load_run()
    readme = tmp_path / "README.md"
    readme.write_text("# no marks here\n")
    with pytest.raises(SystemExit, match="needs one"):
        run.write_readme(readme, "table\n")
    assert readme.read_text() == "# no marks here\n"
    assert "6364136223846793005ULL" in (BENCH / "c" / "instant_bot.c").read_text()


def test_the_table_written_again_keeps_the_part_written_by_hand(tmp_path: Path) -> None:
    # Was: regenerating docs/performance.md deleted its section on parallel games.
    load_run()
    report = sys.modules["report"]  # run.py's neighbour, imported with it
    page = tmp_path / "performance.md"
    page.write_text(f"old table\n\n{report.HAND_WRITTEN}\n## By hand\nkept\n")
    report.write_markdown(page, "new table\n")
    assert page.read_text() == f"new table\n\n{report.HAND_WRITTEN}\n## By hand\nkept\n"
    report.write_markdown(tmp_path / "fresh.md", "table\n")
    assert (tmp_path / "fresh.md").read_text() == "table\n"


def test_rounds_must_be_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    run = load_run()
    with pytest.raises(SystemExit) as stop:
        run.main(["--rounds", "0", "--only", "solver"])
    assert stop.value.code == 2
    assert "--rounds must be at least 1" in capsys.readouterr().err


def test_both_builds_side_by_side(tmp_path: Path) -> None:
    # The sources loaded again as a package of their own run beside the installed build (the
    # compiled one, where it is): one run measures both, and the table shows both.
    run = load_run()
    from bench_engine import load_pure

    pure = run.Referee.of(run.PURE, load_pure(("engine", "protocol", "bots")).__name__)
    assert pure.find_game("phase10").new_game.__module__.startswith("pure_meldref.")
    tiny = tiny_sizes(run)
    figures = run.Figures(out=lambda line: None)
    run.run(tiny, ["pieces", "engines"], ["solitaire"], figures, tmp_path, [run.CURRENT, pure])
    assert figures.get("engine_rate", game="solitaire", referee=run.PURE) > 0
    assert figures.get("piece", game="solitaire", piece="view", referee=run.PURE) > 0
    table = run.markdown(figures, {**run.machine(), "build": "compiled with mypyc"})
    assert "## Compiled and pure Python" in table and "| solitaire | pure Python |" in table
    assert "The build measured: compiled with mypyc" in table


# py-spy's raw lines: frames outermost first, then the count (a compiled build's functions are
# native frames named by mypyc; a pure build's are Python frames with their file).
SAMPLED = """\
<module> (<string>:7);play_seeds (run.py:215);CPyDef_referee___play_game (m.so);\
CPyDef_referee____Referee___loop (m.so);CPyDef_conversation___request_text (m.so) 3
<module> (<string>:7);play_seeds (run.py:215);CPyDef_referee___play_game (m.so);\
CPyDef_referee____Referee___loop (m.so);CPyDef_channel___LineChannel___read (m.so);\
select_poll_poll (select.so);__poll (libc.so.6) 1
<module> (<string>:7);play_seeds (run.py:215);close_all (meldref/protocol/referee.py:9) 4
<module> (<string>:7);play_game (meldref/protocol/referee.py:180);\
_Referee.tell (meldref/protocol/referee.py:321);write (libc.so.6) 4
"""


def test_sampled_stacks_are_shared_out_by_meldref_function() -> None:
    run = load_run()
    samples, shares = run.stack_shares(SAMPLED)
    # Only the samples inside play_game count (not the 4 in close_all), the loop every sample
    # is in is left out, and the system call at a stack's top is named.
    assert samples == 8
    assert dict(shares) == {"conversation.request_text": 37.5, "channel.LineChannel.read": 12.5,
                            "system call poll": 12.5, "referee._Referee.tell": 50.0,
                            "system call write": 50.0}
    assert shares[0][1] == 50.0


def test_without_py_spy_no_sampled_profile_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    run = load_run()
    monkeypatch.setattr(run.shutil, "which", lambda name: None)
    assert run.sampled_profile("phase10", Path("/nonexistent"), 0.1) is None


def test_each_game_is_compared_with_the_round_trips_of_its_own_rounds(tmp_path: Path) -> None:
    # The machine's speed moves from hour to hour: a game's overhead is divided by the round
    # trip measured in its own rounds, not by the run's first one (measured minutes before).
    if shutil.which("gcc") is None:
        pytest.skip("gcc is missing: the pipe figures need the C bot and pipe pair")
    run = load_run()
    tiny = tiny_sizes(run, rounds=2)
    figures = run.Figures(out=lambda line: None)
    run.run(tiny, ["pipes"], ["solitaire"], figures, tmp_path)
    rows = [r for r in figures.rows if r["figure"] == "pipe_round_trip"]
    assert [r.get("game") for r in rows] == [None, "solitaire"] and rows[1]["rounds"] == 2
    own, overhead = rows[1]["value"], figures.get("pipes_overhead", game="solitaire")
    rows[0]["value"] = own * 1000  # a first measurement far from the game's own
    table = run.markdown(figures, run.machine())
    row = next(line for line in table.splitlines() if line.startswith("| solitaire |"))
    assert f"{overhead} us = {overhead / own:.1f}x" in row and f"| {own} us |" in row


def test_the_pipes_overhead_is_split_by_a_loopback_playing_the_same_games(
        tmp_path: Path) -> None:
    # The overhead was one figure: how much of it the referee's text is, and how much the
    # pipes themselves add, was argued, not measured. The loopback plays the very games of the
    # other ways (per_decision checks it) through the referee's whole protocol path.
    if shutil.which("gcc") is None:
        pytest.skip("gcc is missing: the pipe figures need the C bot and pipe pair")
    run = load_run()
    figures = run.Figures(out=lambda line: None)
    run.run(tiny_sizes(run), ["pipes"], ["phase10", "solitaire"], figures, tmp_path)
    for game in ("phase10", "solitaire"):
        inproc, looped, piped = (figures.get(f"decision_{way}", game=game)
                                 for way in ("in_process", "loopback", "pipes"))
        text, system = (figures.get(f"pipes_overhead_{part}", game=game)
                        for part in ("text", "system"))
        assert looped > 0 and text == pytest.approx(looped - inproc, abs=0.11)
        assert system == pytest.approx(piped - looped, abs=0.11)
        assert text + system == pytest.approx(figures.get("pipes_overhead", game=game), abs=0.3)
        # The loopback again with a real round trip a request: its time over the loopback's
        # is a round trip's cost inside the referee's loop.
        # The same pipes with reads that sleep at once: what the look for a quick answer saves.
        sleeping = figures.get("decision_pipes_sleeping", game=game)
        saves = next(r["look_saves"] for r in figures.rows
                     if r["figure"] == "decision_pipes_sleeping" and r["game"] == game)
        # Both times are recorded to 0.1 us: the share computed from them is off by as much as
        # that rounding moves it (far more than 0.002 when a loaded machine made the look cost
        # several times the sleep: 797 us against 117 once), plus the share's own rounding.
        slack = 0.05 / sleeping + 0.05 * piped / sleeping**2 + 0.0005
        assert sleeping > 0 and saves == pytest.approx(1 - piped / sleeping, abs=slack)
        tripped = figures.get("decision_loopback_trip", game=game)
        assert figures.get("round_trip_in_loop", game=game) == pytest.approx(
            tripped - looped, abs=0.11)
    table = run.markdown(figures, run.machine())
    looped = figures.get("decision_loopback", game="solitaire")
    row = next(line for line in table.splitlines()
               if line.startswith(f"| solitaire | {looped} us |"))
    assert f"| {figures.get('pipes_overhead_system', game='solitaire')} us = " in row
    assert f"| {figures.get('round_trip_in_loop', game='solitaire')} us = " in row
    assert "the pipes beyond the text" in table and "with reads that sleep at once" in table


def test_a_rounds_games_are_played_by_bots_started_once_as_in_a_match(tmp_path: Path) -> None:
    # Each game started its bot programs afresh: a Solitaire game has 28 decisions, so a bot's
    # first moves after it started (its loader's and its pages' work) weighed on every
    # decision. A match keeps its bots from game to game; the benchmark now does too.
    run = load_run()
    made: list[int] = []
    in_process = run.in_process_seats(1)

    def seats_for(seed: int) -> list[Any]:
        made.append(seed)
        return list(in_process(seed))

    decisions, *_ = run.play_seeds("solitaire", seats_for, [1, 2, 3], keep=True)
    assert made == [1] and decisions == 3 * 28
    run.play_seeds("solitaire", seats_for, [1, 2], keep=False)
    assert made == [1, 1, 2]
