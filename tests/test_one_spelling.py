"""One spelling for a key in every file meldref writes: a limit given as `--move-time` (or
`[limits] move-time`) is `move-time` in `tournament.json` and in a contest's settings, as the
user wrote it; only a replay header's `policy` says `move_time` (spec/REPLAY.md fixes it). A
contest stored with `move_time` (before issue 45) still reads and agrees with the same
`init`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.contest.settings import ContestSettings
from meldref.contest.store import ContestStore
from meldref.replay.files import read_lines
from meldref.settings import limit_settings

runner = CliRunner()


def test_tournament_json_spells_the_limits_as_the_flags_do(tmp_path: Path) -> None:
    out = tmp_path / "t"
    result = runner.invoke(app, ["tournament", "phase10", "--bot", "builtin:greedy", "--bot",
                                 "builtin:random", "--games", "2", "--rules",
                                 "phases-to-win=1", "--move-time", "2", "--time-bank", "3",
                                 "--memory-mb", "512", "--no-progress", "--out", str(out)])
    assert result.exit_code == 0, result.output
    limits = json.loads((out / "tournament.json").read_text())["limits"]
    assert limits == {"move-time": 2.0, "time-bank": 3.0, "memory-mb": 512}
    replay = next((out / "replays").glob("*.jsonl"))
    policy = next(read_lines(replay))[1]["policy"]
    assert {k: policy[k] for k in ("move_time", "time_bank")} == {"move_time": 2.0,
                                                                  "time_bank": 3.0}


def test_flags_over_a_file_merge_value_by_value_without_a_second_reading() -> None:
    merged = limit_settings({"time-bank": 2.0}).over(
        limit_settings({"max-bank": 3.0, "move-time": 4.0}, lambda name: f"[limits] {name}"))
    assert merged.to_json() == {"time-bank": 2.0, "max-bank": 3.0, "move-time": 4.0}
    assert merged.policy() is merged.policy()  # made once, kept
    with pytest.raises(ValueError, match=re.escape("[limits] max-bank (3) is below "
                                                   "--time-bank (4)")):
        limit_settings({"time-bank": 4.0}).over(
            limit_settings({"max-bank": 3.0}, lambda name: f"[limits] {name}")).policy()


def settings(**limits: float) -> ContestSettings:
    return ContestSettings.checked("phase10", 2, {}, limits, True, 2, 3, 7)


def test_a_contest_keeps_its_limits_spelt_as_the_flags_do(tmp_path: Path) -> None:
    store = ContestStore.create(tmp_path / "c", settings(**{"move-time": 2.0}))
    store.close()
    reopened = ContestStore.open(tmp_path / "c")
    assert reopened.settings.to_json()["limits"] == {"move-time": 2.0}
    reopened.close()


def test_a_contest_stored_with_the_old_spelling_still_reads_and_agrees() -> None:
    old = {**settings().to_json(), "limits": {"move_time": 2.0, "memory_mb": 512}}
    read = ContestSettings.from_json(old)
    assert read.limits == {"move-time": 2.0, "memory-mb": 512}
    assert read.differs(settings(**{"move-time": 2.0, "memory-mb": 512})) is None
    assert settings().differs(read) == ("limits is {}, not {memory-mb=512, move-time=2.0}")
