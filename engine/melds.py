"""What a meld is, shared by every game: sets (books), runs and colour groups with wilds, and
their text form.

A `Meld` is a checked group: its cards in order and what each stands for (a number, or a colour),
so a laid group never changes its meaning. Its token (`format_meld`) declares every wild's
reading (``W=5`` in a run, ``W=R`` in a colour group, ``X=Q`` in a Five Crowns book), and reads
back as the same meld. Checking a group and a hit on it is `meld_check`; finding groups in a hand
is `meld_search`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .cards import FC_RANK_TEXT, SUITS, Card, CardError, Kind
from .game import Rebuilt, by_init


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
    """What a game's groups are made of: the rank range, run shape and which cards are wild.

    Each game states its own in its `rules` (Phase 10's `PHASE10_MELDS`, Five Crowns'
    `fivecrowns_melds` of a round)."""

    low: int
    high: int
    suits: tuple[str, ...]
    wrap: bool = False  # Phase 10 option: 12 is followed by 1 in a run
    run_same_suit: bool = False  # Five Crowns runs are of one suit; Phase 10 runs any colours
    wild_rank: int = 0  # Five Crowns: the round's rotating wild rank (0: none)

    def __init__(self, low: int, high: int, suits: tuple[str, ...], wrap: bool = False,
                 run_same_suit: bool = False, wild_rank: int = 0) -> None:
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "suits", suits)
        object.__setattr__(self, "wrap", wrap)
        object.__setattr__(self, "run_same_suit", run_same_suit)
        object.__setattr__(self, "wild_rank", wild_rank)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

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


Declared = int | str | None
Placed = tuple[Card, Declared]


@dataclass(frozen=True, slots=True)
class Meld:
    """A checked group: its cards in order and what each stands for (rank, or colour)."""

    kind: GroupKind
    cards: tuple[Card, ...]
    stands_for: tuple[int | str, ...]

    def __init__(self, kind: GroupKind, cards: tuple[Card, ...],
                 stands_for: tuple[int | str, ...]) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "stands_for", stands_for)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

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


def format_meld(meld: Meld) -> str:
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
