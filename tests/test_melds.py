"""The shared meld core (engine/melds.py): groups, their text, hits and the phase finder.

The tests at the end pin bugs the core once had (a full wrapped run re-anchored, an all-wild
same-suit run, a natural card declared as another value).
"""

from __future__ import annotations

import dataclasses

import pytest

from meldref.engine.cards import Card, CardError, parse_cards
from meldref.engine.fivecrowns.rules import fivecrowns_melds
from meldref.engine.meld_check import build_meld, extend, parse_meld
from meldref.engine.meld_search import Need, find_groups
from meldref.engine.melds import (
    GroupKind,
    Meld,
    MeldError,
    MeldRules,
    format_meld,
    parse_group,
)
from meldref.engine.phase10.rules import PHASE10_MELDS
from meldref.engine.phase10.view import TableGroup

P10 = PHASE10_MELDS
WRAP = dataclasses.replace(PHASE10_MELDS, wrap=True)
SET, RUN, COLOUR, BOOK = GroupKind.SET, GroupKind.RUN, GroupKind.COLOUR, GroupKind.BOOK
W = Card.parse("W")


def meld(text: str, rules: MeldRules = P10) -> Meld:
    return parse_meld(text, rules)


# -- text --------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "set:R7,B7,W=7", "run:R3,R4,W=5,G6", "colour:G1,G5,W=G", "run:W=1,W=2,W=3,W=4",
    "set:W=12,W=12,W=12", "run:R9,B10,G11,Y12",
])
def test_canonical_tokens_round_trip(text: str) -> None:
    m = meld(text)
    assert format_meld(m) == str(m) == text
    assert meld(str(m)) == m


def test_five_crowns_tokens() -> None:
    rules = fivecrowns_melds(wild_rank=5)
    m = meld("book:QH,QS,X", rules)
    assert str(m) == "book:QH,QS,X=Q" and m.rank == 12
    run = meld("run:7H,5C,9H", rules)
    assert str(run) == "run:7H,5C=8,9H" and run.naturals(rules) == 2


def test_parse_group_errors() -> None:
    with pytest.raises(MeldError, match="should look like kind:card"):
        parse_group("R7,B7", P10)
    with pytest.raises(MeldError, match="unknown kind 'heap'"):
        parse_group("heap:R7", P10)
    with pytest.raises(CardError, match=r"neither a number 1\.\.12"):
        parse_group("run:W=13,R12", P10)
    with pytest.raises(CardError, match="not a card"):
        parse_group("set:R7,R77", P10)


# -- building ----------------------------------------------------------------------------------


def test_sets_fix_their_number() -> None:
    assert meld("set:R7,B7,W").stands_for == (7, 7, 7)
    assert meld("set:W,W").rank == 12  # all wild, undeclared: the highest number
    assert meld("set:W=3,W").rank == 3
    with pytest.raises(MeldError, match=r"set R7 B8: mixes numbers \[7, 8\]"):
        meld("set:R7,B8")
    with pytest.raises(MeldError, match="declared as another number"):
        meld("set:R7,W=8")
    with pytest.raises(MeldError, match="stands for a number, not a colour"):
        meld("set:R7,W=G")


def test_runs_place_undeclared_wilds_gaps_first_then_up_then_down() -> None:
    assert meld("run:R3,R4,W,R6").stands_for == (3, 4, 5, 6)
    assert meld("run:R3,R4,W,W").stands_for == (3, 4, 5, 6)
    assert meld("run:R11,W,W,R12").stands_for == (9, 10, 11, 12)
    assert meld("run:W,W,W,W").stands_for == (1, 2, 3, 4)
    assert meld("run:R5,W=4,R3").cards == tuple(parse_cards("R3 W R5"))


@pytest.mark.parametrize(("text", "message"), [
    ("run:R3,R4,W,R7", "run R3 R4 W R7: gap at 5, 6 not covered"),
    ("run:R3,R3,R4,R5", "3 appears twice"),
    ("run:R3,W=3,R4", "3 appears twice"),
    ("run:R3,R4=5,R6", "R4 is not wild and cannot stand for 5"),
    ("run:R3,W=G,R5", "stands for a number, not a colour"),
    ("run:R1,S,R3", "a Skip is never part of a group"),
    ("run:R12,R1,R2,R3", "gap at 4, 5, 6, 7, 8, 9, 10, 11 not covered"),
    ("run:" + ",".join(["W"] * 13), "longer than 1..12"),
])
def test_run_errors(text: str, message: str) -> None:
    with pytest.raises(MeldError, match=message):
        meld(text)


def test_wrapping_runs() -> None:
    assert meld("run:R12,R1,R2,R3", WRAP).stands_for == (12, 1, 2, 3)
    assert meld("run:R1,R2,R11,R12", WRAP).stands_for == (11, 12, 1, 2)
    assert meld("run:R12,W,W,W", WRAP).stands_for == (12, 1, 2, 3)
    with pytest.raises(MeldError, match="gap at 2, 3, 4 not covered"):
        meld("run:R1,R5", WRAP)


def test_colour_groups() -> None:
    m = meld("colour:G1,G3,G3,W")
    assert m.colour == "G" and m.stands_for == ("G",) * 4
    assert meld("colour:W,W").colour == "R"
    with pytest.raises(MeldError, match=r"mixes colours \['G', 'R'\]"):
        meld("colour:G1,R1")
    with pytest.raises(MeldError, match="stands for a colour, not a number"):
        meld("colour:G1,W=5")


def test_min_size() -> None:
    with pytest.raises(MeldError, match="needs 3 cards, has 2"):
        build_meld(SET, [(c, None) for c in parse_cards("R7 B7")], P10, min_size=3)


def test_five_crowns_runs_are_of_one_suit() -> None:
    rules = fivecrowns_melds(wild_rank=3)
    assert meld("run:5H,6H,3S", rules).stands_for == (5, 6, 7)
    with pytest.raises(MeldError, match="a run must be of one suit"):
        meld("run:5H,6S,7H", rules)
    assert meld("run:JD,QD,KD", rules).high == 13


# -- hits --------------------------------------------------------------------------------------


def test_extend_sets_runs_and_colours() -> None:
    r7, r2, g9 = parse_cards("R7 R2 G9")
    assert str(extend(meld("set:R7,B7,G7"), r7, None, P10)) == "set:R7,B7,G7,R7"
    assert str(extend(meld("run:R3,R4,R5,R6"), r2, None, P10)) == "run:R2,R3,R4,R5,R6"
    assert str(extend(meld("run:R3,R4,R5,R6"), W, 7, P10)) == "run:R3,R4,R5,R6,W=7"
    assert str(extend(meld("run:R3,R4,R5,R6"), W, None, P10)) == "run:R3,R4,R5,R6,W=7"
    assert str(extend(meld("colour:G1,G5"), g9, None, P10)) == "colour:G1,G5,G9"
    with pytest.raises(MeldError, match="only 2 or 7 can extend this run"):
        extend(meld("run:R3,R4,R5,R6"), g9, None, P10)
    with pytest.raises(MeldError, match="the group is of 7, the card is 9"):
        extend(meld("set:R7,B7,G7"), g9, None, P10)


def test_extend_at_the_ends_of_the_numbers() -> None:
    low, high = meld("run:R1,R2,R3,R4"), meld("run:R9,R10,R11,R12")
    assert str(extend(low, W, None, P10)) == "run:R1,R2,R3,R4,W=5"
    with pytest.raises(MeldError, match="only 5 can extend this run"):
        extend(low, W, 12, P10)
    assert str(extend(high, W, None, P10)) == "run:W=8,R9,R10,R11,R12"
    with pytest.raises(MeldError, match="only 8 can extend this run"):
        extend(high, W, 1, P10)
    wrapped = meld("run:R9,R10,R11,R12", WRAP)
    assert str(extend(wrapped, W, 1, WRAP)) == "run:R9,R10,R11,R12,W=1"
    assert str(extend(wrapped, W, 8, WRAP)) == "run:W=8,R9,R10,R11,R12"
    with pytest.raises(MeldError, match="only 8 or 1 can extend this run"):
        extend(wrapped, W, 5, WRAP)
    full = meld("run:" + ",".join(f"R{n}" for n in range(1, 13)))
    with pytest.raises(MeldError, match="already covers every number"):
        extend(full, W, None, P10)


def test_a_table_group_names_every_declaration_a_hit_could_take() -> None:
    # What the seats are offered (`TableGroup.fits`, the hits among the legal actions).
    table = [TableGroup(1, 0, meld("set:R7,B7,G7"), False),
             TableGroup(2, 0, meld("run:R3,R4,R5,R6"), False)]
    assert table[0].fits(Card.parse("S")) == ()
    assert table[0].fits(Card.parse("Y7")) == (None,)
    assert table[1].fits(Card.parse("Y7")) == (None,)
    assert table[0].fits(W) == (None,)
    assert table[1].fits(W) == (7, 2)
    assert table[0].fits(Card.parse("R9")) == table[1].fits(Card.parse("R9")) == ()


# -- the finder --------------------------------------------------------------------------------

PHASE = {
    1: (Need(SET, 3), Need(SET, 3)), 2: (Need(SET, 3), Need(RUN, 4)),
    4: (Need(RUN, 7),), 8: (Need(COLOUR, 7),), 9: (Need(SET, 5), Need(SET, 2)),
}


@pytest.mark.parametrize(("phase", "hand", "groups"), [
    (1, "R7 B7 G7 R8 B8 G8 R1 B2", ["set:R7,B7,G7", "set:R8,B8,G8"]),
    (1, "R7 B7 W R8 B8 G8 R1 B2", ["set:R8,B8,G8", "set:R7,B7,W=7"]),
    (2, "R7 B7 G7 R3 B4 W G6 Y10", ["set:R7,B7,G7", "run:R3,B4,W=5,G6"]),
    (4, "R1 B2 G3 Y4 R5 B6 W Y1", ["run:R1,B2,G3,Y4,R5,B6,W=7"]),
    (8, "G1 G3 G3 G8 G11 G12 W R4", ["colour:G1,G3,G3,G8,G11,G12,W=G"]),
    (9, "R8 B8 G8 Y8 W R3 B3 Y1", ["set:R8,B8,G8,Y8,W=8", "set:R3,B3"]),
])
def test_finder_finds_a_way_with_fewest_wilds(phase: int, hand: str, groups: list[str]) -> None:
    found = find_groups(parse_cards(hand), PHASE[phase], P10)
    assert found is not None
    assert sorted(map(str, found)) == sorted(groups)


def test_finder_says_none_when_there_is_no_way() -> None:
    assert find_groups(parse_cards("R7 B7 G7 R8 B8 R1 B2 G4 Y10"), PHASE[1], P10) is None
    assert find_groups(parse_cards("R1 B2 G3 Y4 R5 B6 Y1 Y1"), PHASE[4], P10) is None
    assert find_groups(parse_cards("R11 R12 B1 B2 B3 W W"), PHASE[4], P10) is None
    assert find_groups(parse_cards("R11 R12 B1 B2 B3 W W"), PHASE[4], WRAP) is not None


def test_finder_natural_rules() -> None:
    wilds = [W] * 6
    assert find_groups(wilds, PHASE[1], P10, "none") is not None
    assert find_groups(wilds, PHASE[1], P10, "phase") is None
    hand = [*parse_cards("R7"), *[W] * 5]
    assert find_groups(hand, PHASE[1], P10, "phase") is not None
    assert find_groups(hand, PHASE[1], P10, "group") is None
    found = find_groups([*parse_cards("R7 R8"), *[W] * 4], PHASE[1], P10, "group")
    assert found is not None and all(m.naturals(P10) for m in found)


# -- bugs the core once had -------------------------------------------------------------------


def test_full_wrapped_run_round_trips() -> None:
    m = extend(meld("run:R2,R3,R4,R5,R6,R7,R8,R9,R10,R11,R12", WRAP), Card.parse("B1"), None,
               WRAP)
    assert str(m) == "run:R2,R3,R4,R5,R6,R7,R8,R9,R10,R11,R12,B1"
    assert meld(str(m), WRAP) == m


def test_extend_all_wild_five_crowns_run_is_a_meld_error() -> None:
    rules = fivecrowns_melds(wild_rank=3)
    with pytest.raises(MeldError):
        extend(meld("run:X,X,X", rules), Card.parse("7H"), None, rules)


def test_a_natural_cards_declaration_must_be_its_own() -> None:
    with pytest.raises(MeldError):
        meld("set:R7=5,B7,G7")
