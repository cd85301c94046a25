"""Ties between equally good choices, broken by a draw named by the bot's seed and the
position (`Tiebreak`), never by a card's name or a list's order.

A bot that broke ties by name played the same game from either seat of a duplicate deal, so a
bot against its own copy split every deal set 1-1 (Five Crowns' greedy and expert, Phase 10's
expert: the SPRT accepted H0 after exactly 102 deal sets whatever the truth) and was no null
test. Each seat's built-in bot gets a seed of its own (`bot_seed`), so copies now part where
their choices tie. The draw is named by the position, not taken from a generator run through
the game: a bot begun on a position plays as one that played to it.
"""

from __future__ import annotations

import random


class Tiebreak:
    """A key for `min`/`max`/`sorted` that orders equals by a draw: `key(card)` is a number
    in [0, 1) fixed by the seed, the position's words and the choice's text."""

    __slots__ = ("_name",)

    def __init__(self, bot: str, seed: int | str, *position: object) -> None:
        self._name = f"{bot}:{seed}:" + ":".join(map(str, position))

    def __call__(self, choice: object) -> float:
        return random.Random(f"{self._name}:{choice}").random()
