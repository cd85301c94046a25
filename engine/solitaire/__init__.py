"""Five Crowns Solitaire: eleven face-up piles closed one by one against the deck
(spec/RULES.md, part 3)."""

from .state import (
    GAME,
    PILE_SIZES,
    Place,
    SolitaireRules,
    SolitaireState,
    SolitaireView,
    new_game,
    parse_action,
)

__all__ = [
    "GAME", "PILE_SIZES", "Place", "SolitaireRules", "SolitaireState", "SolitaireView",
    "new_game", "parse_action",
]
