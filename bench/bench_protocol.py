"""Decisions per second through the referee: in-process bots vs bot processes on pipes.

    python bench/bench_protocol.py [--games N]

For each game that exists, plays N games with the built-in random bot in every seat (in-process:
the referee's own cost) and N with bots/random_bot.py processes (pipes, text, and a Python bot
parsing every line), and prints decisions/s for both and their ratio, measured in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from meldref.engine.game import GameInfo, find_game
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import seat_from_spec

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = {"phase10": 2, "fivecrowns": 2, "solitaire": 1}
POLICY = MatchPolicy(move_time=10.0, first_move_time=20.0, startup_time=20.0)


def rate(game: GameInfo, specs: list[str], games: int, hints: bool) -> tuple[float, int]:
    decisions, spent = 0, 0.0
    policy = POLICY if hints else MatchPolicy(**{**POLICY.to_json(), "legal_hints": False})
    for seed in range(1, games + 1):
        seats = [seat_from_spec(s, game, seed=seed * 10 + i, cwd=str(ROOT))
                 for i, s in enumerate(specs)]
        try:
            for seat in seats:  # process start-up is not a decision: keep it out of the time
                seat.connect(POLICY.startup_time)
            began = time.perf_counter()
            record = play_game(game, game.rules(), seats, seed, policy)
            spent += time.perf_counter() - began
        finally:
            close_all(seats)
        decisions += record.decisions
    return decisions / spent, decisions


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=3)
    args = p.parse_args(argv)
    print(f"{'game':<11} {'in-process/s':>13} {'pipes/s':>9} {'pipes,no hints/s':>17} "
          f"{'ratio':>6} {'decisions':>10}")
    for name, players in PLAYERS.items():
        try:
            game = find_game(name)
        except (ImportError, AttributeError):
            print(f"{name:<11} (no engine yet)")
            continue
        inproc, _ = rate(game, ["builtin:random"] * players, args.games, True)
        bot = f"{sys.executable} bots/random_bot.py"
        piped, n = rate(game, [bot] * players, args.games, True)
        bare, _ = rate(game, [bot] * players, args.games, False)
        print(f"{name:<11} {inproc:>13.0f} {piped:>9.0f} {bare:>17.0f} "
              f"{inproc / piped:>6.1f} {n:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
