"""Phase 10: ten phases of sets, runs and colour groups, Skips and wilds (spec/RULES.md, part 1).

The game's pieces, one module each: `rules` (the options and the phases), `actions` (what a
seat may do, in its protocol text), `view` (what a seat may know), `state` (the game itself).
"""

from typing import Final

from ..common import Draw
from ..game import GameInfo
from .actions import Action, Discard, Group, Hit, LayDown, parse_action
from .rules import MAX_PLAYERS, MIN_PLAYERS, PHASES, Phase10Rules, card_points, describe_phase
from .state import Phase10State, new_game
from .view import Phase10View, TableGroup, missing_cards, missing_without_each

# The game as the rest of meldref sees it (`find_game("phase10")`); its facts are in `rules`.
GAME: Final = GameInfo(
    name="phase10",
    title="Phase 10",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    rules_type=Phase10Rules,
    new_game=new_game,
    from_snapshot=Phase10State.from_snapshot,
    decisions=("draw", "play"),
    view_from_json=Phase10View.from_json,
)

__all__ = [
    "GAME", "PHASES", "Action", "Discard", "Draw", "Group", "Hit", "LayDown", "Phase10Rules",
    "Phase10State", "Phase10View", "TableGroup", "card_points", "describe_phase",
    "missing_cards", "missing_without_each", "new_game", "parse_action",
]
