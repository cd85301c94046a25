"""Five Crowns properties over random seeds, 2..14 seats, rule options and bots (hypothesis).

After every action: every card is somewhere exactly once, the snapshot rebuilds the same state,
no seat's view changes when the cards it cannot see are dealt anew, and no event a seat receives
changes when the draw pile is reordered. Games end; the same seed plays the same game.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, cast

import pytest
from fivecrowns_positions import all_cards, hide_from, table_cards
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meldref.bots import builtin_bot
from meldref.engine.cards import fivecrowns_deck
from meldref.engine.fivecrowns import GAME, Draw, FiveCrownsRules, FiveCrownsState, FiveCrownsView
from meldref.engine.game import Event
from meldref.engine.play import play_inprocess

# FIVECROWNS_EXAMPLES=300 pytest ... for a long soak; the default keeps the suite fast.
SCALE = int(os.environ.get("FIVECROWNS_EXAMPLES", "12"))
FAST = settings(max_examples=SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def rule_options(draw: st.DrawFn) -> FiveCrownsRules:
    return FiveCrownsRules(
        dealer=draw(st.sampled_from(["random", "seat0"])),
        natural=draw(st.sampled_from(["none", "group"])),
        tiebreak=draw(st.sampled_from(["shared", "round"])),
        party=draw(st.sampled_from(["auto", "on"])),
        turn_cap=draw(st.integers(1, 3)),  # short rounds keep the suite fast
    )


games = st.tuples(
    st.integers(0, 10**6),
    st.integers(2, 14),
    rule_options(),
    st.lists(st.sampled_from(["random", "greedy"]), min_size=14, max_size=14),
)


def check_cards(state: FiveCrownsState, deck: Counter) -> None:  # type: ignore[type-arg]
    snap = state.snapshot()
    held = all_cards(snap, ["hands", "draw_pile", "discard_pile"]) + table_cards(snap)
    assert held == deck


def check_snapshot(state: FiveCrownsState) -> None:
    snap = state.snapshot()
    assert GAME.from_snapshot(snap).snapshot() == snap


Restore = Callable[[dict[str, Any]], FiveCrownsState]


def check_views_hide(state: FiveCrownsState, rng: random.Random,
                     restore: Restore = FiveCrownsState.from_snapshot) -> None:
    seat = rng.randrange(state.players)
    twin = restore(hide_from(state.snapshot(), seat, rng))
    assert twin.observation(seat).to_json() == state.observation(seat).to_json()


def check_events_hide(state: FiveCrownsState, action: object, rng: random.Random,
                      restore: Restore = FiveCrownsState.from_snapshot) -> None:
    """Apply `action` to a twin whose draw pile is reordered: others see the same events."""
    actor = state.to_move
    snap = state.snapshot()
    pile = list(snap["draw_pile"])
    rng.shuffle(pile)
    twin = restore({**snap, "draw_pile": pile})
    ours, theirs = state.apply(action), twin.apply(action)
    for seat in range(state.players):
        if seat != actor:
            assert [e.for_seat(seat) for e in ours] == [e.for_seat(seat) for e in theirs]


@FAST
@given(games)
def test_random_games_keep_cards_snapshots_and_secrets(game: tuple) -> None:  # type: ignore[type-arg]
    seed, players, rules, names = game
    state = GAME.new_game(rules, players, seed)
    bots = [builtin_bot(GAME.name, names[s], seed + s) for s in range(players)]
    deck = Counter(fivecrowns_deck(state.rules.decks))
    rng = random.Random(seed)
    steps = 0
    while (seat := state.to_move) is not None:
        check_cards(state, deck)
        check_snapshot(state)
        check_views_hide(state, rng)
        action = bots[seat].act(state.observation(seat))
        assert state.why_illegal(action) is None
        check_events_hide(state, action, rng)
        steps += 1
        assert steps < 2 * 13 * players * (3 + 1) * 12, "the game does not end"
    out = state.outcome
    assert out is not None and min(out.places) == 1 and len(out.places) == players
    assert out.scores == tuple(state.scores)
    check_snapshot(state)


@FAST
@given(st.integers(0, 10**6), st.integers(2, 14), rule_options())
def test_the_same_seed_plays_the_same_game(seed: int, players: int,
                                           rules: FiveCrownsRules) -> None:
    def once() -> tuple[object, list[str]]:
        bots = [builtin_bot(GAME.name, "random" if s % 2 else "greedy", seed + s)
                for s in range(players)]
        outcome, actions = play_inprocess(GAME, rules, bots, seed, max_actions=20_000)
        return outcome, [str(a) for a in actions]

    assert once() == once()


def test_greedy_beats_random_over_full_games() -> None:
    rules = GAME.rules()
    wins = 0
    for seed in range(6):
        bots = [builtin_bot(GAME.name, "greedy", seed), builtin_bot(GAME.name, "random", seed)]
        outcome, _ = play_inprocess(GAME, rules, bots, seed)
        wins += outcome.places[0] == 1
    assert wins >= 5


class LeakyState:
    """A Five Crowns state that shows the next card of the draw pile, and tells everyone what a
    pile draw took. It wraps a real state: a compiled state class takes no Python subclass."""

    def __init__(self, state: FiveCrownsState) -> None:
        self.state = state

    def __getattr__(self, name: str) -> Any:
        return getattr(self.state, name)

    @classmethod
    def from_snapshot(cls, data: Mapping[str, Any]) -> FiveCrownsState:
        return cast(FiveCrownsState, cls(FiveCrownsState.from_snapshot(data)))

    def observation(self, seat: int) -> FiveCrownsView:
        view = self.state.observation(seat)
        leak = view.to_json()
        draw_pile = self.state.draw_pile
        leak["next_card"] = draw_pile[-1].text if draw_pile else None
        return type("Leaky", (), {"to_json": lambda _: leak})()  # type: ignore[return-value]

    def apply(self, action: object) -> list[Event]:
        events = self.state.apply(action)
        return [Event(e.kind, e.seat, {**e.public, **e.private}) for e in events]


def test_the_secret_checks_catch_leaks() -> None:
    state = LeakyState.from_snapshot(GAME.new_game(GAME.rules(), 3, 5).snapshot())
    rng = random.Random(1)
    with pytest.raises(AssertionError):
        for _ in range(20):
            check_views_hide(state, rng, LeakyState.from_snapshot)
    with pytest.raises(AssertionError):
        check_events_hide(state, Draw("pile"), rng, LeakyState.from_snapshot)
