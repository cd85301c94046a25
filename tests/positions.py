"""What the Phase 10 and Five Crowns position builders share.

A position is a real game's snapshot with the chosen fields replaced; the draw pile, unless
given, is every card of the deck not placed elsewhere, so all cards stay accounted for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from meldref.engine.cards import Card, parse_cards
from meldref.engine.game import Event


def draw_pile(deck: Iterable[Card], placed: Iterable[Card], draw: str | None) -> list[str]:
    """The draw pile's tokens: `draw` as written, else `deck` less `placed`, by token."""
    if draw is not None:
        return [c.text for c in parse_cards(draw)]
    rest = Counter(deck)
    rest.subtract(placed)
    assert all(v >= 0 for v in rest.values()), "more copies of a card than the deck has"
    return sorted(c.text for c in rest.elements())


def play(state: Any, *texts: str) -> list[Event]:
    """Apply each action text in turn; all the events."""
    events: list[Event] = []
    for text in texts:
        events += state.apply(state.parse_action(text))
    return events
