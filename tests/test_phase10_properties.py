"""Phase 10 properties over random seeds, table sizes and rule options (hypothesis)."""

from __future__ import annotations

import os
import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from phase10_positions import count_cards

from meldref.bots.phase10 import GreedyBot, RandomBot
from meldref.engine.cards import SKIP, WILD, Card, Kind, parse_cards, phase10_deck
from meldref.engine.game import Event
from meldref.engine.meld_check import build_meld, extend
from meldref.engine.meld_search import find_groups
from meldref.engine.melds import Declared, GroupKind, Meld, MeldError, MeldRules
from meldref.engine.phase10 import (
    GAME,
    PHASES,
    Phase10Rules,
    Phase10State,
    TableGroup,
    card_points,
    missing_cards,
)
from meldref.engine.phase10.rules import PHASE10_MELDS
from meldref.engine.phase10.view import missing_without_each
from meldref.engine.play import play_inprocess

# PHASE10_EXAMPLES=500 pytest ... for a long soak; the default keeps the suite fast.
SCALE = int(os.environ.get("PHASE10_EXAMPLES", "25"))
FAST = settings(max_examples=SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DECK = Counter(phase10_deck())


@st.composite
def rule_options(draw: st.DrawFn) -> Phase10Rules:
    fixed = draw(st.booleans()) and draw(st.booleans())
    phases = draw(st.sampled_from(["all", "even", "odd"]))
    length = 10 if phases == "all" else 5
    return Phase10Rules(
        dealer=draw(st.sampled_from(["random", "seat0"])),
        first_skip=draw(st.sampled_from(["skip-first-player", "twist"])),
        natural=draw(st.sampled_from(["phase", "group", "none"])),
        run_wrap=draw(st.booleans()),
        skip_victim=draw(st.sampled_from(["choose", "next"])),
        skip_repeat=draw(st.sampled_from(["once-per-orbit", "unlimited"])),
        hit_on_lay_turn=draw(st.sampled_from(["any", "own"])),
        going_out=draw(st.sampled_from(["any", "must-discard"])),
        tiebreak=draw(st.sampled_from(["first-out", "first-to-lay", "shared"])),
        phases=phases,
        phases_to_win=None if fixed else draw(st.none() | st.integers(1, length)),
        any_order=not fixed and draw(st.booleans()),
        fixed_hands=fixed,
        turn_cap=draw(st.integers(10, 90)),
        hand_cap=None if fixed else draw(st.integers(1, 6)),
    )


games = st.tuples(st.integers(0, 10**6), st.integers(2, 6), rule_options())


def check_events(state: Phase10State, events: list[Event], totals: list[int]) -> None:
    """Public parts carry only cards that are public; hand ends score by the rule."""
    for e in events:
        assert not e.private or e.seat is not None
        if e.kind == "draw" and e.public["source"] == "pile":
            assert set(e.public) == {"source"}
        if e.kind == "deal":
            assert set(e.public) == {"hand_number", "dealer", "phase", "hand_size"}
            assert len(e.private["hand"]) == 10
        if e.kind in ("skip", "skipped", "reshuffle"):
            assert not any(isinstance(v, str) and _is_card(v) for v in e.public.values())
        if e.kind == "hand_end":
            check_scores(e, totals)


def _is_card(text: str) -> bool:
    try:
        Card.parse(text)
    except ValueError:
        return False
    return True


def check_scores(end: Event, totals: list[int]) -> None:
    info = end.public
    for seat, cards in enumerate(info["hands"]):
        expected = 0 if seat == info["went_out"] else sum(map(card_points, parse_cards(cards)))
        assert info["points"][seat] == expected
        if not cards:
            assert expected == 0
    if not info["tiebreak"]:  # tie-break hands decide the tie only: they score nothing
        for seat, points in enumerate(info["points"]):
            totals[seat] += points
    assert info["totals"] == totals


@FAST
@given(games)
def test_random_games_keep_every_card_score_by_the_rule_and_end(game: tuple) -> None:
    seed, players, rules = game
    state = GAME.new_game(rules, players, seed)
    bots = [RandomBot(seed + i) for i in range(players)]
    totals = [0] * players
    check_events(state, state.opening_events(), totals)
    steps = 0
    while state.outcome is None:
        seat = state.to_move
        assert seat is not None
        before = state.hand_number
        events = state.apply(bots[seat].act(state.observation(seat)))
        check_events(state, events, totals)
        assert count_cards(state) == DECK
        assert all(len(h) <= 11 for h in state.hands)
        if state.hand_number == before and state.outcome is None:
            assert len(state.hands[state.to_move or 0]) >= 1
        steps += 1
        assert steps < 200_000
    outcome = state.outcome
    assert outcome.scores == state.scores
    assert min(outcome.places) == 1 and len(outcome.places) == players


@FAST
@given(games)
def test_same_seed_same_game(game: tuple) -> None:
    seed, players, rules = game
    runs = [
        play_inprocess(GAME, rules, [RandomBot(seed + i) for i in range(players)], seed)
        for _ in range(2)
    ]
    assert runs[0][0] == runs[1][0]
    assert [str(a) for a in runs[0][1]] == [str(a) for a in runs[1][1]]


@settings(max_examples=SCALE + 5, deadline=None)
@given(games, st.integers(0, 400), st.randoms(use_true_random=False))
def test_nothing_hidden_leaks_to_a_seat(game: tuple, steps: int, rng: random.Random) -> None:
    """Shuffling every card a seat cannot see changes neither its view nor what it is told."""
    seed, players, rules = game
    state = GAME.new_game(rules, players, seed)
    bots = [RandomBot(seed + i) for i in range(players)]
    for _ in range(steps):
        if state.outcome is not None:
            return
        seat = state.to_move
        assert seat is not None
        state.apply(bots[seat].act(state.observation(seat)))
    if state.outcome is not None:
        return
    seat = state.to_move
    assert seat is not None
    other = perturbed(state, seat, rng)
    assert other.observation(seat).to_json() == state.observation(seat).to_json()
    for watcher in range(players):
        if watcher != seat:
            hidden = perturbed(state, watcher, rng, keep_top=True)
            assert hidden.observation(watcher).to_json() == state.observation(watcher).to_json()
    action = bots[seat].act(state.observation(seat))
    twin = perturbed(state, seat, rng, keep_top=True)
    events, twin_events = state.apply(action), twin.apply(action)
    if any(e.kind == "hand_end" for e in events):
        return  # a hand's end shows every hand, and the next deal is new information
    for watcher in range(players):
        assert [e.for_seat(watcher) for e in events] == [e.for_seat(watcher) for e in twin_events]


def perturbed(state: Phase10State, seat: int, rng: random.Random,
              keep_top: bool = False) -> Phase10State:
    """The state with every card hidden from `seat` dealt anew among the same places."""
    snap = state.snapshot()
    pile = snap["draw_pile"]
    top = pile[-1:] if keep_top and pile else []
    body = pile[:-1] if top else pile
    others = [s for s in range(state.players) if s != seat]
    pool = body + [c for s in others for c in snap["hands"][s]]
    rng.shuffle(pool)
    snap["draw_pile"], pool = pool[:len(body)] + top, pool[len(body):]
    for s in others:
        size = len(snap["hands"][s])
        snap["hands"][s], pool = pool[:size], pool[size:]
    return Phase10State.from_snapshot(snap)


@FAST
@given(games, st.integers(0, 300))
def test_every_listed_action_is_legal_and_round_trips(game: tuple, steps: int) -> None:
    seed, players, rules = game
    state = GAME.new_game(rules, players, seed)
    bots = [RandomBot(seed + i) for i in range(players)]
    for _ in range(steps):
        if state.outcome is not None:
            return
        for action in state.legal_actions():
            assert state.why_illegal(action) is None, action
            assert state.parse_action(str(action)) == action
        assert state.why_illegal(state.autoplay_action()) is None
        seat = state.to_move
        assert seat is not None
        state.apply(bots[seat].act(state.observation(seat)))


@settings(max_examples=max(5, SCALE // 2), deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 6))
def test_greedy_games_end_and_keep_every_card(seed: int, players: int) -> None:
    rules = Phase10Rules(turn_cap=120, hand_cap=8)
    state = GAME.new_game(rules, players, seed)
    bots = [GreedyBot(seed + i) for i in range(players)]
    while state.outcome is None:
        seat = state.to_move
        assert seat is not None
        state.apply(bots[seat].act(state.observation(seat)))
        assert count_cards(state) == DECK


# -- the helpers behind bots and legal actions agree with the meld core --------------------------

cards = st.sampled_from(sorted(set(phase10_deck()), key=lambda c: c.text))


@settings(max_examples=SCALE * 8, deadline=None)
@given(st.lists(cards, min_size=2, max_size=11), cards, st.booleans(), st.booleans())
def test_table_group_fits_as_the_meld_core(group: list[Card], card: Card, wrap: bool,
                                           as_run: bool) -> None:
    rules = Phase10Rules(run_wrap=wrap).melds
    naturals = [c for c in group if c.kind is Kind.NUMBER]
    if as_run:
        values = sorted({c.rank for c in naturals})[:1] or [1]
        start = values[0]
        placed = [(WILD, (start - 1 + k) % 12 + 1) for k in range(len(group))]
        if not wrap and start + len(group) - 1 > 12:
            placed = [(WILD, 13 - len(group) + k) for k in range(len(group))]
        meld = build_meld(GroupKind.RUN, placed, rules)
    else:
        wilds = [(c, None) for c in group if c is WILD] or [(WILD, None)]
        if naturals and len(group) % 2:
            same = [(c, None) for c in naturals if c.rank == naturals[0].rank]
            meld = build_meld(GroupKind.SET, same + wilds, rules)
        else:
            same = [(c, None) for c in naturals if naturals and c.suit == naturals[0].suit]
            meld = build_meld(GroupKind.COLOUR, same + wilds, rules)
    assert TableGroup(1, 0, meld, wrap).fits(card) == hit_declarations(meld, card, rules)


def hit_declarations(meld: Meld, card: Card, rules: MeldRules) -> tuple[Declared, ...]:
    """Every declaration under which `extend` takes `card`: those that put it on top first."""
    tries: list[Declared] = [None]
    if rules.is_wild(card) and meld.kind is GroupKind.RUN:
        tries = list(range(rules.low, rules.high + 1))
    below: dict[Declared, bool] = {}
    for declared in tries:
        try:
            grown = extend(meld, card, declared, rules)
        except MeldError:
            continue
        below[declared] = grown.stands_for[:-1] != meld.stands_for
    return tuple(sorted(below, key=below.__getitem__))


@settings(max_examples=SCALE * 6, deadline=None)
@given(st.lists(cards.filter(lambda c: c is not SKIP and c is not WILD), min_size=3,
                max_size=11),
       st.integers(1, 10), st.integers(0, 4), st.booleans())
def test_missing_cards_is_exactly_what_the_finder_needs(hand: list[Card], phase: int,
                                                        wilds: int, wrap: bool) -> None:
    rules = Phase10Rules(run_wrap=wrap).melds
    needs = PHASES[phase]
    missing = missing_cards(hand, needs, wrap)
    found = find_groups([*hand, *[WILD] * wilds], needs, rules, "none")
    assert (found is not None) == (missing <= wilds)
    if missing:
        assert find_groups([*hand, *[WILD] * (missing - 1)], needs, rules, "none") is None
    assert PHASE10_MELDS.wrap is False


@settings(max_examples=SCALE * 4, deadline=None)
@given(st.lists(cards, min_size=1, max_size=11), st.integers(1, 10), st.booleans())
def test_missing_without_each_is_missing_cards_of_the_smaller_hand(
    hand: list[Card], phase: int, wrap: bool
) -> None:
    after = missing_without_each(hand, PHASES[phase], wrap)
    assert set(after) == set(hand)
    for card in hand:
        rest = list(hand)
        rest.remove(card)
        assert after[card] == missing_cards(rest, PHASES[phase], wrap)
