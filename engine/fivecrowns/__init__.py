"""Five Crowns: eleven rounds, five suits, a wild rank that grows each round (spec/RULES.md,
part 2), with party mode for 8 to 14 players.

One module each: `rules`, `actions`, `view`, `state`, and `solver` (the exact least-points
arrangement of a hand, shared with Solitaire and the bots).
"""

from typing import Final

from ..common import Draw
from ..game import GameInfo
from .actions import Action, Discard, parse_action
from .rules import MAX_PLAYERS, MIN_PLAYERS, FiveCrownsRules, check_rules, deal_size, wild_rank
from .state import FiveCrownsState, new_game
from .view import FiveCrownsView

# The game as the rest of meldref sees it (`find_game("fivecrowns")`); its facts are in `rules`.
GAME: Final = GameInfo(
    name="fivecrowns",
    title="Five Crowns",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    rules_type=FiveCrownsRules,
    new_game=new_game,
    from_snapshot=FiveCrownsState.from_snapshot,
    decisions=("draw", "discard"),
    check_rules=check_rules,
    view_from_json=FiveCrownsView.from_json,
)

__all__ = [
    "GAME", "Action", "Discard", "Draw", "FiveCrownsRules", "FiveCrownsState", "FiveCrownsView",
    "deal_size", "new_game", "parse_action", "wild_rank",
]
