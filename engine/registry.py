"""meldref's games: the one list every layer takes its games from, and how a layer finds its
part of a game.

A game is one package of rules here in the engine and one module (or package: the bots'), named
after the game, in each layer that plays or shows it (OpenSpiel's pattern: a module per game and
a registration; docs/adding-a-game.md walks through it):

    rules          meldref.engine.<game>          GAME          a GameInfo
    bots           meldref.bots.<game>            BOTS          name -> factory(seed)
    presentation   meldref.replay.games.<game>    PRESENTATION  words, the viewer's frame, look
    codec          meldref.envs.<game>            CODEC         action space, observation vector
    PettingZoo     meldref.envs.<game>_v0         env, raw_env  version 0 of those spaces

Registering a game is adding its name to `GAMES`. The engine imports none of the layers above
it: each layer finds its own part by the game's name (`find_part`, given the layer's package),
when first asked, so a command imports only the games and parts it uses.

This module imports nothing of meldref and `GAMES` is a literal, so that the build (setup.py,
which runs before meldref can be imported) reads the same list as data.
"""

from __future__ import annotations

import importlib
from typing import Final

# The registered games, by name; the first is the one played when a command names none.
GAMES: Final = ("phase10", "fivecrowns", "solitaire")
DEFAULT_GAME: Final = GAMES[0]


class MissingPartError(LookupError):
    """A registered game whose module in some layer is missing or exports no part."""


def registered(name: str) -> str | None:
    """The registered game `name` means (any case; `-`, `_` and spaces ignored), or None."""
    key = name.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    return key if key in GAMES else None


def find_part(package: str, game: str, attribute: str) -> object:
    """`attribute` of the module `<package>.<game>`: a layer's part of the registered `game`
    (the layer passes its own package, so the engine names no layer above it)."""
    where = f"{package}.{game}"
    try:
        module = importlib.import_module(where)
    except ModuleNotFoundError as exc:
        if exc.name != where:  # the module is there; something it imports is not
            raise
        raise MissingPartError(f"{game} is registered but {where} does not exist: every "
                               "game has a module in each layer (docs/adding-a-game.md)") from None
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise MissingPartError(f"{where} exports no {attribute} (docs/adding-a-game.md)") from None
