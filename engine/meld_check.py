"""Checking groups: a group as laid (`build_meld`) and a card hit on a laid group (`extend`).

Building a group checks it and fixes the value of every wild, so a laid group never changes its
meaning: a hit only adds cards at the places the group's fixed values allow. Undeclared wilds are
placed by one documented rule (see `build_meld`), so a bot may leave the declarations out when it
does not care, and the resolved group (with every wild's value) is what the table shows.
Every refusal is a `MeldError` whose message says why.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import Card, Kind
from .melds import (
    Declared,
    GroupKind,
    Meld,
    MeldError,
    MeldRules,
    Placed,
    format_meld,
    parse_group,
)

# ----------------------------------------------------------------------------------------------
# Building and checking a group


def parse_meld(text: str, rules: MeldRules, min_size: int = 1) -> Meld:
    """Parse and check a group token in one step."""
    kind, placed = parse_group(text, rules)
    return build_meld(kind, placed, rules, min_size)


def build_meld(
    kind: GroupKind, placed: Sequence[Placed], rules: MeldRules, min_size: int = 1
) -> Meld:
    """Check a group and fix what each wild stands for; `MeldError` with the reason if invalid.

    Undeclared wilds: in a set they take the set's number; in a colour group its colour; in a run
    they first fill the gaps between the declared values, then extend the run upwards, then
    downwards. An all-wild group with no declaration takes the highest number (sets), the first
    colour (colour groups) or starts at the lowest number (runs).
    """
    if len(placed) < min_size:
        raise MeldError(f"{kind.value} {_show(placed)}: needs {min_size} cards, has {len(placed)}")
    for card, _ in placed:
        if card.kind is Kind.SKIP:
            raise MeldError(f"{kind.value} {_show(placed)}: a Skip is never part of a group")
    if kind is GroupKind.RUN:
        return _build_run(placed, rules)
    return _build_same(kind, placed, rules)


def _check_natural_declarations(
    placed: Sequence[Placed], rules: MeldRules, what: str, colour: bool
) -> None:
    for card, decl in placed:
        own = card.suit if colour else card.rank
        if decl is not None and not rules.is_wild(card) and decl != own:
            raise MeldError(f"{what}: {card.text} is not wild and cannot stand for {decl}")


def _build_same(kind: GroupKind, placed: Sequence[Placed], rules: MeldRules) -> Meld:
    # Sets, books and colour groups share one shape: every card has the same key (its number,
    # or its colour), and the wilds take that key.
    colour = kind is GroupKind.COLOUR
    word, other = ("colour", "number") if colour else ("number", "colour")
    name = "colour group" if colour else kind.value
    what = f"{kind.value} {_show(placed)}"
    _check_natural_declarations(placed, rules, what, colour)
    own = {card.suit if colour else card.rank for card, _ in placed if not rules.is_wild(card)}
    declared = {d for card, d in placed if rules.is_wild(card) and d is not None}
    if any(isinstance(d, str) != colour for d in declared):
        raise MeldError(f"{what}: a wild in a {name} stands for a {word}, not a {other}")
    if len(own) > 1:
        raise MeldError(f"{what}: mixes {word}s {sorted(own)}")
    keys: set[int | str] = own | declared
    if len(keys) > 1:
        raise MeldError(f"{what}: a wild is declared as another {word} than the {name}")
    key = keys.pop() if keys else _all_wild_key(placed, rules, colour)
    return Meld(kind, tuple(c for c, _ in placed), (key,) * len(placed))


def _all_wild_key(placed: Sequence[Placed], rules: MeldRules, colour: bool) -> int | str:
    """An all-wild group with nothing declared: the first colour; else the cards' own common
    number (a Five Crowns book of the round's wild rank), else the highest number."""
    if colour:
        return rules.suits[0]
    own = {card.rank for card, _ in placed if card.kind is Kind.NUMBER}
    return own.pop() if len(own) == 1 else rules.high


def _build_run(placed: Sequence[Placed], rules: MeldRules) -> Meld:
    what = f"run {_show(placed)}"
    fixed: dict[int, Card] = {}
    free: list[Card] = []
    suits = set()
    for card, decl in placed:
        wild = rules.is_wild(card)
        if wild and isinstance(decl, str):
            raise MeldError(f"{what}: a wild in a run stands for a number, not a colour")
        if not wild and decl is not None and decl != card.rank:
            raise MeldError(f"{what}: {card.text} is not wild and cannot stand for {decl}")
        value = card.rank if not wild else decl
        if not wild:
            suits.add(card.suit)
        if value is None:
            free.append(card)
        elif value in fixed:
            raise MeldError(f"{what}: {value} appears twice")
        else:
            fixed[int(value)] = card
    if rules.run_same_suit and len(suits) > 1:
        raise MeldError(f"{what}: a run must be of one suit, has {sorted(suits)}")
    if len(placed) > rules.span:
        raise MeldError(f"{what}: longer than {rules.low}..{rules.high}")
    first = placed[0][1] if rules.is_wild(placed[0][0]) else placed[0][0].rank
    values = _run_values(sorted(fixed), len(placed), rules, what, first)
    # Give each free wild a missing value; a wild-rank card prefers its own number (cosmetic).
    missing = [v for v in values if v not in fixed]
    slots: dict[int, Card] = dict(fixed)
    for card in sorted(free, key=lambda c: c.kind is not Kind.NUMBER):
        own = card.rank if card.kind is Kind.NUMBER and card.rank in missing else None
        value = own if own is not None else missing[0]
        missing.remove(value)
        slots[value] = card
    return Meld(GroupKind.RUN, tuple(slots[v] for v in values), tuple(values))


def _run_values(
    fixed: list[int], size: int, rules: MeldRules, what: str, first: Declared = None
) -> list[int]:
    """The values a run of `size` cards covers, given its fixed (sorted, distinct) values."""
    lo_rank, hi_rank = rules.low, rules.high
    if not fixed:
        return list(range(lo_rank, lo_rank + size))
    if rules.wrap:
        return _wrapped_run_values(fixed, size, rules, what, first)
    lo, hi = fixed[0], fixed[-1]
    gaps = [v for v in range(lo, hi + 1) if v not in set(fixed)]
    spare = size - len(fixed) - len(gaps)
    if spare < 0:
        shown = ", ".join(map(str, gaps))
        raise MeldError(f"{what}: gap at {shown} not covered")
    up = min(spare, hi_rank - hi)
    down = spare - up
    return list(range(lo - down, hi + up + 1))


def _wrapped_run_values(
    fixed: list[int], size: int, rules: MeldRules, what: str, first: Declared
) -> list[int]:
    # On a cycle the shortest arc holding every fixed value is the run's core; it starts just
    # after the largest empty stretch between consecutive fixed values. Between equally short
    # arcs the one starting at the first card as written wins (so a run's text round-trips),
    # then one that does not pass from 12 to 1.
    n = rules.span
    pos = [v - rules.low for v in fixed]
    best_start, best_len = 0, n + 1
    for i, p in enumerate(pos):
        prev = pos[i - 1]
        length = (prev - p) % n + 1 if len(pos) > 1 else 1
        if (length, _arc_rank(p, length, n, first, rules)) < (
            best_len,
            _arc_rank(best_start, best_len, n, first, rules),
        ):
            best_start, best_len = p, length
    if best_len > size:
        missing = [
            (best_start + k) % n + rules.low
            for k in range(best_len)
            if (best_start + k) % n + rules.low not in fixed
        ]
        raise MeldError(f"{what}: gap at {', '.join(map(str, missing))} not covered")
    # Extend upwards (the cycle has no end); a full cycle is the longest run.
    return [(best_start + k) % n + rules.low for k in range(size)]


def _arc_rank(start: int, length: int, n: int, first: Declared, rules: MeldRules) -> int:
    if first == start + rules.low:
        return 0
    return 1 if start + length - 1 < n else 2



# ----------------------------------------------------------------------------------------------
# Extending a laid group (hits)


def extend(meld: Meld, card: Card, declared: Declared, rules: MeldRules) -> Meld:
    """The group with `card` added where it fits; `MeldError` with the reason if it fits nowhere."""
    what = f"{card.text} on {format_meld(meld)}"
    if card.kind is Kind.SKIP:
        raise MeldError(f"{what}: a Skip is never part of a group")
    wild = rules.is_wild(card)
    if meld.kind is not GroupKind.RUN:
        want = meld.colour if meld.kind is GroupKind.COLOUR else meld.rank
        have = declared if wild else (card.suit if meld.kind is GroupKind.COLOUR else card.rank)
        if have is not None and have != want:
            raise MeldError(f"{what}: the group is of {want}, the card is {have}")
        return Meld(meld.kind, (*meld.cards, card), (*meld.stands_for, want))
    return _extend_run(meld, card, declared if wild else card.rank, wild, rules, what)


def _extend_run(
    meld: Meld, card: Card, value: Declared, wild: bool, rules: MeldRules, what: str
) -> Meld:
    if len(meld.cards) >= rules.span:
        raise MeldError(f"{what}: the run already covers every number")
    if isinstance(value, str):
        raise MeldError(f"{what}: a wild in a run stands for a number, not a colour")
    if rules.run_same_suit and not wild:
        suit = next((c.suit for c in meld.cards if not rules.is_wild(c)), card.suit)
        if card.suit != suit:
            raise MeldError(f"{what}: the run is of suit {suit}")
    above, below = _neighbours(meld, rules)
    if value is None:
        value = above if above is not None else below
    if value is not None and value == above:
        return Meld(meld.kind, (*meld.cards, card), (*meld.stands_for, value))
    if value is not None and value == below:
        return Meld(meld.kind, (card, *meld.cards), (value, *meld.stands_for))
    ends = " or ".join(str(v) for v in (below, above) if v is not None) or "nothing"
    raise MeldError(f"{what}: only {ends} can extend this run")


def _neighbours(meld: Meld, rules: MeldRules) -> tuple[int | None, int | None]:
    """The values (above the top, below the bottom) that could extend a run, None past an end."""
    lo, hi = meld.low, meld.high
    if rules.wrap:
        n = rules.span
        return ((hi - rules.low + 1) % n + rules.low, (lo - rules.low - 1) % n + rules.low)
    return (hi + 1 if hi < rules.high else None, lo - 1 if lo > rules.low else None)


def _show(placed: Sequence[Placed]) -> str:
    return " ".join(c.text if d is None else f"{c.text}={d}" for c, d in placed)
