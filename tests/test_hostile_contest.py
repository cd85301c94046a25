"""The hostile contest (issue 43): a contest under its defaults (the sandbox and its caps) of
two innocent programs and the bots of tests/hostile/ (its README.md says what each attacks),
played with `contest run --games N`. Checked: no innocent is charged or suspended, each
hostile only for its own faults; the thief is refused at `submit`; the machine's limits held
(nothing of the contest left running, the fork bomb stopped at the process cap, the disk
filler at /tmp's size and its read-only folder, the reader read nothing of another
submission nor the database, no signal reached anyone, no nested user namespace); the
database is whole and agrees with the replays on disk, every replay verifies and holds none
of the bots' stderr.

The default run plays a 2-seat ladder (each hostile's placement deal set); `-m long` a 3-seat
one; the thief gets a contest of its own. The hostiles report what they did in their
handshake (`id version ...`), which every replay's header keeps."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import PYTHON, RANDOM_BOT_PATH, TESTS
from test_contest_e2e import agree
from test_fault_matrix import (
    CLOCK,
    Charge,
    Seen,
    check,
    cli,
    contest_seen,
    replay_text,
    run_contest,
    submit_innocents,
)
from typer.testing import CliRunner

from meldref.cli import app
from meldref.contest.store import ContestStore
from meldref.protocol.sandbox import sandbox_problem
from meldref.verdicts.seatings import seatings

HOSTILE = TESTS / "hostile"
# Each hostile by its name (its file: the name with `_`), and what it may be charged with:
# the crasher its crashes; the memory hog a crash where the kernel kills it at a cgroup's
# memory cap (where the cap is an rlimit its allocation fails instead); no other any fault.
HOSTILES = {"crasher": Charge("crashed"), "memory-hog": Charge("crashed", certain=False),
            "reader": Charge(None), "stderr-flood": Charge(None), "fork-bomb": Charge(None),
            "disk-filler": Charge(None), "lingerer": Charge(None),
            "signal-sender": Charge(None), "nested": Charge(None)}
# What the hostiles write to stderr: none of it may reach a replay.
MARKS = ("stderr flood x", "crasher: losing", "memory-hog: took", "reader: read",
         "fork-bomb: forked", "disk-filler: tmp", "lingerer: grandchild", "signal-sender: ",
         "nested: unshare")
RULES = ["-r", "phases-to-win=1", "-r", "hand-cap=1", "-r", "turn-cap=12"]
LOG_LIMIT = 1 << 20  # a bot's stderr kept per game (spec/PROTOCOL.md section 8)
NO_SANDBOX = sandbox_problem()
pytestmark = pytest.mark.skipif(NO_SANDBOX is not None,
                                reason=f"a hostile contest needs the sandbox: {NO_SANDBOX}")
runner = CliRunner()


@dataclass(frozen=True, slots=True)
class Story:
    """What the hostile contest left: its folder, its games, what each hostile said of
    itself in its handshakes, and the caps every bot ran under."""

    folder: Path
    seen: Seen
    said: dict[str, set[str]]  # a hostile's name -> its `id version` lines
    caps: dict[str, int]


def play(folder: Path, seats: int, token: str) -> Story:
    """The contest: the hostiles submitted first (each newcomer is placed in order, every
    hostile gets its placement deal set), then two innocents; the ladder played."""
    cli("contest", "init", str(folder), "phase10", "-n", str(seats), *RULES, "--placement",
        "1", *CLOCK)
    hostiles = {}
    for name, charge in HOSTILES.items():
        program = HOSTILE / f"{name.replace('-', '_')}.py"
        cli("contest", "submit", str(folder), str(program), "--name", name, "--cmd",
            f"python3 {program.name} {token}")
        hostiles[f"{name} v1"] = charge
    innocents = submit_innocents(folder, 2, token)
    played = run_contest(folder, len(HOSTILES) * len(seatings(seats)))
    seen = contest_seen(folder, played, hostiles, innocents)
    store = ContestStore.open(folder)
    try:
        caps = store.settings.process_limits().caps()
    finally:
        store.close()
    return Story(folder, seen, said_by(seen.replays), caps)


def said_by(replays: list[Path]) -> dict[str, set[str]]:
    """Each bot's `id version` lines, by its `id name`, from the replays' headers."""
    said: dict[str, set[str]] = {}
    for replay in replays:
        header = json.loads(replay_text(replay).split("\n", 1)[0])  # gzipped, as kept
        for seat in header["seats"]:
            ids = seat.get("id", {})
            if "version" in ids:
                said.setdefault(ids["name"], set()).add(ids["version"])
    return said


def said(story: Story, name: str) -> set[str]:
    lines = story.said.get(name)
    assert lines, f"{name} played no game"
    return lines


@pytest.mark.parametrize("seats", [2, pytest.param(3, marks=pytest.mark.long)])
def test_a_contest_holds_against_hostile_authors(seats: int, tmp_path: Path,
                                                 bot_token: str) -> None:
    """One test, one contest (a fixture shared by several tests would be built again on
    each xdist worker that runs one of them)."""
    story = play(tmp_path / "c", seats, bot_token)
    # No innocent charged, each hostile only with its own faults; every game asked
    # recorded, every replay verifies and holds no bot's stderr; nothing of the contest
    # left running (the lingerer's grandchild, the fork bomb's children: all carry the token).
    check(story.seen, bot_token, MARKS)
    fork_bomb_stopped_at_the_process_cap(story)
    disk_filler_filled_tmp_to_its_size_and_nothing_of_its_folder(story)
    assert said(story, "reader") == {"read: nothing"}
    assert said(story, "signal-sender") == {"signalled: none"}
    for line in said(story, "lingerer"):  # its parent beyond reach
        assert line.endswith("Operation not permitted"), line
    assert said(story, "nested") == {"unshare: blocked clone: blocked"}
    memory_hog_stopped_at_the_memory_cap(story)
    database_whole_and_agreeing_with_the_replays(story)
    stderr_flood_left_its_cut_on_disk_at_most(story)


def fork_bomb_stopped_at_the_process_cap(story: Story) -> None:
    for line in said(story, "fork-bomb"):
        forked = int(line.split()[1])  # forked: N stopped: why
        assert forked < story.caps["max-processes"], line  # the bot itself is one more
        assert "its own bound" not in line, line


def disk_filler_filled_tmp_to_its_size_and_nothing_of_its_folder(story: Story) -> None:
    for line in said(story, "disk-filler"):
        words = line.split()  # tmp: N MiB (why) own: N MiB (why)
        assert int(words[1]) <= story.caps["tmp-mb"] and "bound" not in line, line
        assert words[words.index("own:") + 1] == "0", line
    copy = story.folder / "bots" / "disk-filler" / "v1"
    assert sorted(p.name for p in copy.iterdir()) == ["disk_filler.py"]


def memory_hog_stopped_at_the_memory_cap(story: Story) -> None:
    """Killed by the kernel (a cgroup's cap: `crashed` before its handshake, so it says
    nothing), or refused memory below the cap (an rlimit): never past it."""
    killed = [g.id for g in story.seen.games for s in g.seats
              if s.name == "memory-hog v1" and s.faults]
    for line in story.said.get("memory-hog", set()):
        assert line.endswith("(refused)") and int(line.split()[1]) <= story.caps["memory-mb"]
    assert killed or story.said.get("memory-hog"), "the hog never played"


def database_whole_and_agreeing_with_the_replays(story: Story) -> None:
    db = sqlite3.connect(story.folder / "contest.db", timeout=30)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        db.close()
    done, replays = agree(story.folder)
    assert done == replays and len(done) == story.seen.asked


def stderr_flood_left_its_cut_on_disk_at_most(story: Story) -> None:
    """Logs are kept for games in which a bot failed, each cut at 1 MiB a game."""
    logs = list((story.folder / "logs").rglob("*.stderr"))
    assert all(log.stat().st_size <= LOG_LIMIT + 4096 for log in logs), logs
    held = sum(p.stat().st_size for p in story.folder.rglob("*") if p.is_file())
    assert held < 8 * LOG_LIMIT + 16 * len(story.seen.games) * 4096, held


def test_the_thief_is_refused_at_submit_naming_what_it_named(tmp_path: Path,
                                                              bot_token: str) -> None:
    folder = tmp_path / "c"
    cli("contest", "init", str(folder), "phase10", "-n", "2", *RULES, *CLOCK)
    submit_innocents(folder, 1, bot_token)
    thief = runner.invoke(app, ["contest", "submit", str(folder), str(HOSTILE / "thief.py"),
                                "--name", "thief", "--cmd",
                                f"python3 ../../a0-random/v1/{RANDOM_BOT_PATH.name}"])
    assert thief.exit_code != 0
    assert "thief: refused" in thief.stderr and "outside its submission" in thief.stderr, \
        thief.stderr
    assert not (folder / "bots" / "thief").exists()
    db = sqlite3.connect(folder / "contest.db", timeout=30)
    try:
        assert db.execute("SELECT COUNT(*) FROM versions WHERE bot = 'thief'").fetchone()[0] == 0
    finally:
        db.close()


# ----------------------------------------------------------------------------------------------
# The controls: without a sandbox the same attacks reach something (so the tests above can
# fail). Only the harmless ones run here: the reader, and the signal sender, which only asks.


def session(program: Path, cwd: Path) -> list[str]:
    """The program's handshake, started in `cwd` and told `quit` at once."""
    done = subprocess.run([PYTHON, str(program)], input="meldref 1 phase10\nquit\n",
                          capture_output=True, text=True, cwd=cwd, timeout=60, check=True)
    return done.stdout.splitlines()


def test_without_a_sandbox_the_reader_reads_the_database_and_another_submission(
        tmp_path: Path) -> None:
    contest = tmp_path / "c"
    (contest / "bots" / "other" / "v1").mkdir(parents=True)
    (contest / "bots" / "reader" / "v1").mkdir(parents=True)
    (contest / "contest.db").write_bytes(b"SQLite format 3\0")
    (contest / "bots" / "other" / "v1" / "bot.py").write_text("print('mine')\n")
    lines = session(HOSTILE / "reader.py", contest / "bots" / "reader" / "v1")
    (line,) = [x for x in lines if x.startswith("id version")]
    assert str(contest / "contest.db") in line and "other/v1/bot.py" in line, line


def test_without_a_sandbox_the_signal_sender_names_other_processes(tmp_path: Path) -> None:
    lines = session(HOSTILE / "signal_sender.py", tmp_path)
    (line,) = [x for x in lines if x.startswith("id version")]
    assert line.startswith("id version could signal (asked only): 1 "), line
    assert str(os.getpid()) in line.split(), line
