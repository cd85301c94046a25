"""Every benchmark script still runs: each on an input small enough for the suite, checked
for its exit and the figure it prints (bench/run.py has its own test, test_bench.py; the
soak is test_soak.py). Nothing here is timed: a figure's value is the benchmark's business."""

from __future__ import annotations

import importlib.util
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from support import PYTHON, ROOT

SCRIPTS = [
    # Was broken for weeks unnoticed: it still asked GameInfo for its bots.
    (["bench_verdicts.py", "--games", "4", "--game", "phase10"], '"statistic": "deal sets"'),
    (["bench_strength.py", "--game", "phase10", "--games", "2", "--pair", "greedy:random",
      "--jobs", "1"], "| phase10 | greedy | random | 2 |"),
    # Every bot against every other, and a table of them, with the deal sets behind each row.
    (["bench_strength.py", "--every-pair", "--bots", "random,greedy", "--table", "2",
      "--game", "fivecrowns", "--games", "2"], "| fivecrowns | greedy | 2-seat table | 2 | 1 |"),
    # An example bot, as the program it is, against a built-in one (issue 26).
    (["bench_strength.py", "--game", "fivecrowns", "--games", "2", "--pair",
      "greedy:example-python"], "| fivecrowns | greedy | example-python | 2 | 1 |"),
    # Solitaire's bots compared deal by deal: the difference of piles with its interval.
    (["bench_strength.py", "--game", "solitaire", "--games", "2", "--solitaire-bot", "greedy",
      "--solitaire-bot", "random"], "piles vs random ("),
    # What the hidden cards are worth to the Phase 10 expert's rules (issue 26's ceiling).
    (["bench_ceiling.py", "--games", "4", "--jobs", "1", "--only",
      "peek-feed,peek-all,peek-next,no-feed,pass-shun,no-wanted,points"],
     "| phase10 | pass-shun | expert | 4 | 2 |"),
    (["bench_ceiling.py", "--games", "4", "--jobs", "1", "--only", "truth,peek-search"],
     "| phase10 | peek-search | expert | 4 | 2 |"),
    (["bench_ceiling.py", "--game", "fivecrowns", "--games", "4", "--jobs", "1", "--only",
      "peek-feed"], "| fivecrowns | peek-feed | expert | 4 | 2 |"),
    # How often each class of the Phase 10 guard would feed the next seat.
    (["bench_ceiling.py", "--guard", "--games", "2"], "| 1: not known | "),
    (["bench_solver.py", "--hands", "5", "--climb", "1", "--steps", "5"], "worst: split"),
    (["bench_engine.py", "--game", "fivecrowns", "--games", "2"], "decisions/s"),
    (["bench_crash.py", "--rounds", "1", "--move-time", "1", "--time-bank", "0"], "| orphan |"),
    (["faults.py", "--only", "SIGSEGV"], "crashed"),
    (["bench_startup.py", "--runs", "1"], "| meldref --help |"),
    (["bench_export.py", "--games", "5", "20", "--format", "jsonl"], "| 20 | 560 |"),
    (["bench_envs.py", "--steps", "300", "--only", "meldref"], "| meldref solitaire |"),
    # Where an environment step's time goes, beside OpenSpiel's gin rummy.
    (["bench_spiel.py", "--steps", "300"], "| OpenSpiel gin rummy |"),
    (["bench_coverage.py", "--quick", "--runs", "5"], "| 4 | 5 | rating | 100.0% |"),
    (["bench_contest.py", "--bots", "4", "--seeds", "1", "--field", "contenders", "--batch",
      "8", "--resamples", "20", "--refresh-bots", "10", "--refresh-games", "600",
      "--run-games", "2"],
     "| games until the top 3 are ordered with 95% confidence | contenders | 4 |"),
    (["bench_jobs.py", "--games", "3", "--contest-games", "2", "--rounds", "1"],
     '"figure": "contest run", "jobs": 2'),
    # The contest's pages served while it plays, and a replay's disk raw and gzipped.
    (["bench_serve.py", "--games", "2", "--requests", "5"], "| GET /board.json | 5 |"),
]


def run(args: list[str]) -> str:
    done = subprocess.run([PYTHON, str(ROOT / "bench" / args[0]), *args[1:]], cwd=ROOT,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


# The contest's benchmarks start contests of real bot programs: many seconds each (-m long).
CONTESTS = {"bench_jobs.py", "bench_contest.py", "bench_serve.py"}
# Five seconds or more each, kept out of the default run too (the search's games, the start-up
# times of many processes, the coverage's many runs).
LONG = {*CONTESTS, "bench_startup.py", "bench_coverage.py"}


def _long(args: list[str]) -> bool:
    return args[0] in LONG or "truth" in args[-1].split(",")


@pytest.mark.parametrize(("args", "shows"), [
    pytest.param(args, shows, id=args[0], marks=[pytest.mark.long] if _long(args) else [])
    for args, shows in SCRIPTS])
def test_the_script_runs_on_a_small_input(args: list[str], shows: str) -> None:
    if args[0] in CONTESTS:  # their contests keep the sandbox on, as contests do by default
        from meldref.protocol.sandbox import sandbox_problem

        problem = sandbox_problem()
        if problem is not None:
            pytest.skip(f"{args[0]}'s contests need the bot sandbox: {problem}")
    assert shows in run(args)


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="dask.distributed is not installed (pip install -e '.[cluster]')")
def test_the_cluster_benchmark_runs() -> None:  # a minute: three clusters start
    assert "local:2" in run(["bench_cluster.py", "--games", "2", "--rounds", "1"])


def test_the_sandbox_benchmark_runs() -> None:
    from meldref.protocol.sandbox import sandbox_problem

    problem = sandbox_problem()
    if problem is not None:
        pytest.skip(f"no sandbox here: {problem}")
    shown = run(["bench_sandbox.py", "--starts", "1", "--games", "1", "--game", "solitaire"])
    assert "| sandbox |" in shown and "| guard | " in shown


@pytest.mark.slow
@pytest.mark.cluster
@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="dask.distributed is not installed (pip install -e '.[cluster]')")
def test_the_cluster_overhead_benchmark_runs() -> None:  # a scheduler, two workers, 30 s
    shown = run(["bench_cluster.py", "--overhead", "--games", "36"])
    assert "| before: a deal set a task, the client verifies all | " in shown
    assert "after/before: client CPU a game x" in shown


def test_the_strength_table_is_written_between_the_markers(tmp_path: Path) -> None:
    # Issue 26: the docs' table made by one command, not pasted by hand.
    doc = tmp_path / "bots.md"
    doc.write_text("before\n<!-- strength-table -->\nold\n<!-- /strength-table -->\nafter\n")
    run(["bench_strength.py", "--game", "phase10", "--games", "2", "--pair", "greedy:random",
         "--docs", str(doc)])
    text = doc.read_text()
    assert text.startswith("before\n<!-- strength-table -->\n| game | bot |")
    assert "| phase10 | greedy | random | 2 | 1 |" in text and "old" not in text
    assert text.endswith("|\n<!-- /strength-table -->\nafter\n")


# Two games under valgrind each way (a warm-up and the one counted): half a minute (-m long).
@pytest.mark.long
def test_the_instruction_count_runs() -> None:
    import shutil

    from meldref.build import compiled

    missing = [tool for tool in ("valgrind", "gcc") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: bench/instructions.py counts "
                    "under valgrind's callgrind, against the C instant bot")
    if not compiled():
        pytest.skip("the pure Python build: callgrind counts from the compiled play_game")
    out = run(["instructions.py", "--games", "solitaire", "--seeds", "1"])
    row = next(line for line in out.splitlines() if line.startswith("| solitaire | 1 | 28 |"))
    in_process, pipes, own = (int(cell.strip(" |").replace(",", ""))
                              for cell in row.split(" | ")[3:6])
    assert 0 < in_process < pipes and own == pipes - in_process


def test_the_instruction_count_says_what_it_lacks(tmp_path: Path) -> None:
    # Without valgrind on the PATH it stops with the reason, before building anything.
    done = subprocess.run([PYTHON, str(ROOT / "bench" / "instructions.py"), "--games",
                           "solitaire"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PATH": str(tmp_path), "HOME": str(tmp_path)})
    assert done.returncode == 2 and "valgrind" in done.stderr and "not found" in done.stderr


def _bench(name: str) -> Any:
    """A script of bench/ imported as a module (bench/ on the path, once)."""
    import sys

    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    return importlib.import_module(name)


def _ceiling() -> object:
    return _bench("bench_ceiling")


@pytest.mark.parametrize(("game", "variant"), [
    (game, variant) for game in ("phase10", "fivecrowns")
    for variant in _ceiling().WEIGHTS[game]])  # type: ignore[attr-defined]
def test_a_weighted_copy_of_the_expert_plays_otherwise(game: str, variant: str) -> None:
    """bench_ceiling.py's copies that differ in a weight: the weight reaches the copy (and not
    the expert), and the copy decides otherwise somewhere in a few games (a weight the expert no
    longer read would score exactly even and pass for a tuned one). The copies shadow the
    experts: shown each seat's views, their choices compared, the expert's played."""
    from meldref.engine.game import find_game

    ceiling = _ceiling()
    changed, expert = ceiling.CHANGED[game], ceiling.EXPERTS[game]  # type: ignore[attr-defined]
    weights = ceiling.WEIGHTS[game][variant]  # type: ignore[attr-defined]
    copy, plain = changed("s:0", variant), expert("s:0")
    for name, value in weights.items():
        assert getattr(copy, name) == value
        assert type(getattr(copy, name)) is type(getattr(plain, name))
    assert any(getattr(plain, name) != value for name, value in weights.items())
    info = find_game(game)

    def differs(deal: str) -> bool:
        players = [expert(f"{deal}:{k}") for k in range(2)]
        shadows = [changed(f"{deal}:{k}", variant) for k in range(2)]
        state = info.new_game(info.rules(), 2, deal)
        while (seat := state.to_move) is not None:
            view = state.observation(seat)
            action = players[seat].act(view)
            if str(shadows[seat].act(view)) != str(action):
                return True
            state.apply(action)
        return False

    assert any(differs(f"w{k}") for k in range(1, 21))


def test_the_pass_shunning_copy_marks_each_card_the_rival_left_as_not_wanted() -> None:
    """bench_ceiling.py's `pass-shun`: the copy's memory has, on top of the expert's marks, one
    "not wanted" for each of its discards the rival left on the pile (drew from the pile) and
    nothing more, seen at the copy's next draw; the expert's own memory stays without them."""
    from meldref.bots.phase10.expert import _trait
    from meldref.engine.common import Draw
    from meldref.engine.game import find_game
    from meldref.engine.phase10.actions import Discard

    ceiling = _ceiling()
    copy = ceiling.changed_bot("phase10", "p:0", "pass-shun")  # type: ignore[attr-defined]
    plain, rival = (ceiling.EXPERTS["phase10"](f"p:{k}") for k in (0, 1))  # type: ignore[attr-defined]
    state = find_game("phase10").new_game(find_game("phase10").rules(), 2, "p1")
    mine, passes, checked = None, Counter(), 0
    while (seat := state.to_move) is not None and checked < 12:
        view = state.observation(seat)
        if seat == 0:
            action = copy.act(view)
            plain.memory.observe(view)
            plain.memory.played(view, action)
            if view.decision == "draw" and view.hand_number == 1:
                extra = Counter(copy.memory.unwanted.get(1, {}))
                extra.subtract(plain.memory.unwanted.get(1, {}))
                assert +extra == +passes, (view.turn, extra, passes)
                checked += bool(passes)
            if isinstance(action, Discard):
                mine = action.card
        else:
            action = rival.act(view)
            if isinstance(action, Draw) and mine is not None and view.hand_number == 1:
                if action.source == "pile" and state.draw_pile:
                    passes[_trait(view, 1, mine)] += 1
                mine = None
        state.apply(action)
    assert checked >= 3  # the marks were compared after several passes


def test_the_forgetful_copy_marks_nothing_the_rival_took() -> None:
    """bench_ceiling.py's `no-wanted`: fed the same views as the expert, the copy's memory
    never marks a card the rival took as wanted, where the expert's does, and keeps the same
    marks of what the rival threw."""
    from meldref.engine.game import find_game

    ceiling = _ceiling()
    copy = ceiling.changed_bot("phase10", "f:0", "no-wanted")  # type: ignore[attr-defined]
    plain, rival = (ceiling.EXPERTS["phase10"](f"f:{k}") for k in (0, 1))  # type: ignore[attr-defined]
    info = find_game("phase10")
    state = info.new_game(info.rules(), 2, "f1")
    marked = 0
    while (seat := state.to_move) is not None and state.hand_number <= 3:
        view = state.observation(seat)
        if seat == 0:
            action = copy.act(view)
            plain.memory.observe(view)
            plain.memory.played(view, action)
            assert not any(copy.memory.wanted.values())
            assert copy.memory.unwanted == plain.memory.unwanted
            marked += bool(any(plain.memory.wanted.values()))
        else:
            action = rival.act(view)
        state.apply(action)
    assert marked  # the expert's memory did mark cards the rival took


@pytest.mark.parametrize("game", ["phase10", "fivecrowns"])
def test_search_told_the_truth_guesses_the_real_game(game: str) -> None:
    """bench_ceiling.py's `truth` variants: `search` whose guesses are the real game (`truth`:
    every card where it is; `truth-hands`: the hands as they are, the draw pile in a guessed
    order, a new one each guess), with rollouts by the expert for `truth-expert`; and `search`
    told nothing, their baseline. A guess that drifted from the real game would bound
    nothing."""
    import random

    from meldref.engine.game import find_game

    ceiling = _ceiling()
    info = find_game(game)
    state = info.new_game(info.rules(), 2, "t0")
    for _ in range(6):  # a few moves in: a discard pile, hands changed
        seat = state.to_move
        state.apply(ceiling.EXPERTS[game](f"t0:{seat}").act(  # type: ignore[attr-defined]
            state.observation(seat)))
    view = state.observation(state.to_move)
    real = state.snapshot()
    bots = {v: ceiling.changed_bot(game, "t0:1", v)  # type: ignore[attr-defined]
            for v in ceiling.TRUTHS}  # type: ignore[attr-defined]
    for bot in bots.values():
        bot.state = state
    rng = random.Random(1)
    assert bots["truth"].guess(view, rng) == real
    assert bots["truth"].guesses == bots["truth-expert"].guesses == 2
    orders = set()
    for _ in range(3):
        guessed = bots["truth-hands"].guess(view, rng)
        assert guessed["hands"] == real["hands"]
        assert sorted(guessed["draw_pile"]) == sorted(real["draw_pile"])
        orders.add(tuple(guessed["draw_pile"]))
    assert len(orders) == 3 and tuple(real["draw_pile"]) not in orders
    assert bots["truth-hands"].guesses > 2
    # The baseline, told nothing: its own guesses, the rival's hand dealt from the unseen cards.
    rival = 1 - state.to_move
    baseline = [bots["search"].guess(view, rng)["hands"][rival] for _ in range(3)]
    assert all(sorted(hand) != sorted(real["hands"][rival]) for hand in baseline)
    from meldref.bots.fivecrowns.search import FiveCrownsSearchBot
    from meldref.bots.phase10.search import Phase10SearchBot

    shipped = {"phase10": Phase10SearchBot, "fivecrowns": FiveCrownsSearchBot}[game]
    assert bots["search"].guesses == shipped.guesses
    expert = ceiling.EXPERTS[game]  # type: ignore[attr-defined]
    assert all(type(p) is not expert for p in bots["truth"].rollout_policies(2))
    assert [type(p) for p in bots["truth-expert"].rollout_policies(2)] == [expert, expert]


def test_the_search_told_what_feeds_the_next_seat_reads_it_and_guesses_the_rest() -> None:
    """bench_ceiling.py's `peek-search`: `search` whose expert (its prior and the guard its
    discards are searched within) is the `peek-feed` copy, told the real game, while its
    guesses stay its own: what knowing what feeds the next seat gives the search."""
    import random

    from meldref.engine.game import find_game

    ceiling = _ceiling()
    info = find_game("phase10")
    checked = 0
    for deal in (f"k{i}" for i in range(10)):
        state = info.new_game(info.rules(), 2, deal)
        for _ in range(4):  # a few moves in: nobody has laid
            seat = state.to_move
            state.apply(ceiling.EXPERTS["phase10"](f"{deal}:{seat}").act(  # type: ignore[attr-defined]
                state.observation(seat)))
        view = state.observation(state.to_move)
        rival = 1 - state.to_move
        if view.laid[rival] is not None:
            continue  # what fits the table is known to all: nothing to read
        checked += 1
        bot = ceiling.changed_bot("phase10", f"{deal}:1", "peek-search")  # type: ignore[attr-defined]
        peek = ceiling.changed_bot("phase10", f"{deal}:1", "peek-feed")  # type: ignore[attr-defined]
        plain = ceiling.EXPERTS["phase10"](f"{deal}:1")  # type: ignore[attr-defined]
        bot.state = peek.state = state
        assert bot.expert.state is state
        cards = list(dict.fromkeys(view.hand))
        told = [bot.expert._feed_risk(view)(c) for c in cards]
        assert told == [peek._feed_risk(view)(c) for c in cards]
        assert set(told) <= {0, 2}  # read from the rival's hand, never the guess's 1
        assert told != [plain._feed_risk(view)(c) for c in cards]  # the guess: all 1 here
        guessed = bot.guess(view, random.Random(1))["hands"][rival]
        assert sorted(guessed) != sorted(c.text for c in state.hands[rival])
    assert checked >= 3


def test_the_strength_table_seats_every_bot_after_every_other_equally(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """bench_strength.py's 4-seat table plays each deal in the tournaments' balanced seatings:
    every bot in every seat, and right after every other bot, equally often. Rotations alone
    seated each bot after one neighbour for good (the expert after greedy, the search after
    the expert): the same moves then took 40% and 34% of the first places at Phase 10 (25 deal
    sets of --seed s26), from whom each sat after."""
    bench_strength = _bench("bench_strength")
    bots = ("random", "greedy", "expert", "search")
    seen: list[tuple[str, ...]] = []
    real = bench_strength.seat_bots

    def recording(info: object, names: list[str], deal: str) -> object:
        seen.append(tuple(names))
        # The seatings are what is checked, not the bots' play: random bots in every seat
        # keep the 12 games to a second (the search played them in 38 s of CPU, 155 s of
        # wall on a loaded machine, past the old per-test timeout).
        return real(info, ["random"] * len(names), deal)  # type: ignore[arg-type]

    monkeypatch.setattr(bench_strength, "seat_bots", recording)
    tallies = bench_strength.play_table("fivecrowns", bots, "seatings:0")
    assert len(seen) == 12 and len(set(seen)) == 12
    seats = Counter((names.index(b), b) for names in seen for b in bots)
    assert set(seats.values()) == {3}
    after = Counter((names[k - 1], names[k]) for names in seen for k in range(4))
    assert len(after) == 12 and set(after.values()) == {4}
    assert all(len(t.points) == 12 and len(t.pair_results) == 1 for t in tallies)
    assert all(0 <= t.pair_results[0] <= 1 for t in tallies)
    # The roles are drawn anew for each deal, as tournaments draw them.
    assert [tuple(bots[b] for b in row) for row in bench_strength.table_seatings(4, "seatings:0")
            ] == seen
    assert len({tuple(map(tuple, bench_strength.table_seatings(4, f"d:{i}")))
                for i in range(8)}) > 1


def test_a_paired_table_compares_a_setting_with_the_bots_as_they_ship() -> None:
    """`--table-paired` plays the table's deals twice, with `--set`'s options and without, and
    gives each bot's change deal set by deal set: the shipped side must be the plain table
    (its score is the changed score less the change), and the change must be seen."""
    import json

    table = ["bench_strength.py", "--game", "phase10", "--pair", "greedy:random", "--games",
             "2", "--bots", "random,greedy,expert", "--table", "3", "--table-games", "12",
             "--seed", "tp", "--jobs", "1"]

    def rows(out: str) -> dict[str, dict[str, object]]:
        found = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return {r["bot"].split()[0]: r for r in found if r["against"] == "3-seat table"}

    paired = rows(run([*table, "--set", "expert.feed_weight=0", "--table-paired"]))
    plain = rows(run(table))
    changed = paired["expert"]["vs_shipped"]
    assert isinstance(changed, dict) and changed["diff"] != 0
    for bot, row in paired.items():
        vs = row["vs_shipped"]
        assert isinstance(vs, dict)
        assert row["score"] - vs["diff"] == pytest.approx(plain[bot]["score"], abs=1e-3)
    out = subprocess.run([PYTHON, str(ROOT / "bench" / table[0]), *table[1:], "--table-paired"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "give --table N and --set" in out.stderr
