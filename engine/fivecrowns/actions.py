"""Five Crowns actions: small frozen values whose `str()` is their protocol text, and the parser.

    draw pile | draw discard
    discard <card> [<group>...]           e.g. discard 5H book:QH,QS,X run:4C,5C,6C
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from ..cards import SUITS, Card, CardError, Kind
from ..common import Draw, parse_draw
from ..game import InvalidActionError, Rebuilt, by_init
from ..melds import Meld, MeldError, parse_group
from ..numbers import quoted
from .rules import fivecrowns_melds

_PARSE_RULES: Final = fivecrowns_melds(0)  # reading group tokens needs no wild rank


@dataclass(frozen=True, slots=True)
class Discard:
    """`discard <card> [<group>...]`: groups that cover every other card go out; on a last
    turn they lay what they can. Groups are kept as written (checked by the state)."""

    card: Card
    groups: tuple[str, ...] = ()

    def __init__(self, card: Card, groups: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "groups", groups)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    def __str__(self) -> str:
        return " ".join(("discard", self.card.text, *self.groups))

    @staticmethod
    def laying(card: Card, melds: Iterable[Meld]) -> Discard:
        return Discard(card, tuple(str(m) for m in melds))

    @staticmethod
    def plain(card: Card) -> Discard:
        """`discard <card>`, one value per card (legal actions list one for every card held)."""
        action = _PLAIN.get(card)
        if action is None:
            action = _PLAIN[card] = Discard(card)
        return action


_PLAIN: dict[Card, Discard] = {}  # at most one per card of the deck


Action = Draw | Discard  # Draw (engine.common) is the same in Phase 10


def parse_action(text: str) -> Action:
    """The action written as `text`; `InvalidActionError` if it is not a Five Crowns action."""
    words = text.split()
    verb = words[0].lower() if words else ""
    if verb == "draw":
        return parse_draw(words[1:])
    if verb != "discard":
        raise InvalidActionError(f"unknown action {quoted(text)}; one of: draw, discard")
    if len(words) < 2:
        raise InvalidActionError("discard takes a card, then any groups: discard 5H book:QH,QS,X")
    try:
        card = _fc_card(Card.parse(words[1]))
        for token in words[2:]:
            for c, _ in parse_group(token, _PARSE_RULES)[1]:
                _fc_card(c)
    except (CardError, MeldError) as exc:
        raise InvalidActionError(f"{quoted(text)}: {exc}") from None
    return Discard(card, tuple(words[2:]))


def _fc_card(card: Card) -> Card:
    if card.kind is Kind.JOKER or (card.kind is Kind.NUMBER and card.suit in SUITS):
        return card
    raise CardError(f"{card.text} is not a Five Crowns card")
