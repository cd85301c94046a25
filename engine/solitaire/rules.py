"""Five Crowns Solitaire's facts and rule options (digest 2.6): the piles, `SolitaireRules`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from ..game import check_fields

PILE_SIZES: Final = tuple(range(3, 14))  # a pile is named by its dealt size, also its wild rank
DECKS: Final = 2
WON: Final = 1  # the player's place in a won game; in a lost one the deck is first
LOST: Final = 2


@dataclass(frozen=True, slots=True)
class SolitaireRules:
    """The rule options of Five Crowns Solitaire."""

    natural: Literal["none", "group"] = "none"  # group: every book and run needs a natural card

    def __post_init__(self) -> None:
        check_fields(self)
