"""Cards of both games as small immutable values with a text form that round-trips.

Every distinct card exists once as an interned object: two red 7s of the Phase 10 deck are the
same `Card`, so equality and hashing are by identity (fast) and `Card.parse(str(c)) is c`.

Text forms (also the protocol's card tokens):
- Phase 10: colour letter + number, ``R1``..``R12`` (red), ``B`` (blue), ``Y`` (yellow),
  ``G`` (green); ``W`` is a Wild, ``S`` a Skip.
- Five Crowns: rank + suit letter, ranks ``3``..``10``, ``J`` (11), ``Q`` (12), ``K`` (13);
  suits ``*`` (stars), ``H`` (hearts), ``C`` (clubs), ``S`` (spades), ``D`` (diamonds);
  ``X`` is a Joker.

The two sets of tokens are disjoint, so one parser serves both games.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Final, TypeVar

T = TypeVar("T")


class Kind(StrEnum):
    """What a card is, before any game decides whether it is wild this round."""

    NUMBER = "number"  # Phase 10 numbered card or Five Crowns suited card
    WILD = "wild"  # Phase 10 Wild
    SKIP = "skip"  # Phase 10 Skip
    JOKER = "joker"  # Five Crowns Joker


class CardError(ValueError):
    """The text is not a card of any deck."""


class Card:
    """One card face. Build with `Card.parse`; never construct directly."""

    __slots__ = ("kind", "rank", "suit", "text")

    kind: Kind
    rank: int  # 1..12 (Phase 10) or 3..13 (Five Crowns); 0 for Wild, Skip, Joker
    suit: str  # colour letter R/B/Y/G or suit letter */H/C/S/D; "" for Wild, Skip, Joker
    text: str

    def __init__(self, kind: Kind, rank: int, suit: str, text: str) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "rank", rank)
        object.__setattr__(self, "suit", suit)
        object.__setattr__(self, "text", text)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # Copies and pickles come back as the interned object.
        return (Card.parse, (self.text,))

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card.parse({self.text!r})"

    @property
    def is_natural(self) -> bool:
        """A numbered or suited card (whether it is wild this round is the game's question)."""
        return self.kind is Kind.NUMBER

    @staticmethod
    def parse(text: str) -> Card:
        """The card whose token is `text` (case-insensitive); `CardError` if there is none."""
        card = _BY_TEXT.get(text.strip().upper())
        if card is None:
            raise CardError(f"not a card: {text!r}")
        return card


COLOURS: Final = ("R", "B", "Y", "G")
COLOUR_NAMES: Final = {"R": "red", "B": "blue", "Y": "yellow", "G": "green"}
SUITS: Final = ("*", "H", "C", "S", "D")
SUIT_NAMES: Final = {"*": "stars", "H": "hearts", "C": "clubs", "S": "spades", "D": "diamonds"}
FC_RANK_TEXT: Final = {**{r: str(r) for r in range(3, 11)}, 11: "J", 12: "Q", 13: "K"}

_BY_TEXT: dict[str, Card] = {}


def _intern(kind: Kind, rank: int, suit: str, text: str) -> Card:
    card = Card(kind, rank, suit, text)
    _BY_TEXT[text] = card
    return card


WILD: Final = _intern(Kind.WILD, 0, "", "W")
SKIP: Final = _intern(Kind.SKIP, 0, "", "S")
JOKER: Final = _intern(Kind.JOKER, 0, "", "X")
PHASE10_NUMBERS: Final = tuple(
    _intern(Kind.NUMBER, n, c, f"{c}{n}") for c in COLOURS for n in range(1, 13)
)
FIVECROWNS_SUITED: Final = tuple(
    _intern(Kind.NUMBER, r, s, f"{FC_RANK_TEXT[r]}{s}") for s in SUITS for r in range(3, 14)
)


def phase10_deck() -> list[Card]:
    """The 108-card Phase 10 deck: 1..12 in four colours twice, 8 Wilds, 4 Skips."""
    return [*PHASE10_NUMBERS, *PHASE10_NUMBERS, *([WILD] * 8), *([SKIP] * 4)]


def fivecrowns_deck(decks: int = 2) -> list[Card]:
    """`decks` 58-card Five Crowns decks together: 5 suits x 3..K and 3 Jokers each."""
    return [card for _ in range(decks) for card in (*FIVECROWNS_SUITED, JOKER, JOKER, JOKER)]


def shuffled(cards: Iterable[Card], rng: random.Random) -> list[Card]:
    """A new list of `cards` in an order drawn from `rng` (never the global generator): the
    order `rng.shuffle` gives, so a seed deals what it always dealt."""
    deck = list(cards)
    if SAME_AS_RANDOM:
        _shuffle(deck, rng)
    else:
        rng.shuffle(deck)
    return deck


def _shuffle(deck: list[T], rng: random.Random) -> None:
    # `random.shuffle`'s own steps (Fisher-Yates from the end, each index drawn by
    # `_randbelow_with_getrandbits`), written out so that the compiled build runs them as C
    # (random.shuffle is Python: a Solitaire deal spent more in it than in its 11 piles).
    getrandbits = rng.getrandbits
    for i in range(len(deck) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]


def _same_as_random() -> bool:
    """Whether `_shuffle` gives `random.shuffle`'s permutations here, on decks of every length
    a game shuffles and more (checked once, on import): if not, as a Python version that drew
    otherwise would, `shuffled` calls random.shuffle, so seeds keep their deals."""
    for length in (0, 1, 2, 3, 17, 58, 100, 108, 116, 232):
        for seed in ("meldref", "1:deal:1", "7:position"):
            mine, theirs = list(range(length)), list(range(length))
            _shuffle(mine, random.Random(seed))
            random.Random(seed).shuffle(theirs)
            if mine != theirs:
                return False
    return True


def parse_cards(text: str | Sequence[str]) -> list[Card]:
    """Cards from whitespace- or comma-separated tokens, or from a list of tokens."""
    tokens = text.replace(",", " ").split() if isinstance(text, str) else text
    return [Card.parse(t) for t in tokens]


def format_cards(cards: Iterable[Card]) -> str:
    """The space-separated tokens of `cards`, in the order given."""
    return " ".join(c.text for c in cards)


def sort_key(card: Card) -> tuple[int, int, str]:
    """Orders a hand for people: naturals by rank then suit, then wilds and jokers, then skips."""
    order = {Kind.NUMBER: 0, Kind.WILD: 1, Kind.JOKER: 1, Kind.SKIP: 2}[card.kind]
    return (order, card.rank, card.suit)


# Every card's `sort_key`, computed once: views sort a hand for every decision.
_SORT_KEYS: Final = {card: sort_key(card) for card in _BY_TEXT.values()}
# Every card's place in `sort_key` order (no two cards share a key: equal cards are one object).
_ORDER: Final = {card: n for n, card in enumerate(sorted(_SORT_KEYS, key=_SORT_KEYS.__getitem__))}


def sorted_cards(cards: Iterable[Card]) -> list[Card]:
    """`cards` in `sort_key` order (by their places in it: integers compare faster than the
    keys' tuples, and a Solitaire deal sorts 11 piles)."""
    return sorted(cards, key=_ORDER.__getitem__)


def sorted_swap(cards: tuple[Card, ...], out: Card, into: Card) -> tuple[Card, ...]:
    """`cards`, in `sort_key` order, with one copy of `out` taken out and `into` put in its
    place in that order: `tuple(sorted_cards(...))` of a hand or pile after a swap, without
    sorting it again (a Solitaire move swaps one card of a pile)."""
    if out is into:
        return cards
    rest = list(cards)
    rest.remove(out)
    order = _ORDER[into]
    at = 0
    while at < len(rest) and _ORDER[rest[at]] < order:
        at += 1
    rest.insert(at, into)
    return tuple(rest)


def holds(cards: Sequence[Card], card: Card) -> bool:
    """`card in cards`, by identity (cards are interned): compiled, a loop of pointer
    comparisons, where `in` asks each other card whether it equals this one."""
    if isinstance(cards, tuple):  # read by index: compiled, no iterator (Solitaire's piles)
        return any(cards[i] is card for i in range(len(cards)))
    return any(c is card for c in cards)


def rng_for(seed: int | str, *parts: object) -> random.Random:
    """A generator fixed by the game seed and a label (hand number, reshuffle count...).

    Seeding from a string is stable across Python versions and runs, so a game needs no generator
    state in its snapshot: each shuffle is a pure function of the seed and where it happens.
    """
    return random.Random(":".join(str(p) for p in (seed, *parts)))


SAME_AS_RANDOM: Final = _same_as_random()
