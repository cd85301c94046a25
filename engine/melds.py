"""The meld core shared by every game: sets (books), runs and colour groups with wilds.

A group is built from cards, each optionally with a declaration of what it stands for
(``W=5`` in a run, ``W=R`` in a colour group, ``X=Q`` in a Five Crowns book). Building a group
checks it and fixes the value of every wild, so a laid group never changes its meaning: a hit
only adds cards at the places the group's fixed values allow.

Undeclared wilds are placed by one documented rule (see `build_meld`), so a bot may leave the
declarations out when it does not care, and the resolved group (with every wild's value) is what
the table shows.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .cards import COLOURS, FC_RANK_TEXT, SUITS, Card, CardError, Kind


class MeldError(ValueError):
    """A group of cards that is not a valid set, run or colour group; the message says why."""


class GroupKind(StrEnum):
    """The shapes a group can take. A Five Crowns book is a set under its own name."""

    SET = "set"
    BOOK = "book"
    RUN = "run"
    COLOUR = "colour"


SAME_RANK: Final = frozenset({GroupKind.SET, GroupKind.BOOK})


@dataclass(frozen=True, slots=True)
class MeldRules:
    """What a game's groups are made of: the rank range, run shape and which cards are wild."""

    low: int
    high: int
    suits: tuple[str, ...]
    wrap: bool = False  # Phase 10 option: 12 is followed by 1 in a run
    run_same_suit: bool = False  # Five Crowns runs are of one suit; Phase 10 runs any colours
    wild_rank: int = 0  # Five Crowns: the round's rotating wild rank (0: none)

    def is_wild(self, card: Card) -> bool:
        """Whether `card` is wild under these rules (Wild, Joker, or the round's wild rank)."""
        kind = card.kind
        return kind is Kind.WILD or kind is Kind.JOKER or (
            kind is Kind.NUMBER and card.rank == self.wild_rank
        )

    @property
    def span(self) -> int:
        return self.high - self.low + 1

    def rank_text(self, rank: int) -> str:
        return FC_RANK_TEXT[rank] if self.suits == SUITS else str(rank)


PHASE10_MELDS: Final = MeldRules(low=1, high=12, suits=COLOURS)


@functools.cache
def fivecrowns_melds(wild_rank: int) -> MeldRules:
    """Five Crowns groups for the round whose wild rank is `wild_rank` (3..13; 0 for none)."""
    return MeldRules(low=3, high=13, suits=SUITS, run_same_suit=True, wild_rank=wild_rank)


Declared = int | str | None
Placed = tuple[Card, Declared]


@dataclass(frozen=True, slots=True)
class Meld:
    """A checked group: its cards in order and what each stands for (rank, or colour)."""

    kind: GroupKind
    cards: tuple[Card, ...]
    stands_for: tuple[int | str, ...]

    def __str__(self) -> str:
        return format_meld(self)

    def __len__(self) -> int:
        return len(self.cards)

    @property
    def rank(self) -> int:
        """The number of a set or book (0 for runs and colour groups)."""
        return int(self.stands_for[0]) if self.kind in SAME_RANK else 0

    @property
    def colour(self) -> str:
        """The colour of a colour group ("" otherwise)."""
        return str(self.stands_for[0]) if self.kind is GroupKind.COLOUR else ""

    @property
    def low(self) -> int:
        """The first value of a run (in cyclic order when runs wrap)."""
        return int(self.stands_for[0])

    @property
    def high(self) -> int:
        """The last value of a run."""
        return int(self.stands_for[-1])

    def naturals(self, rules: MeldRules) -> int:
        """How many cards of the group are not wild under `rules`."""
        return sum(1 for c in self.cards if not rules.is_wild(c))


# ----------------------------------------------------------------------------------------------
# Text form: kind:card,card=decl,...   e.g. run:R3,R4,W=5,G6   book:QH,QS,X   colour:G1,G5,W=G


def parse_placed(token: str, rules: MeldRules) -> Placed:
    """One card of a group token, with its optional ``=declaration``."""
    text, _, decl = token.partition("=")
    card = Card.parse(text)
    if not decl:
        return (card, None)
    decl = decl.strip().upper()
    if decl in rules.suits:
        return (card, decl)
    ranks = {rules.rank_text(r): r for r in range(rules.low, rules.high + 1)}
    if decl not in ranks:
        raise CardError(f"{token!r}: {decl!r} is neither a number {rules.low}..{rules.high} "
                        f"nor a colour/suit of this game")
    return (card, ranks[decl])


def parse_group(text: str, rules: MeldRules) -> tuple[GroupKind, list[Placed]]:
    """Split a group token into its kind and placed cards (not yet checked)."""
    word, sep, body = text.partition(":")
    if not sep or not body:
        raise MeldError(f"group {text!r} should look like kind:card,card,... (e.g. set:R7,B7,W)")
    try:
        kind = GroupKind(word.strip().lower())
    except ValueError:
        kinds = ", ".join(k.value for k in GroupKind)
        raise MeldError(f"group {text!r}: unknown kind {word!r} (one of {kinds})") from None
    return kind, [parse_placed(t, rules) for t in body.split(",") if t.strip()]


def parse_meld(text: str, rules: MeldRules, min_size: int = 1) -> Meld:
    """Parse and check a group token in one step."""
    kind, placed = parse_group(text, rules)
    return build_meld(kind, placed, rules, min_size)


def format_meld(meld: Meld, rules: MeldRules | None = None) -> str:
    """The canonical token: runs low to high, every non-natural reading declared."""
    parts = []
    for card, value in zip(meld.cards, meld.stands_for, strict=True):
        natural = card.kind is Kind.NUMBER and (
            card.suit == value if meld.kind is GroupKind.COLOUR else card.rank == value
        )
        if natural:
            parts.append(card.text)
        elif isinstance(value, str):
            parts.append(f"{card.text}={value}")
        else:
            fc = card.kind is Kind.JOKER or (card.kind is Kind.NUMBER and card.suit in SUITS)
            parts.append(f"{card.text}={FC_RANK_TEXT[value] if fc else value}")
    return f"{meld.kind.value}:{','.join(parts)}"


def _show(placed: Sequence[Placed]) -> str:
    return " ".join(c.text if d is None else f"{c.text}={d}" for c, d in placed)


# ----------------------------------------------------------------------------------------------
# Building and checking a group


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


def fits(meld: Meld, card: Card, rules: MeldRules) -> list[Declared]:
    """The declarations under which `card` can extend `meld` ([] if none; [None] for naturals)."""
    if card.kind is Kind.SKIP:
        return []
    if not rules.is_wild(card):
        try:
            extend(meld, card, None, rules)
        except MeldError:
            return []
        return [None]
    if meld.kind is not GroupKind.RUN:
        return [None]
    if len(meld.cards) >= rules.span:
        return []
    above, below = _neighbours(meld, rules)
    return [v for v in dict.fromkeys((above, below)) if v is not None]


# ----------------------------------------------------------------------------------------------
# Finding a way to lay a list of group requirements from a hand


@dataclass(frozen=True, slots=True)
class Need:
    """One group a phase requires: its kind and minimum size (e.g. a run of 4)."""

    kind: GroupKind
    size: int

    def __str__(self) -> str:
        return f"{self.kind.value} of {self.size}"


def find_groups(
    hand: Iterable[Card], needs: Sequence[Need], rules: MeldRules, natural: str = "none"
) -> list[Meld] | None:
    """A way to lay every need from `hand` with disjoint cards, using the fewest wilds; or None.

    `natural` is "none", "phase" (at least one natural card in all) or "group" (one in each).
    Exact for requirement lists in which at most one need is a run or colour group (every Phase
    10 phase): sets are tried with every possible split between natural cards and wilds, and the
    run or colour group, searched last, takes natural cards wherever it can.
    """
    cards = list(hand)
    wilds = [c for c in cards if rules.is_wild(c)]
    naturals = [c for c in cards if c.kind is Kind.NUMBER and not rules.is_wild(c)]
    order = sorted(needs, key=lambda n: (n.kind not in SAME_RANK, -n.size))
    best = _search(order, naturals, len(wilds), rules, natural)
    if best is None:
        return None
    return _attach_wilds(best, wilds, rules)


Candidate = tuple[GroupKind, tuple[Card, ...], int, int | str]  # kind, naturals, wilds, key


def _search(
    needs: Sequence[Need], naturals: list[Card], wilds: int, rules: MeldRules, natural: str
) -> list[Candidate] | None:
    if not needs:
        return []
    need, rest = needs[0], needs[1:]
    best: list[Candidate] | None = None
    best_wilds = wilds + 1
    for cand in _candidates(need, naturals, wilds, rules, exhaustive=bool(rest)):
        if natural == "group" and not cand[1]:
            continue
        remaining = list(naturals)
        for c in cand[1]:
            remaining.remove(c)
        tail = _search(rest, remaining, wilds - cand[2], rules, natural)
        if tail is None:
            continue
        found = [cand, *tail]
        used = sum(c[2] for c in found)
        if natural == "phase" and not any(c[1] for c in found):
            continue
        if used < best_wilds:
            best, best_wilds = found, used
            if used == 0:
                break
    return best


def _candidates(
    need: Need, naturals: list[Card], wilds: int, rules: MeldRules, exhaustive: bool
) -> list[Candidate]:
    by_key: dict[int | str, list[Card]] = {}
    if need.kind is GroupKind.COLOUR:
        for c in naturals:
            by_key.setdefault(c.suit, []).append(c)
    elif need.kind in SAME_RANK:
        for c in naturals:
            by_key.setdefault(c.rank, []).append(c)
    else:
        return _run_candidates(need, naturals, wilds, rules)
    out: list[Candidate] = []
    for key, group in by_key.items():
        top = min(len(group), need.size)
        floor = max(1, need.size - wilds)
        counts = range(top, floor - 1, -1) if exhaustive else range(top, top - 1, -1)
        out.extend((need.kind, tuple(group[:k]), need.size - k, key) for k in counts if k >= floor)
    if wilds >= need.size:
        key = rules.suits[0] if need.kind is GroupKind.COLOUR else rules.high
        out.append((need.kind, (), need.size, key))
    out.sort(key=lambda c: c[2])
    return out


def _run_candidates(
    need: Need, naturals: list[Card], wilds: int, rules: MeldRules
) -> list[Candidate]:
    size = need.size
    if size > rules.span:
        return []
    suits: Sequence[str] = rules.suits if rules.run_same_suit else ("",)
    last_start = rules.high if rules.wrap else rules.high - size + 1
    out: list[Candidate] = []
    for suit in suits:
        by_rank: dict[int, Card] = {}
        for c in naturals:
            if not suit or c.suit == suit:
                by_rank.setdefault(c.rank, c)
        for start in range(rules.low, last_start + 1):
            values = [(start - rules.low + k) % rules.span + rules.low for k in range(size)]
            picked = tuple(by_rank[v] for v in values if v in by_rank)
            missing = size - len(picked)
            if missing <= wilds:
                out.append((GroupKind.RUN, picked, missing, start))
    out.sort(key=lambda c: c[2])
    return out


def _attach_wilds(found: list[Candidate], wilds: list[Card], rules: MeldRules) -> list[Meld]:
    melds = []
    pool = list(wilds)
    for kind, picked, n_wild, key in found:
        use, pool = pool[:n_wild], pool[n_wild:]
        placed: list[Placed] = [(c, None) for c in picked]
        if kind is GroupKind.RUN:
            taken = {c.rank for c in picked}
            size = len(picked) + n_wild
            values = [(int(key) - rules.low + k) % rules.span + rules.low for k in range(size)]
            gaps = [v for v in values if v not in taken]
            placed += list(zip(use, gaps, strict=True))
        else:
            placed += [(w, key) for w in use]
        melds.append(build_meld(kind, placed, rules))
    return melds
