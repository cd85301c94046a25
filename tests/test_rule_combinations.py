"""Random games over random combinations of every rule option of each game at once (issue 19),
checking the invariants the spec states: a Phase 10 seat never completes more phases than end
the game, places follow the documented tie-breaks, and every position a game reaches reads
back from its file (the TOML text written there, its `[rules]` included) as the same state.

The options are drawn from the rules dataclass itself (its `Literal`, `bool` and whole-number
fields), so an option added later is drawn too; only the whole numbers' ranges are chosen
here, small enough that games stay short. The default run is a few examples per game (about
half a minute in all), seated with the bots that decide at once (not `search`, whose roll-outs
made one drawn Five Crowns game of eight seats outlast the test's 300 s); the `slow` one plays
more, every bot seated, reading more of the positions through TOML (`pytest -m slow
tests/test_rule_combinations.py`, several minutes).
"""

from __future__ import annotations

import dataclasses
import json
import tomllib
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from meldref.bots import builtin_bot, builtin_names
from meldref.engine.game import GameInfo, GameState, find_game
from meldref.engine.phase10 import Phase10Rules
from meldref.engine.position import position_of, read_position
from meldref.replay.positions import position_toml
from meldref.settings import parse_rules

MAX_ACTIONS = 3000  # a game longer than this is checked up to there (its end is not reached)

# The whole-number options, by game: ranges that keep a game to a few hundred actions.
WHOLES: dict[tuple[str, str], st.SearchStrategy[int | None]] = {
    ("phase10", "turn_cap"): st.integers(1, 30),
    ("phase10", "hand_cap"): st.none() | st.integers(1, 10),
    ("phase10", "phases_to_win"): st.none() | st.integers(1, 10),
    ("fivecrowns", "turn_cap"): st.none() | st.integers(1, 6),
}
PLAYERS = {"phase10": st.integers(2, 6), "fivecrowns": st.integers(2, 8),
           "solitaire": st.just(1)}


def field_values(game: str, rules_type: type, name: str) -> st.SearchStrategy[Any]:
    """Every value a rule option takes, from its annotation (`Literal`, `bool`, whole)."""
    hint = typing.get_type_hints(rules_type)[name]
    if typing.get_origin(hint) is Literal:
        return st.sampled_from(typing.get_args(hint))
    if hint is bool:
        return st.booleans()
    assert typing.get_origin(hint) in (None, types.UnionType, typing.Union), hint
    return WHOLES[game, name]


def settle_phase10(values: dict[str, Any]) -> dict[str, Any]:
    """Clear what fixed-hands excludes (spec/RULES.md), and bound phases-to-win by the
    sequence, so that those combinations are drawn as often as the others."""
    length = 10 if values["phases"] == "all" else 5
    if values["phases_to_win"] is not None:
        values["phases_to_win"] = min(values["phases_to_win"], length)
    if values["fixed_hands"]:
        values.update(any_order=False, phases_to_win=None, win="last-phase")
        if values["hand_cap"] is not None:
            values["hand_cap"] = max(values["hand_cap"], length)
    return values


def settle_fivecrowns(values: dict[str, Any], players: int) -> dict[str, Any]:
    if values["party"] == "off" and players > 7:  # two decks serve seven players at most
        values["party"] = "auto"
    return values


# The bots whose every decision is quick: the rules checked here do not depend on the seats'
# strength, and a search bot's roll-outs cost seconds a decision in a long game.
QUICK_BOTS = ("random", "greedy", "expert")


@st.composite
def games(draw: st.DrawFn, game: str, quick: bool = False
          ) -> tuple[GameInfo, Any, int, int, list[str]]:
    info = find_game(game)
    players = draw(PLAYERS[game])
    values = {f.name: draw(field_values(game, info.rules_type, f.name))
              for f in dataclasses.fields(info.rules_type)}
    if game == "phase10":
        values = settle_phase10(values)
    elif game == "fivecrowns":
        values = settle_fivecrowns(values, players)
    names = [name for name in builtin_names(game) if not quick or name in QUICK_BOTS]
    bots = [draw(st.sampled_from(names)) for _ in range(players)]
    return info, info.rules(**values), players, draw(st.integers(0, 10**6)), bots


def read_back(info: GameInfo, state: GameState, as_file: bool) -> GameState:
    """The state that the position written at `state` holds: through the text of its file,
    rules and all, or (faster, `as_file` false) through JSON, the values a file holds."""
    rules = getattr(state, "rules")  # noqa: B009 - every game's state has its settled rules
    if not as_file:
        return read_position(info, rules, json.loads(json.dumps(position_of(state)))).start()
    data = tomllib.loads(position_toml(position_of(state), rules))
    options = {k: str(v).lower() if isinstance(v, bool) else str(v)
               for k, v in data.pop("rules", {}).items()}
    written = parse_rules(info.rules_type, options)
    assert written == rules
    return read_position(info, written, data).start()


def play_checked(game: tuple[GameInfo, Any, int, int, list[str]],
                 check_step: Callable[[GameState], None], file_every: int) -> GameState:
    """Play `game`, checking every position it reaches, through the TOML text of its file at
    every `file_every`-th (writing TOML is most of the time) and through JSON between."""
    info, rules, players, seed, names = game
    state = info.new_game(rules, players, seed)
    bots = [builtin_bot(info.name, name, seed + s) for s, name in enumerate(names)]
    for point in range(MAX_ACTIONS):
        if (seat := state.to_move) is None:
            break
        check_step(state)
        copy = read_back(info, state, as_file=point % file_every == 0)
        assert copy.snapshot() == state.snapshot()
        state.apply(bots[seat].act(state.observation(seat)))
    return state


# -- what each game's spec says of places --------------------------------------------------------


def phase10_step(state: Any) -> None:
    assert all(len(done) <= state.rules.target for done in state.completed)


def phase10_places(state: Any) -> None:
    """spec/RULES.md, "The end of the game" and "Places"."""
    rules: Phase10Rules = state.rules
    outcome, detail = state.outcome, state.outcome.detail
    completed = detail["phases_completed"]
    assert completed == [len(c) for c in state.completed]
    assert max(completed) <= rules.target
    winners = tuple(s for s, p in enumerate(outcome.places) if p == 1)

    def key(s: int) -> tuple[int, int]:
        return (0, state.scores[s]) if rules.fixed_hands else (-completed[s], state.scores[s])

    for s, place in enumerate(outcome.places):
        if s not in winners:
            ahead = sum(1 for t in range(state.players) if t not in winners and key(t) < key(s))
            assert place == len(winners) + ahead + 1
    decided = detail["decided_by"]
    finished = rules.fixed_hands or all(completed[w] >= rules.target for w in winners)
    contenders = [s for s in range(state.players)
                  if rules.fixed_hands or completed[s] >= rules.target]
    low = min((state.scores[s] for s in contenders), default=None)
    last = state.history[-1]
    if decided == "hand-cap":
        assert detail["hands"] == rules.hand_cap
        if not last["tiebreak"]:
            best = min(key(s) for s in range(state.players))
            assert winners == tuple(s for s in range(state.players) if key(s) == best)
        else:  # during tie-break hands the tied players share the win
            assert finished and len({state.scores[w] for w in winners}) == 1
        return
    assert finished
    if decided == "phase":
        assert contenders == list(winners) and len(winners) == 1
    elif decided == "phase-and-out":
        assert rules.win == "last-phase-and-out" and winners == (last["went_out"],)
    elif decided in ("score", "shared"):
        assert all(state.scores[w] == low for w in winners)
        assert winners == tuple(s for s in contenders if state.scores[s] == low)
        assert (len(winners) > 1) == (decided == "shared")
    else:  # won in a tie-break hand, by a player tied for the lowest total
        assert decided in ("tiebreak-first-out", "tiebreak-first-to-lay") and last["tiebreak"]
        assert len(winners) == 1 and state.scores[winners[0]] == low


def fivecrowns_places(state: Any) -> None:
    """spec/RULES.md: places follow the totals; the tie-break round's points place the tied."""
    outcome = state.outcome
    round_points = outcome.detail["tiebreak_points"] or [0] * state.players

    def key(s: int) -> tuple[int, int]:
        return (state.scores[s], round_points[s])

    for s, place in enumerate(outcome.places):
        assert place == 1 + sum(1 for t in range(state.players) if key(t) < key(s))
    low = min(state.scores)
    assert all(state.scores[s] == low for s, p in enumerate(outcome.places) if p == 1)


def solitaire_places(state: Any) -> None:
    """spec/RULES.md: won (place 1) when every pile is closed, else the deck wins (place 2)."""
    won = all(state.closed)
    assert state.outcome.places == ((1,) if won else (2,))
    assert state.outcome.scores == (sum(state.closed),)


ENDS: dict[str, tuple[Callable[[Any], None], Callable[[Any], None]]] = {
    "phase10": (phase10_step, phase10_places),
    "fivecrowns": (lambda state: None, fivecrowns_places),
    "solitaire": (lambda state: None, solitaire_places),
}


def check_game(game: tuple[GameInfo, Any, int, int, list[str]], file_every: int) -> None:
    step, places = ENDS[game[0].name]
    state = play_checked(game, step, file_every)
    if state.outcome is not None:
        assert state.outcome.scores == tuple(state.scores)
        places(state)


BOUNDED = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LONG = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# Always played first: the combination of issue 19, where laying the last phase again completed
# a phase past phases-to-win (this game broke the target and the places before the fix).
EXAMPLES = {"phase10": [(find_game("phase10"), Phase10Rules(
    any_order=True, win="last-phase-and-out", phases_to_win=1, turn_cap=6, hand_cap=30),
    3, 0, ["greedy"] * 3)]}


def run_games(name: str, runs: settings, file_every: int, quick: bool = False) -> None:
    test = given(games(name, quick))(lambda game: check_game(game, file_every))
    for game in EXAMPLES.get(name, []):
        test = example(game)(test)
    runs(test)()


@pytest.mark.parametrize("name", ["phase10", "fivecrowns", "solitaire"])
def test_random_games_under_random_option_combinations_keep_the_spec(name: str) -> None:
    run_games(name, BOUNDED, file_every=10, quick=True)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["phase10", "fivecrowns", "solitaire"])
def test_many_random_games_under_random_option_combinations_keep_the_spec(name: str) -> None:
    run_games(name, LONG, file_every=3)


def test_every_rule_option_has_values_to_draw() -> None:
    """Each field of each game's rules has a strategy (a new whole-number option without a
    range in WHOLES fails here, not silently)."""
    for name in ("phase10", "fivecrowns", "solitaire"):
        info = find_game(name)
        for f in dataclasses.fields(info.rules_type):
            assert isinstance(field_values(name, info.rules_type, f.name), st.SearchStrategy)
