"""Toy Rummy's built-in bots (they become `bots/toyrummy.py`): `builtin:random` and
`builtin:greedy`, as every game's `BOTS` table names them (`meldref.bots.BUILTIN_BOTS`)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Final

from meldref.engine.cards import Card
from meldref.engine.game import Bot
from meldref.engine.toyrummy import Move, ToyRummyView


class RandomBot:
    """Any legal move."""

    name = "random"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, view: ToyRummyView) -> Move:
        return self.rng.choice(view.legal_actions())


class GreedyBot:
    """Goes out when it can; else draws the discard when it makes a pair, and discards its
    highest card that pairs with nothing."""

    name = "greedy"

    def __init__(self, seed: int) -> None:
        pass

    def act(self, view: ToyRummyView) -> Move:
        legal = view.legal_actions()
        out = [move for move in legal if move.verb == "go out"]
        if out:
            return out[0]
        hand = [Card.parse(text) for text in view.to_json()["hand"]]
        ranks = [card.rank for card in hand]
        if legal[0].verb == "draw":
            top = view.to_json()["discard_top"]
            pairs = top is not None and Card.parse(top).rank in ranks
            return legal[-1] if pairs else legal[0]
        lonely = [card for card in hand if ranks.count(card.rank) == 1] or hand
        return Move("discard", max(lonely, key=lambda card: card.rank).text)


BOTS: Final[Mapping[str, Callable[[int], Bot]]] = {"random": RandomBot, "greedy": GreedyBot}
