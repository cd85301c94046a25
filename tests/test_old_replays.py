"""Replays written by an earlier meldref still verify, show and render.

The files in tests/old_replays/ were written by meldref 0.1.0 before event kinds, fault outcomes
and seat statuses became enums and each game's presentation got a module of its own: one game
of each kind, and one with faults (an illegal answer retried, a timeout, a forfeit). The bad
bot's command in the faults game's header was shortened to a relative path (and the sums
chained again), so the file names no machine's folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meldref.cli import app
from meldref.replay.audit import verify
from meldref.replay.files import load_replay
from meldref.replay.html import game_data, replay_page

runner = CliRunner()
OLD = Path(__file__).parent / "old_replays"
REPLAYS = sorted(OLD.glob("*.jsonl"))


def test_the_old_replays_are_there() -> None:
    assert [p.name for p in REPLAYS] == ["faults.jsonl", "fivecrowns-3.jsonl",
                                         "phase10-short.jsonl", "solitaire.jsonl"]


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.stem)
def test_an_old_replay_verifies(path: Path) -> None:
    actions = sum(json.loads(line)["type"] == "action" for line in path.open(encoding="utf-8"))
    assert verify(path).actions == actions
    result = runner.invoke(app, ["replay", "verify", str(path)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.stem)
def test_an_old_replay_shows(path: Path) -> None:
    for seat in ([], ["--seat", "0"]):
        result = runner.invoke(app, ["replay", "show", str(path), *seat])
        assert result.exit_code == 0, result.output
        assert "game over" in result.output


def test_the_old_faults_show_by_outcome() -> None:
    result = runner.invoke(app, ["replay", "show", str(OLD / "faults.jsonl")])
    assert "illegal" in result.output and "timeout" in result.output


@pytest.mark.parametrize("path", REPLAYS, ids=lambda p: p.stem)
def test_an_old_replay_renders(path: Path) -> None:
    replay = load_replay(path)
    data = game_data(replay)
    assert data["problem"] is None
    actions = [s for s in data["steps"] if s["k"] == "a"]
    assert [s["n"] for s in actions] == list(range(verify(path).actions))
    page, problem = replay_page(path, seat=0)
    assert problem is None and 'id="meldref-data"' in page
