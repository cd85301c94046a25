"""The bots that ship with meldref.

In-process bots, seated as ``builtin:NAME``: one module per registered game, named after it
(engine/registry.py), each with a `BOTS` table of name -> factory(seed). They see only their seat's
view (`engine.game.Bot`), like a bot program does. The rules never import them: the referee and
the command line find them here, by game and name.

Bot programs that speak the protocol: `random_bot.py` (the commented starting point) and the
examples in other languages under `examples/`.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from typing import Final

from ..engine.game import GAME_NAMES, Bot
from ..engine.registry import find_part

BUILTIN_PREFIX: Final = "builtin:"

# Every name `builtin:NAME` takes, in ladder order (random < greedy < expert; search is level
# with expert), with what the bot is: the same names in every
# game's `BOTS` table (a test holds them together), written here so that the command line's
# help names them without importing the bots.
BUILTIN_BOTS: Final[Mapping[str, str]] = {
    "random": "random legal play",
    "greedy": "a simple heuristic",
    "expert": "hand-written strategy",
    "search": ("determinized Monte Carlo over the expert's moves: level with expert, not "
               "stronger, and slower (a quarter of each decision's clock)"),
}


def builtin_help() -> str:
    """The built-in bots as help text names them: `builtin:random`, ... or `builtin:expert`."""
    names = [f"builtin:{name}" for name in BUILTIN_BOTS]
    return ", ".join(names[:-1]) + " or " + names[-1]


# Bots of games from outside meldref (a GameInfo loaded as module:ATTR), by game name.
_REGISTERED: dict[str, Mapping[str, Callable[[int], Bot]]] = {}


class UnknownBotError(ValueError):
    """No built-in bot of that name for that game."""


def register_builtin(game: str, table: Mapping[str, Callable[[int], Bot]]) -> None:
    """Seat `table`'s bots as ``builtin:NAME`` in `game`, a game from outside meldref."""
    if game in GAME_NAMES:
        raise ValueError(f"{game} is one of meldref's games; its bots are in meldref.bots")
    _REGISTERED[game] = dict(table)


def builtin_table(game: str) -> Mapping[str, Callable[[int], Bot]]:
    """The built-in bots of `game`, by name (none for a game that has none)."""
    if game not in GAME_NAMES:
        return _REGISTERED.get(game, {})
    # Each registered game has its bots' BOTS table in this package's module of its name
    # (imported when first asked).
    return typing.cast(Mapping[str, Callable[[int], Bot]], find_part(__package__, game, "BOTS"))


def builtin_names(game: str) -> tuple[str, ...]:
    """The names `builtin:NAME` takes for `game`, weakest first as the tables list them."""
    return tuple(builtin_table(game))


def builtin_bot(game: str, name: str, seed: int) -> Bot:
    """A new built-in bot; `UnknownBotError` naming the ones there are if `name` is not one."""
    table = builtin_table(game)
    if name not in table:
        known = ", ".join(table) or "none"
        raise UnknownBotError(f"no built-in bot {name!r} for {game}; built-in bots: {known}")
    return table[name](seed)
