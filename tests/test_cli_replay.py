"""`meldref replay ...` as users run it: the export's mask column, `replay serve` behind a
proxy (its flags), and every replay command on a replay compressed at rest (`.jsonl.gz`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import viewer_games as games
from support import ROOT
from test_serve_web import client, serving

from meldref.envs.codec import find_codec


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
