"""Five Crowns: eleven rounds, five suits, a wild rank that grows each round (spec/RULES.md,
part 2), with party mode for 8 to 14 players.

One module each: `rules`, `actions`, `view`, `state`, and `solver` (the exact least-points
arrangement of a hand, shared with Solitaire and the bots).
"""

from ..common import Draw
from .actions import Action, Discard, parse_action
from .rules import FiveCrownsRules, deal_size, wild_rank
from .state import GAME, FiveCrownsState, new_game
from .view import FiveCrownsView

__all__ = [
    "GAME", "Action", "Discard", "Draw", "FiveCrownsRules", "FiveCrownsState", "FiveCrownsView",
    "deal_size", "new_game", "parse_action", "wild_rank",
]
