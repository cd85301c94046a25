"""What `contest init`, `serve`, `status` and `run` tell the organiser (issue 43): init prints
every limit each bot will play under, defaults included, by the keys that change them; serve
on a port already taken says so in a line and exits 2, as `replay serve` does; status prints
the rank chances the pages show; run words a number out of range as the other commands do."""

from __future__ import annotations

import functools
import json
import socket
import subprocess
from pathlib import Path

from support import PYTHON, RANDOM_BOT_PATH
from test_contest_e2e import TINY, env
from test_contest_e2e import meldref as run_meldref

from meldref.contest.board import chance_columns, chance_text
from meldref.contest.store import ContestStore
from meldref.engine.game import option_name
from meldref.settings import LimitSettings

meldref = functools.partial(run_meldref, check=False)  # its exit code read here


def test_init_prints_every_limit_each_bot_plays_under(tmp_path: Path) -> None:
    # It printed `limits {}` under the defaults: the organiser could not tell what the bots'
    # clocks and caps were (the sandbox's caps among them) from what init said.
    folder = tmp_path / "c"
    done = meldref("contest", "init", str(folder), "phase10", "-n", "2", "--move-time", "2",
                   "--memory-mb", "512")
    assert done.returncode == 0, done.stderr
    assert "limits {" not in done.stdout
    head = "limits every bot plays under: "
    line = next(x for x in done.stdout.splitlines() if x.startswith(head))
    shown = dict(item.split(" ", 1) for item in line.removeprefix(head).split(", "))
    keys = {option_name(name) for name in LimitSettings.model_fields} - {"sandbox"}
    assert set(shown) == keys  # every one, by the key (and flag) that changes it
    assert shown["move-time"] == "2" and shown["memory-mb"] == "512"  # as given
    store = ContestStore.open(folder)
    try:
        policy, limits = store.settings.policy(), store.settings.process_limits()
    finally:
        store.close()
    # The rest as the games are played: the defaults, the sandbox's caps among them.
    assert shown["startup-time"] == f"{policy.startup_time:g}"
    assert shown["illegal-retries"] == str(policy.illegal_retries)
    for key in ("max-processes", "cpu-seconds", "file-size-mb"):
        value = getattr(limits, key.replace("-", "_"))
        assert shown[key] == ("none" if value is None else str(value)), key
    assert shown["no-network"] == "true"  # the sandbox's (on by default)


def test_serve_on_a_port_taken_says_so_in_a_line(tmp_path: Path) -> None:
    # It printed a 60-line traceback and exited 1.
    folder = tmp_path / "c"
    assert meldref("contest", "init", str(folder)).returncode == 0
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = meldref("contest", "serve", str(folder), "--port", str(port))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use"]


def test_status_prints_the_rank_chances_the_pages_show(tmp_path: Path) -> None:
    # It printed rank, rating, interval, games and faults: no ranks' interval, no chance of
    # first or of the top k, which the leaderboard page and `status --json` have.
    folder = tmp_path / "c"
    assert meldref("contest", "init", str(folder), *TINY).returncode == 0
    for name in ("alpha", "beta", "gamma"):
        meldref("contest", "submit", str(folder), str(RANDOM_BOT_PATH), "--name", name)
    assert meldref("contest", "run", str(folder), "--games", "6").returncode == 0
    board = json.loads(meldref("contest", "status", str(folder), "--json").stdout)
    wide = subprocess.run([PYTHON, "-m", "meldref", "contest", "status", str(folder)],
                          capture_output=True, text=True, timeout=240,
                          env={**env(), "COLUMNS": "200"})  # one line a row: no cell folds
    lines = wide.stdout.splitlines()
    head = next(line for line in lines if "rating" in line)
    assert all(column in head for column in chance_columns(board["top_k"])), head
    for row in board["leaderboard"]:
        shown = next(line for line in lines if f" {row['bot']} " in line)
        cells = [cell.strip() for cell in shown.split("│") if cell.strip()]
        assert cells[5:8] == chance_text(row), (cells, row)


def test_run_refuses_games_and_jobs_out_of_range_as_other_commands_word_it(
        tmp_path: Path) -> None:
    folder = tmp_path / "c"
    assert meldref("contest", "init", str(folder), *TINY).returncode == 0
    for flags, said in ((["--games", "0"], "--games = 0: at least 1"),
                        (["--jobs", "0"], "--jobs = 0: at least 1"),
                        (["--jobs", "300"], "--jobs = 300: at most 256")):
        done = meldref("contest", "run", str(folder), *flags)
        assert done.returncode == 2 and f"error: {said}" in done.stderr, done.stderr


def test_the_contests_help_loads_no_database_numerics_or_web_server() -> None:
    # cli/contest.py defers its imports of the store (sqlite3), the ladder, board and final
    # (numpy, scipy) and the server (starlette) to the commands that use them: measured,
    # `contest --help` took 10% longer with the store, three times as long with numpy.
    done = subprocess.run([PYTHON, "-X", "importtime", "-m", "meldref", "contest", "--help"],
                          capture_output=True, text=True, env=env(), timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")}
    assert "meldref.contest.ladder.events" in loaded  # the command line's own: it ran
    heavy = {m for m in loaded if m.split(".")[0] in ("sqlite3", "numpy", "scipy", "starlette")
             or m in ("meldref.contest.store", "meldref.contest.board")}
    assert not heavy, sorted(heavy)
