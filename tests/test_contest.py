"""The contest's parts on their own: settings fixed at init, the database's check on open,
the ladder's ratings against the verdicts', matchmaking, the lazy job feed of the pools, and
bot check under a contest's rules and table size. (The whole story with real processes is
tests/test_contest_e2e.py.)"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import shlex
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from support import PYTHON, RANDOM_BOT_PATH

from meldref.contest.ladder.events import RunEvent, Unseated
from meldref.contest.matchmaking import Candidate, next_table, overlap
from meldref.contest.ratings import LadderRatings
from meldref.contest.settings import ContestError, ContestSettings
from meldref.contest.store import ContestStore, RunLock, game_id
from meldref.protocol.records import ResultLine
from meldref.tools.botcheck import check_bot
from meldref.tournament.pool import GamePool
from meldref.tournament.schedule import GameJob
from meldref.verdicts.games import GameResult
from meldref.verdicts.ratings import standings
from meldref.verdicts.seatings import seatings


def settings(**changes: Any) -> ContestSettings:
    values: dict[str, Any] = {"game": "phase10", "players": 2, "rules": {"phases-to-win": 1},
                              "limits": {}, "sandbox": True, "placement": 2,
                              "suspend_after": 3, "seed": 7}
    values.update(changes)
    return ContestSettings.checked(**values)


# ----------------------------------------------------------------------------------------------
# Settings


def test_the_sandbox_is_on_unless_init_says_no() -> None:
    assert settings().sandbox is True
    assert settings(sandbox=False).sandbox is False


def test_init_puts_every_game_and_check_in_the_sandbox_unless_told_not_to(
        tmp_path: Path) -> None:
    """The sandbox is on by default in a contest (issue 23), and the setting reaches the limits
    every game and check is played under (it was kept, and reached none of them)."""
    from typer.testing import CliRunner

    from meldref.cli import app

    for flags, on in (([], True), (["--no-sandbox"], False)):
        folder = tmp_path / f"contest-{on}"
        result = CliRunner().invoke(app, ["contest", "init", str(folder), "--players", "2",
                                          *flags])
        assert result.exit_code == 0, result.output
        assert f"sandbox {'on' if on else 'off'}" in result.stdout
        store = ContestStore.open(folder)
        try:
            assert store.settings.sandbox is on
            assert store.settings.process_limits().sandbox is on
        finally:
            store.close()


def test_a_later_init_with_other_settings_is_refused_naming_the_setting(tmp_path: Path) -> None:
    ContestStore.create(tmp_path / "c", settings()).close()
    with pytest.raises(ContestError, match=r"rules is \{.*phases-to-win=1.*\}, not \{.*"
                       r"phases-to-win=2.*fixed at init"):
        ContestStore.create(tmp_path / "c", settings(rules={"phases-to-win": 2}))
    with pytest.raises(ContestError, match=re.escape("limits is {}, not {move-time=2.0}")):
        ContestStore.create(tmp_path / "c", settings(limits={"move-time": 2.0}))
    same = ContestStore.create(tmp_path / "c", settings(seed=99))  # the seed is drawn anew
    assert same.settings.seed == 7
    same.close()


def test_a_one_seat_ladder_is_refused() -> None:
    with pytest.raises(ContestError, match="at least 2 seats"):
        settings(game="solitaire", players=1, rules={})


# ----------------------------------------------------------------------------------------------
# The database and the replay folder


def staged_version(store: ContestStore, name: str) -> int:
    staged = store.folder / "bots" / ".staging" / name
    staged.mkdir(parents=True)
    (staged / "bot.py").write_text("")
    return store.join(name, "python3 bot.py", staged).id


def test_repair_after_a_kill_requeues_games_in_flight_and_removes_their_replays(
        tmp_path: Path) -> None:
    store = ContestStore.create(tmp_path / "c", settings())
    a, b = staged_version(store, "a"), staged_version(store, "b")
    ds = store.add_deal_set("ladder", (a, b), seatings(2))
    first, second = store.queued_games()
    replays = store.folder / "replays"
    # Game 1 finished (replay, then its row); game 2 was in flight (row running, replay begun).
    store.mark_running(first.id)
    (replays / f"{first.game_id}.jsonl").write_text("{}\n")
    line = {"status": "ok", "index": first.id, "game_id": first.game_id, "deal": ds,
            "bots": ["a v1", "b v1"], "places": [1, 2], "scores": [0, 50], "faults": [[], []]}
    store.record(ResultLine.from_json(line))
    store.mark_running(second.id)
    (replays / f"{second.game_id}.jsonl").write_text("{}\n")
    (store.folder / "bots" / "a" / "v2").mkdir()  # a submit killed before its commit
    store.close()

    store = ContestStore.open(tmp_path / "c")
    repair = store.repair()
    assert repair.requeued == [second.game_id] and not repair.lost
    assert not (replays / f"{second.game_id}.jsonl").exists()
    assert (replays / f"{first.game_id}.jsonl").exists()
    assert [g.game_id for g in store.queued_games()] == [second.game_id]
    assert not (store.folder / "bots" / "a" / "v2").exists()
    assert (store.folder / "bots" / "a" / "v1").is_dir()
    # A finished game whose replay has gone is played again.
    (replays / f"{first.game_id}.jsonl").unlink()
    assert store.repair().lost == [first.game_id]
    assert [g.game_id for g in store.queued_games()] == [first.game_id, second.game_id]
    store.close()


def test_one_run_at_a_time(tmp_path: Path) -> None:
    ContestStore.create(tmp_path / "c", settings()).close()
    first, second = RunLock(tmp_path / "c"), RunLock(tmp_path / "c")
    assert first.try_take() and not second.try_take()
    first.release()
    assert second.try_take()
    second.release()


def record_deal_set(store: ContestStore, table: tuple[int, ...], labels: list[str],
                    places: list[tuple[int, ...]]) -> int:
    """A deal set of `table` recorded as played: its games' result lines, places given."""
    ds = store.add_deal_set("ladder", table, seatings(len(table)))
    seed = store.db.execute("SELECT seed FROM deal_sets WHERE id = ?", (ds,)).fetchone()[0]
    for game, placed in zip(store.queued_games(), places, strict=True):
        seated = [labels[table.index(v)] for v in game.versions]
        store.mark_running(game.id)
        store.record(ResultLine.from_json({
            "status": "ok", "index": game.id, "game_id": game.game_id, "seed": seed,
            "deal": ds, "bots": seated, "places": list(placed),
            "scores": [10 * p for p in placed], "faults": [[] for _ in seated]}))
    return ds


def test_the_ladder_reads_the_games_its_result_lines_hold(tmp_path: Path) -> None:
    # The ladder's games come from the seats' rows (one query, no result line parsed): the
    # same games, seed and all, as reading each stored line (`GameResult.from_json`).
    store = ContestStore.create(tmp_path / "c", settings())
    try:
        a, b = staged_version(store, "a"), staged_version(store, "b")
        first = record_deal_set(store, (a, b), ["a v1", "b v1"], [(1, 2), (1, 2)])
        second = record_deal_set(store, (b, a), ["b v1", "a v1"], [(2, 1), (1, 1)])
        lines = store.db.execute("SELECT deal_set, result FROM games ORDER BY deal_set, "
                                 "seating").fetchall()
        parsed = {ds: [GameResult.from_json(json.loads(r)) for d, r in lines if d == ds]
                  for ds in (first, second)}
        assert store.done_deal_sets() == list(parsed.items())
        assert store.deal_set_games(second) == parsed[second]
        assert all(g is not None and g.seed is not None for g in parsed[first])
    finally:
        store.close()


def test_the_board_is_read_in_queries_that_do_not_grow_with_the_versions(
        tmp_path: Path) -> None:
    # It made a query per version twice (`version`, `version_record`): 400 queries for a board
    # of 200 versions, on every poll of every viewer's page.
    from meldref.contest.board import leaderboard

    def statements(versions: int) -> int:
        store = ContestStore.create(tmp_path / f"c{versions}", settings())
        try:
            ids = [staged_version(store, f"bot{k}") for k in range(versions)]
            record_deal_set(store, (ids[0], ids[1]), ["bot0 v1", "bot1 v1"], [(1, 2), (2, 1)])
            store.save_ratings([(v, 10.0 * k, None, None, 2, "too few") for k, v in
                                enumerate(ids)])
            seen: list[str] = []
            store.db.set_trace_callback(seen.append)
            board = leaderboard(store)
            assert len(board.leaderboard) == versions
            return len(seen)
        finally:
            store.close()

    assert statements(3) == statements(12)


def test_a_game_the_referee_failed_charges_no_seat(tmp_path: Path) -> None:
    # Every seat of a game the referee could not finish was marked failed: one version whose
    # crash broke the referee (crossed descriptors, issue 43: `failed: OSError: [Errno 9] Bad
    # file descriptor`) charged the versions beside it, and three such games suspended them.
    store = ContestStore.create(tmp_path / "c", settings())
    a, b = staged_version(store, "a"), staged_version(store, "b")
    store.add_deal_set("ladder", (a, b), seatings(2))
    for game in store.queued_games():
        store.mark_running(game.id)
        store.record(ResultLine.from_json({
            "status": "error", "index": game.id, "game_id": game.game_id,
            "bots": ["a v1", "b v1"], "error": "OSError: [Errno 9] Bad file descriptor"}))
    try:
        assert store.version_record(a) == (2, 0) and store.version_record(b) == (2, 0)
        assert [s.outcomes for s in store.recent_seats(a, 10)] == [("referee error",)] * 2
    finally:
        store.close()


def test_opening_a_file_that_is_no_contest_database_keeps_no_descriptor(
        tmp_path: Path) -> None:
    # Its connection was left to the garbage collector: open as long as anything held the
    # error (its traceback holds the frame that holds the connection).
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "contest.db").write_bytes(b"not a database " * 100)
    with pytest.raises(ContestError, match="not a contest database") as refused:
        ContestStore.open(folder)
    assert refused.value is not None  # held, as a caller reporting it holds it
    held = [fd for fd in os.listdir("/proc/self/fd")
            if os.path.realpath(f"/proc/self/fd/{fd}") == str(folder / "contest.db")]
    assert held == []


def test_a_run_whose_last_write_fails_gives_back_the_database_and_the_lock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The run's cleanup closed the database and released the lock after discarding the
    # games in flight, in one `finally`: when that write failed (`database is locked` after
    # the busy timeout, a full disk), both stayed open as long as the error was held.
    from meldref.contest.ladder import run as ladder_run

    store = ContestStore.create(tmp_path / "c", settings())
    staged_version(store, "a")
    store.close()

    calls = itertools.count()
    discard = ContestStore.discard_in_flight

    def locked(self: ContestStore) -> list[str]:
        if next(calls):  # the check on open's passes; the run's own, at its end, fails
            raise sqlite3.OperationalError("database is locked")
        return discard(self)

    monkeypatch.setattr(ContestStore, "discard_in_flight", locked)
    with pytest.raises(sqlite3.OperationalError, match="locked") as failed:
        ladder_run.play_ladder(tmp_path / "c", wait=False)
    assert failed.value is not None  # held, as a caller reporting it holds it
    lock = RunLock(tmp_path / "c")
    assert lock.try_take()  # given back
    lock.release()
    held = [fd for fd in os.listdir("/proc/self/fd")
            if os.path.realpath(f"/proc/self/fd/{fd}") == str(tmp_path / "c" / "contest.db")]
    assert held == []


def test_versions_are_numbered_per_name_and_supersede(tmp_path: Path) -> None:
    store = ContestStore.create(tmp_path / "c", settings())
    staged_version(store, "a")
    staged = store.folder / "bots" / ".staging" / "again"
    staged.mkdir()
    second = store.join("a", "python3 bot.py", staged)
    assert (second.number, second.folder) == (2, "bots/a/v2")
    assert [(v.label, v.state) for v in store.versions()] == [
        ("a v1", "superseded"), ("a v2", "active")]
    assert game_id(12, 3) == "ds000012-s03"
    store.close()


# ----------------------------------------------------------------------------------------------
# Ratings


def play(ladder: LadderRatings, games: list[GameResult], table: list[str], deal: int,
         strength: dict[str, float], rng: random.Random) -> None:
    """One deal set of `table` (every seating), noisy places from the strengths."""
    dealt = []
    for row in seatings(len(table)):
        seated = tuple(table[i] for i in row)
        noisy = sorted(seated, key=lambda n: -strength[n] - rng.gauss(0, 2))
        places = tuple(noisy.index(n) + 1 for n in seated)
        dealt.append(GameResult(deal, seated, places, tuple(float(p) for p in places)))
    games.extend(dealt)
    ladder.add_deal_set(dealt)


def test_the_ladder_fit_is_the_verdicts_fit() -> None:
    rng = random.Random(5)
    names = [f"bot{k}" for k in range(5)]
    strength = {n: float(k) for k, n in enumerate(names)}
    ladder, games = LadderRatings(), []
    for deal in range(40):
        play(ladder, games, rng.sample(names, 3), deal, strength, rng)
    fitted = ladder.fit(names, resamples=50)
    verdicts = {row.bot: row.rating for row in standings(games, names, resamples=0).rows}
    for name in names:
        assert fitted[name].rating == pytest.approx(verdicts[name], abs=0.1)
        low, high = fitted[name].resampled  # matchmaking's bootstrap range
        assert low is not None and high is not None and low <= fitted[name].rating <= high
        # The printed interval (tests/test_contest_intervals.py): both ends, or one (bot0
        # never placed above another here), each on its side of the rating.
        low, high = fitted[name].low, fitted[name].high
        assert (low is None or low <= fitted[name].rating) and (
            high is None or fitted[name].rating <= high)
    # Versions out of play are left out of the fit: the others are rated among themselves.
    three = ladder.fit(names[:3], resamples=0)
    assert set(three) == set(names[:3])


# ----------------------------------------------------------------------------------------------
# Matchmaking


def ladder_of(intervals: list[tuple[float, float]], done: int = 10) -> list[Candidate]:
    return [Candidate(k, lo, hi, done, 0) for k, (lo, hi) in enumerate(intervals)]


def test_a_new_version_meets_the_top_the_middle_and_the_bottom() -> None:
    ranking = ladder_of([(100 - 20 * k, 110 - 20 * k) for k in range(9)])
    met = set()
    for placed in range(6):
        new = Candidate(99, None, None, placed, 0)
        table = next_table([*ranking, new], seats=2, placement=6)
        assert table is not None and table[0] == 99
        met.add(table[1])
    assert min(met) <= 2 and max(met) >= 6 and len(met) >= 4


def test_the_neighbours_whose_intervals_overlap_most_play() -> None:
    # 0 and 1 apart, 1 and 2 overlapping a little, 2 and 3 nested: 2 and 3 play.
    ranking = ladder_of([(200, 220), (100, 150), (60, 105), (70, 90)])
    assert overlap(ranking[2], ranking[3]) == 1.0 and overlap(ranking[0], ranking[1]) == 0.0
    assert next_table(ranking, seats=2, placement=2) == (2, 3)
    assert next_table(ranking, seats=3, placement=2) == (2, 3, 1)


def test_the_bootstraps_doubt_about_an_order_decides_where_it_is_given() -> None:
    # Every interval overlaps its neighbour's, but the resamples are sure of 0 above 1 and
    # of 2 above 3: the pair in doubt, 1 and 2, plays.
    ranking = ladder_of([(0, 100), (-10, 90), (-20, 80), (-30, 70)])
    assert next_table(ranking, 2, 2, doubt=[0.01, 0.4, 0.02]) == (1, 2)
    ladder = LadderRatings()
    for k in range(30):
        won = k % 3 != 0  # a wins two deal sets in three
        places = (1, 2) if won else (2, 1)
        ladder.add_deal_set([GameResult(0, ("a", "b"), places, (0.0, 1.0))])
    ladder.fit(["a", "b"], resamples=100)
    (a_over_b,), (b_over_a,) = ladder.doubt(["a", "b"]), ladder.doubt(["b", "a"])
    assert 0 < a_over_b < 0.05 and b_over_a == pytest.approx(1 - a_over_b)
    assert ladder.doubt(["a", "new"]) == [1.0]  # not fitted yet: nothing is sure


def test_deal_sets_in_flight_spread_the_games() -> None:
    # The top pair's doubt 0.1 against the next pair's 0.5, weighted 1/(1 + 5/3)^2 (its
    # depth): 0.1 against 0.07, until two deal sets in flight divide the top's by 3.
    ranking = ladder_of([(100, 150), (90, 140), (40, 60), (35, 55), (0, 50)])
    busy = [Candidate(0, 100, 150, 10, 2), *ranking[1:]]
    doubt = [0.1, 0.5, 0.01, 0.01]
    assert next_table(ranking, 2, 2, doubt) == (0, 1)
    assert next_table(busy, 2, 2, doubt) == (1, 2)


def test_too_few_versions_in_play_make_no_table() -> None:
    assert next_table(ladder_of([(0, 1)]), seats=2, placement=2) is None


# ----------------------------------------------------------------------------------------------
# What the contest changed in the tournament's machinery


def counting_jobs(taken: list[int], count: int) -> Any:
    for k in range(count):
        taken.append(k)
        yield GameJob(k, f"g{k}", "phase10", None, k, k, ())


def echo(job: GameJob, folder: Path, keep_logs: bool) -> dict[str, Any]:
    return {"index": job.index, "game_id": job.game_id, "status": "ok"}


def test_the_pool_takes_each_job_only_when_it_has_room(tmp_path: Path) -> None:
    taken: list[int] = []
    pool = GamePool(1, echo, tmp_path, False)
    results = pool.play(counting_jobs(taken, 20))
    first = next(results)
    assert first["index"] == 0 and len(taken) <= 3  # 2 in flight per worker, then one more
    assert [r["index"] for r in results] == list(range(1, 20))


def test_bot_check_plays_the_contests_rules_at_its_table_size(tmp_path: Path) -> None:
    from meldref.engine.game import find_game

    rules = find_game("phase10").rules_type(phases_to_win=1)
    report = check_bot(shlex.join([PYTHON, str(RANDOM_BOT_PATH)]), ["phase10"], log_dir=tmp_path,
                       rules=rules, seat_counts=[3])
    assert report.passed, report.to_json()
    assert (tmp_path / "phase10-3.stderr").exists()
    assert not list(itertools.islice(tmp_path.glob("phase10.stderr"), 1))


# ----------------------------------------------------------------------------------------------
# Pages


def test_a_contest_without_games_is_served(tmp_path: Path) -> None:
    import threading
    import urllib.error
    import urllib.request

    from meldref.contest.serve.server import ContestServer

    store = ContestStore.create(tmp_path / "c", settings())
    staged_version(store, "alpha")
    store.close()
    server = ContestServer(tmp_path / "c", port=0, quiet=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with urllib.request.urlopen(server.url) as page:
            text = page.read().decode()
        assert "http-equiv='refresh'" in text and "/bot/alpha" in text
        with urllib.request.urlopen(server.url + "bot/alpha") as page:
            assert "not rated yet" in page.read().decode()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(server.url + "bot/nobody")
        assert missing.value.code == 404
    finally:
        server.shutdown()
        server.server_close()


def test_the_rating_history_is_an_svg_plot_with_its_band() -> None:
    from meldref.contest.serve.pages import history_svg

    svg = history_svg({"v1": [(1, 0.0, -50.0, 50.0), (2, 10.0, -30.0, 45.0)],
                       "v2": [(2, -5.0, -60.0, 40.0)]})
    assert svg.startswith("<svg") and svg.count("<polyline") == 2
    assert svg.count("<polygon") == 2 and ">v1<" in svg and ">v2<" in svg


def test_a_run_waiting_for_submissions_starts_no_pool(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # One version in play, a table of two: nothing to play until a submission. The run looked
    # every second with a new pool, and with --cluster local:N that is a new dask cluster and
    # every worker's start-up check each time (tcp://: the checks on every worker).
    from meldref.contest.ladder import run as ladder_run

    store = ContestStore.create(tmp_path / "c", settings())
    staged_version(store, "a")
    store.close()
    made: list[object] = []

    def pool(*args: Any) -> GamePool:
        made.append(args)
        return GamePool(1, echo, tmp_path, False)

    monkeypatch.setattr(ladder_run, "game_pool", pool)
    monkeypatch.setattr(ladder_run, "IDLE_POLL", 0.01)
    looks = itertools.count()

    def on_event(event: RunEvent) -> None:
        if isinstance(event, Unseated) and event.waits and next(looks) == 3:
            raise KeyboardInterrupt  # as Ctrl-C would, after the fourth look

    result = ladder_run.play_ladder(tmp_path / "c", on_event=on_event)
    assert result.stopped == "interrupted" and result.played == 0
    assert made == []


# ----------------------------------------------------------------------------------------------
# The commands' smaller promises


def test_a_submission_is_a_copy_the_authors_later_edits_do_not_reach(tmp_path: Path) -> None:
    from meldref.contest.submit import Submission, submit

    original = tmp_path / "mine.py"
    original.write_text(RANDOM_BOT_PATH.read_text())
    store = ContestStore.create(tmp_path / "c", settings(sandbox=False))
    try:
        version, _ = submit(store, Submission.of(original, "mine", None))
        original.write_text("raise SystemExit('edited after the submission')\n")
        copy = store.folder / version.folder / "mine.py"
        assert copy.read_text() == RANDOM_BOT_PATH.read_text()
    finally:
        store.close()


def test_retire_stops_scheduling_a_bot_and_keeps_its_record(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from meldref.cli import app

    store = ContestStore.create(tmp_path / "c", settings())
    a, b = staged_version(store, "a"), staged_version(store, "b")
    store.add_deal_set("ladder", (a, b), seatings(2))
    store.close()
    runner = CliRunner()
    done = runner.invoke(app, ["contest", "retire", str(tmp_path / "c"), "a"])
    assert done.exit_code == 0 and "a v1 retired" in done.stdout, done.output
    again = runner.invoke(app, ["contest", "retire", str(tmp_path / "c"), "a"])
    assert again.exit_code == 2 and "no version of this bot is in play" in again.stderr
    store = ContestStore.open(tmp_path / "c")
    try:
        assert [(v.label, v.state) for v in store.versions()] == [("a v1", "retired"),
                                                                   ("b v1", "active")]
        assert store.queued_games() == []  # its open deal set is not played
    finally:
        store.close()


def test_hours_stop_the_run_from_making_deal_sets(tmp_path: Path) -> None:
    from meldref.contest.ladder.run import play_ladder

    store = ContestStore.create(tmp_path / "c", settings())
    staged_version(store, "a")
    staged_version(store, "b")
    store.close()
    result = play_ladder(tmp_path / "c", hours=0.0)
    assert (result.stopped, result.played, result.deal_sets) == ("hours", 0, 0)


def test_run_and_final_hold_numpys_linear_algebra_to_one_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The ladder's fits are small solves that BLAS threads only slow down while the workers
    # hold the cores: a refresh at 200 bots took 14.96 s with OpenBLAS's threads, 3.66 s with
    # one. What the environment already says is kept.
    from typer.testing import CliRunner

    import meldref.contest.final as final_module
    import meldref.contest.ladder.run as run_module
    from meldref.cli import app
    from meldref.contest import BLAS_THREADS

    ContestStore.create(tmp_path / "c", settings(sandbox=False)).close()
    seen: list[dict[str, str | None]] = []

    def record(*args: Any, **kwargs: Any) -> Any:
        seen.append({name: os.environ.get(name) for name in BLAS_THREADS})
        raise ContestError("recorded")

    monkeypatch.setattr(run_module, "play_ladder", record)
    monkeypatch.setattr(final_module, "play_final", record)
    for name in BLAS_THREADS:  # unset for the test, and as before it afterwards
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    runner = CliRunner()
    for command in (["run"], ["final", "--top", "2"]):
        runner.invoke(app, ["contest", *command, str(tmp_path / "c")])
    assert seen == [{"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                     "MKL_NUM_THREADS": "4"}] * 2
