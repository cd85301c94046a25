"""A contest against hostile authors (issue 43): a submission reaches nothing of the contest's
but its own copy. Every way a command, or the folder submitted, could name another
submission's files or the contest's database is refused at `submit`, naming the rule, with
nothing added; what a legitimate command needs still joins. The served pages show games, never
an author's files.

The contests are made with the contest's defaults (the sandbox on, where it can run here), and
a refusal comes before anything runs, so each case takes the time of one command."""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sqlite3
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import RANDOM_BOT_PATH
from test_contest_e2e import meldref as run_meldref
from typer.testing import CliRunner

from meldref.cli import app
from meldref.contest.command import RULE, Confinement
from meldref.contest.submit import _copy_file
from meldref.protocol.sandbox import sandbox_problem

meldref = functools.partial(run_meldref, check=False)  # its exit code read here

TINY = ["phase10", "-n", "2", "-r", "phases-to-win=1", "--placement", "1"]
if sandbox_problem() is not None:  # as tests/test_contest_e2e.py: the same story unsandboxed
    TINY.insert(1, "--no-sandbox")


def said(text: str) -> str:
    """What a command said, its lines joined (the terminal's width may wrap a message)."""
    return " ".join(text.split())


def state(folder: Path) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Every file of the contest folder (but SQLite's own) and every version row."""
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                   if "-wal" not in p.name and "-shm" not in p.name)
    db = sqlite3.connect(folder / "contest.db", timeout=30)
    try:
        return files, [tuple(r) for r in db.execute("SELECT * FROM versions")]
    finally:
        db.close()


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A contest with one honest submission, cbot v1: a folder holding `meldbot`."""
    folder = tmp_path_factory.mktemp("contest") / "c"
    assert meldref("contest", "init", str(folder), *TINY).returncode == 0
    cbot = tmp_path_factory.mktemp("cbot")
    shutil.copy(RANDOM_BOT_PATH, cbot / "meldbot")
    (cbot / "meldbot").chmod(0o755)
    done = meldref("contest", "submit", str(folder), str(cbot), "--name", "cbot", "--cmd",
                   "./meldbot")
    assert "cbot v1 joins the ladder" in done.stdout, done.stderr
    return folder


def test_another_authors_program_cannot_be_entered_under_ones_own_name(
        contest: Path, tmp_path: Path) -> None:
    # The audit's case: an empty folder whose command names cbot's program. The sandbox
    # showed the folder of the program a command names, so `thief v1 joined the ladder`.
    (tmp_path / "empty").mkdir()
    before = state(contest)
    done = meldref("contest", "submit", str(contest), str(tmp_path / "empty"), "--name",
                   "thief", "--cmd", "../../cbot/v1/meldbot")
    assert done.returncode == 2, done.stdout + done.stderr
    message = said(done.stderr)
    assert "thief: refused, --cmd: the program ../../cbot/v1/meldbot lies outside the " \
           "submission" in message
    assert "a command may start only a file of its own submission" in message
    assert "nothing was added" in message and "Traceback" not in message
    assert state(contest) == before


# Each way a submission could reach what is not its own: (what it tries, how the folder
# submitted is made, the command). `{contest}` and `{outside}` stand for the contest folder
# and a folder outside it holding `bot.py`.
Make = Callable[[Path, Path, Path], None]


def empty(folder: Path, contest: Path, outside: Path) -> None:
    folder.mkdir()


def link(name: str, target: str) -> Make:
    def make(folder: Path, contest: Path, outside: Path) -> None:
        folder.mkdir()
        shutil.copy(RANDOM_BOT_PATH, folder / "bot.py")
        (folder / name).symlink_to(target.format(contest=contest, outside=outside))
    return make


def fifo(folder: Path, contest: Path, outside: Path) -> None:
    folder.mkdir()
    shutil.copy(RANDOM_BOT_PATH, folder / "bot.py")
    os.mkfifo(folder / "pipe")  # copying it would block for ever


WAYS: dict[str, tuple[Make, str, str]] = {
    "program by absolute path into the contest": (
        empty, "{contest}/bots/cbot/v1/meldbot", "lies outside the submission"),
    "program by absolute path elsewhere": (
        empty, "{outside}/bot.py", "lies outside the submission"),
    "program through a link's folder": (
        link("lib", "../../cbot/v1"), "lib/meldbot", "the link lib -> ../../cbot/v1"),
    "argument with ..": (
        empty, "python3 ../../cbot/v1/meldbot", "names a file outside the submission ('..')"),
    "argument into the contest": (
        empty, "python3 {contest}/bots/cbot/v1/meldbot", "in the contest's folder"),
    "argument naming a file elsewhere": (
        empty, "python3 {outside}/bot.py", "outside the submission"),
    "the database as an argument": (
        link("bot2.py", "bot.py"), "python3 bot.py ../../../contest.db", "('..')"),
    "the database by absolute path": (
        empty, "python3 -u {contest}/contest.db", "in the contest's folder"),
    "env -C elsewhere": (
        empty, "env -C ../../cbot/v1 ./meldbot", "('..')"),
    "env --chdir=elsewhere": (
        empty, "env --chdir=../../cbot/v1 ./meldbot", "('..')"),
    "env with its options joined": (
        empty, "env -iC{contest}/bots/cbot/v1 ./meldbot", "in the contest's folder"),
    "a command that begins with env's option": (
        empty, "--chdir={contest}/bots/cbot/v1 ./meldbot", "begins with an option"),
    "a shell told to go up": (
        empty, "sh -c 'cd ../../cbot/v1 && exec ./meldbot'", "('..')"),
    "a program not on PATH": (
        empty, "meldbot-nowhere", "not found on PATH"),
    "a relative link out of the folder": (
        link("bot", "../../cbot/v1/meldbot"), "./bot", "the link bot -> ../../cbot/v1/meldbot"),
    "an absolute link into the contest": (
        link("bot", "{contest}/bots/cbot/v1/meldbot"), "./bot", "leads outside the submission"),
    "a link to the database": (
        link("db", "../../../contest.db"), "python3 bot.py", "the link db -> ../../../contest.db"),
    "a link to a file elsewhere": (
        link("data", "{outside}/bot.py"), "python3 bot.py", "leads outside the submission"),
    "the check's log folder as a link": (
        link(".check-logs", "{outside}"), "python3 bot.py", "holds .check-logs"),
    "a FIFO": (fifo, "python3 bot.py", "not a file, a folder or a link"),
}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    shutil.copy(RANDOM_BOT_PATH, folder / "bot.py")
    return folder


@pytest.mark.parametrize("way", list(WAYS))
def test_each_way_out_of_the_submission_is_refused_and_nothing_added(
        way: str, contest: Path, outside: Path, tmp_path: Path) -> None:
    make, command, why = WAYS[way]
    source = tmp_path / "sub"
    make(source, contest, outside)
    before = state(contest)
    done = CliRunner().invoke(app, ["contest", "submit", str(contest), str(source), "--name",
                                    "thief", "--cmd", command.format(contest=contest,
                                                                     outside=outside)])
    assert done.exit_code == 2, done.output
    message = said(done.stderr)
    assert why in message and "thief: refused" in message, message
    assert "nothing was added" in message
    if way != "a FIFO":
        assert RULE.split(",")[0] in message, message
    assert state(contest) == before


def test_a_folder_submitted_through_a_link_in_or_around_the_contest_is_refused(
        contest: Path, tmp_path: Path) -> None:
    # Copying follows a folder given as a link: an author's upload made a link to another
    # author's folder would be copied in whole (as root, anything root can read).
    (tmp_path / "mine").symlink_to(contest / "bots" / "cbot" / "v1")
    before = state(contest)
    runner = CliRunner()
    linked = runner.invoke(app, ["contest", "submit", str(contest), str(tmp_path / "mine"),
                                 "--name", "thief", "--cmd", "./meldbot"])
    assert linked.exit_code == 2 and "is a link: submit the file or folder itself" in \
        said(linked.stderr), linked.output
    inside = runner.invoke(app, ["contest", "submit", str(contest),
                                 str(contest / "bots" / "cbot" / "v1"), "--name", "thief",
                                 "--cmd", "./meldbot"])
    assert inside.exit_code == 2 and "and the contest's folder overlap" in said(
        inside.stderr), inside.output
    # A folder that holds the contest would copy its database (and secret seed) in, and the
    # copy would be copied into itself.
    around = runner.invoke(app, ["contest", "submit", str(contest), str(contest.parent),
                                 "--name", "thief", "--cmd", "./c/bots/cbot/v1/meldbot"])
    assert around.exit_code == 2 and "and the contest's folder overlap" in said(
        around.stderr), around.output
    assert state(contest) == before


def test_a_file_made_a_link_while_it_is_copied_is_copied_as_the_link(tmp_path: Path) -> None:
    # `copytree` lists a folder, then copies each file by name: a file swapped for a link to
    # another's program in between was read through the link (copy2 follows links). The copy
    # reads through a descriptor that follows none, and keeps the link, which is then judged.
    secret = tmp_path / "secret.py"
    secret.write_text("print('another author's program')\n")
    swapped = tmp_path / "bot.py"
    swapped.symlink_to(secret)
    _copy_file(str(swapped), str(tmp_path / "copy.py"))
    assert (tmp_path / "copy.py").is_symlink()
    assert os.readlink(tmp_path / "copy.py") == str(secret)


def test_what_an_honest_command_needs_is_allowed(tmp_path: Path) -> None:
    # Interpreters on PATH with their options, the submission's own files, links that stay
    # inside it, a link to the system's interpreter (a venv's python), system paths.
    root = tmp_path / "contest" / "bots" / "me" / "v1"
    (root / "src").mkdir(parents=True)
    (root / "src" / "bot.py").write_text("")
    (root / "bot.py").symlink_to("src/bot.py")
    (root / "shell").symlink_to("/bin/sh")  # a system program (as a venv's python links)
    (root / "bin").mkdir()
    (root / "bin" / "run").write_text("#!/bin/sh\n")
    confine = Confinement.of(root, tmp_path / "contest")
    for command in ("python3 bot.py", "python3 -u src/bot.py --depth=3", "./bin/run",
                    "bin/run x", "sh bin/run", "java -Xmx512m -cp .:lib/x.jar Bot",
                    "node bot.js", "/usr/bin/env python3 bot.py", "./shell bin/run",
                    "python3 -c 'import bot; bot.main()'", "python3 bot.py 1..5"):
        if shutil.which(shlex.split(command)[0]) is None and "/" not in command.split()[0]:
            continue  # an interpreter this machine lacks (java, node)
        confine.check(command)


def test_an_honest_folder_with_links_inside_it_joins(contest: Path, tmp_path: Path) -> None:
    source = tmp_path / "honest"
    (source / "src").mkdir(parents=True)
    shutil.copy(RANDOM_BOT_PATH, source / "src" / "bot.py")
    (source / "main.py").symlink_to("src/bot.py")
    done = meldref("contest", "submit", str(contest), str(source), "--name", "honest",
                   "--cmd", "python3 main.py")
    assert done.returncode == 0 and "honest v1 joins the ladder" in done.stdout, done.stderr
    copy = contest / "bots" / "honest" / "v1"
    assert os.readlink(copy / "main.py") == "src/bot.py"  # kept a link, inside the copy


# ----------------------------------------------------------------------------------------------
# The pages


@pytest.fixture
def served(contest: Path) -> Iterator[str]:
    from meldref.contest.serve.server import ContestServer

    server = ContestServer(contest, port=0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()


def test_the_pages_serve_games_never_an_authors_files(contest: Path, served: str) -> None:
    # The server showed any `.jsonl` under the contest folder in the viewer: an author's data
    # file (an opening book, say) was anyone's to read who could reach the leaderboard.
    book = contest / "bots" / "cbot" / "v1" / "book.jsonl"
    book.write_text('{"secret": "opening book"}\n')
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{served}view/bots/cbot/v1/book.jsonl", timeout=60)
        assert refused.value.code == 404
    finally:
        book.unlink()
