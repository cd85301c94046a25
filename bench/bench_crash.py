"""How soon the referee notices a bot that crashed, with and without an orphan on its stdout.

    python bench/bench_crash.py [--rounds 3] [--move-time 1] [--time-bank 5] [--no-pidfd]

A Solitaire game against tests/bots/crash_orphan_bot.py, which exits at its third decision.
`plain`: the pipe closes with the bot, the usual crash. `orphan`: the bot first starts a child
that inherits its stdout, so the pipe stays open after the bot is gone: only the bot's own
exit tells the referee. The figure is the time from the bot's exit (the moment it writes just
before `os._exit`) to the referee's `crashed` fault record, median of --rounds games each, and
the same as a ratio to the plain crash of the same run and as a share of the deadline the
decision had (--move-time + --time-bank; a referee that waited for the pipe would sit there).
`--no-pidfd` measures the fallback of systems without `os.pidfd_open`: the bot's exit is then
looked for every `EXIT_CHECK` seconds of a wait.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from meldref.engine.game import find_game
from meldref.protocol import process
from meldref.protocol.command import BotCommand
from meldref.protocol.limits import Limits
from meldref.protocol.referee import MatchPolicy, play_game
from meldref.protocol.seats import ProcessSeat

BOT = Path(__file__).resolve().parents[1] / "tests" / "bots" / "crash_orphan_bot.py"


def detection(mode: str, policy: MatchPolicy, folder: Path) -> float:
    """Seconds from the bot's exit to its `crashed` fault, in one game."""
    stamp = folder / f"{mode}.stamp"
    stamp.unlink(missing_ok=True)
    command = BotCommand((sys.executable, str(BOT), mode, "3"),
                         env={"BOT_EXIT_STAMP": str(stamp)})
    seen: dict[str, float] = {}

    def on_record(record: dict[str, Any]) -> None:
        if record["type"] == "fault" and record["outcome"] == "crashed":
            seen.setdefault("fault", time.time())

    info = find_game("solitaire")
    seat = ProcessSeat(command, Limits(), game=info.name)
    try:
        record = play_game(info, info.rules(), [seat], 1, policy, on_record)
    finally:
        seat.close()
    assert record.status == ["forfeit"] and "fault" in seen, record.faults
    return seen["fault"] - float(stamp.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--move-time", type=float, default=1.0)
    parser.add_argument("--time-bank", type=float, default=5.0)
    parser.add_argument("--no-pidfd", action="store_true", help="the fallback: no pidfds")
    args = parser.parse_args()
    if args.no_pidfd:
        process.open_pidfd = lambda pid: None
    policy = MatchPolicy(move_time=args.move_time, first_move_time=args.move_time,
                         time_bank=args.time_bank)
    deadline = args.move_time + args.time_bank
    times: dict[str, list[float]] = {"plain": [], "orphan": []}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(args.rounds):
            for mode in times:  # taking turns, so a busy moment hits both alike
                times[mode].append(detection(mode, policy, Path(folder)))
    plain = statistics.median(times["plain"])
    how = "polling for the exit" if args.no_pidfd else "pidfd"
    print(f"crash detection, median of {args.rounds} games (deadline {deadline:g} s, {how}):")
    print("| crash | detected after | vs plain crash | share of the deadline |")
    print("|---|---|---|---|")
    for mode, seen in times.items():
        median = statistics.median(seen)
        print(f"| {mode} | {median * 1000:.0f} ms | {median / plain:.1f}x | "
              f"{median / deadline:.1%} |")


if __name__ == "__main__":
    main()
