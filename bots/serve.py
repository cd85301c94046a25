"""A built-in bot as a bot program: `python -m meldref.bots.serve NAME` plays `builtin:NAME`
on standard input and output through the SDK, in every game that has a bot of that name, so
what takes only programs (`meldref bot check`) takes the built-in bots too."""

from __future__ import annotations

import sys
from collections.abc import Callable

from ..engine.game import GAME_NAMES, Bot
from . import builtin_table
from .sdk import EngineBot, run


def program_games(name: str) -> dict[str, Callable[[int], Bot]]:
    """The factories of the built-in bot `name`, by game (empty if no game has one)."""
    return {game: builtin_table(game)[name] for game in GAME_NAMES
            if name in builtin_table(game)}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not program_games(argv[0]):
        print(f"usage: python -m meldref.bots.serve NAME (a built-in bot); got {argv}",
              file=sys.stderr)
        return 2
    run(EngineBot(program_games(argv[0]), name=argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
