"""Building Five Crowns positions for tests (see `positions`), and helpers shared by the Five
Crowns test files."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from positions import draw_pile, play

from meldref.engine.cards import Card, fivecrowns_deck, parse_cards
from meldref.engine.fivecrowns import GAME, FiveCrownsRules, FiveCrownsState

__all__ = ["all_cards", "hide_from", "play", "position", "table_cards"]


def position(
    hands: Sequence[str],
    *,
    rules: FiveCrownsRules | None = None,
    round: int = 1,
    discard: str = "9H",
    draw: str | None = None,
    to_move: int = 0,
    decision: str = "draw",
    **fields: Any,
) -> FiveCrownsState:
    """A position in `round` with `hands[i]` for seat i and seat `to_move` to `decision`."""
    rules = (rules or FiveCrownsRules(dealer="seat0")).for_players(len(hands))
    snap = GAME.new_game(rules, len(hands), 1).snapshot()
    placed = [c for h in hands for c in parse_cards(h)] + parse_cards(discard)
    snap.update(
        round=round,
        hands=[h.split() for h in hands],
        discard_pile=discard.split(),
        draw_pile=draw_pile(fivecrowns_deck(rules.decks), placed, draw),
        to_move=to_move,
        decision=decision,
    )
    snap.update(fields)
    return FiveCrownsState.from_snapshot(snap)


def all_cards(snap: dict[str, Any], zones: Sequence[str]) -> Counter[Card]:
    """Every card of a snapshot's `zones` (lists of tokens or lists of such lists)."""
    out: Counter[Card] = Counter()
    for zone in zones:
        for item in snap[zone]:
            tokens = item if isinstance(item, list) else [item]
            out.update(Card.parse(t) for t in tokens)
    return out


def table_cards(snap: dict[str, Any]) -> Counter[Card]:
    """The cards of the groups on the table (tokens without their declarations)."""
    out: Counter[Card] = Counter()
    for g in snap["table"]:
        body = g["group"].partition(":")[2]
        out.update(Card.parse(t.partition("=")[0]) for t in body.split(","))
    return out


def hide_from(snap: dict[str, Any], seat: int, rng: random.Random,
              hand_key: str = "hands") -> dict[str, Any]:
    """`snap` with every card `seat` cannot see (other hands, the draw pile) dealt anew."""
    others = [s for s in range(len(snap[hand_key])) if s != seat]
    hidden = [t for s in others for t in snap[hand_key][s]] + list(snap["draw_pile"])
    rng.shuffle(hidden)
    out = dict(snap)
    hands = [list(h) for h in snap[hand_key]]
    for s in others:
        hands[s], hidden = hidden[:len(hands[s])], hidden[len(hands[s]):]
    out[hand_key] = hands
    out["draw_pile"] = hidden
    return out
