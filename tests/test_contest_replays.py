"""A contest's replays: kept compressed at rest (x.jsonl.gz) and read so by `status`, the
replay commands and the pages; and as its pages show them: a contest made with `init
--public-replays` shows every game to everyone (the private default is tried in
test_contest_uploads.py, with its authors), through a real `meldref contest serve` and a real
client."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import RANDOM_BOT_PATH
from test_contest_e2e import TINY, meldref
from test_contest_uploads import game_and_replay, serving


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A contest with public replays, two games of two random bots played."""
    folder = tmp_path_factory.mktemp("public") / "c"
    meldref("contest", "init", str(folder), *TINY, "--public-replays")
    for name in ("alpha", "beta"):
        meldref("contest", "submit", str(folder), str(RANDOM_BOT_PATH), "--name", name)
    meldref("contest", "run", str(folder), "--games", "2")
    yield folder


def test_with_public_replays_the_pages_show_every_replay_to_everyone(public: Path) -> None:
    _, replay = game_and_replay(public, "alpha")
    token = meldref("contest", "author", "add", str(public), "zoe").stdout.strip()
    with serving(public) as url:
        anonymous = httpx.get(f"{url}/view/{replay}", timeout=60)
        assert anonymous.status_code == 200, anonymous.text
        author = httpx.get(f"{url}/view/{replay}", timeout=60,
                           headers={"Authorization": f"Bearer {token}"})
        assert author.status_code == 200
        assert f"/view/{replay}" in httpx.get(f"{url}/bot/alpha", timeout=60).text


def test_a_run_keeps_its_replays_compressed_and_every_reader_reads_them(public: Path) -> None:
    # Before: replays/ held x.jsonl (some 100 kB a Phase 10 game at 2 seats, 13 kB gzipped).
    names = sorted(p.name for p in (public / "replays").iterdir())
    assert names and all(n.endswith(".jsonl.gz") for n in names), names
    game, replay = game_and_replay(public, "beta")
    assert replay == f"replays/{game}.jsonl.gz"
    before = games(public)
    status = json.loads(meldref("contest", "status", str(public), "--json").stdout)
    assert {r["bot"] for r in status["leaderboard"]} == {"alpha", "beta"}
    # `status` opened the contest and checked the folder: no done game was taken for lost.
    assert games(public) == before and "done" in before.values()
    shown = meldref("replay", "show", str(public / replay)).stdout
    assert "alpha" in shown and "beta" in shown
    with serving(public) as url:
        assert "meldref-replay" in httpx.get(f"{url}/view/{replay}", timeout=60).text


def games(folder: Path) -> dict[str, str]:
    """Each game's state."""
    db = sqlite3.connect(folder / "contest.db", timeout=30)
    try:
        return dict(db.execute("SELECT game_id, state FROM games").fetchall())
    finally:
        db.close()
