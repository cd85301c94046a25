"""`meldref contest` end to end, with real processes and a real database file: init, three
submissions (one refused by the check), a run, a new version submitted while it runs, the
run killed with SIGKILL, a rerun, status, a final, and the pages served to Chromium.

The games are tiny (Phase 10 to one phase, two seats) so the whole story takes seconds."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import PYTHON, RANDOM_BOT_PATH, ROOT, TESTS, wait_for

from meldref.protocol.sandbox import sandbox_problem
from meldref.replay.files import REPLAY_SUFFIXES, replay_stem

NO_READY = TESTS / "contest_bots" / "no_ready_bot.py"
SNEAKY = TESTS / "contest_bots" / "sneaky_bot.py"
TINY = ["phase10", "-n", "2", "-r", "phases-to-win=1", "--placement", "2"]
# A contest's bots run sandboxed by default; where no sandbox can be built (no bubblewrap, not
# root) these tests play the same story without it, and say so (tests/test_sandbox.py skips).
NO_SANDBOX = sandbox_problem()
if NO_SANDBOX is not None:
    print(f"contest tests without the sandbox: {NO_SANDBOX}")
    TINY.insert(1, "--no-sandbox")


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def meldref(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([PYTHON, "-m", "meldref", *args], capture_output=True, text=True,
                          env=env(), timeout=240)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def games(folder: Path, state: str = "done") -> int:
    db = sqlite3.connect(folder / "contest.db", timeout=30)
    try:
        return int(db.execute("SELECT COUNT(*) FROM games WHERE state = ?",
                              (state,)).fetchone()[0])
    finally:
        db.close()


def agree(folder: Path) -> tuple[set[str], set[str]]:
    """The done games in the database and what `replays/` holds: the game id of each replay
    (compressed or not), any other file by its name (a compression's temporary file)."""
    db = sqlite3.connect(folder / "contest.db", timeout=30)
    try:
        done = {r[0] for r in db.execute("SELECT game_id FROM games WHERE state = 'done'")}
    finally:
        db.close()
    return done, {replay_stem(p) if p.name.endswith(REPLAY_SUFFIXES) else p.name
                  for p in (folder / "replays").iterdir()}


def tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if "-wal" not in p.name and "-shm" not in p.name)


def rows(folder: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(folder / "contest.db", timeout=30)
    try:
        return [tuple(r) for table in ("versions", "deal_sets", "games")
                for r in db.execute(f"SELECT * FROM {table}")]
    finally:
        db.close()


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("contest") / "c"
    # Public replays: the pages show every game to the browser test, which signs in as no one.
    meldref("contest", "init", str(folder), *TINY, "--public-replays")
    story: dict[str, Any] = {"folder": folder}
    for name in ("alpha", "bravo"):
        meldref("contest", "submit", str(folder), str(RANDOM_BOT_PATH), "--name", name)
    sneaky = tmp_path_factory.mktemp("sneaky")
    shutil.copy(RANDOM_BOT_PATH, sneaky)
    shutil.copy(SNEAKY, sneaky)
    meldref("contest", "submit", str(folder), str(sneaky), "--name", "sneaky", "--cmd",
            "python3 sneaky_bot.py")
    before = (tree(folder), rows(folder))
    refused = meldref("contest", "submit", str(folder), str(NO_READY), "--name", "charlie",
                      check=False)
    story["refused"] = (refused, before, (tree(folder), rows(folder)))
    serve = subprocess.Popen([PYTHON, "-m", "meldref", "contest", "serve", str(folder),
                              "--port", "0"], env=env(), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    run = subprocess.Popen([PYTHON, "-m", "meldref", "contest", "run", str(folder), "-j", "2"],
                           env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert serve.stdout is not None
        url = re.search(r"at (http://\S+)", serve.stdout.readline())
        assert url, "serve did not say where it serves"
        assert wait_for(lambda: games(folder) >= 4, 120)
        meldref("contest", "submit", str(folder), str(RANDOM_BOT_PATH), "--name", "alpha")
        # While the run writes: status and the served leaderboard read the same database.
        story["status_running"] = json.loads(meldref("contest", "status", str(folder),
                                                     "--json").stdout)
        with urllib.request.urlopen(url[1], timeout=60) as answer:
            story["page_running"] = answer.read().decode()
        assert wait_for(lambda: games(folder, "running") > 0 and games(folder) >= 10, 120)
        run.send_signal(signal.SIGKILL)
        run.wait(30)
    finally:
        for process in (run, serve):
            if process.poll() is None:
                process.kill()
            process.communicate()
    story["after_kill"] = (games(folder), games(folder, "running"), agree(folder))
    story["rerun"] = meldref("contest", "run", str(folder), "-j", "2", "--games", "8")
    story["status"] = json.loads(meldref("contest", "status", str(folder), "--json").stdout)
    yield story


def test_a_refused_submission_is_reported_and_leaves_nothing(contest: dict[str, Any]) -> None:
    done, before, after = contest["refused"]
    assert done.returncode == 1
    assert "charlie: refused, the check failed (handshake" in done.stderr
    assert "I refuse to play" in done.stderr  # the end of its stderr
    assert after == before  # no file, no row


def test_kill_9_loses_only_the_games_in_flight_and_the_rerun_continues(
        contest: dict[str, Any]) -> None:
    done_at_kill, running_at_kill, (done, replays) = contest["after_kill"]
    assert running_at_kill > 0 and done_at_kill >= 10
    assert done <= replays  # a kill may leave replays of games in flight, never the reverse
    rerun = contest["rerun"]
    assert "games in flight when a run stopped are queued again" in rerun.stderr
    folder = contest["folder"]
    done, replays = agree(folder)
    assert done == replays and games(folder, "running") == 0
    assert len(done) >= done_at_kill + 8


def test_a_version_submitted_while_running_joins_and_supersedes(contest: dict[str, Any]) -> None:
    board = contest["status"]
    labels = [row["label"] for row in board["leaderboard"]]
    assert sorted(labels) == ["alpha v2", "bravo v1"]
    assert all(row["rating"] is not None and row["games"] > 0 for row in board["leaderboard"])
    out = {r["label"]: r for r in board["out_of_play"]}
    assert out["alpha v1"]["state"] == "superseded"
    assert out["alpha v1"]["games"] > 0  # it keeps its record
    assert board["running"] == [] and board["run"] is False


def test_status_and_serve_read_while_the_run_writes(contest: dict[str, Any]) -> None:
    board = contest["status_running"]
    assert board["run"] is True and board["played"] >= 4
    assert "alpha v2" in {row["label"] for row in board["leaderboard"]}  # just submitted
    page = contest["page_running"]
    assert "alpha" in page and "bravo" in page and "http-equiv='refresh'" in page


def test_run_writes_a_line_per_game(contest: dict[str, Any]) -> None:
    # As a tournament does off a terminal: a contest's run, for weeks, says what it plays.
    rerun = contest["rerun"]
    played = int(re.search(r"(\d+) games played", rerun.stdout)[1])  # type: ignore[index]
    lines = re.findall(r"(?m)^game (\d+) ds\d+-s\d+: .+ won \(", rerun.stderr)
    assert [int(n) for n in lines] == list(range(1, played + 1)), rerun.stderr


def test_status_prints_the_leaderboard(contest: dict[str, Any]) -> None:
    text = meldref("contest", "status", str(contest["folder"])).stdout
    assert "alpha" in text and "v2" in text and "95% CI" in text
    assert "alpha v1: superseded (superseded by v2)" in text
    assert "sneaky v1: suspended (3 of its last" in text


def test_settings_are_fixed_at_init(contest: dict[str, Any]) -> None:
    folder = contest["folder"]
    again = meldref("contest", "init", str(folder), *TINY[:-2], "--placement", "3",
                    check=False)
    assert again.returncode == 2
    assert "placement is 2, not 3: settings are fixed at init" in again.stderr


def test_final_publishes_its_standings_beside_the_ladder(contest: dict[str, Any]) -> None:
    folder = contest["folder"]
    done = meldref("contest", "final", str(folder), "--top", "2", "--deal-sets", "2", "--json")
    result = json.loads(done.stdout)
    finalists = {row["bot"] for row in result["final"]["standings"]}
    assert finalists == {"alpha v2", "bravo v1"}
    assert all(row["games"] == 4 for row in result["final"]["standings"])  # 2 deal sets x 2
    assert len(re.findall(r"(?m)^game \d+ ds\d+-s\d+: ", done.stderr)) == 4  # a line each
    assert {row["bot"] for row in result["ladder"]} == finalists
    board = json.loads(meldref("contest", "status", str(folder), "--json").stdout)
    assert board["final"]["final"]["standings"] == result["final"]["standings"]


def test_a_version_failing_its_games_is_suspended_with_the_reason(
        contest: dict[str, Any]) -> None:
    out = {r["label"]: r for r in contest["status"]["out_of_play"]}
    sneaky = out["sneaky v1"]
    assert sneaky["state"] == "suspended"
    assert sneaky["reason"].startswith("3 of its last") and "crashed" in sneaky["reason"]
    assert sneaky["faults"] >= 3


def test_a_bots_page_shows_its_faults_but_not_its_stderr(
        contest: dict[str, Any]) -> None:
    from meldref.contest.serve.server import ContestServer

    server = ContestServer(contest["folder"], port=0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen(f"{server.url}bot/sneaky", timeout=60) as answer:
            page = answer.read().decode()
    finally:
        server.shutdown()
        server.server_close()
    assert "suspended" in page and "crashed" in page
    # Its stderr is its author's alone (issue 46: every competitor read it here before).
    assert "crashing on purpose" not in page and "/author" in page


def test_the_database_is_sqlite_in_wal_mode(contest: dict[str, Any]) -> None:
    db = sqlite3.connect(contest["folder"] / "contest.db", timeout=30)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


def test_sigterm_discards_the_games_in_flight_cleanly(contest: dict[str, Any]) -> None:
    folder = contest["folder"]
    run = subprocess.Popen([PYTHON, "-m", "meldref", "contest", "run", str(folder), "-j", "2"],
                           env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = games(folder)
    try:
        assert wait_for(lambda: games(folder) > start and games(folder, "running") > 0, 120)
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, stderr
    done, replays = agree(folder)
    assert games(folder, "running") == 0 and done == replays


# ----------------------------------------------------------------------------------------------
# The pages, in Chromium


@pytest.mark.browser
def test_serve_shows_the_leaderboard_a_bot_page_and_a_game(contest: dict[str, Any],
                                                           browser: Any) -> None:
    from meldref.contest.serve.server import ContestServer

    server = ContestServer(contest["folder"], port=0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        with page.expect_request("**/board.json", timeout=60_000):  # it updates itself
            page.goto(server.url)
            board = page.locator("table.board tr")
            assert board.count() == 3  # the header and two versions in play
        page.click("table.board a:text('alpha')")
        page.wait_for_selector("svg.history polyline")
        assert "v1" in page.content() and "superseded" in page.content()
        page.click("text=/ds\\d+-s\\d+/ >> nth=0")
        page.wait_for_selector("html[data-ready='1']", timeout=10_000)
        assert page.locator("#seats .seat").count() == 2
        assert errors == []
    finally:
        page.close()
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from test_viewer_browser import ARGS, CHROMIUM

    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium at /usr/bin/chromium: the contest's browser test needs it")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=ARGS, viewport={"width": 1200, "height": 900})
        yield context
        context.close()


# ----------------------------------------------------------------------------------------------
# On a cluster


@pytest.mark.cluster
@pytest.mark.long
def test_the_ladder_plays_on_a_cluster_and_takes_a_version_submitted_meanwhile(
        tmp_path: Path) -> None:
    # `run --cluster local:1`: the same ladder on a dask cluster (the contest folder is shared,
    # as on one machine); a version submitted while it runs is played there too.
    pytest.importorskip("distributed", reason="dask.distributed (the cluster extra) is not "
                        "installed: pip install -e '.[cluster]'")
    folder = tmp_path / "c"
    meldref("contest", "init", str(folder), *TINY[:-1], "1")  # placement 1
    for name in ("alpha", "bravo"):
        meldref("contest", "submit", str(folder), str(RANDOM_BOT_PATH), "--name", name)
    run = subprocess.Popen([PYTHON, "-m", "meldref", "contest", "run", str(folder),
                            "--cluster", "local:1"], env=env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        assert wait_for(lambda: games(folder) >= 2, 150), "no game on the cluster"
        meldref("contest", "submit", str(folder), str(RANDOM_BOT_PATH), "--name", "charlie")
        assert wait_for(lambda: versions_played(folder) >= {"charlie"}, 150), \
            "the new version was not played"
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=90)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 130, stderr
    done, replays = agree(folder)
    assert games(folder, "running") == 0 and done == replays
    board = json.loads(meldref("contest", "status", str(folder), "--json").stdout)
    assert {row["bot"] for row in board["leaderboard"]} == {"alpha", "bravo", "charlie"}


def versions_played(folder: Path) -> set[str]:
    """The bots with a finished game."""
    return bots_seated(folder, "g.state = 'done'")


def bots_seated(folder: Path, where: str) -> set[str]:
    """The bots with a seat that `where` holds for (SQL over the seat `s` and its game `g`)."""
    db = sqlite3.connect(folder / "contest.db", timeout=30)
    try:
        return {r[0] for r in db.execute(
            "SELECT DISTINCT v.bot FROM seats s JOIN versions v ON v.id = s.version "
            f"JOIN games g ON g.id = s.game WHERE {where}")}
    finally:
        db.close()
