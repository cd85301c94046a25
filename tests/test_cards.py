"""Cards: every card of every deck round-trips through its text form; decks are right."""

from __future__ import annotations

import copy
import pickle
import random
from collections import Counter

import pytest

from meldref.engine import cards
from meldref.engine.cards import (
    JOKER,
    SKIP,
    WILD,
    Card,
    CardError,
    Kind,
    fivecrowns_deck,
    format_cards,
    holds,
    parse_cards,
    phase10_deck,
    rng_for,
    shuffled,
    sort_key,
    sorted_cards,
    sorted_swap,
)


@pytest.mark.parametrize("deck", [phase10_deck(), fivecrowns_deck(), fivecrowns_deck(4)])
def test_every_card_round_trips(deck: list[Card]) -> None:
    for card in deck:
        assert Card.parse(str(card)) is card
        assert eval(repr(card)) is card  # repr is code you can paste
        assert pickle.loads(pickle.dumps(card)) is card
        assert copy.deepcopy(card) is card


def test_phase10_deck_make_up() -> None:
    deck = phase10_deck()
    assert len(deck) == 108
    kinds = Counter(c.kind for c in deck)
    assert kinds == {Kind.NUMBER: 96, Kind.WILD: 8, Kind.SKIP: 4}
    numbers = Counter((c.suit, c.rank) for c in deck if c.kind is Kind.NUMBER)
    assert set(numbers.values()) == {2}
    assert {r for _, r in numbers} == set(range(1, 13))
    assert {s for s, _ in numbers} == {"R", "B", "Y", "G"}


def test_fivecrowns_deck_make_up() -> None:
    deck = fivecrowns_deck()
    assert len(deck) == 116
    assert deck.count(JOKER) == 6
    suited = Counter(c for c in deck if c.kind is Kind.NUMBER)
    assert len(suited) == 55 and set(suited.values()) == {2}
    assert len(fivecrowns_deck(4)) == 232


def test_token_sets_are_disjoint() -> None:
    p10 = {str(c) for c in phase10_deck()}
    fc = {str(c) for c in fivecrowns_deck()}
    assert not p10 & fc
    assert Card.parse("S") is SKIP and Card.parse("5S").suit == "S"


@pytest.mark.parametrize("text", ["", "R13", "R0", "Z5", "2H", "1H", "AH", "WW", "10", "R 7"])
def test_bad_tokens_are_rejected(text: str) -> None:
    with pytest.raises(CardError, match="not a card"):
        Card.parse(text)


def test_parse_is_case_insensitive_and_output_canonical() -> None:
    assert str(Card.parse("r7")) == "R7"
    assert str(Card.parse("qh")) == "QH"
    assert Card.parse(" w ") is WILD


def test_cards_are_immutable() -> None:
    with pytest.raises(AttributeError):
        WILD.rank = 5  # type: ignore[misc]


def test_parse_and_format_lists() -> None:
    cards = parse_cards("R1, B12 W S 10* X")
    assert format_cards(cards) == "R1 B12 W S 10* X"
    assert parse_cards(["KD", "3C"]) == [Card.parse("KD"), Card.parse("3C")]


def test_sort_key_puts_naturals_first_then_wilds_then_skips() -> None:
    hand = parse_cards("S W R12 B3 R3")
    assert format_cards(sorted(hand, key=sort_key)) == "B3 R3 R12 W S"


def test_seeded_shuffles_are_reproducible_and_independent_of_global_random() -> None:
    import random

    a = shuffled(phase10_deck(), rng_for(7, "deal", 1))
    random.seed(123)
    random.random()
    b = shuffled(phase10_deck(), rng_for(7, "deal", 1))
    c = shuffled(phase10_deck(), rng_for(7, "deal", 2))
    assert a == b
    assert a != c
    assert sorted(map(str, a)) == sorted(map(str, phase10_deck()))


def test_the_compiled_shuffle_deals_what_random_shuffle_deals() -> None:
    # `shuffled` draws its own permutation (compiled, it is C; random.shuffle is Python): it
    # must be random.shuffle's, or every seed would deal another game (tests/test_fixed_seeds).
    assert cards.SAME_AS_RANDOM
    for deck in (phase10_deck(), fivecrowns_deck(), fivecrowns_deck(2)):
        for seed in range(40):
            theirs = list(deck)
            random.Random(f"{seed}:deal:1").shuffle(theirs)
            assert shuffled(deck, rng_for(seed, "deal", 1)) == theirs


def test_a_swap_keeps_a_sorted_pile_sorted() -> None:
    rng = random.Random(3)
    deck = fivecrowns_deck(2)
    for _ in range(500):
        pile = rng.sample(deck, rng.randrange(1, 14))
        ordered = tuple(sorted_cards(pile))
        out, into = rng.choice(pile), rng.choice(deck)
        rest = list(pile)
        rest.remove(out)
        assert sorted_swap(ordered, out, into) == tuple(sorted_cards([*rest, into]))


def test_holds_is_membership() -> None:
    hand = parse_cards("3S 3S QH X")
    for card in fivecrowns_deck():
        assert holds(hand, card) == (card in hand)
    assert not holds((), JOKER)
