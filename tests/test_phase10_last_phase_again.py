"""Phase 10: the last phase laid again (win=last-phase-and-out) and the tie-break hands' phase,
under any-order and phases-to-win together (issue 19)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.engine.game import find_game
from meldref.engine.phase10 import Phase10Rules, Phase10State
from meldref.engine.position import PositionError, read_position

INFO = find_game("phase10")
RELAY = Phase10Rules(any_order=True, win="last-phase-and-out", phases_to_win=1, dealer="seat0")
# Holds both phase 1 (R5 B5 G5 + R7 B7 G7) and phase 10 (the five 5s + R7 B7 G7).
HOLDS_1_AND_10 = "R5 B5 G5 Y5 B5 R7 B7 G7 R1 R2 R3"
OTHER = "Y1 Y2 Y4 Y6 Y8 Y9 Y10 Y11 G1 G2"
LAYS = {1: "lay set:R5,B5,G5 set:R7,B7,G7", 10: "lay set:R5,B5,G5,Y5,B5 set:R7,B7,G7"}


def done_with(completed: list[int], hand: str = HOLDS_1_AND_10,
              rules: Phase10Rules = RELAY, **top: Any) -> Phase10State:
    """Hand 2, seat 0 to play (drawn), having completed `completed` in hands before."""
    data = {
        "game": "phase10", "seed": 1, "hand_number": 2, "to_move": 0, "decision": "play",
        "discard_pile": "G12", "draw_pile": "shuffled",
        "seat": [{"hand": hand, "completed": completed},
                 {"hand": OTHER, "completed": [2]}],
        **top,
    }
    state = read_position(INFO, rules, data).start()
    assert isinstance(state, Phase10State)
    return state


def test_laying_the_last_phase_again_completes_nothing_new() -> None:
    # Seat 0 made phase 3 in hand 1: phases-to-win=1 is reached, but it did not go out, so it
    # lays the final phase again before it may hit; that lay completes nothing.
    state = done_with([3])
    phase = state.phase_now[0]
    assert phase == RELAY.final_phase
    state.apply(state.parse_action(LAYS[phase]))
    assert state.laid[0] == phase and state.completed[0] == (3,)
    state.apply(state.parse_action("discard R1"))
    assert max(map(len, state.completed)) <= RELAY.target


def test_a_position_may_show_the_last_phase_laid_again_under_any_order() -> None:
    # The state the lay above reaches: laid = the final phase, not among those completed.
    final = RELAY.final_phase
    hand = "R1 R2 R3" if final == 10 else "Y5 B5 R1 R2 R3"
    groups = LAYS[final].split()[1:]
    data_seat = {"hand": hand, "completed": [3], "laid": final}
    state = done_with([3], hand=hand, table=[{"owner": 0, "group": g} for g in groups],
                      seat=[data_seat, {"hand": OTHER, "completed": [2]}])
    assert state.completed[0] == (3,) and state.phase_now[0] == final
    with pytest.raises(PositionError, match="completed = 3, 1: a seat completes 1 phase at most"):
        done_with([3, 1], hand=HOLDS_1_AND_10)


runner = CliRunner()


def match_game(seed: int) -> dict[str, Any]:
    result = runner.invoke(app, [
        "match", "phase10", "--players", "3", "--seed", str(seed), "-r", "any-order=true",
        "-r", "win=last-phase-and-out", "-r", "phases-to-win=1", "-r", "turn-cap=6", "--json",
    ], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (game,) = json.loads(result.stdout)["games"]
    return dict(game)


def ranked_by_the_rules(game: dict[str, Any]) -> bool:
    """Places as spec/RULES.md orders them: the winners first, then more phases completed,
    then the lower total; equal players share a place."""
    keys = [(-p, s) for p, s in zip(game["phases"], game["scores"], strict=True)]
    winners = set(game["winner_seats"])
    for seat, place in enumerate(game["places"]):
        if seat in winners:
            if place != 1:
                return False
            continue
        ahead = sum(1 for t, k in enumerate(keys) if t not in winners and k < keys[seat])
        if place != len(winners) + ahead + 1:
            return False
    return True


@pytest.mark.parametrize("seed", [6, 11])
def test_the_issues_matches_count_one_phase_at_most_and_place_by_it(seed: int) -> None:
    game = match_game(seed)
    assert max(game["phases"]) <= 1
    assert ranked_by_the_rules(game)
    if "hand-cap" in game["detail"]:
        # The hand cap's winners: most phases completed, then the lowest total.
        best = max(game["phases"])
        low = min(s for p, s in zip(game["phases"], game["scores"], strict=True) if p == best)
        assert all(game["phases"][w] == best and game["scores"][w] == low
                   for w in game["winner_seats"])


# -- the tie-break hands' phase --------------------------------------------------------------


@pytest.mark.parametrize(("options", "final"), [
    ({}, 10),
    ({"phases": "odd"}, 9),
    ({"phases_to_win": 5}, 5),  # in order: phases 6..10 are never played
    ({"phases": "even", "phases_to_win": 2}, 4),
    # any-order plays the whole sequence, so its last phase stands for phase 10 whatever
    # phases-to-win counts (seeds 002/003: the tied players replay phase 10).
    ({"any_order": True}, 10),
    ({"any_order": True, "phases_to_win": 3}, 10),
    ({"any_order": True, "phases": "even", "phases_to_win": 1}, 10),
    ({"any_order": True, "phases": "odd", "phases_to_win": 4}, 9),
])
def test_the_phase_that_takes_phase_10s_place(options: dict[str, Any], final: int) -> None:
    assert Phase10Rules(**options).final_phase == final


def test_tie_break_hands_under_any_order_and_phases_to_win_are_on_the_last_phase() -> None:
    rules = Phase10Rules(any_order=True, phases_to_win=2, dealer="seat0")
    data = {
        "game": "phase10", "seed": 2, "hand_number": 6, "to_move": 0, "decision": "play",
        "tiebreak": [0, 1], "discard_pile": "G12", "draw_pile": "shuffled",
        "seat": [{"hand": HOLDS_1_AND_10, "completed": [4, 7], "score": 50},
                 {"hand": OTHER, "completed": [2, 9], "score": 50}],
    }
    state = read_position(INFO, rules, data).start()
    assert isinstance(state, Phase10State)
    assert state.phase_now == (10, 10)
    assert state.observation(0).phases_left == (10,)
    why = state.why_illegal(state.parse_action(LAYS[1]))
    assert why is not None and "phase 10" in why
    state.apply(state.parse_action(LAYS[10]))
    assert state.completed == ((4, 7), (2, 9))
