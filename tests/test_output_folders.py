"""Output folders another local user cannot bend (issue 43): meldref writes its private files
(results, replays, logs, standings, failures) only in a folder of its own user that no one else
can write, never through a link, and never into another user's file. "Another user" is made by
giving a folder to an unused uid (the tests run as root), as an attacker's would be."""

from __future__ import annotations

import gc
import os
import stat
import subprocess
import warnings
from pathlib import Path

import pytest
from support import PYTHON, RANDOM_BOT, ROOT

from meldref.private import SpecialFileError, UnsafeOutputError, open_private, private_dir
from meldref.tournament.run import ResultsLog

OTHER_UID = 12345  # no such user here: an attacker's files are theirs
SHORT = ["--rules", "phases-to-win=1", "--players", "2"]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder away")


def meldref(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PYTHON, "-m", "meldref", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)


def tournament(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return meldref("tournament", "--bot", "builtin:greedy", "--bot", "builtin:random",
                   "--games", "2", *SHORT, "--no-progress", "--out", str(out), *extra)


def said(done: subprocess.CompletedProcess[str]) -> str:
    return " ".join(done.stderr.split())


def snapshot(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every entry under `folder` (not followed): its mode, owner and bytes."""
    out = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        data = path.read_bytes() if stat.S_ISREG(info.st_mode) else b""
        out[str(path.relative_to(folder))] = (info.st_mode, info.st_uid, data)
    return out


# ----------------------------------------------------------------------------------------------
# Folders


@as_root
@pytest.mark.parametrize("mode", [0o700, 0o755])
def test_an_output_folder_of_another_user_is_refused_naming_it_and_its_owner(
        tmp_path: Path, mode: int) -> None:
    # Was: used without a word, the seed and every result written where its owner reads
    # (and links) what they like.
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    theirs.chmod(mode)
    os.chown(theirs, OTHER_UID, OTHER_UID)
    done = tournament(theirs)
    assert done.returncode == 2, done.stderr
    assert f"{theirs} belongs to uid {OTHER_UID}, not to you (user root)" in said(done)
    assert list(theirs.iterdir()) == []


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777])
def test_an_output_folder_other_users_can_write_is_refused(tmp_path: Path, mode: int) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    done = tournament(shared)
    assert done.returncode == 2, done.stderr
    assert f"{shared} can be written by other users (mode {mode:04o}" in said(done)
    assert list(shared.iterdir()) == [] and stat.S_IMODE(shared.stat().st_mode) == mode
    # A folder of one's own inside a shared sticky one (as in /tmp) is fine; inside one that
    # is not sticky, another user could swap it for a link.
    inside = shared / "mine"
    done = tournament(inside)
    if mode & stat.S_ISVTX:
        assert done.returncode == 0, done.stderr
        assert stat.S_IMODE(inside.stat().st_mode) == 0o700
    else:
        assert done.returncode == 2 and "which other users can write" in said(done)
        assert not inside.exists()


@as_root
def test_a_match_replay_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, OTHER_UID, OTHER_UID)
    for args in (["--replay", str(theirs / "g.jsonl")], ["--replay", str(theirs), "--games", "2"],
                 ["--bot", RANDOM_BOT, "--bot", "builtin:greedy", "--logs", str(theirs)]):
        done = meldref("match", *SHORT, "--seed", "3", *args)
        assert done.returncode == 2, (args, done.stderr)
        assert f"{theirs} belongs to uid {OTHER_UID}" in said(done), args
        assert list(theirs.iterdir()) == []


# ----------------------------------------------------------------------------------------------
# Links and files planted in a folder


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file someone else owns and lets anyone write: where a planted link points."""
    path = tmp_path / "victim.txt"
    path.write_text("theirs\n")
    path.chmod(0o666)
    if os.geteuid() == 0:
        os.chown(path, OTHER_UID, OTHER_UID)
    return path


@pytest.mark.parametrize("name", ["results.jsonl", "failures.txt", "tournament.json"])
@pytest.mark.parametrize("whose", ["theirs", "mine"])
def test_a_link_planted_in_the_output_folder_is_refused_and_its_target_untouched(
        tmp_path: Path, victim: Path, name: str, whose: str) -> None:
    # Was: results.jsonl -> their file handed them every result line and the seed (appended,
    # and the file made 0600: theirs still); -> the organiser's own file appended to it;
    # tournament.json -> a file emptied and overwritten with the plan and its seed.
    if whose == "mine":
        os.chown(victim, os.geteuid(), os.getegid())
        victim.chmod(0o644)
    out = tmp_path / "t"
    out.mkdir(mode=0o700)
    (out / name).symlink_to(victim)
    before = snapshot(tmp_path)
    done = tournament(out)
    assert done.returncode == 2, done.stderr
    assert f"{out / name} is a symbolic link: meldref never writes through one" in said(done)
    assert snapshot(tmp_path) == before  # nothing written anywhere: no results to leak


@as_root
def test_a_results_file_of_another_user_is_not_resumed(tmp_path: Path) -> None:
    out = tmp_path / "t"
    out.mkdir(mode=0o700)
    (out / "results.jsonl").write_text("")
    os.chown(out / "results.jsonl", OTHER_UID, OTHER_UID)
    (out / "results.jsonl").chmod(0o666)
    before = snapshot(tmp_path)
    done = tournament(out)
    assert done.returncode == 2, done.stderr
    assert f"{out / 'results.jsonl'} belongs to uid {OTHER_UID}" in said(done)
    assert snapshot(tmp_path) == before


def test_a_link_planted_for_a_replay_file_is_refused_and_its_target_untouched(
        tmp_path: Path, victim: Path) -> None:
    # The first game's replay: refused before any game. A later game's: refused before any
    # game too (it is not a replay of this match: --force to overwrite); with --force that game
    # fails, named, and writes nothing through the link.
    replays = tmp_path / "replays"
    replays.mkdir(mode=0o700)
    (replays / "game-0001.jsonl").symlink_to(victim)
    before = snapshot(tmp_path)
    done = meldref("match", *SHORT, "--seed", "3", "--games", "2", "--replay", str(replays))
    assert done.returncode == 2, done.stderr
    assert "game-0001.jsonl is a symbolic link" in said(done)
    assert snapshot(tmp_path) == before
    (replays / "game-0001.jsonl").unlink()
    (replays / "game-0002.jsonl").symlink_to(victim)
    before = snapshot(tmp_path)
    done = meldref("match", *SHORT, "--seed", "3", "--games", "2", "--replay", str(replays))
    assert done.returncode == 2 and "game-0002.jsonl is there" in said(done), done.stderr
    assert snapshot(tmp_path) == before
    done = meldref("match", *SHORT, "--seed", "3", "--games", "2", "--replay", str(replays),
                   "--json", "--force")
    assert done.returncode == 1, done.stderr
    assert "game-0002.jsonl is a symbolic link" in done.stdout
    assert victim.read_text() == "theirs\n" and (replays / "game-0002.jsonl").is_symlink()
    assert (replays / "game-0001.jsonl").stat().st_size  # the other game is played


def test_a_link_as_the_one_game_replay_file_is_refused(tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "g.jsonl"
    link.symlink_to(victim)
    for command in (["match", *SHORT, "--seed", "3"], ["play", "phase10", "--players", "2"]):
        done = meldref(*command, "--replay", str(link))
        assert done.returncode == 2 and "is a symbolic link" in said(done), done.stderr
        assert victim.read_text() == "theirs\n"


# ----------------------------------------------------------------------------------------------
# The primitives


def test_open_private_creates_new_files_exclusively_and_never_follows_a_link(
        tmp_path: Path, victim: Path) -> None:
    folder = private_dir(tmp_path / "out")
    (folder / "link").symlink_to(victim)
    for mode in ("w", "a", "r+", "r"):
        with pytest.raises(UnsafeOutputError, match="is a symbolic link"):
            open_private(folder / "link", mode)
    assert victim.read_text() == "theirs\n"
    with open_private(folder / "new", "a") as f:  # a new file: made 0600 whatever the umask
        f.write("x")
    assert stat.S_IMODE((folder / "new").stat().st_mode) == 0o600
    folder.chmod(0o777)
    with pytest.raises(UnsafeOutputError, match="can be written by other users"):
        open_private(folder / "x", "w")
    assert not (folder / "x").exists()


def test_a_file_object_that_cannot_be_made_closes_its_descriptor_once(tmp_path: Path) -> None:
    # Was: os.fdopen closed the descriptor as it failed, and open_private closed the number
    # again: here EBADF; with another thread opening a file in between, that thread's file.
    with pytest.raises(LookupError):
        open_private(tmp_path / "f", "w", encoding="no-such-codec")


def test_a_results_log_that_cannot_open_its_failures_file_closes_its_results_file(
        tmp_path: Path) -> None:
    # Was: the results file, already open, left to the garbage collector (ResourceWarning).
    folder = private_dir(tmp_path / "t")
    os.mkfifo(folder / "failures.txt", 0o600)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(SpecialFileError):
            ResultsLog(folder)
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
