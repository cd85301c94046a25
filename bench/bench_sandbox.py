"""What the sandbox costs: a bot program's start-up and each decision, with and without it.

    python bench/bench_sandbox.py [--starts 10] [--games 3] [--game phase10]

Three ways to start bots/random_bot.py, taking turns so a busy moment hits all alike: `bare`
(the program alone, as before the guard: `setpriv --pdeathsig`), `guard` (the default:
protocol/guard.py), `sandbox` (`--sandbox`: bubblewrap, protocol/sandbox.py). Start-up is
the median time from the start to the bot's `ready`; a decision's cost the median over
--games games (the bot against built-in greedy, one process of each way kept for all games,
the ways taking turns game by game) of the wall time of a game over its decisions (of both
seats). Every figure also as a ratio to `guard` of
the same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from meldref.engine.game import find_game
from meldref.protocol import launch
from meldref.protocol.command import BotCommand
from meldref.protocol.limits import Limits
from meldref.protocol.referee import MatchPolicy, play_game
from meldref.protocol.sandbox import sandbox_problem
from meldref.protocol.seats import InProcessSeat, ProcessSeat

BOT = Path(__file__).resolve().parents[1] / "bots" / "random_bot.py"
MODES = ("bare", "guard", "sandbox")


def seat(mode: str, game: str) -> ProcessSeat:
    launch.GUARDED = mode != "bare"  # read at each start
    return ProcessSeat(BotCommand((sys.executable, str(BOT))), Limits(sandbox=mode == "sandbox"),
                       game=game)


def start_up(mode: str, game: str) -> float:
    bot = seat(mode, game)
    began = time.perf_counter()
    try:
        bot.connect(30.0)
        return time.perf_counter() - began
    finally:
        bot.close()


def per_decision(game: str, games: int) -> dict[str, float]:
    """Each way's median cost of a decision over `games` games, the ways taking turns game by
    game (as the start-ups do), so that a busy spell of the machine hits all of them alike."""
    from meldref.bots import builtin_bot

    info = find_game(game)
    rules = info.rules(phases_to_win=2) if game == "phase10" else info.rules()
    policy = MatchPolicy(move_time=10.0, first_move_time=10.0)
    bots: dict[str, ProcessSeat] = {}
    costs: dict[str, list[float]] = {m: [] for m in MODES}
    try:
        for mode in MODES:
            bots[mode] = seat(mode, game)
            bots[mode].connect(30.0)
        for g in range(games):
            for mode, bot in bots.items():
                others = [InProcessSeat(builtin_bot(game, "greedy", g))] if info.name != (
                    "solitaire") else []
                began = time.perf_counter()
                record = play_game(info, rules, [bot, *others], g + 1, policy)
                costs[mode].append((time.perf_counter() - began) / max(1, record.decisions))
    finally:
        for bot in bots.values():
            bot.close()
    return {m: statistics.median(c) for m, c in costs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--game", default="phase10")
    args = parser.parse_args()
    problem = sandbox_problem()
    if problem is not None:
        sys.exit(f"no sandbox here: {problem}")
    starts: dict[str, list[float]] = {m: [] for m in MODES}
    for _ in range(args.starts):
        for mode in MODES:
            starts[mode].append(start_up(mode, args.game))
    decisions = per_decision(args.game, args.games)
    up = {m: statistics.median(v) for m, v in starts.items()}
    print(f"bot start-up (median of {args.starts}) and cost per decision ({args.game}, median "
          f"of {args.games} games), bots/random_bot.py:")
    print("| start | start-up | vs guard | per decision | vs guard |")
    print("|---|---|---|---|---|")
    for mode in MODES:
        print(f"| {mode} | {up[mode] * 1000:.0f} ms | {up[mode] / up['guard']:.2f}x | "
              f"{decisions[mode] * 1000:.2f} ms | {decisions[mode] / decisions['guard']:.2f}x |")


if __name__ == "__main__":
    main()
