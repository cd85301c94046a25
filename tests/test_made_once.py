"""Each fact of a tournament made once: one two-game tournament, run by the command as a user
runs it, settles its seed once, checks and prepares its folder once, writes `tournament.json`
once, builds its referee's `MatchPolicy` once and parses each bot's command once.

The steps are counted by wrapping the real functions; the games are played in this process
(a pool that plays them one after another), so the parses a game makes are counted too."""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

import pytest
from support import RANDOM_BOT
from typer.testing import CliRunner

from meldref.protocol.process import BotCommand
from meldref.protocol.seats import BotSpec

runner = CliRunner()


def count_calls(monkeypatch: pytest.MonkeyPatch, counts: Counter[str], owner: Any, name: str,
                key: str, static: bool = False) -> None:
    """Wrap `owner.name` so that each call adds one to `counts[key]`."""
    real = getattr(owner, name)

    @functools.wraps(real)
    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[key] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, staticmethod(counted) if static else counted)


def test_a_bot_spec_parses_its_command_once(monkeypatch: pytest.MonkeyPatch) -> None:
    parses: Counter[str] = Counter()
    count_calls(monkeypatch, parses, BotCommand, "parse", "parses", static=True)
    spec = BotSpec.parse(RANDOM_BOT)
    assert spec.command is not None and spec.command is spec.command
    assert parses["parses"] == 1
