"""The expert bots: legal in every game (in-process and as programs), deterministic given their
seed, fine across several games in one object, reading only their seat's view; the engine's
views come back from their JSON exactly."""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import ROOT
from typer.testing import CliRunner

from meldref.bots import builtin_bot
from meldref.bots.fivecrowns.expert import FiveCrownsExpertBot
from meldref.bots.phase10.expert import Phase10ExpertBot
from meldref.bots.solitaire.expert import SolitaireExpertBot
from meldref.cli import app
from meldref.engine.cards import Card
from meldref.engine.common import DRAW_DISCARD
from meldref.engine.fivecrowns.solver import fewest_left, fewest_left_without
from meldref.engine.fivecrowns.view import FiveCrownsView
from meldref.engine.game import GameInfo, find_game
from meldref.engine.phase10.actions import Discard
from meldref.engine.phase10.view import Phase10View
from meldref.engine.play import play_inprocess
from meldref.engine.position import position_of, read_position
from meldref.engine.solitaire import SolitaireView
from meldref.replay.files import load_replay
from meldref.replay.positions import position_toml
from meldref.settings import parse_rules

GAMES = {"phase10": Phase10ExpertBot, "fivecrowns": FiveCrownsExpertBot,
         "solitaire": SolitaireExpertBot}
runner = CliRunner()


def seat_bots(game: str, names: list[str], seed: int) -> list[Any]:
    info = find_game(game)
    return [builtin_bot(info.name, n, f"{seed}:{i}") for i, n in enumerate(names)]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_expert_is_a_builtin_bot_of_every_game(game: str) -> None:
    bot = builtin_bot(game, "expert", 3)
    assert isinstance(bot, GAMES[game]) and bot.name == "expert"


@pytest.mark.parametrize(("game", "names", "seed"), [
    ("phase10", ["expert", "greedy"], 1), ("phase10", ["greedy", "expert"], 2),
    ("phase10", ["random", "expert", "expert"], 3), ("fivecrowns", ["greedy", "expert"], 1),
    ("fivecrowns", ["expert", "random", "expert"], 2), ("solitaire", ["expert"], 1),
    ("solitaire", ["expert"], 2),
])
def test_experts_play_legal_games_to_the_end(game: str, names: list[str], seed: int) -> None:
    info = find_game(game)
    # play_inprocess raises IllegalActionError on any illegal action.
    outcome, actions = play_inprocess(info, info.rules(), seat_bots(game, names, seed), seed,
                                      max_actions=20000)
    assert outcome.termination.value == "normal" and actions


def test_phase10_expert_under_other_rules() -> None:
    info = find_game("phase10")
    rules = parse_rules(info.rules_type, {"any-order": "true", "run-wrap": "true",
                                          "skip-victim": "next", "going-out": "must-discard",
                                          "phases": "even"})
    outcome, _ = play_inprocess(info, rules, seat_bots("phase10", ["expert"] * 3, 4), 4,
                                max_actions=20000)
    assert outcome.termination.value == "normal"


def play_some(game: str, bots: list[Any], seed: int, limit: int) -> list[str]:
    """The first `limit` actions of a game (whole games of experts take seconds)."""
    info = find_game(game)
    state = info.new_game(info.rules(), len(bots), seed)
    actions: list[str] = []
    while state.to_move is not None and len(actions) < limit:
        action = bots[state.to_move].act(state.observation(state.to_move))
        state.apply(action)
        actions.append(str(action))
    return actions


@pytest.mark.parametrize("game", sorted(GAMES))
def test_experts_are_deterministic_given_their_seed(game: str) -> None:
    names = ["expert"] if game == "solitaire" else ["expert", "expert"]
    runs = [play_some(game, seat_bots(game, names, 9), 9, 80) for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0]) >= 28


@pytest.mark.parametrize("game", sorted(GAMES))
def test_one_expert_object_plays_several_games(game: str) -> None:
    """Seats keep their bot across a match's games: its memory starts afresh with each game,
    so it plays a game the same way whether or not it played another one before."""
    names = ["expert"] if game == "solitaire" else ["expert", "expert"]
    used = seat_bots(game, names, 1)
    play_some(game, used, 21, 60)
    assert play_some(game, used, 22, 60) == play_some(game, seat_bots(game, names, 1), 22, 60)


def test_the_phase10_expert_notices_what_its_rival_takes() -> None:
    """Seat 1 takes seat 0's discard: seat 0 marks that number as wanted by seat 1."""
    info = find_game("phase10")
    state = info.new_game(parse_rules(info.rules_type, {"dealer": "seat0"}), 2, 5)
    expert = Phase10ExpertBot(0)
    mine = None
    while mine is None or state.to_move != 1:
        if state.to_move == 0:
            action = expert.act(state.observation(0))
            state.apply(action)
            numbered = isinstance(action, Discard) and action.card.kind.value == "number"
            mine = action.card if numbered else None
        elif state.decision == "draw":
            state.apply(state.observation(1).draw_options()[0])
        else:
            plain = [c for c in state.observation(1).hand if c.kind.value == "number"]
            state.apply(Discard(plain[0]))
    assert state.decision == "draw"
    state.apply(DRAW_DISCARD)  # seat 1 takes it...
    rival_hand = [c for c in state.observation(1).hand if c is not mine]
    state.apply(Discard(rival_hand[0]))  # ...and throws another card
    expert.act(state.observation(0))
    assert expert.memory.wanted[1][mine.rank] == 1


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_view_rebuilt_from_its_json_gives_the_same_decisions(game: str) -> None:
    """A view rebuilt from its JSON (all a protocol bot gets) yields the same decisions, for
    two bots of the same history."""
    info = find_game(game)
    rules = info.rules()
    state = info.new_game(rules, 1 if game == "solitaire" else 2, 13)
    direct, rebuilt = GAMES[game](1), GAMES[game](1)
    for _ in range(60):
        if state.to_move is None:
            break
        view = state.observation(state.to_move)
        if view.seat == 1:
            state.apply(builtin_bot(info.name, "greedy", 0).act(view))
            continue
        action = direct.act(view)
        assert str(action) == str(rebuilt.act(rebuild(game, view.to_json(), rules)))
        state.apply(action)


# The built-in bots that decide from the state they are given: at every point of a game, a new
# bot on the position written there (as a file holds it) plays what the game's bot played, so
# a game begun from a position (`replay position`, `match --position`) goes on as it went.
# The random bots draw from one generator through the game, as a random player would.
STATELESS = [("solitaire", "greedy", 1), ("solitaire", "expert", 1),
             ("fivecrowns", "greedy", 3), ("phase10", "greedy", 3),
             # Known (issue 19): the Phase 10 expert remembers what it saw through a hand
             # (cards buried in the discard pile, what its rival took), which no position
             # holds; a new expert on the position can discard otherwise. Strict: once it
             # decides from the state alone this passes and the mark must go.
             pytest.param("phase10", "expert", 2, marks=pytest.mark.xfail(
                 strict=True, reason="the Phase 10 expert decides from its memory of the hand"))]


@pytest.mark.parametrize(("game", "name", "players"), STATELESS)
def test_a_new_bot_on_the_position_decides_as_the_games_bot(game: str, name: str,
                                                            players: int) -> None:
    info = find_game(game)
    rules = info.rules()
    for seed in (79, 5) if game == "solitaire" else (79,):
        state = info.new_game(rules, players, seed)
        bots = [builtin_bot(game, name, seed * 10 + s) for s in range(players)]
        for point in range(150):
            if (seat := state.to_move) is None:
                break
            text = position_toml(position_of(state), rules)
            data = tomllib.loads(text)
            data.pop("rules", None)
            fresh = read_position(info, rules, data).start()
            action = str(bots[seat].act(state.observation(seat)))
            new_bot = builtin_bot(game, name, seed * 10 + seat)
            assert str(new_bot.act(fresh.observation(seat))) == action, (seed, point)
            state.apply(state.parse_action(action))


def test_a_solitaire_game_from_a_position_goes_on_as_it_went(tmp_path: Path) -> None:
    """Issue 19: match, replay position --at 3, match --position played alike for 10 actions,
    then `place 11 QD` against `place 11 4C`."""
    first, position, again = tmp_path / "game.jsonl", tmp_path / "at3.toml", tmp_path / "on.jsonl"
    for args in (["match", "solitaire", "--bot", "builtin:expert", "--seed", "79",
                  "--replay", str(first)],
                 ["replay", "position", str(first), "--at", "3", "-o", str(position)],
                 ["match", "--position", str(position), "--bot", "builtin:expert",
                  "--replay", str(again)]):
        result = runner.invoke(app, args, catch_exceptions=False)
        assert result.exit_code == 0, result.output
    played = [str(r["action"]) for _, r in load_replay(first).actions()]
    replayed = [str(r["action"]) for _, r in load_replay(again).actions()]
    assert len(played) > 13 and replayed == played[3:]


def rebuild(game: str, data: dict[str, Any], rules: Any) -> Any:
    if game == "phase10":
        return Phase10View.from_json(data, rules)
    return {"fivecrowns": FiveCrownsView, "solitaire": SolitaireView}[game].from_json(data)


def views(info: GameInfo, players: int, seed: int, limit: int = 3000) -> Iterator[Any]:
    state = info.new_game(info.rules(), players, seed)
    bots = [builtin_bot(info.name, "random", s) for s in range(players)]
    for _ in range(limit):
        if state.to_move is None:
            return
        for seat in range(players):
            yield state.observation(seat)
        state.apply(bots[state.to_move].act(state.observation(state.to_move)))


@pytest.mark.parametrize(("game", "players"), [("phase10", 3), ("fivecrowns", 4),
                                               ("solitaire", 1)])
def test_views_come_back_from_their_json(game: str, players: int) -> None:
    info = find_game(game)
    rules = info.rules()
    for seed in (1, 2) if game != "fivecrowns" else (1,):
        for view in views(info, players, seed):
            data = view.to_json()
            assert rebuild(game, data, rules).to_json() == data


def test_fewest_left_counts_cards_not_points() -> None:
    hand = [Card.parse(t) for t in ["3H", "4H", "7D", "8D", "3S", "3C", "X"]]
    assert fewest_left(hand, 12) == 1  # 3H3S3C, 7D8DX: only 4H is left
    assert fewest_left([Card.parse(t) for t in ["3H", "4H", "9S"]], 12) == 3
    without = fewest_left_without(hand, 12)
    assert without[Card.parse("4H")] == 0
    assert all(without[c] == fewest_left([x for x in hand if x is not c] +
                                         [x for x in hand if x is c][1:], 12)
               for c in set(hand))


@pytest.mark.parametrize("script", ["phase10/expert.py", "solitaire/expert.py",
                                    "solitaire/search.py"])
def test_experts_play_as_programs(script: str) -> None:
    """The expert and search modules are bot programs run as files (bots/<game>/<rung>.py)."""
    game = script.split("/")[0]
    seats = ["--bot", f"{sys.executable} {ROOT / 'bots' / script}"]
    if game != "solitaire":
        seats += ["--bot", "builtin:greedy"]
    result = runner.invoke(app, ["match", game, *seats, "--seed", "3", "--json", "--no-hints"])
    assert result.exit_code == 0, result.stdout
    line = json.loads(result.stdout)["games"][0]
    assert line["status"] == "ok" and line["faults"][0] == []
