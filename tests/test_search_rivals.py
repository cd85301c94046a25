"""Issue 26: the `search` bots read their rival's hand (a card it took from the discard pile is
in it until it throws it) and deal it there in their guesses; at Five Crowns the search bot
never throws a wild the next seat can still use unless the throw goes out."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from meldref.bots import builtin_bot
from meldref.bots.fivecrowns.expert import is_wild, unseen
from meldref.bots.search import RivalHands, deal_table
from meldref.engine.cards import Card
from meldref.engine.fivecrowns.actions import Discard
from meldref.engine.game import find_game


def _play_checking(game: str, seed: str, rival: str, check: Any) -> int:
    """A heads-up game of `search` (seat 0, 2 guesses) against `rival`, `check(bot, state,
    seat, action)` after each decision; the number of decisions where the search bot knew a
    card of its rival's hand."""
    info = find_game(game)
    state = info.new_game(info.rules(), 2, seed)
    search = builtin_bot(game, "search", 3)
    search.guesses = 2  # type: ignore[attr-defined]
    bots = [search, builtin_bot(game, rival, 5)]
    knew = 0
    while (seat := state.to_move) is not None:
        view = state.observation(seat)
        action = bots[seat].act(view)
        if seat == 0:
            check(search, state, view, action)
            knew += bool(search.rivals.known(1))  # type: ignore[attr-defined]
        state.apply(action)
    return knew


@pytest.mark.parametrize(("game", "seed"), [("phase10", "rivals:1"), ("fivecrowns", "rivals:2")])
def test_the_cards_a_rival_is_known_to_hold_are_in_its_hand(game: str, seed: str) -> None:
    def check(bot: Any, state: Any, view: Any, action: Any) -> None:
        known: Counter[Card] = bot.rivals.known(1)
        assert not known - Counter(state.hands[1]), (view.turn, known, state.hands[1])

    # greedy takes a discard that helps it: the search bot sees it happen, in every game
    assert _play_checking(game, seed, "greedy", check) > 0


def test_a_guess_deals_the_rivals_known_cards_to_it() -> None:
    info = find_game("fivecrowns")
    state = info.new_game(info.rules(), 2, 4)
    bot = builtin_bot("fivecrowns", "search", 0)
    view = state.observation(state.to_move)
    bot.expert.memory.observe(view)  # type: ignore[attr-defined]
    left = unseen(view, bot.expert.memory)  # type: ignore[attr-defined]
    card = next(iter(left))
    rivals = RivalHands()
    rivals.held[1 - view.seat] = Counter({card: 1})
    for k in range(5):
        hands, pile, _ = deal_table(view, left, random.Random(k), rivals)
        assert card.text in hands[1 - view.seat]
        assert len(hands[1 - view.seat]) == view.hand_sizes[1 - view.seat]
        assert len(pile) == view.draw_pile_size


@pytest.mark.parametrize("rival", ["greedy", "expert"])
def test_search_never_feeds_the_next_seat_a_wild_at_five_crowns(rival: str) -> None:
    wilds = []

    def check(bot: Any, state: Any, view: Any, action: Any) -> None:
        if not isinstance(action, Discard) or not is_wild(view, action.card):
            return
        next_seat = 1 - view.seat
        usable = view.went_out is None or not view.had_last_turn[next_seat]
        if usable and view.went_out != next_seat and not action.groups:
            wilds.append((view.round, view.turn, str(action)))

    for seed in ("wilds:1", "wilds:2"):
        _play_checking("fivecrowns", seed, rival, check)
    assert not wilds
