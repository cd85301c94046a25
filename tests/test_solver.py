"""The Five Crowns solver: known answers, hard hands, and agreement with a brute-force search."""

from __future__ import annotations

import functools
import itertools
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meldref.engine.cards import JOKER, Card, fivecrowns_deck, parse_cards
from meldref.engine.fivecrowns import solver as solver_module
from meldref.engine.fivecrowns.rules import fivecrowns_melds
from meldref.engine.fivecrowns.solver import (
    Solver,
    _absorb,
    _Group,
    card_points,
    groups_all,
    hand_points,
    wild_floor,
)
from meldref.engine.meld_check import build_meld
from meldref.engine.melds import GroupKind, MeldError


def cards(text: str) -> list[Card]:
    return parse_cards(text)


def check_split(hand: list[Card], wild: int, natural: str = "none") -> int:
    """Solve `hand`; check the split holds the hand exactly in valid groups; its points."""
    solver = Solver(hand, wild, natural)  # type: ignore[arg-type]
    split = solver.split()
    rules = fivecrowns_melds(wild)
    used = [c for m in split.groups for c in m.cards]
    assert Counter(used) + Counter(split.leftover) == Counter(hand)
    for meld in split.groups:
        assert meld.kind in (GroupKind.BOOK, GroupKind.RUN) and len(meld) >= 3
        again = build_meld(meld.kind, list(zip(meld.cards, meld.stands_for, strict=True)), rules)
        assert again == meld
        if natural == "group":
            assert meld.naturals(rules) >= 1
    assert split.points == hand_points(split.leftover, wild) == solver.points()
    return split.points


# ----------------------------------------------------------------------------------------------
# Known answers


def test_card_points() -> None:
    wild = 7
    assert [card_points(c, wild) for c in cards("3H 10S JC QD K* 7H X")] == [
        3, 10, 11, 12, 13, 20, 50]


@pytest.mark.parametrize(("hand", "wild", "points"), [
    ("3H 4H 5H 7S 7C 7D", 13, 0),  # a run and a book
    ("10H JH QH KH", 3, 0),  # a run across 10-J-Q-K
    ("QH KH 3H", 4, 28),  # no wrap-around: K is the top
    ("KS KD KH KH", 3, 0),  # a book may repeat a suit (two decks)
    ("5H 5H 5H", 3, 0),  # even three of the same card
    ("3H 4S 5D", 13, 12),  # a run is of one suit
    ("X X X", 5, 0),  # all wild
    ("X X", 5, 100),  # too few for any group: wilds count 50 each
    ("5H 5S 9D", 9, 0),  # 9s wild: the 9 completes the book of 5s
    ("5H 5S 9D", 4, 19),
    ("4H 6H X 8S 8C 9D", 13, 4 + 6 + 9),  # the Joker in 8S 8C X beats 4H X 6H (25 left)
])
def test_known_splits(hand: str, wild: int, points: int) -> None:
    assert check_split(cards(hand), wild) == points


def test_all_wild_groups_follow_the_natural_option() -> None:
    assert check_split(cards("X X X"), 5, "group") == 150
    assert check_split(cards("X 5H 5S"), 5, "group") == 90  # 5s wild: all three are wild
    assert check_split(cards("X 5H 6S"), 5, "group") == 0  # 6S with two wilds
    assert check_split(cards("X X X 9D"), 5, "group") == 0
    assert check_split(cards("X X X X 4S 9D"), 13, "none") == 0


def test_wild_rank_card_stands_anywhere() -> None:
    # Round 5 (7s wild): 7H may be the 5 of a spade run.
    split = Solver(cards("4S 7H 6S"), 7).split()
    assert split.goes_out
    assert str(split.groups[0]) == "run:4S,7H=5,6S"


def test_one_joker_goes_where_it_saves_most() -> None:
    # The K book and the 3-4 run compete for one Joker: the Kings are dearer.
    assert check_split(cards("KH KS X 3D 4D 9C"), 12) == 3 + 4 + 9
    assert check_split(cards("KH KS X 3D 4D 9C"), 13) == 0  # Kings wild: three wilds


@pytest.mark.parametrize(("hand", "wild"), [
    # 13 and 14 cards with several wilds and Jokers: the hard cases of rounds 10-11.
    ("3H 4H 5H 6H 7H 8H 9H 10H JH QH X X X", 12),
    ("3H 3S 3C 3D 3* 5H 5S 5C 5D 5* X X QH", 12),
    ("5S 8H 5* 5H 6* 6C 5D 7* 7C 10C 6D 5C 7H 6S", 10),
    ("3S 6C 6* 7H 6H 5H 5S 3H 5* 3C 3* 5* 5C 6S", 7),
    ("KH KH KS QS QH JH X X X X X X 4D", 13),
    ("3H 4H QH KH X X X X X X X X", 8),
])
@pytest.mark.parametrize("natural", ["none", "group"])
def test_hard_hands_split_consistently(hand: str, wild: int, natural: str) -> None:
    check_split(cards(hand), wild, natural)


def test_hard_hands_go_out() -> None:
    # 14 cards, 10s wild: 3H 4H 10D=5 6H, 9S 9S 9S, QC QD X, JH QH KH; 5C goes.
    hand = cards("3H 4H 6H 9S 9S 9S 10D X QC QD JH QH KH 5C")
    found = Solver(hand, 10).go_out()
    assert found is not None
    discard, split = found
    assert discard is Card.parse("5C") and split.goes_out
    assert len([c for m in split.groups for c in m.cards]) == len(hand) - 1
    assert Solver(hand, 10).go_out(discard) is not None


def test_go_out_with_a_given_discard() -> None:
    hand = cards("5H 6H 7H KS")
    assert Solver(hand, 3).go_out(Card.parse("KS")) is not None
    assert Solver(hand, 3).go_out(Card.parse("5H")) is None
    found = Solver(hand, 3).go_out()
    assert found is not None and found[0] is Card.parse("KS")


def test_best_discard_keeps_the_groups() -> None:
    solver = Solver(cards("5H 6H 7H KS 3D"), 9)
    card, points = solver.best_discard()
    assert card is Card.parse("KS") and points == 3


def test_without_a_card_not_held() -> None:
    with pytest.raises(ValueError, match="not in the hand"):
        Solver(cards("5H 6H"), 3).points(Card.parse("7H"))


def test_spare_wilds_reshape_a_full_run() -> None:
    # Never reached through the search's own choices, but the safety net must hold: a full
    # run 3..K and one more wild, every group needing a natural.
    rules = fivecrowns_melds(0)
    for naturals in ("3H 4H QH KH", "3H 4H 5H", "JH QH KH", "7H"):
        nat = cards(naturals)
        wilds = [JOKER] * (11 - len(nat))
        groups = [_Group(GroupKind.RUN, nat, wilds)]
        _absorb(groups, [JOKER], "group")
        melds = [g.build(rules) for g in groups]
        assert sum(len(m) for m in melds) == 12
        assert all(m.naturals(rules) >= 1 for m in melds)
    groups = [_Group(GroupKind.RUN, cards("3H KH"), [JOKER] * 9)]
    _absorb(groups, [JOKER, JOKER], "none")
    assert sum(len(g.build(rules)) for g in groups) == 13


# ----------------------------------------------------------------------------------------------
# Agreement with brute force


def _valid(group: tuple[Card, ...], wild: int, natural: str) -> bool:
    rules = fivecrowns_melds(wild)
    for kind in (GroupKind.BOOK, GroupKind.RUN):
        try:
            meld = build_meld(kind, [(c, None) for c in group], rules, 3)
        except MeldError:
            continue
        if natural == "none" or meld.naturals(rules):
            return True
    return False


def brute_force(hand: list[Card], wild: int, natural: str) -> int:
    """The fewest points over every way to cut the hand into groups and leftovers."""

    @functools.cache
    def best(rest: tuple[Card, ...]) -> int:
        if not rest:
            return 0
        first, others = rest[0], rest[1:]
        out = card_points(first, wild) + best(others)
        for k in range(2, len(others) + 1):
            for pick in itertools.combinations(range(len(others)), k):
                group = (first, *(others[i] for i in pick))
                if _valid(group, wild, natural):
                    out = min(out, best(tuple(c for i, c in enumerate(others) if i not in pick)))
        return out

    return best(tuple(sorted(hand, key=lambda c: c.text)))


# A narrow universe so that small hands often hold groups: ranks 3..8 (and K), three suits.
UNIVERSE = sorted(
    {c for c in fivecrowns_deck() if c.kind.value == "joker"
     or (c.rank in (3, 4, 5, 6, 7, 8, 13) and c.suit in "HS*")},
    key=lambda c: c.text,
)
hands = st.lists(st.sampled_from(UNIVERSE), min_size=1, max_size=8).filter(
    lambda h: all(n <= (6 if c is JOKER else 2) for c, n in Counter(h).items()))


@settings(max_examples=300, deadline=None)
@given(hands, st.sampled_from([3, 4, 5, 6, 8, 13]), st.sampled_from(["none", "group"]))
def test_solver_agrees_with_brute_force(hand: list[Card], wild: int, natural: str) -> None:
    assert check_split(hand, wild, natural) == brute_force(hand, wild, natural)


@settings(max_examples=100, deadline=None)
@given(hands.filter(lambda h: len(h) >= 2), st.sampled_from([3, 5, 13]),
       st.sampled_from(["none", "group"]))
def test_go_out_agrees_with_brute_force(hand: list[Card], wild: int, natural: str) -> None:
    found = Solver(hand, wild, natural).go_out()  # type: ignore[arg-type]
    can = any(brute_force([c for j, c in enumerate(hand) if j != i], wild, natural) == 0
              for i in range(len(hand)))
    assert (found is not None) == can


def test_random_full_hands_split_consistently() -> None:
    rng = random.Random(11)
    deck = fivecrowns_deck()
    for _ in range(200):
        hand = rng.sample(deck, rng.randint(10, 14))
        check_split(hand, rng.randint(3, 13), rng.choice(["none", "group"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(fivecrowns_deck()), min_size=2, max_size=14),
       st.integers(3, 13), st.sampled_from(["none", "group"]))
def test_discard_answers_match_solving_each_smaller_hand(
    hand: list[Card], wild: int, natural: str
) -> None:
    solver = Solver(hand, wild, natural)  # type: ignore[arg-type]
    alone = {}
    for card in dict.fromkeys(hand):
        rest = list(hand)
        rest.remove(card)
        alone[card] = Solver(rest, wild, natural).points()  # type: ignore[arg-type]
        assert solver.points(card) == alone[card] >= solver.bound(card)
        assert solver.split(card).points == alone[card]
        assert solver.goes_out_without(card) == (alone[card] == 0)
    card, points = solver.best_discard()
    assert points == min(alone.values()) == alone[card]
    assert card_points(card, wild) == max(card_points(c, wild) for c in alone
                                          if alone[c] == points)
    found = solver.go_out()
    assert (found is not None) == (points == 0)


def _less(hand: list[Card], card: Card) -> list[Card]:
    rest = list(hand)
    rest.remove(card)
    return rest


@settings(max_examples=300, deadline=None)
@given(hands.filter(lambda h: len(h) >= 2), st.sampled_from([3, 4, 5, 8, 13]),
       st.sampled_from(["none", "group"]))
def test_all_discards_pass_agrees_with_brute_force(hand: list[Card], wild: int,
                                                   natural: str) -> None:
    # The going-out answer of every discard at once, with the tables other hands left behind.
    solver = Solver(hand, wild, natural)  # type: ignore[arg-type]
    expected = [c for c in dict.fromkeys(hand)
                if brute_force(_less(hand, c), wild, natural) == 0]
    assert solver.outs() == expected
    assert [c for c in dict.fromkeys(hand) if solver.goes_out_without(c)] == expected
    for loner in solver.loners:  # in no group: always left over
        assert brute_force(hand, wild, natural) == (
            brute_force(_less(hand, loner), wild, natural) + card_points(loner, wild))


def test_all_discards_pass_on_full_hands() -> None:
    rng = random.Random(13)
    deck = [c for c in fivecrowns_deck() if c is not JOKER]
    going = 0
    for _ in range(300):
        jokers = rng.randint(0, 4)  # many wilds: many hands that go out
        hand = rng.sample(deck, rng.randint(4, 14) - jokers) + [JOKER] * jokers
        rng.shuffle(hand)
        wild, natural = rng.randint(3, 13), rng.choice(["none", "group"])
        solver = Solver(hand, wild, natural)  # type: ignore[arg-type]
        expected = [c for c in dict.fromkeys(hand)
                    if Solver(_less(hand, c), wild, natural).points() == 0]  # type: ignore[arg-type]
        assert solver.outs() == expected
        going += bool(expected)
    assert going > 30


@settings(max_examples=150, deadline=None)
@given(hands, st.sampled_from([3, 5, 13]), st.sampled_from(["none", "group"]))
def test_groups_all_and_the_wild_floor_agree_with_brute_force(hand: list[Card], wild: int,
                                                                natural: str) -> None:
    # A Solitaire pile closes exactly when brute force leaves nothing; the floor never says
    # more wilds are needed than a real grouping uses.
    solver = Solver(hand, wild, natural)  # type: ignore[arg-type]
    closes = brute_force(hand, wild, natural) == 0
    assert solver.groups_all() == closes
    assert groups_all(hand, wild, natural) == closes  # type: ignore[arg-type]
    naturals = [c for c in hand if c is not JOKER and c.rank != wild]
    if naturals:
        fewest = next((w for w in range(4)
                       if brute_force([*naturals, *[JOKER] * w], wild, "none") == 0), None)
        assert fewest is None or wild_floor(naturals) <= fewest


def test_groups_built_once_are_the_groups_build_meld_makes() -> None:
    # The splits of one hand share their groups through a bounded memo: a group read from it
    # is the one building it again makes, and the memo stays within its bound.
    rng = random.Random(5)
    deck = fivecrowns_deck()
    for _ in range(300):
        hand = rng.sample(deck, rng.randint(6, 14))
        wild = rng.randint(3, 13)
        solver = Solver(hand, wild)
        for card in solver.discards():
            for meld in solver.split(card).groups:
                placed = list(zip(meld.cards, meld.stands_for, strict=True))
                assert build_meld(meld.kind, placed, fivecrowns_melds(wild)) == meld
    assert 0 < len(solver_module._BUILT) <= solver_module.BUILT_LIMIT


def test_a_shape_is_its_signatures_sorted() -> None:
    # `_shape` sorts the five suits' signatures by a network of comparisons, not `sorted`.
    for sigs in itertools.product(range(4), repeat=5):
        assert solver_module._shape(1, list(sigs)) == (1, *sorted(sigs))
    rng = random.Random(2)
    for _ in range(2000):
        sigs = [rng.randrange(1 << 33) for _ in range(5)]
        assert solver_module._shape(0, sigs) == (0, *sorted(sigs))
