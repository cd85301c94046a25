"""Five Crowns Solitaire properties over random seeds and both bots (hypothesis).

After every move: every card is in a pile, the draw pile or out of play, each pile keeps its dealt
size, closed piles stay closed and unchanged, the snapshot rebuilds the same state, and neither
the view nor the events change when the draw pile is reordered below what may be seen.
"""

from __future__ import annotations

import os
import random
from collections import Counter

from fivecrowns_positions import all_cards
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meldref.bots import builtin_bot
from meldref.engine.cards import fivecrowns_deck
from meldref.engine.play import play_inprocess
from meldref.engine.solitaire import GAME, PILE_SIZES, SolitaireRules, SolitaireState

SCALE = int(os.environ.get("SOLITAIRE_EXAMPLES", "15"))
FAST = settings(max_examples=SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DECK = Counter(fivecrowns_deck(2))

games = st.tuples(st.integers(0, 10**6), st.sampled_from(["random", "greedy"]),
                  st.sampled_from(["none", "group"]))


def reorder_below(state: SolitaireState, keep: int, rng: random.Random) -> SolitaireState:
    """A twin whose draw pile is shuffled except its top `keep` cards."""
    snap = state.snapshot()
    pile = list(snap["draw_pile"])
    cut = max(0, len(pile) - keep)
    below = pile[:cut]
    rng.shuffle(below)
    return GAME.from_snapshot({**snap, "draw_pile": below + pile[cut:]})


@FAST
@given(games)
def test_games_keep_cards_piles_and_secrets(game: tuple[int, str, str]) -> None:
    seed, name, natural = game
    state = GAME.new_game(SolitaireRules(natural=natural), 1, seed)  # type: ignore[arg-type]
    bot = builtin_bot(GAME.name, name, seed)
    rng = random.Random(seed)
    moves = 0
    while state.to_move is not None:
        snap = state.snapshot()
        assert all_cards(snap, ["piles", "draw_pile", "out_of_play"]) == DECK
        assert [len(p) for p in state.piles] == list(PILE_SIZES)
        assert GAME.from_snapshot(snap).snapshot() == snap
        view = state.observation(0)
        assert reorder_below(state, 1, rng).observation(0).to_json() == view.to_json()
        closed = {i: list(state.piles[i]) for i, c in enumerate(state.closed) if c}
        action = bot.act(view)
        assert action in state.legal_actions()
        twin = reorder_below(state, 2, rng)  # the next top becomes visible with the move
        events = state.apply(action)
        assert [e.for_seat(0) for e in events] == [e.for_seat(0) for e in twin.apply(action)]
        assert all(state.closed[i] and state.piles[i] == pile for i, pile in closed.items())
        moves += 1
    out = state.outcome
    assert out is not None and moves <= 28
    assert out.detail["won"] == all(state.closed) == (out.scores == (11,))
    assert out.places == ((1,) if out.detail["won"] else (2,))
    assert out.winners == ((0,) if out.detail["won"] else ())
    assert out.scores == (sum(state.closed),)
    assert moves == 28 or out.detail["won"]


@FAST
@given(st.integers(0, 10**6), st.sampled_from(["random", "greedy"]))
def test_the_same_seed_plays_the_same_game(seed: int, name: str) -> None:
    def once() -> tuple[object, list[str]]:
        bot = builtin_bot(GAME.name, name, seed)
        outcome, actions = play_inprocess(GAME, GAME.rules(), [bot], seed)
        return outcome, [str(a) for a in actions]

    assert once() == once()


def test_greedy_closes_more_piles_than_random() -> None:
    def closed(name: str) -> int:
        return sum(play_inprocess(GAME, GAME.rules(), [builtin_bot(GAME.name, name, s)], s)
                   [0].scores[0] for s in range(5))

    assert closed("greedy") > closed("random") + 10
