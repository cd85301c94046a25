"""Phase 10's expert counts its outs from a memo of the numbers and colours that bring a hand
closer (`_improvers`): the count is the one of counting each unseen card afresh, for any hand,
phase and unseen cards, and a hand seen before is not searched again."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

import pytest

from meldref.bots.phase10 import expert as phase10_expert
from meldref.bots.phase10.expert import COPIES, WILDS_IN_DECK, distance, outs
from meldref.engine.cards import PHASE10_NUMBERS, SKIP, WILD, Card, Kind
from meldref.engine.phase10.rules import PHASES


def outs_afresh(rest: list[Card], phases: Sequence[int], wrap: bool, left: Counter[Card],
                now: int) -> int:
    """Each unseen card tried on the hand: its number, and its colour in a colour phase."""
    if now == 0:
        return 0
    colour = any(PHASES[p][0].kind.value == "colour" for p in phases)
    total = left[WILD]
    for card, n in left.items():
        if card.kind is not Kind.NUMBER or not n:
            continue
        by_rank = next(c for c in PHASE10_NUMBERS if c.rank == card.rank)
        by_colour = next(c for c in PHASE10_NUMBERS if c.suit == card.suit)
        total += n * (distance([*rest, by_rank], phases, wrap) < now)
        if colour:
            total += n * (distance([*rest, by_colour], phases, wrap) < now)
    return total


def deck() -> list[Card]:
    return [c for c in PHASE10_NUMBERS for _ in range(COPIES)] + [WILD] * WILDS_IN_DECK + [SKIP]


@pytest.mark.parametrize("phase", list(range(1, 11)))
def test_the_outs_are_those_of_each_card_tried(phase: int) -> None:
    rng = random.Random(f"outs:{phase}")
    for _ in range(30):
        cards = deck()
        rng.shuffle(cards)
        rest, seen = cards[:9], cards[9:9 + rng.randrange(30)]
        left = Counter(deck()) - Counter(rest) - Counter(seen)
        phases = sorted({phase, rng.randrange(1, 11)})
        wrap = rng.random() < 0.5
        now = distance(rest, phases, wrap)
        assert outs(rest, phases, wrap, left, now) == outs_afresh(rest, phases, wrap, left, now)


def test_a_hand_seen_before_is_not_searched_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = phase10_expert.distance

    def counted(cards: Sequence[Card], phases: Sequence[int], wrap: bool) -> int:
        calls.append(1)
        return real(cards, phases, wrap)

    monkeypatch.setattr(phase10_expert, "distance", counted)
    monkeypatch.setattr(phase10_expert, "_IMPROVERS", {})
    rest = [Card.parse(t) for t in ("R1", "B1", "G4", "Y7", "R9", "B11", "G12")]
    left = Counter(deck()) - Counter(rest)
    now = real(rest, [1], False)
    first = outs(rest, [1], False, left, now)
    searched = len(calls)
    fewer = left - Counter(rest[:1])  # other unseen cards, the same hand in another order
    again = outs(list(reversed(rest)), [1], False, fewer, now)
    assert searched > 0 and len(calls) == searched
    assert first == outs_afresh(rest, [1], False, left, now)
    assert again == outs_afresh(rest, [1], False, fewer, now)
