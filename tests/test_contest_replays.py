"""A contest's replays as its pages show them: a contest made with `init --public-replays`
shows every game to everyone (the private default is tried in test_contest_uploads.py, with
its authors), through a real `meldref contest serve` and a real client."""

from __future__ import annotations

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
