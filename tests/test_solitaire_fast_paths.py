"""Solitaire's fast paths against plain references: the points of an open pile
(`solver.pile_points`, searched part by part) against the solver's own `points`, the close
check's loner (`close_check`, `keeps_loner`) against the solver's loners, and whole games
against a referee that asks the solver about every pile after every move."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from test_solver import brute_force, hands

from meldref.engine.cards import JOKER, SUITS, Card, fivecrowns_deck, parse_cards
from meldref.engine.fivecrowns.solver import (
    CLOSES,
    STAYS_OPEN,
    Solver,
    _parts,
    close_check,
    keeps_loner,
    pile_points,
)
from meldref.engine.solitaire import GAME, PILE_SIZES, SolitaireRules

DECK = fivecrowns_deck(2)
NATURALS = [c for c in DECK if c is not JOKER]

# Piles as dealt (any cards of the two decks), and wild-heavy ones: up to six Jokers, and a
# pile's wild rank drawn among its own ranks, so that many parts share the wilds.
piles = st.lists(st.sampled_from(DECK), min_size=1, max_size=14).filter(
    lambda p: all(n <= (6 if c is JOKER else 2) for c, n in Counter(p).items()))
wild_piles = st.tuples(st.lists(st.sampled_from(NATURALS), min_size=0, max_size=12),
                       st.integers(0, 6)).map(lambda t: [*t[0], *[JOKER] * t[1]]).filter(
    lambda p: p and all(n <= 2 for c, n in Counter(p).items() if c is not JOKER))
naturals = st.sampled_from(["none", "group"])


def reference(pile: list[Card], wild: int, natural: str) -> int:
    return Solver(pile, wild, natural).points()  # type: ignore[arg-type]


def coded(card: Card) -> int:
    """A natural as the solver codes it: rank << 3 | its suit's index in SUITS."""
    return card.rank << 3 | SUITS.index(card.suit)


@settings(max_examples=400, deadline=None)
@given(piles, st.integers(3, 13), naturals)
def test_pile_points_is_the_solvers_points(pile: list[Card], wild: int, natural: str) -> None:
    assert pile_points(pile, wild, natural) == reference(pile, wild, natural)  # type: ignore[arg-type]


@settings(max_examples=400, deadline=None)
@given(wild_piles, st.data(), naturals)
def test_pile_points_shares_the_wilds_among_the_parts(pile: list[Card], data: st.DataObject,
                                                      natural: str) -> None:
    wild = data.draw(st.sampled_from(sorted({c.rank for c in pile if c is not JOKER} or {13})))
    assert pile_points(pile, wild, natural) == reference(pile, wild, natural)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(hands, st.sampled_from([3, 4, 5, 6, 8, 13]), naturals)
def test_pile_points_agrees_with_brute_force(hand: list[Card], wild: int, natural: str) -> None:
    assert pile_points(hand, wild, natural) == brute_force(hand, wild, natural)  # type: ignore[arg-type]


def test_pile_points_on_many_random_piles() -> None:
    rng = random.Random(28)
    for _ in range(3000):
        pile = rng.sample(DECK, rng.randint(1, 14))
        wild, natural = rng.randint(3, 13), rng.choice(["none", "group"])
        assert pile_points(pile, wild, natural) == reference(pile, wild, natural)  # type: ignore[arg-type]


def test_parts_link_books_and_runs_only() -> None:
    # Rank 5 three times makes a book alone (0 wilds); two 5s need a wild; 5H and 7H a run with
    # one wild (6); two wilds let a lone 5 book, and 5H reach 8H in a run.
    def parts(text: str, wilds: int) -> list[list[str]]:
        codes = [coded(c) for c in parse_cards(text)]
        ranks = [0] * 14
        for code in codes:
            ranks[code >> 3] += 1
        return [sorted(f"{code >> 3}{SUITS[code & 7]}" for code in part)
                for part in _parts(codes, wilds, ranks)]

    assert parts("5H 5S 5C 9D", 0) == [["5C", "5H", "5S"], ["9D"]]
    assert parts("5H 5S 7H", 0) == [["5H"], ["5S"], ["7H"]]
    assert parts("5H 5S 7H", 1) == [["5H", "5S", "7H"]]
    assert parts("5H 8H", 1) == [["5H"], ["8H"]]
    assert parts("5H 8H", 2) == [["5H", "8H"]]
    # A natural linking two parts merges them.
    assert parts("3H 5H 4H", 0) == [["3H", "4H", "5H"]]
    assert parts("3H 9H 5S 9S 4H", 1) == [["3H", "4H"], ["9H", "9S"], ["5S"]]


def test_pile_points_known_answers() -> None:
    # Two parts and one wild: the wild goes where it saves most (the 9s' book, not 4H-6H).
    assert pile_points(parse_cards("4H 6H 9S 9C X"), 13) == 4 + 6
    assert pile_points(parse_cards("4H 6H 9S 9C X X"), 13) == 0
    # No group at all: every card counts, the wilds too.
    assert pile_points(parse_cards("4H 9S X"), 13) == 4 + 9 + 50
    # Wilds alone book when a group needs no natural.
    assert pile_points(parse_cards("X X KD"), 13, "none") == 0
    assert pile_points(parse_cards("X X KD"), 13, "group") == 20 + 100


def test_close_check_names_a_loner_or_says_why() -> None:
    rng = random.Random(29)
    for _ in range(3000):
        pile = rng.sample(DECK, rng.randint(1, 13))
        wild, natural = rng.randint(3, 13), rng.choice(["none", "group"])
        solver = Solver(pile, wild, natural)  # type: ignore[arg-type]
        verdict = close_check(pile, wild, natural)  # type: ignore[arg-type]
        assert (verdict == CLOSES) == solver.groups_all()
        if verdict >= 0:
            assert verdict in [coded(c) for c in solver.loners]
        elif verdict == STAYS_OPEN:
            assert not solver.loners


def test_a_kept_loner_is_still_a_loner_after_the_swap() -> None:
    # `keeps_loner` lets a move skip the close check: when it says so, the card that kept the
    # pile open is a loner of the pile after the swap too (so the pile cannot close).
    rng = random.Random(30)
    kept = 0
    for _ in range(6000):
        pile = rng.sample(DECK, rng.randint(2, 13))
        wild = rng.randint(3, 13)
        loner = close_check(pile, wild)
        if loner < 0:
            continue
        out = rng.choice(pile)
        into = rng.choice([*DECK, JOKER, JOKER])
        after = list(pile)
        after.remove(out)
        after.append(into)
        if keeps_loner(loner, out, into, wild):
            kept += 1
            assert loner in [coded(c) for c in Solver(after, wild).loners], (pile, out, into)
            assert close_check(after, wild) != CLOSES
    assert kept > 1000


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), naturals)
def test_games_close_and_score_as_the_solver_says(seed: int, natural: str) -> None:
    # The referee skips a pile a move left as it was and sums `pile_points` at the end; a
    # plain one asks the solver about every open pile after every move.
    state = GAME.new_game(SolitaireRules(natural=natural), 1, seed)  # type: ignore[arg-type]
    rng = random.Random(seed)
    while True:
        for size, pile, shut in zip(PILE_SIZES, state.piles, state.closed, strict=True):
            assert shut == Solver(pile, size, natural).groups_all()  # type: ignore[arg-type]
        if state.to_move is None:
            break
        state.apply(rng.choice(state.legal_actions()))
    outcome = state.outcome
    assert outcome is not None
    assert outcome.detail["points_left"] == sum(
        Solver(pile, size, natural).points()  # type: ignore[arg-type]
        for size, pile, shut in zip(PILE_SIZES, state.piles, state.closed, strict=True)
        if not shut)
