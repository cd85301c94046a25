"""Five Crowns Solitaire: eleven face-up piles closed one by one against the deck
(spec/RULES.md, part 3).

The game's pieces, one module each, as in the other games: `rules` (the options and the piles),
`actions` (the one action, in its protocol text), `view` (what the player may know), `state`
(the game itself). Whether a pile closes is Five Crowns' `solver`.
"""

from .actions import Place, parse_action
from .rules import PILE_SIZES, SolitaireRules
from .state import GAME, SolitaireState, new_game
from .view import SolitaireView

__all__ = [
    "GAME", "PILE_SIZES", "Place", "SolitaireRules", "SolitaireState", "SolitaireView",
    "new_game", "parse_action",
]
