"""Five Crowns' facts and rule options (digest 2.1-2.5): rounds, deal sizes, `FiveCrownsRules`."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Final, Literal

from ..cards import FC_RANK_TEXT, SUITS
from ..game import RuleOptionError, Rules, check_fields, rules_of
from ..melds import GroupKind, MeldRules

# ----------------------------------------------------------------------------------------------
# The game's facts

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 14  # party mode: two games' decks together
STANDARD_MAX: Final = 7  # most seats one double deck (116 cards) serves
ROUNDS: Final = 11
TIEBREAK_ROUND: Final = ROUNDS + 1
TIEBREAK_DEAL: Final = 6  # the tie-break round deals 6 cards, so 6s are wild
MIN_GROUP: Final = 3
COMBINATIONS: Final = (GroupKind.BOOK, GroupKind.RUN)


def deal_size(round_number: int) -> int:
    """Cards dealt to each seat in round 1..11 (3..13), or in the tie-break round (6)."""
    return TIEBREAK_DEAL if round_number == TIEBREAK_ROUND else round_number + 2


def wild_rank(round_number: int) -> int:
    """The rotating wild rank of a round: the deal size (3s in round 1 ... Kings in round 11)."""
    return deal_size(round_number)


@functools.cache
def fivecrowns_melds(wild_rank: int) -> MeldRules:
    """Five Crowns groups for the round whose wild rank is `wild_rank` (3..13; 0 for none):
    books, and runs of one suit."""
    return MeldRules(low=3, high=13, suits=SUITS, run_same_suit=True, wild_rank=wild_rank)


def rank_text(rank: int) -> str:
    return FC_RANK_TEXT[rank]


# ----------------------------------------------------------------------------------------------
# Rule options


@dataclass(frozen=True, slots=True)
class FiveCrownsRules:
    """Every rule option of Five Crowns (digest 2.1-2.5); the defaults are the printed rules."""

    dealer: Literal["random", "seat0"] = "random"  # first dealer: seeded random, or seat 0
    natural: Literal["none", "group"] = "none"  # group: every book and run needs a natural card
    tiebreak: Literal["shared", "round"] = "shared"  # round: a 6-card round among the tied
    party: Literal["auto", "on", "off"] = "auto"  # on: 4 decks (232 cards); auto: on above 7
    turn_cap: int | None = 50  # turns each seat may take in a round before it ends, nobody out

    def __post_init__(self) -> None:
        check_fields(self)
        if self.turn_cap is not None and self.turn_cap < 1:
            raise RuleOptionError(
                f"rule option turn-cap={self.turn_cap!r}: a whole number from 1, or none"
            )

    def for_players(self, players: int) -> FiveCrownsRules:
        """These rules with `party` settled for `players` seats (recorded in the game)."""
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise RuleOptionError(f"fivecrowns is for {MIN_PLAYERS}..{MAX_PLAYERS} players")
        if self.party == "off" and players > STANDARD_MAX:
            raise RuleOptionError(
                f"rule option party=off: two decks serve at most {STANDARD_MAX} players, not "
                f"{players}; use party=on or party=auto"
            )
        if self.party != "auto":
            return self
        return dataclasses.replace(self, party="on" if players > STANDARD_MAX else "off")

    @property
    def decks(self) -> int:
        """58-card decks in play: 4 in party mode, else 2."""
        return 4 if self.party == "on" else 2


def check_rules(rules: Rules, players: int) -> FiveCrownsRules:
    """`GameInfo.check_rules`: Five Crowns' rules settled for `players` seats
    (`FiveCrownsRules.for_players`), `RuleOptionError` if they cannot seat them."""
    return rules_of(FiveCrownsRules, rules).for_players(players)
