"""Issue 28: on the compiled build, a decision through pipes runs none of the referee as Python.

The referee's loop (protocol/referee.py) and the seats (protocol/seats.py) ran as Python around
the compiled conversation, and a bot program's transport (`PipeTransport`) was a Python class
deriving from the compiled channel, so the channel's methods called one another by name: a good
part of the referee's own CPU per decision, past the text and the system calls. A whole game
against a bot program is watched with `sys.setprofile`, which sees every call of a function
running as Python (compiled ones make no such event): no function of meldref/protocol may run
as Python anywhere near once per decision. The pure build (MELDREF_PURE=1) runs everything as
Python: there these tests have nothing to check."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from types import FrameType

import pytest
from support import PATIENT, RANDOM_BOT, ROOT
from test_build import load_setup

from meldref.build import compiled
from meldref.engine.game import find_game
from meldref.protocol.referee import close_all, play_game
from meldref.protocol.seats import ProcessSeat, Seat, seat_from_spec

pytestmark = pytest.mark.skipif(not compiled(), reason="the pure build runs all as Python")
# The referee's side; the games' rules.py stay Python by design (setup.py says why), and Five
# Crowns' engine asks its rules a few things per decision.
PROTOCOL = str(ROOT / "meldref" / "protocol")
SHORT = {"phase10": {"phases_to_win": 1}}  # a game of a few hundred decisions at most
LONG_ENOUGH = 100  # decisions


def hot_modules() -> set[str]:
    return {source.removesuffix(".py").replace("/", ".") for source in load_setup().HOT}


def python_calls(game: str, seats: list[Seat], seed: int) -> tuple[Counter[str], int]:
    """(calls of the referee's functions running as Python, by function; the game's
    decisions)."""
    calls: Counter[str] = Counter()

    def watch(frame: FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        if event == "call" and code.co_filename.startswith(PROTOCOL):
            calls[f"{Path(code.co_filename).name}:{code.co_firstlineno} {code.co_name}"] += 1

    info = find_game(game)
    sys.setprofile(watch)
    try:
        record = play_game(info, info.rules(**SHORT.get(game, {})), seats, seed, PATIENT)
    finally:
        sys.setprofile(None)
    assert record.status == ["ok"] * len(seats), record.faults
    return calls, record.decisions


@pytest.mark.parametrize("game", ["phase10", "fivecrowns", "solitaire"])
def test_no_meldref_function_runs_as_python_per_decision(game: str) -> None:
    info = find_game(game)
    seats = [seat_from_spec(RANDOM_BOT, info, seed=i) for i in range(info.min_players)]
    try:
        for seat in seats:
            seat.connect(10.0)
        # The random bot programs play otherwise from run to run, and a short game (35
        # decisions, seen) let a few calls a game pass for one every tenth decision: one game
        # of LONG_ENOUGH decisions at least (Solitaire's deals are all shorter: the longest).
        found: list[tuple[int, Counter[str]]] = []
        for seed in range(3, 13):
            calls, decisions = python_calls(game, seats, seed)
            found.append((decisions, calls))
            if decisions >= LONG_ENOUGH:
                break
        decisions, calls = max(found, key=lambda pair: pair[0])
    finally:
        close_all(seats)
    assert decisions >= 20
    # Once per game is fine (the game's rules read as JSON, a process asked if it runs: 4
    # calls a game of `returncode`); once per decision, or per action, is the loop as Python.
    often = {name: n for name, n in calls.items() if n * 10 >= decisions}
    assert not often, f"{decisions} decisions, run as Python: {often}"


def test_the_seats_and_transport_of_a_decision_are_compiled_classes() -> None:
    seat = seat_from_spec(RANDOM_BOT, find_game("phase10"))
    assert isinstance(seat, ProcessSeat)
    with seat:
        seat.connect(10.0)
        # A Python class among them would make each call of their methods a lookup by name.
        for kind in (type(seat), type(seat.channel), type(seat._conn)):
            assert kind.__module__ in hot_modules(), kind
