"""Building Phase 10 positions for tests (see `positions`), and helpers shared by the Phase 10
test files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from positions import draw_pile, play

from meldref.engine.cards import Card, parse_cards, phase10_deck
from meldref.engine.game import Event
from meldref.engine.meld_check import parse_meld
from meldref.engine.phase10 import GAME, Phase10Rules, Phase10State

__all__ = ["count_cards", "hand", "kinds", "play", "position"]


def position(
    hands: Sequence[str],
    *,
    rules: Phase10Rules | None = None,
    discard: str = "R12",
    draw: str | None = None,
    table: Iterable[tuple[int, str]] = (),
    to_move: int = 0,
    decision: str = "play",
    phase_now: Sequence[int | None] | None = None,
    laid: Sequence[int | None] | None = None,
    completed: Sequence[Sequence[int]] | None = None,
    **fields: Any,
) -> Phase10State:
    """A position with `hands[i]` for seat i; `table` holds (owner, group token) pairs."""
    rules = rules or Phase10Rules(dealer="seat0")
    n = len(hands)
    snap = GAME.new_game(rules, n, 1).snapshot()
    groups = [(owner, parse_meld(token, rules.melds)) for owner, token in table]
    held = [c for h in hands for c in parse_cards(h)]
    placed = held + parse_cards(discard) + [c for _, m in groups for c in m.cards]
    snap.update(
        hands=[h.split() for h in hands],
        discard_pile=discard.split(),
        draw_pile=draw_pile(phase10_deck(), placed, draw),
        table=[{"id": i + 1, "owner": owner, "group": str(m)}
               for i, (owner, m) in enumerate(groups)],
        to_move=to_move,
        decision=decision,
        phase_now=list(phase_now or [1] * n),
        laid=list(laid or [None] * n),
        completed=[list(c) for c in (completed or [[]] * n)],
    )
    snap.update(fields)
    return Phase10State.from_snapshot(snap)


def kinds(events: Iterable[Event]) -> list[str]:
    return [e.kind for e in events]


def hand(state: Phase10State, seat: int) -> list[str]:
    return [c.text for c in state.hands[seat]]


def count_cards(state: Phase10State) -> Counter[Card]:
    """Every card of the hand in play: hands, piles and table."""
    total: Counter[Card] = Counter()
    for h in state.hands:
        total.update(h)
    total.update(state.draw_pile)
    total.update(state.discard_pile)
    for g in state.table:
        total.update(g.meld.cards)
    return total
