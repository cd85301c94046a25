"""`meldref replay ...` as users run it: the export's mask column, `replay serve` behind a
proxy (its flags), and every replay command on a replay compressed at rest (`.jsonl.gz`)."""

from __future__ import annotations

import gzip
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import viewer_games as games
from support import ROOT
from test_serve_web import client, serving

from meldref.envs.codec import find_codec
from meldref.replay.files import compress_replay, replay_files


def meldref(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meldref", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of one short two-seat Phase 10 game."""
    folder = tmp_path_factory.mktemp("replays")
    games.play(folder, "short", "phase10", ["builtin:greedy", "builtin:random"],
               {"phases-to-win": "1"}, 3)
    return folder


def test_export_mask_adds_a_column_of_the_legal_actions(replays: Path, tmp_path: Path
                                                        ) -> None:
    # Was: "No such option: --mask" (exit 2); export() took mask= but the command did not.
    target = tmp_path / "rows.jsonl"
    done = meldref("replay", "export", str(replays), "-o", str(target), "--format", "jsonl",
                   "--mask")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    size = find_codec("phase10").action_size
    assert rows and all(len(row["mask"]) == size for row in rows)
    for row in rows:
        assert [i for i, m in enumerate(row["mask"]) if m] == row["legal_indices"]
    plain = tmp_path / "plain.jsonl"
    assert meldref("replay", "export", str(replays), "-o", str(plain), "--format",
                   "jsonl").returncode == 0
    assert "mask" not in json.loads(plain.read_text().splitlines()[0])


def test_replay_serve_takes_the_proxy_flags(replays: Path) -> None:
    # Was: "No such option: --public-host" (exit 2): only `contest serve` had the flags, so a
    # replay folder behind a proxy that keeps the Host header answered every page 421.
    public = {"Host": "replays.example.org"}
    with serving("replay", "serve", str(replays), "--public-host", "replays.example.org",
                 "--trust-proxy", "127.0.0.1") as served, client(served) as http:
        assert http.get("/", headers=public).status_code == 200
        assert http.get("/", headers={"Host": "evil.example"}).status_code == 421
        assert http.get("/", headers={"X-Forwarded-For": "203.0.113.7"}).status_code == 200
    assert served.code == 0
    assert '203.0.113.7 "GET / HTTP/1.1" 200' in served.log, served.log
    with serving("replay", "serve", str(replays)) as served, client(served) as http:
        assert http.get("/", headers=public).status_code == 421  # not configured: refused
    bad = meldref("replay", "serve", str(replays), "--key", str(replays / "k.pem"))
    assert bad.returncode == 2 and "--key without --cert" in bad.stderr


# ----------------------------------------------------------------------------------------------
# Replays compressed at rest


@pytest.fixture(scope="module")
def packed(replays: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same game compressed at rest, in a folder of its own: short.jsonl.gz."""
    folder = tmp_path_factory.mktemp("packed")
    shutil.copy(replays / "short.jsonl", folder / "short.jsonl")
    return compress_replay(folder / "short.jsonl")


def test_compress_replay_writes_a_private_gzip_and_removes_the_plain_file(
        replays: Path, tmp_path: Path) -> None:
    plain = tmp_path / "game.jsonl"
    shutil.copy(replays / "short.jsonl", plain)
    packed = compress_replay(plain)
    assert packed == tmp_path / "game.jsonl.gz" and not plain.exists()
    assert stat.S_IMODE(packed.stat().st_mode) == 0o600
    assert gzip.decompress(packed.read_bytes()) == (replays / "short.jsonl").read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["game.jsonl.gz"]  # no temporary left
    assert list(replay_files([tmp_path])) == [packed]


def test_every_replay_command_reads_a_compressed_replay_as_the_plain_one(
        replays: Path, packed: Path, tmp_path: Path) -> None:
    # Was: `replay verify x.jsonl.gz` failed ("line 1: ..." on gzip's bytes), folders listed
    # no .jsonl.gz, and `replay serve` answered 404 for its viewer page.
    plain = replays / "short.jsonl"
    for command in (["verify"], ["show"], ["show", "--seat", "1"], ["stats"]):
        done = meldref("replay", *command, str(packed))
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.replace(str(packed), "X") == meldref(
            "replay", *command, str(plain)).stdout.replace(str(plain), "X")
    folder = meldref("replay", "stats", "--json", str(packed.parent))
    assert folder.returncode == 0 and json.loads(folder.stdout)["games"] == 1, folder.stderr
    page = meldref("replay", "html", str(packed), "-o", str(tmp_path / "page.html"))
    assert page.returncode == 0 and "meldref-replay" in (tmp_path / "page.html").read_text()
    pages = meldref("replay", "html", str(packed.parent), "-o", str(tmp_path / "pages"))
    assert pages.returncode == 0, pages.stderr
    assert (tmp_path / "pages" / "short.html").is_file()
    assert "short.html" in (tmp_path / "pages" / "index.html").read_text()
    rows = tmp_path / "rows.jsonl"
    done = meldref("replay", "export", str(packed.parent), "-o", str(rows), "--format", "jsonl")
    assert done.returncode == 0 and "from 1 games" in done.stdout, done.stderr
    resumed = tmp_path / "resumed.jsonl"
    done = meldref("replay", "resume", str(packed), "--at", "5", "-o", str(resumed))
    assert done.returncode == 0, done.stderr
    assert meldref("replay", "verify", str(resumed)).returncode == 0
    with serving("replay", "serve", str(packed.parent)) as served, client(served) as http:
        listing = http.get("/")
        assert listing.status_code == 200 and "short.jsonl.gz" in listing.text
        viewer = http.get("/view/short.jsonl.gz")
        assert viewer.status_code == 200 and "meldref-replay" in viewer.text
    assert served.code == 0


def test_a_damaged_compressed_replay_is_a_failed_check_not_a_bad_path(
        packed: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[:-40])
    broken = tmp_path / "broken.jsonl.gz"
    data = bytearray(packed.read_bytes())
    data[len(data) // 2] ^= 0xFF
    broken.write_bytes(bytes(data))
    for path in (cut, broken):
        done = meldref("replay", "verify", str(path))
        assert done.returncode == 1, (path, done.stdout, done.stderr)
        assert "FAIL" in done.stderr


def test_a_game_left_both_plain_and_compressed_counts_once(replays: Path, tmp_path: Path
                                                           ) -> None:
    shutil.copy(replays / "short.jsonl", tmp_path / "short.jsonl")
    packed = compress_replay(tmp_path / "short.jsonl")
    shutil.copy(replays / "short.jsonl", tmp_path / "short.jsonl")  # stopped before unlink
    assert list(replay_files([tmp_path])) == [packed]
