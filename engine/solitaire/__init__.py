"""Five Crowns Solitaire: eleven face-up piles closed one by one against the deck
(spec/RULES.md, part 3).

The game's pieces, one module each, as in the other games: `rules` (the options and the piles),
`actions` (the one action, in its protocol text), `view` (what the player may know), `state`
(the game itself). Whether a pile closes is Five Crowns' `solver`.
"""

from typing import Final

from ..game import GameInfo
from .actions import Place, parse_action
from .rules import PILE_SIZES, SolitaireRules
from .state import SolitaireState, new_game
from .view import SolitaireView

# The game as the rest of meldref sees it (`find_game("solitaire")`); its facts are in `rules`.
GAME: Final = GameInfo(
    name="solitaire",
    title="Five Crowns Solitaire",
    min_players=1,
    max_players=1,
    rules_type=SolitaireRules,
    new_game=new_game,
    from_snapshot=SolitaireState.from_snapshot,
    decisions=("place",),
    default_players=1,
    higher_scores_win=True,
    view_from_json=SolitaireView.from_json,
)

__all__ = [
    "GAME", "PILE_SIZES", "Place", "SolitaireRules", "SolitaireState", "SolitaireView",
    "new_game", "parse_action",
]
