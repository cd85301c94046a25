"""Replays told in words: one line per event as a seat saw it, and hands sorted as people hold
them. `replay show`, a person's seat (`meldref play`) and the HTML viewer say things alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from ..engine.cards import (
    COLOUR_NAMES,
    FC_RANK_TEXT,
    SUIT_NAMES,
    SUITS,
    Card,
    CardError,
    Kind,
    sort_key,
)
from ..engine.game import JSON, EventKind
from .games import Describer, presentation


def printable(text: str) -> str:
    """`text` with every character a terminal could act on (escape sequences, carriage
    returns, bidirectional overrides: whatever `str.isprintable` refuses) written as its
    Python escape, so a name or detail from a file cannot rewrite the screen."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def seat_name(names: Sequence[str], seat: JSON) -> str:
    if isinstance(seat, int) and 0 <= seat < len(names):
        return f"seat {seat} ({names[seat]})"
    return f"seat {seat}"


def value_text(value: JSON) -> str:
    if isinstance(value, list):
        return " ".join(value_text(v) for v in value) if value else "-"
    if value is None:
        return "-"
    return str(value)


def describe_event(event: Mapping[str, JSON], names: Sequence[str], game: str) -> str:
    """A line for one event of `game` as a seat saw it (hidden fields already removed): the
    game's own words for its events (`games/<game>.py`), these for the events every game has,
    and the event's fields for a kind neither knows."""
    kind = str(event.get("event"))
    who = seat_name(names, event["seat"]) if "seat" in event else ""
    own = presentation(game).words.get(EventKind(kind)) if kind in KINDS else None
    if own is not None:
        return own(event, who, names)
    common = _COMMON.get(kind)
    if common is not None:
        return common(event, who, names)
    rest = " ".join(f"{k}={value_text(v)}" for k, v in event.items() if k not in ("event", "seat"))
    return " ".join(p for p in (who, kind.replace("_", " "), rest) if p)


def _draw(event: Mapping[str, JSON], who: str, names: Sequence[str]) -> str:
    card = event.get("card")
    what = f"draws {card}" if card else "draws a card"
    pile = "discard pile" if event.get("source") == "discard" else "draw pile"
    return f"{who} {what} from the {pile}"


_COMMON: Final[Mapping[str, Describer]] = {
    EventKind.DRAW: _draw,
    EventKind.DISCARD: lambda event, who, names: f"{who} discards {event.get('card')}",
    EventKind.TURN_UP: lambda event, who, names:
        f"the discard pile starts with {event.get('card')}",
    EventKind.DEAL: lambda event, who, names: _deal(event, who),
    EventKind.RESHUFFLE: lambda event, who, names:
        f"the discard pile is shuffled into a new draw pile ({event.get('draw_pile_size')})",
    EventKind.HAND_END: lambda event, who, names: _hand_end(event, names),
    EventKind.ROUND_END: lambda event, who, names: _hand_end(event, names),
    EventKind.GAME_OVER: lambda event, who, names: "game over",
}
KINDS: Final = frozenset(EventKind)


def next_card(event: Mapping[str, JSON]) -> str:
    """The draw pile's next card as a `place` or Solitaire `deal` event shows it, in words."""
    top, left = event.get("draw_top"), event.get("draw_pile_size")
    if top is None:
        return "the deck is empty"
    return f"next card {top}" + (f", {left} left" if left is not None else "")


def _deal(event: Mapping[str, JSON], who: str) -> str:
    hand = event.get("hand")
    if isinstance(hand, list):
        shown = format_hand(hand)
    else:
        shown = f"{event.get('hand_size') or event.get('deal_size')} cards"
    wild = f" ({event['wild_rank']}s wild)" if event.get("wild_rank") else ""
    return f"{who} is dealt {shown}{wild}"


def _hand_end(event: Mapping[str, JSON], names: Sequence[str]) -> str:
    out = event.get("went_out")
    how = f"{seat_name(names, out)} went out" if out is not None else str(event.get("ended"))
    left = event.get("hands")
    held = ""
    if isinstance(left, list):
        held = "; left in hand: " + ", ".join(
            f"s{s} {format_hand(str(h).split()) or '-'}" for s, h in enumerate(left))
    number = event.get("hand_number", event.get("round"))
    word = "round" if "round" in event else "hand"
    return (f"{word} {number} ends, {how}: points {value_text(event.get('points'))}"
            f"; totals {value_text(event.get('totals'))}{held}")


_PLURALS = {1: "ones", 2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes",
            7: "sevens", 8: "eights", 9: "nines", 10: "tens", 11: "elevens", 12: "twelves"}
_FC_PLURALS = {**_PLURALS, 11: "jacks", 12: "queens", 13: "kings"}


def describe_groups(groups: JSON) -> str:
    """Laid groups in words, each with its cards: `set of 4 sevens (R7 B7 W=7 G7) + run 3-6
    (R3 B4 Y5 W=6)`; "nothing" for none."""
    if not isinstance(groups, list) or not groups:
        return "nothing"
    return " + ".join(f"{describe_group(str(g))} ({' '.join(str(g).partition(':')[2].split(','))})"
                      for g in groups)


def describe_group(token: str) -> str:
    """One group token in words ("set of 4 sevens", "run 3-6", "run 9-Q of hearts",
    "7 green cards"); the token itself if it cannot be read."""
    kind, _, body = token.partition(":")
    try:
        placed = [(Card.parse(c), d) for c, _, d in (p.partition("=") for p in body.split(","))]
    except CardError:
        return token
    fc = any(c.kind is Kind.JOKER or c.suit in SUITS for c, _ in placed)

    def value(card: Card, declared: str) -> str:
        return declared or (FC_RANK_TEXT[card.rank] if fc else str(card.rank))

    values = [value(c, d) for c, d in placed]
    if kind in ("set", "book") and values:
        rank = next((r for r, v in FC_RANK_TEXT.items() if v == values[0]), None) if fc else (
            int(values[0]) if values[0].isdigit() else None)
        plural = (_FC_PLURALS if fc else _PLURALS).get(rank or 0, f"{values[0]}s")
        return f"{kind} of {len(placed)} {plural}"
    if kind == "run" and values:
        suit = next((SUIT_NAMES[c.suit] for c, d in placed if not d and c.suit in SUITS), "")
        return f"run {values[0]}-{values[-1]}" + (f" of {suit}" if suit else "")
    if kind == "colour" and placed:
        colour = next((d or c.suit for c, d in placed if d or c.suit), "")
        return f"{len(placed)} {COLOUR_NAMES.get(colour, 'same-colour')} cards"
    return token


def sorted_hand(tokens: Iterable[str]) -> list[str]:
    """A hand's tokens as people hold them (naturals by rank, then wilds, then Skips)."""
    cards: list[Card] = []
    rest: list[str] = []
    for token in tokens:
        try:
            cards.append(Card.parse(token))
        except CardError:
            rest.append(token)
    return [c.text for c in sorted(cards, key=sort_key)] + rest


def format_hand(tokens: Iterable[str]) -> str:
    """Tokens sorted as people hold them, as one line of text."""
    return " ".join(sorted_hand(tokens))
