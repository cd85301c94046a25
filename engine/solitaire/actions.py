"""Five Crowns Solitaire's one action, a small frozen value whose `str()` is its protocol text,
and the parser.

    place <pile> <card>                   e.g. place 5 QH
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..cards import Card, CardError
from ..game import InvalidActionError, Rebuilt, by_init
from ..numbers import is_count, quoted


@dataclass(frozen=True, slots=True)
class Place:
    """`place <pile> <card>`: the draw pile's top goes into `pile`, then `card` leaves it."""

    pile: int
    card: Card
    # The protocol text, written once: a request lists up to 88 of them.
    text: str = field(default="", init=False, compare=False, repr=False)

    # Hand-written: mypyc compiles it, not the dataclass's generated one (engine/game.py).
    def __init__(self, pile: int, card: Card) -> None:
        object.__setattr__(self, "pile", pile)
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "text", f"place {pile} {card.text}")

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    def __str__(self) -> str:
        return self.text


_PLACES: dict[tuple[int, Card], Place] = {}  # at most one per pile and card of the deck


def place(pile: int, card: Card) -> Place:
    """`Place(pile, card)`, one value per pile and card (legal actions list many each move)."""
    action = _PLACES.get((pile, card))
    if action is None:
        action = _PLACES[pile, card] = Place(pile, card)
    return action


def parse_action(text: str) -> Place:
    """The action written as `text`; `InvalidActionError` if it is not a Solitaire action."""
    words = text.split()
    if len(words) != 3 or words[0].lower() != "place" or not is_count(words[1]):
        raise InvalidActionError(
            f"{quoted(text)}: write place <pile 3..13> <card>, e.g. place 5 QH"
        )
    try:
        return Place(int(words[1]), Card.parse(words[2]))
    except CardError as exc:
        raise InvalidActionError(f"{quoted(text)}: {exc}") from None
