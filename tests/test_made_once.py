"""Each fact of a tournament made once: one two-game tournament, run by the command as a user
runs it, settles its seed once, checks and prepares its folder once, writes `tournament.json`
once, builds its referee's `MatchPolicy` once and parses each bot's command once.

The steps are counted by wrapping the real functions; the games are played in this process
(a pool that plays them one after another), so the parses a game makes are counted too."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import RANDOM_BOT
from typer.testing import CliRunner

# The command's module loaded first: its help's defaults are a policy made at import, not one
# of the tournament's.
import meldref.cli.tournament
import meldref.private
import meldref.tournament.run as run_module
from meldref.cli.app import app
from meldref.protocol.process import BotCommand
from meldref.protocol.referee import MatchPolicy
from meldref.protocol.seats import BotSpec
from meldref.tournament.schedule import GameJob

runner = CliRunner()


class InProcessPool:
    """`GamePool`'s interface, playing each game here, one after another."""

    def __init__(self, workers: int, run: Callable[..., Any], folder: Path,
                 keep_logs: bool) -> None:
        self.run, self.folder, self.keep_logs = run, folder, keep_logs

    def play(self, jobs: Iterable[GameJob], stopping: Callable[[], bool] = lambda: False
             ) -> Iterator[Any]:
        for job in jobs:
            yield self.run(job, self.folder, self.keep_logs)


def count_calls(monkeypatch: pytest.MonkeyPatch, counts: Counter[str], owner: Any, name: str,
                key: str, static: bool = False) -> None:
    """Wrap `owner.name` so that each call adds one to `counts[key]`."""
    real = getattr(owner, name)

    @functools.wraps(real)
    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[key] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, staticmethod(counted) if static else counted)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counts: Counter[str] = Counter()
    for name in ("settle_seed", "check_folder", "prepare_folder"):
        count_calls(monkeypatch, counts, run_module, name, name)
    count_calls(monkeypatch, counts, MatchPolicy, "__post_init__", "policies built")
    count_calls(monkeypatch, counts, BotCommand, "parse", "command parses", static=True)
    real_write = meldref.private.write_private_text

    def write(path: Path, *args: Any, **kwargs: Any) -> Any:
        counts[f"{Path(path).name} written"] += 1
        return real_write(path, *args, **kwargs)

    for module in (meldref.private, run_module):
        if hasattr(module, "write_private_text"):
            monkeypatch.setattr(module, "write_private_text", write)
    monkeypatch.setattr(run_module, "GamePool", InProcessPool)
    return counts


def test_a_two_game_tournament_makes_each_fact_once(tmp_path: Path,
                                                    counts: Counter[str]) -> None:
    out = tmp_path / "t"
    result = runner.invoke(app, ["tournament", "phase10", "--bot", "builtin:greedy",
                                 "--bot", RANDOM_BOT, "--games", "2", "--no-duplicate",
                                 "--rules", "phases-to-win=1", "--no-progress",
                                 "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
    made = {key: counts[key] for key in ("settle_seed", "check_folder", "prepare_folder",
                                         "tournament.json written", "policies built",
                                         "command parses")}
    assert made == {"settle_seed": 1, "check_folder": 1, "prepare_folder": 1,
                    "tournament.json written": 1, "policies built": 1,
                    "command parses": 1}, made


def test_a_bot_spec_parses_its_command_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parses: Counter[str] = Counter()
    count_calls(monkeypatch, parses, BotCommand, "parse", "parses", static=True)
    spec = BotSpec.parse(RANDOM_BOT)
    assert spec.command is not None and spec.command is spec.command
    assert parses["parses"] == 1
