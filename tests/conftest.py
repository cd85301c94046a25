"""Fixtures shared by the test files (constants and helpers used at import time are in
tests/support.py)."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import fakegame
import pytest
from support import BAD_BOT_PATH, FAKE, FAST, PATIENT, PYTHON, BadGame, PlayBad, gone, wait_for

from meldref.protocol.command import BotCommand
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import InProcessSeat, Limits, ProcessSeat


@pytest.fixture
def play_bad(tmp_path: Path) -> PlayBad:
    """`play_bad(mode, policy=PATIENT, env=None, limits=FAST)`: one fake game (8 turns, seed 3)
    with tests/bots/bad_bot.py MODE in seat 0 against an in-process bot; (the game's record,
    its replay records, the bot's seat). Fails if any process of the bot is left behind. The
    bot's stderr goes to `seat.log_path` (a new file per game)."""
    logs = itertools.count(1)

    def play(mode: str, policy: MatchPolicy = PATIENT, env: Mapping[str, str] | None = None,
             limits: Limits = FAST) -> BadGame:
        command = BotCommand((PYTHON, str(BAD_BOT_PATH), mode), env=dict(env or {}))
        log = tmp_path / f"bot-{next(logs)}.log"
        seat = ProcessSeat(command, limits, log_path=log, game=FAKE.name)
        other = InProcessSeat(fakegame.RandomFakeBot(1))
        records: list[dict[str, Any]] = []
        try:
            record = play_game(FAKE, FAKE.rules(turns=8), [seat, other], 3, policy,
                               records.append)
        finally:
            close_all([seat, other])
        assert seat.pids, "the bot was never started"
        assert wait_for(lambda: gone(seat.pids), 10.0), f"processes left behind: {seat.pids}"
        return record, records, seat

    return play


@pytest.fixture
def bot_token() -> str:
    """A word unique to this test, put on its bots' command lines: the test finds its own
    processes in /proc by it (support.pids_with), never those of tests running in parallel."""
    return f"tok{uuid.uuid4().hex[:12]}"
