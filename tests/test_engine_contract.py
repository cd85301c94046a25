"""Every game's state has every member of the `GameState` protocol, fresh and restored."""

from __future__ import annotations

import inspect
import random
from collections.abc import Sequence

import pytest

from meldref.bots import builtin_bot
from meldref.engine.game import GAME_NAMES, Event, GameState, find_game
from meldref.engine.play import play_inprocess

MEMBERS = sorted(name for name in vars(GameState) if not name.startswith("_"))
# A data descriptor: a property, or the attribute of a class compiled by mypyc (setup.py).
PROPERTIES = sorted(name for name in MEMBERS if inspect.isdatadescriptor(vars(GameState)[name]))
METHODS = sorted(set(MEMBERS) - set(PROPERTIES))
PLAYERS = {"phase10": 3, "fivecrowns": 3, "solitaire": 1}


def test_the_protocol_is_read_whole() -> None:
    # Guards the reading above: a member the protocol gains is checked without editing this file.
    assert {"to_move", "decision", "outcome", "scores", "rules"} <= set(PROPERTIES)
    assert {"opening_events", "parse_action", "why_illegal", "apply", "observation",
            "legal_actions", "autoplay_action", "snapshot", "public_view"} <= set(METHODS)


def states(name: str) -> list[tuple[str, GameState]]:
    game = find_game(name)
    state = game.new_game(game.rules(), PLAYERS[name], 5)
    return [("new", state), ("restored", game.from_snapshot(state.snapshot()))]


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_member_is_there(name: str) -> None:
    for how, state in states(name):
        for member in PROPERTIES:
            assert hasattr(state, member), f"{name} ({how}) state lacks {member}"
        for member in METHODS:
            assert callable(getattr(state, member, None)), f"{name} ({how}) lacks {member}()"
            protocol = inspect.signature(getattr(GameState, member))
            mine = inspect.signature(getattr(type(state), member))
            assert list(mine.parameters)[:len(protocol.parameters)] == list(protocol.parameters)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_members_answer_with_the_promised_kinds(name: str) -> None:
    for _, state in states(name):
        players = PLAYERS[name]
        scores = state.scores
        assert isinstance(scores, Sequence) and len(scores) == players
        assert all(isinstance(s, int) for s in scores)
        assert all(isinstance(e, Event) for e in state.opening_events())
        assert state.to_move is not None and isinstance(state.decision, str)
        assert state.outcome is None
        assert state.observation(state.to_move).to_json()["seat"] == state.to_move
        action = state.autoplay_action()
        assert state.why_illegal(action) is None
        assert action in state.legal_actions()
        assert str(state.parse_action(str(action))) == str(action)
        assert state.public_view() == state.snapshot()


@pytest.mark.parametrize("name", GAME_NAMES)
def test_the_running_scores_end_as_the_outcome_scores(name: str) -> None:
    game = find_game(name)
    bots = [builtin_bot(game.name, "greedy", i) for i in range(PLAYERS[name])]
    state = game.new_game(game.rules(), len(bots), 2)
    while (seat := state.to_move) is not None:
        state.apply(bots[seat].act(state.observation(seat)))
    assert state.outcome is not None
    assert tuple(state.scores) == state.outcome.scores


def test_solitaire_scores_count_the_piles_closed() -> None:
    game = find_game("solitaire")
    outcome, _ = play_inprocess(game, game.rules(), [builtin_bot(game.name, "greedy", 0)], 11)
    state = game.new_game(game.rules(), 1, 11)
    seen = [state.scores[0]]
    while state.to_move is not None:
        state.apply(builtin_bot(game.name, "greedy", 0).act(state.observation(0)))
        seen.append(state.scores[0])
        assert seen[-1] == state.observation(0).to_json()["piles_closed"]
    assert seen == sorted(seen) and seen[-1] == outcome.detail["piles_closed"]


@pytest.mark.parametrize(("name", "rules"), [
    ("phase10", {}),
    ("fivecrowns", {}),
    ("fivecrowns", {"natural": "group"}),
    ("solitaire", {}),
    ("solitaire", {"natural": "group"}),
])
def test_the_state_lists_the_legal_actions_of_the_view_of_the_seat_to_move(
    name: str, rules: dict[str, str]
) -> None:
    # Five Crowns and Solitaire list them without building the view (for speed), through the
    # same functions: the two must agree in every position, going out and last turns included.
    game = find_game(name)
    rng = random.Random(3)
    laying = 0  # Five Crowns discards with groups: going out, or laying on a last turn
    for seed in range(4 if name == "solitaire" else 2):
        state = game.new_game(game.rules(**rules), PLAYERS[name], seed)
        while (seat := state.to_move) is not None:
            actions = state.legal_actions()
            assert actions == state.observation(seat).legal_actions()
            laying += sum(1 for a in actions if ":" in str(a))
            state.apply(rng.choice(actions))
        assert state.legal_actions() == []
    assert laying > 0 or name != "fivecrowns"
