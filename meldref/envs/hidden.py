"""What a seat cannot see, as a state's snapshot holds it, and states consistent with its view.

`resample` keeps everything a seat may know (its own hand, the table, the discard pile, every
count) and deals the cards hidden from it (the other seats' hands, the draw pile but for a card
shown on top) again at random: the determinization that information-set search (OpenSpiel's
ISMCTS through `resample_from_infostate`) needs, and the test that no observation vector depends
on a hidden card (tests/test_envs.py: resampled states encode the same for that seat).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping

from ..engine.game import JSON, GameState, find_game

Span = tuple[list[str], int, int]  # a list of card tokens in a snapshot, and a slice of it
View = Mapping[str, JSON]  # what the seat is told (`observation(seat).to_json()`)


def hidden_spans(snapshot: dict[str, JSON], seat: int, view: View) -> list[Span]:
    """The stretches of `snapshot`'s card lists hidden from `seat`, whose view is `view`: the
    other seats' `hands` and the `draw_pile` (its top last), but for a top the view shows as
    its `draw_top` (Solitaire's next card). What every game's snapshot holds by these names
    (docs/adding-a-game.md)."""
    pile: list[str] = snapshot["draw_pile"]
    shown = 1 if pile and view.get("draw_top") == pile[-1] else 0
    hands: list[list[str]] = snapshot.get("hands", [])
    others = [(hand, 0, len(hand)) for s, hand in enumerate(hands) if s != seat]
    return [*others, (pile, 0, len(pile) - shown)]


def resample(snapshot: Mapping[str, JSON], seat: int, rng: random.Random) -> dict[str, JSON]:
    """A snapshot `seat` cannot tell from `snapshot`: its hidden cards dealt again by `rng`."""
    view = find_game(snapshot["game"]).from_snapshot(snapshot).observation(seat).to_json()
    return _dealt_again(snapshot, seat, view, rng)


def resampled_state(state: GameState, seat: int, rng: random.Random) -> GameState:
    """A new state, equal to `state` in everything `seat` may see (`resample`)."""
    view = state.observation(seat).to_json()
    snapshot = _dealt_again(state.snapshot(), seat, view, rng)
    return find_game(snapshot["game"]).from_snapshot(snapshot)


def _dealt_again(snapshot: Mapping[str, JSON], seat: int, view: View,
                 rng: random.Random) -> dict[str, JSON]:
    out = copy.deepcopy(dict(snapshot))
    spans = hidden_spans(out, seat, view)
    cards = [card for cards, start, stop in spans for card in cards[start:stop]]
    rng.shuffle(cards)
    at = 0
    for cards_, start, stop in spans:
        cards_[start:stop] = cards[at:at + stop - start]
        at += stop - start
    return out
