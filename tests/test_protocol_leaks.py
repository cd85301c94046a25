"""No line sent to a seat names a card that seat cannot know: another seat's hidden hand or an
unrevealed draw-pile card (the bug that leaked hands in an old RLCard UNO).

Real games through real pipes: every line the referee writes to each bots/random_bot.py process
is recorded with the number of actions applied when it was sent; the game is then re-simulated
from the records and each line checked against the referee's full state (`public_view`) just
before and just after that action. A card token may appear in a line to seat i only if some copy
of it is visible to i: in i's hand, on the discard pile, on the table, or in hands revealed
because the hand/round or the game ended with that action.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import fakegame
import pytest
from support import RANDOM_BOT

from meldref.engine.cards import Card, CardError
from meldref.engine.game import GameInfo, find_game
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import ProcessSeat, seat_from_spec

POLICY = MatchPolicy(move_time=10.0, first_move_time=20.0, startup_time=20.0)


def card_tokens(text: str) -> set[str]:
    out = set()
    for word in re.split(r"[\s,;:=_]+", text):
        try:
            if word and Card.parse(word).text == word:
                out.add(word)
        except CardError:
            pass
    return out


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings(v)]
    return []


def cards_in(value: Any) -> set[str]:
    return {c for s in strings(value) for c in card_tokens(s)}


class Zones:
    """Where the cards are, from the referee's full view: each seat's hidden hand, cards hidden
    from everyone, cards public to everyone, and what tells one hand/round from the next."""

    def __init__(self, hands: Any, hidden: Any, public: Any, round_: Any) -> None:
        self.hands = [cards_in(h) for h in hands]
        self.hidden = cards_in(hidden)
        self.public = cards_in(public)
        self.round = round_


GAME_ZONES: dict[str, Callable[[dict[str, Any]], Zones]] = {
    "fake": lambda v: Zones(v["hands"], v["draw_pile"], v["discard_pile"], None),
    "phase10": lambda v: Zones(v["hands"], v["draw_pile"], [v["discard_pile"], v["table"]],
                               v["hand_number"]),
    "fivecrowns": lambda v: Zones(v["hands"], v["draw_pile"], [v["discard_pile"], v["table"]],
                                  v["round"]),
    # One seat; its piles lie face up, and so does the top of the draw pile.
    "solitaire": lambda v: Zones([v["piles"]], v["draw_pile"][:-1],
                                 [v["draw_pile"][-1:], v["out_of_play"]], None),
}


def leaks_in_game(game: GameInfo, players: int, seed: int) -> tuple[int, list[str]]:
    """Play one game through pipes; the number of lines checked and every leak found."""
    step = [0]
    sent: list[list[tuple[int, str]]] = [[] for _ in range(players)]

    def hook(seat: int) -> Callable[[str, str], None]:
        return lambda way, text: sent[seat].append((step[0], text)) if way == ">" else None

    def on_record(record: dict[str, Any]) -> None:
        if record["type"] == "action":
            step[0] += 1

    seats = [seat_from_spec(f"{RANDOM_BOT} --seed {seed + i}", game,
                            on_line=hook(i)) for i in range(players)]
    try:
        record = play_game(game, game.rules(), seats, seed, POLICY, on_record)
    finally:
        close_all(seats)
    assert record.status == ["ok"] * players, record.faults
    assert all(isinstance(s, ProcessSeat) for s in seats)

    state = game.new_game(game.rules(), players, seed)
    zones = [GAME_ZONES[game.name](state.public_view())]
    ended = [False]
    for text in record.actions:
        state.apply(state.parse_action(text))
        zones.append(GAME_ZONES[game.name](state.public_view()))
        ended.append(state.outcome is not None or zones[-1].round != zones[-2].round)

    leaks, checked = [], 0
    for seat in range(players):
        for k, line in sent[seat]:
            around = [zones[k - 1], zones[k]] if k else [zones[0]]
            visible = set().union(*(z.hands[seat] | z.public for z in around))
            if ended[k]:
                visible |= set().union(*zones[k - 1].hands)
            hidden = set().union(*(z.hidden | set().union(
                *(h for i, h in enumerate(z.hands) if i != seat)) for z in around))
            bad = (card_tokens(line) & hidden) - visible
            checked += 1
            if bad:
                leaks.append(f"seat {seat} after action {k}: {sorted(bad)} in {line!r}")
    return checked, leaks


@pytest.mark.parametrize(("name", "players", "seed"), [
    ("fake", 3, 1), ("fake", 4, 2),
    ("phase10", 2, 1), ("phase10", 4, 2),
    ("fivecrowns", 2, 1), ("fivecrowns", 5, 2),
    ("solitaire", 1, 1), ("solitaire", 1, 2),
])
def test_no_line_names_a_hidden_card(name: str, players: int, seed: int) -> None:
    game = fakegame.GAME if name == "fake" else find_game(name)
    checked, leaks = leaks_in_game(game, players, seed)
    assert checked > 50
    assert leaks == [], "\n".join(leaks[:10])


class LeakyState(fakegame.FakeState):
    def observation(self, seat: int) -> fakegame.FakeView:
        view = super().observation(seat)
        view.data["next_card"] = self.draw_pile[-1].text if self.draw_pile else None
        return view


def test_the_checker_catches_a_leaky_observation() -> None:
    def new_game(rules: Any, players: int, seed: int) -> LeakyState:
        return LeakyState(**vars(fakegame.new_game(rules, players, seed)))

    leaky = dataclasses.replace(fakegame.GAME, new_game=new_game)
    GAME_ZONES["fake-leaky"] = GAME_ZONES["fake"]
    leaky = dataclasses.replace(leaky, name="fake-leaky")
    _, leaks = leaks_in_game(leaky, 2, 3)
    assert leaks and "next_card" in leaks[0]
