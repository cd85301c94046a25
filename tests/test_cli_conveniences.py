"""What testers used to cutechess and fastchess rely on (issue 47): standings during a run
(`--rating-interval N`), a log of every protocol line each bot read and wrote (`--debug-log
DIR`), a bot named and given its working folder on the command line (`name=`, `dir=`), and a
book of starting positions played by every pairing in balanced seatings (`--positions DIR`).
Each through the real `meldref` command, bot programs as real processes, at -j 2 where a
tournament plays."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pexpect
import pytest
from support import PYTHON, RANDOM_BOT, RANDOM_BOT_PATH, ROOT

SHORT = ["--rules", "phases-to-win=1"]
TWO = ["--bot", "builtin:greedy", "--bot", "builtin:random"]


def meldref(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "meldref", *args], cwd=cwd, capture_output=True,
                          text=True, check=False, env={**os.environ, "COLUMNS": "120"})


@pytest.mark.long  # real tournaments, seconds each
def test_rating_interval_prints_the_standings_every_n_games_in_the_log(tmp_path: Path) -> None:
    done = meldref("tournament", *TWO, "--games", "4", *SHORT, "--rating-interval", "2",
                   "-o", str(tmp_path / "t"))
    assert done.returncode == 0, done.stderr
    heads = re.findall(r"(?m)^standings after (\d+) games played now:$", done.stderr)
    assert heads == ["2", "4"], done.stderr
    last = done.stderr.split("standings after 4 games played now:")[1]
    rows = re.findall(r"(?m)^  \d\. (\w+): 4 games, ([\d.]+) wins \(", last)
    assert sorted(bot for bot, _ in rows) == ["greedy", "random"], done.stderr
    assert sum(float(wins) for _, wins in rows) == 4  # every game's win counted once
    assert re.search(r"(?m)^game 4/4 ", done.stderr)  # the line per game stays


@pytest.mark.long  # real tournaments, seconds each
def test_rating_interval_prints_above_the_bar_in_a_terminal(tmp_path: Path) -> None:
    child = pexpect.spawn(PYTHON, ["-m", "meldref", "tournament", *TWO, "--games", "4", *SHORT,
                                   "--rating-interval", "2", "-o", str(tmp_path / "t")],
                          cwd=str(ROOT), timeout=120, encoding="utf-8", dimensions=(40, 100))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert "standings after 2 games played now:" in child.before
    assert "standings after 4 games played now:" in child.before


def test_rating_interval_below_one_is_refused(tmp_path: Path) -> None:
    done = meldref("tournament", *TWO, "--rating-interval", "0", "-o", str(tmp_path / "t"))
    assert done.returncode == 2 and "--rating-interval = 0: at least 1" in done.stderr


LINE = re.compile(r"^\d{10}\.\d{6} random_bot ([<>]) (.*)$")


def transcript(path: Path) -> list[tuple[str, str]]:
    lines = path.read_text().splitlines()
    found = [LINE.match(line) for line in lines]
    assert all(found), [line for line, m in zip(lines, found, strict=True) if not m][:3]
    return [(m[1], m[2]) for m in found if m]


@pytest.mark.long  # a tournament of bot programs at -j 2, then a match
def test_debug_log_keeps_every_line_each_bot_read_and_wrote(tmp_path: Path) -> None:
    folder = tmp_path / "dl"
    done = meldref("tournament", "--bot", RANDOM_BOT, "--bot", "builtin:greedy", "--games", "2",
                   *SHORT, "-j", "2", "--no-progress", "--debug-log", str(folder),
                   "-o", str(tmp_path / "t"))
    assert done.returncode == 0, done.stderr
    results = [json.loads(x) for x in (tmp_path / "t" / "results.jsonl").read_text().split("\n")
               if x]
    for result in results:
        seat = result["bots"].index("random_bot")
        (log,) = (folder / result["game_id"]).glob(f"seat{seat}-*.log")
        lines = transcript(log)
        sent = [text for way, text in lines if way == ">"]
        # `action N TEXT`: the bot's answer to request N
        answered = [text.split(" ", 2)[2] for way, text in lines
                    if way == "<" and text.startswith("action ")]
        assert any(t.startswith("go ") for t in sent) and answered, lines[:5]
        # Every decision the replay holds for that seat was a line the bot wrote.
        replay = tmp_path / "t" / result["replay"]
        actions = [json.loads(x) for x in replay.read_text().splitlines()]
        mine = [a["action"] for a in actions if a.get("type") == "action"
                and a.get("seat") == seat and not a.get("auto")]
        assert mine and all(a in answered for a in mine)
    done = meldref("match", "--seed", "1", *SHORT, "--bot", RANDOM_BOT, "--bot",
                   "builtin:greedy", "--debug-log", str(tmp_path / "dm"))
    assert done.returncode == 0, done.stderr
    (log,) = (tmp_path / "dm" / "game-0001").glob("seat0-*.log")
    assert transcript(log)


@pytest.mark.long  # real tournaments, seconds each
def test_name_and_dir_in_a_bot_spec_name_it_and_start_it_there(tmp_path: Path) -> None:
    home = tmp_path / "alpha home"
    home.mkdir()
    shutil.copy(RANDOM_BOT_PATH, home / "mybot.py")
    spec = f"name=alpha 'dir={home}' {PYTHON} mybot.py"  # a path relative to dir=
    done = meldref("match", "--seed", "2", *SHORT, "--bot", spec, "--bot", "name=beta "
                   "builtin:greedy", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    bots = json.loads(done.stdout)["bots"]
    assert [b["name"] for b in bots] == ["alpha", "beta"]
    assert bots[0]["dir"] == str(home) and bots[0]["command"] == f"{PYTHON} mybot.py"
    done = meldref("tournament", "--bot", spec, "--bot", "name=beta builtin:greedy", "--games",
                   "2", *SHORT, "-j", "2", "--no-progress", "--json", "-o", str(tmp_path / "t"),
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert sorted(row["bot"] for row in data["standings"]) == ["alpha", "beta"]
    assert data["played_now"] == 2


@pytest.mark.parametrize(("spec", "words"), [
    ("name= builtin:greedy", "name= names nothing"),
    ("name=a name=b builtin:greedy", "name= given twice"),
    ("name=alpha", "no command"),
])
def test_a_wrong_bot_option_is_refused(spec: str, words: str) -> None:
    done = meldref("match", "--seed", "1", "--bot", spec, "--bot", "builtin:greedy")
    assert done.returncode == 2 and words in done.stderr, done.stderr


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("book")
    source = folder / "source.jsonl"
    (folder / "positions").mkdir()
    assert meldref("match", "--seed", "5", "--players", "2", "-o", str(source)).returncode == 0
    for at in (10, 30, 50):
        done = meldref("replay", "position", str(source), "--at", str(at), "-o",
                       str(folder / "positions" / f"p{at}.toml"))
        assert done.returncode == 0, done.stderr
    return folder / "positions"


@pytest.mark.long  # real tournaments, seconds each
def test_positions_are_played_by_every_pairing_in_balanced_seatings(
        book: Path, tmp_path: Path) -> None:
    out = tmp_path / "t"
    done = meldref("tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--bot",
                   "builtin:expert", "--positions", str(book), "-j", "2", "--no-progress",
                   "--json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["games"] == data["played_now"] == 3 * 3 * 2  # pairings x positions x seatings
    played: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        result = json.loads(line)
        header = json.loads((out / result["replay"]).read_text().split("\n", 1)[0])
        position = json.dumps(header["position"], sort_keys=True)
        played.setdefault((result["game_id"][:3], position), []).append(tuple(result["bots"]))
    assert len({p for _, p in played}) == 3  # three positions
    for seats in played.values():  # each pairing played each position once from each seat
        assert len(seats) == 2 and seats[0] == tuple(reversed(seats[1])), played
    assert meldref("replay", "verify", str(out)).returncode == 0
