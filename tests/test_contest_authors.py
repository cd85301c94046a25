"""The contest's authors and what the store keeps for them (issue 46), without a server:
tokens shown once and kept hashed, revoked ones answering nothing; a contest folder of the
schema before authors opening as it was and migrated; the service's settings fixed at `init`
and read by `status`; `contest submit --build` building in the sandbox; each bot's stderr
cut per game and pruned per bot and by age; archives unpacked by the rules."""

from __future__ import annotations

import io
import json
import re
import sqlite3
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from support import RANDOM_BOT_PATH, pids_with, wait_for
from test_contest_e2e import TINY, meldref

from meldref.contest import authors
from meldref.contest.archive import ArchiveLimits, ArchiveRefused, unpack
from meldref.contest.settings import ContestSettings
from meldref.contest.store import AUTHORS, SCHEMA_VERSION, ContestStore, _keep_tail
from meldref.contest.uploads import ServiceSettings
from meldref.protocol.records import ResultLine


def made(tmp_path: Path, *flags: str) -> Path:
    folder = tmp_path / "c"
    meldref("contest", "init", str(folder), *TINY, *flags)
    return folder


def test_a_token_is_printed_once_and_kept_only_as_its_hash(tmp_path: Path) -> None:
    folder = made(tmp_path)
    done = meldref("contest", "author", "add", str(folder), "alice")
    token = done.stdout.strip()
    assert token.startswith("mr_") and len(token) > 40
    assert "shown this once" in done.stderr
    assert token.encode() not in (folder / "contest.db").read_bytes()
    listed = json.loads(meldref("contest", "author", "list", str(folder), "--json").stdout)
    assert [(a["name"], a["revoked"]) for a in listed] == [("alice", None)]
    again = meldref("contest", "author", "add", str(folder), "alice", check=False)
    assert again.returncode == 2 and "author alice exists already" in again.stderr
    store = ContestStore.open(folder)
    try:
        found = authors.authenticate(store, token)
        assert isinstance(found, authors.Author) and found.name == "alice"
        assert authors.authenticate(store, token + "x") == (
            "this token is no author's: check it, or ask the organiser for one")
        authors.revoke(store, "alice")
        assert authors.authenticate(store, token) == (
            "this token was revoked: ask the organiser for a new one")
    finally:
        store.close()


def test_a_contest_of_the_schema_before_authors_opens_and_is_migrated(tmp_path: Path) -> None:
    # A folder made before issue 46: schema 2, no authors' tables, no service settings.
    folder = made(tmp_path)
    meldref("contest", "submit", str(folder), str(RANDOM_BOT_PATH), "--name", "old")
    db = sqlite3.connect(folder / "contest.db")
    with db:
        for statement in AUTHORS:
            table = re.match(r"CREATE TABLE IF NOT EXISTS (\w+)", statement)
            if table is not None:
                db.execute(f"DROP TABLE {table[1]}")
        db.execute("DELETE FROM meta WHERE key = 'service'")
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    db.close()
    status = json.loads(meldref("contest", "status", str(folder), "--json").stdout)
    assert [r["label"] for r in status["leaderboard"]] == ["old v1"]
    assert status["service"] == ServiceSettings().to_json()  # the defaults
    meldref("contest", "author", "add", str(folder), "alice")
    db = sqlite3.connect(folder / "contest.db")
    try:
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert version == (str(SCHEMA_VERSION),)
        assert db.execute("SELECT name FROM authors").fetchall() == [("alice",)]
    finally:
        db.close()


def test_the_services_settings_are_fixed_at_init_and_shown_by_status(tmp_path: Path) -> None:
    folder = made(tmp_path, "--upload-mb", "4", "--uploads-per-hour", "2", "--public-replays")
    status = meldref("contest", "status", str(folder)).stdout
    assert "authors: uploads up to 4 MiB" in status and "2 uploads an author an hour" in status
    assert "replays public while the contest runs" in status
    other = meldref("contest", "init", str(folder), *TINY, "--upload-mb", "8", check=False)
    assert other.returncode == 2 and "upload-mb is 4, not 8" in other.stderr
    bad = meldref("contest", "init", str(tmp_path / "d"), *TINY, "--log-days", "0", check=False)
    assert bad.returncode == 2 and "--log-days 0: at least 1" in bad.stderr


def test_submit_build_runs_the_build_in_the_copy_and_refuses_a_failing_one(
        tmp_path: Path) -> None:
    folder = made(tmp_path)
    source = tmp_path / "src"
    source.mkdir()
    (source / "bot.txt").write_bytes(RANDOM_BOT_PATH.read_bytes())
    done = meldref("contest", "submit", str(folder), str(source), "--name", "built", "--cmd",
                   "python3 bot.py", "--build", "cp bot.txt bot.py")
    assert "built v1 joins the ladder" in done.stdout
    assert not (source / "bot.py").exists()  # the build ran in the copy
    assert (folder / "bots" / "built" / "v1" / "bot.py").exists()
    failing = meldref("contest", "submit", str(folder), str(source), "--name", "built",
                      "--cmd", "python3 bot.py", "--build", "echo no compiler >&2; exit 4",
                      check=False)
    assert failing.returncode == 1
    assert ("built: refused, the build failed (exit code 4); its log ends: no compiler; "
            "nothing was added") in " ".join(failing.stderr.split())
    outside = meldref("contest", "submit", str(folder), str(source), "--name", "built",
                      "--cmd", "python3 bot.py", "--build", "cp ../../x bot.py", check=False)
    assert outside.returncode == 2 and "--build: ../../x names a file outside" in " ".join(
        outside.stderr.split())
    # A link the build makes is judged as a submitted one: a build cannot make what a
    # submission may not hold.
    linked = meldref("contest", "submit", str(folder), str(source), "--name", "built",
                     "--cmd", "python3 bot.py", "--build", 'ln -s "$(printf /et)c/passwd" bot.py',
                     check=False)
    assert linked.returncode == 2 and "the link bot.py -> /etc/passwd leads outside" in " ".join(
        linked.stderr.split())
    assert [p.name for p in (folder / "bots" / "built").iterdir()] == ["v1"]


def test_a_bots_stderr_is_cut_per_game_and_pruned_per_bot_and_by_age(tmp_path: Path) -> None:
    settings = ContestSettings.checked("phase10", 2, {}, {}, False, 1, 3, 7)
    service = ServiceSettings(log_kb_per_game=4, log_mb_per_bot=1, log_days=1)
    store = ContestStore.create(tmp_path / "c", settings, service)
    try:
        ids = []
        for name in ("a", "b"):
            staged = tmp_path / f"staged-{name}"
            staged.mkdir()
            ids.append(store.join(name, "true", staged).id)
        logs = []
        for k in range(4):
            ds = store.add_deal_set("ladder", ids, [[0, 1]])
            game = store.queued_games()[0]
            log = f"logs/{game.game_id}/seat0-a.stderr"
            (store.folder / log).parent.mkdir(parents=True)
            (store.folder / log).write_bytes(b"x" * (600 << 10) + f"end {k}".encode())
            store.record(ResultLine.from_json({
                "status": "ok", "index": game.id, "game_id": game.game_id,
                "bots": ["a v1", "b v1"], "places": [1, 2], "scores": [0, 5],
                "faults": [[], []], "logs": [log, None]}))
            logs.append(store.folder / log)
            assert ds
        # Each cut to its last 4 KiB as its game was recorded: its end kept.
        assert all(p.stat().st_size == 4 << 10 for p in logs)
        assert logs[0].read_bytes().endswith(b"end 0")
        # Grow them back past the bot's 1 MiB: the newest kept, the oldest go.
        for log in logs:
            _keep_tail(log, 1 << 30)
            log.write_bytes(b"y" * (300 << 10))
        assert store.prune_logs() == 1 and not logs[0].exists() and logs[1].exists()
        assert store.prune_logs(now=time.time() + 2 * 86400) == 3  # a day old: all gone
        assert store.db.execute("SELECT COUNT(*) FROM seats WHERE log IS NOT NULL"
                                ).fetchone() == (0,)
    finally:
        store.close()


def limits(entries: int = 10, mib: int = 1) -> ArchiveLimits:
    return ArchiveLimits(entries, mib << 20)


def test_an_archive_in_one_folder_is_unpacked_from_inside_it(tmp_path: Path) -> None:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("mybot/", "")
        archive.writestr("mybot/bot.py", "print(1)")
        info = zipfile.ZipInfo("mybot/run")
        info.external_attr = 0o104755 << 16  # set-uid asked: reduced to 0755
        archive.writestr(info, "#!/bin/sh\n")
    upload = tmp_path / "u"
    upload.write_bytes(data.getvalue())
    (tmp_path / "t").mkdir()
    root = unpack(upload, "mybot.zip", tmp_path / "t", limits())
    assert root == tmp_path / "t" / "mybot"
    assert sorted(p.name for p in root.iterdir()) == ["bot.py", "run"]
    assert (root / "run").stat().st_mode & 0o7777 == 0o755


def test_an_archive_that_expands_past_its_limit_stops_there(tmp_path: Path) -> None:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        zeros = b"\0" * (3 << 20)
        info = tarfile.TarInfo("zeros")
        info.size = len(zeros)
        archive.addfile(info, io.BytesIO(zeros))
    upload = tmp_path / "u"
    upload.write_bytes(data.getvalue())
    (tmp_path / "t").mkdir()
    with pytest.raises(ArchiveRefused, match="expands to more than 1 MiB"):
        unpack(upload, "bomb.tar.gz", tmp_path / "t", limits())
    assert sum(p.stat().st_size for p in (tmp_path / "t").rglob("*")) <= (1 << 20) + (1 << 16)


@pytest.mark.parametrize(("filename", "words"), [
    (".hidden", "the file's name '.hidden'"),
    ("bot.zip", "bot.zip cannot be read as the archive its name says"),
])
def test_a_bad_file_name_or_a_false_archive_is_refused(tmp_path: Path, filename: str,
                                                        words: str) -> None:
    upload = tmp_path / "u"
    upload.write_bytes(b"not a zip")
    (tmp_path / "t").mkdir()
    with pytest.raises(ArchiveRefused, match=words):
        unpack(upload, filename, tmp_path / "t", limits())


@pytest.mark.long  # waits out the build's time: ~5 s
def test_a_build_past_its_time_is_refused_and_leaves_no_process(tmp_path: Path) -> None:
    folder = made(tmp_path, "--build-seconds", "3")
    source = tmp_path / "src"
    source.mkdir()
    (source / "bot.py").write_bytes(RANDOM_BOT_PATH.read_bytes())
    slow = meldref("contest", "submit", str(folder), str(source), "--name", "slow", "--cmd",
                   "python3 bot.py", "--build", "echo compiling; sleep 600", check=False)
    assert slow.returncode == 1
    assert "slow: refused, the build ran out of its 3 s; its log ends: compiling" in " ".join(
        slow.stderr.split())
    # A build that leaves a process behind: it goes with the build's sandbox (or session).
    marker = "296.125"
    left = meldref("contest", "submit", str(folder), str(source), "--name", "left", "--cmd",
                   "python3 bot.py", "--build", f"sleep {marker} & echo left")
    assert "left v1 joins the ladder" in left.stdout
    assert wait_for(lambda: not pids_with(marker), timeout=30)
    assert [p.name for p in (folder / "bots").iterdir() if p.name != ".staging"] == ["left"]
