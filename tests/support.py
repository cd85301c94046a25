"""What the tests share at import and parametrize time: the repository's paths, the command
lines of the test bots, and waiting for a condition instead of sleeping a fixed time.
(Fixtures live in tests/conftest.py.)"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import fakegame

from meldref.protocol.records import GameRecord
from meldref.protocol.referee import MatchPolicy
from meldref.protocol.seats import Limits, ProcessSeat
from meldref.protocol.sweep import group_members

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable  # the venv's python: bot programs import nothing of meldref
TESTS = ROOT / "tests"

RANDOM_BOT_PATH = ROOT / "bots" / "random_bot.py"
BAD_BOT_PATH = TESTS / "bots" / "bad_bot.py"
LAZY_BOT_PATH = TESTS / "cli_bots" / "lazy_bot.py"
CLINGY_BOT_PATH = TESTS / "cli_bots" / "clingy_bot.py"


def command(path: Path, *args: str) -> str:
    """A bot program's command line (a `--bot` spec): the test python running `path`."""
    return shlex.join([PYTHON, str(path), *args])


RANDOM_BOT = command(RANDOM_BOT_PATH)
BAD_BOT = command(BAD_BOT_PATH)  # + " MODE": see the modes in tests/bots/bad_bot.py
LAZY_BOT = command(LAZY_BOT_PATH)


def wait_for(condition: Callable[[], object], timeout: float = 30.0,
             interval: float = 0.02) -> bool:
    """Poll `condition` until it holds (True) or `timeout` seconds passed (False).

    The timeout is a bound on a broken run, not a clock the test races: make it generous (a
    shared CI machine under load), the test goes on as soon as the condition holds."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def pid_gone(pid: int) -> bool:
    """True if `pid` no longer runs (absent, or a zombie waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def sleeping(pid: int) -> bool:
    """Whether the process is blocked in the kernel (state S): for a one-threaded program that
    just printed a prompt, waiting for its input."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "S"


def pids_with(token: str) -> list[int]:
    """Live processes whose command line holds `token` (a unique name given to a test's bots,
    so tests running in parallel never count each other's processes)."""
    mark, me = token.encode(), os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if mark in cmdline and not pid_gone(int(entry.name)):
            found.append(int(entry.name))
    return found


def gone(pids: Iterable[int]) -> bool:
    """Whether every process in `pids` and in their process groups (a bot's group is its
    pid: ProcessSeat starts each bot in its own session) has ended."""
    return all(pid_gone(p) and not group_members(p) for p in pids)


# ----------------------------------------------------------------------------------------------
# Games against tests/bots/bad_bot.py (tests/test_protocol_failures.py, test_protocol_hostile.py)
#
# No verdict may depend on how fast a loaded machine runs a bot. A bot that answers gets
# PATIENT deadlines it meets under any load; a bot that never answers in time (it is silent,
# stuck, or answers only after the referee's ping, i.e. late by construction) gets SHORT ones:
# a longer deadline would cost wall time and change nothing.

PATIENT = MatchPolicy(move_time=10.0, first_move_time=10.0, time_bank=0.0)
SHORT = MatchPolicy(move_time=0.05, first_move_time=0.05, time_bank=0.0, startup_time=10.0)

# The graces a misbehaving bot makes the referee wait out (protocol/seats.py `Limits`).
# ping_grace: a silent bot costs all of it. 0.2 s, not less: the "idle or busy" judgement
# compares the bot's CPU time over the grace, which /proc counts in 10 ms ticks, with 5% of the
# grace; from 0.2 s on, one tick (a sleeping bot that read a line) is below it.
# quit_grace, term_grace: only bots that do not read `quit` or ignore SIGTERM wait them out.
# exit_wait: only a bot that closes stdout but keeps running waits it out; a crashing bot's
# exit follows its end of output at once, 0.5 s is plenty even under load.
FAST = Limits(ping_grace=0.2, busy_grace=3.0, exit_wait=0.5, quit_grace=0.2, term_grace=0.2,
              stderr_limit=64 << 10)
FAKE = fakegame.GAME
# What the `play_bad` fixture (tests/conftest.py) returns: the game's record, its replay
# records, the bad bot's seat.
BadGame = tuple[GameRecord, list[dict[str, Any]], ProcessSeat]
PlayBad = Callable[..., BadGame]


def outcomes(record: GameRecord, seat: int = 0) -> list[tuple[str, bool]]:
    """The seat's faults as (outcome, fatal)."""
    return [(f.outcome, f.fatal) for f in record.faults[seat]]


def assert_forfeited(record: GameRecord) -> None:
    """Seat 0 (the bad bot) forfeited the two-seat fake game."""
    assert record.status == ["forfeit", "ok"]
    assert record.outcome.places == (2, 1)
    assert record.outcome.termination == "forfeit"
    assert record.outcome.detail["forfeited"] == [0]


def cli_commands() -> list[tuple[tuple[str, ...], Any]]:
    """Every leaf command of `meldref` by its words (("replay", "html"), ...), as the click
    command typer builds: loaded as running it would (the top group imports each lazily)."""
    import typer

    from meldref.cli import app

    found: list[tuple[tuple[str, ...], Any]] = []

    def walk(group: Any, path: tuple[str, ...]) -> None:
        ctx = group.context_class(group)
        for name in group.list_commands(ctx):
            _, command, _ = group.resolve_command(ctx, [name])
            if hasattr(command, "commands"):  # typer's click is vendored: no isinstance
                walk(command, (*path, name))
            else:
                found.append(((*path, name), command))

    walk(typer.main.get_command(app), ())
    return sorted(found, key=lambda pc: pc[0])
