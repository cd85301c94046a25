"""Phase 10 hands' ends and the game's end (digest 1.6-1.8): scoring, advancement, winners."""

from __future__ import annotations

import pytest
from phase10_positions import kinds, play, position

from meldref.engine.cards import Card
from meldref.engine.game import Termination
from meldref.engine.phase10 import Phase10Rules, Phase10State, card_points

NINE = [1, 2, 3, 4, 5, 6, 7, 8, 9]
PHASE10 = "R8 B8 G8 Y8 R8 R3 B3 G3 Y1"


def rules(**values: object) -> Phase10Rules:
    return Phase10Rules(dealer="seat0", **values)  # type: ignore[arg-type]


def test_card_points() -> None:
    points = {t: card_points(Card.parse(t)) for t in ("R1", "B9", "G10", "Y12", "S", "W")}
    assert points == {"R1": 5, "B9": 5, "G10": 10, "Y12": 10, "S": 15, "W": 25}


def test_the_player_out_scores_zero_the_others_their_hands() -> None:
    state = position(["R1", "R1 R9 R10 R12 S W", "B2"], table=[(1, "set:R7,B7,G7")],
                     laid=[1, 1, None], scores=[10, 20, 30])
    events = play(state, "discard R1")
    end = events[1].public
    assert end["points"] == [0, 70, 5]  # laid cards do not count
    assert end["totals"] == [10, 90, 35] == list(state.scores)


def test_everyone_who_laid_advances_the_others_repeat() -> None:
    state = position(["R1", "B1", "B2"], laid=[1, 1, None], completed=[[1], [1], []])
    play(state, "discard R1")
    assert state.phase_now == (2, 2, 1)
    assert state.completed == ((1,), (1,), ())


def test_credit_counts_from_the_lay_not_from_winning() -> None:
    state = position(["R7 B7 G7 R8 B8 G8 Y2 Y4", "Y9"], draw="R1 B5 B6",
                     table=[(1, "set:R9,B9,G9")], laid=[None, 2], completed=[[], [1, 2]],
                     phase_now=[1, 2])
    play(state, "lay set:R7,B7,G7 set:R8,B8,G8")
    assert state.completed[0] == (1,)
    play(state, "discard Y2", "draw pile", "hit 1 Y9", "discard B6")  # seat 1 goes out
    assert state.hand_number == 2 and state.phase_now == (2, 3)


def test_laying_phase_10_does_not_win_at_once() -> None:
    state = position([PHASE10 + " Y8", "B1 B2"], phase_now=[10, 1], completed=[NINE, []],
                     draw="B5 B6")
    play(state, "lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3")
    assert state.outcome is None and state.to_move == 0
    events = play(state, "discard Y1", "draw pile", "discard B1")
    assert state.outcome is None and "hand_end" not in kinds(events)
    events = play(state, "draw pile", "hit 1 Y8", "discard B5")
    assert kinds(events)[-2:] == ["hand_end", "game_over"]
    outcome = state.outcome
    assert outcome is not None and outcome.winners == (0,)
    assert outcome.termination is Termination.NORMAL and outcome.places == (1, 2)
    assert outcome.detail["decided_by"] == "phase"
    assert events[-1].public == outcome.to_json()
    assert state.to_move is None and state.decision == "over"
    assert state.why_illegal(state.parse_action("draw pile")) == "the game is over"


def finish_two(scores: list[int], **values: object) -> Phase10State:
    """Seats 0 and 1 complete phase 10 this hand; seat 0 goes out, seat 1 keeps R1 (5)."""
    state = position(["Y1", "R1", "B2 B4"], rules=rules(**values), phase_now=[10, 10, 9],
                     laid=[10, 10, None], completed=[[*NINE, 10], [*NINE, 10], NINE[:8]],
                     scores=scores)
    play(state, "discard Y1")
    return state


def test_several_finish_the_lowest_total_wins() -> None:
    state = finish_two([40, 30, 0])
    assert state.outcome is not None and state.outcome.winners == (1,)
    assert state.outcome.places == (2, 1, 3) and state.outcome.detail["decided_by"] == "score"


def test_a_tie_is_broken_by_a_hand_among_the_tied() -> None:
    state = finish_two([55, 50, 0])
    assert state.outcome is None and state.tied == (0, 1)
    assert state.hand_number == 2 and state.playing == (True, True, False)
    assert state.phase_now == (10, 10, None) and state.hands[2] == []
    view = state.observation(state.to_move or 0)
    assert view.tiebreak and view.to_json()["seats"][2]["playing"] is False
    assert state.observation(0).victims == (1,)


def tiebreak_position(tiebreak: str) -> Phase10State:
    return position([PHASE10 + " Y8", "B1 B2", ""], rules=rules(tiebreak=tiebreak),
                    phase_now=[10, 10, None], completed=[[*NINE, 10]] * 2 + [NINE],
                    tied=[0, 1], playing=[0, 1], scores=[55, 55, 0], hand_number=2,
                    draw="B5 B6")


def test_tiebreak_first_out_wins() -> None:
    state = tiebreak_position("first-out")
    play(state, "lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3", "discard Y1", "draw pile",
         "discard B1")
    assert state.outcome is None
    events = play(state, "draw pile", "hit 1 Y8", "discard B5")
    assert state.outcome is not None and state.outcome.winners == (0,)
    assert state.outcome.detail["decided_by"] == "tiebreak-first-out"
    assert state.scores == (55, 55, 0)  # tie-break hands score nothing
    assert kinds(events)[-1] == "game_over"
    assert state.outcome.places == (1, 2, 3)


def test_tiebreak_first_to_lay_wins_at_once() -> None:
    state = tiebreak_position("first-to-lay")
    events = play(state, "lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3")
    assert kinds(events) == ["lay_down", "hand_end", "game_over"]
    assert events[1].public["ended"] == "tiebreak-lay"
    assert state.outcome is not None and state.outcome.winners == (0,)
    assert state.outcome.detail["decided_by"] == "tiebreak-first-to-lay"


def test_tiebreak_hand_with_nobody_out_is_replayed() -> None:
    state = position(["R1 R2", "B1 B2", ""], rules=rules(turn_cap=1), phase_now=[10, 10, None],
                     completed=[[*NINE, 10]] * 2 + [NINE], tied=[0, 1], playing=[0, 1],
                     turns=1, hand_number=2)
    events = play(state, "discard R1")
    assert kinds(events)[1] == "hand_end" and state.outcome is None
    assert state.tied == (0, 1) and state.hand_number == 3
    assert state.history[-1] == {"hand": 2, "ended": "turn-cap", "went_out": None,
                                 "tiebreak": True}


def test_tiebreak_shared() -> None:
    state = finish_two([55, 50, 0], tiebreak="shared")
    assert state.outcome is not None and state.outcome.winners == (0, 1)
    assert state.outcome.places == (1, 1, 3) and state.outcome.detail["decided_by"] == "shared"


def test_hand_cap_ends_the_game_on_the_turn_cap() -> None:
    state = position(["R1", "B1", "B2"], rules=rules(hand_cap=1), completed=[[1], [1, 2], [1]],
                     laid=[None, 3, None], scores=[0, 50, 10])
    play(state, "discard R1")
    outcome = state.outcome
    assert outcome is not None and outcome.termination is Termination.TURN_CAP
    assert outcome.winners == (1,) and outcome.places == (2, 1, 3)
    assert outcome.detail["decided_by"] == "hand-cap"


# -- variants (1.8) ----------------------------------------------------------------------------


def test_fixed_hands_everyone_moves_on_and_lowest_total_wins() -> None:
    state = position(["R1", "B1"], rules=rules(fixed_hands=True), laid=[None, None])
    play(state, "discard R1")
    assert state.phase_now == (2, 2) and state.completed == ((), ())
    state = position(["R1", "B1 W"], rules=rules(fixed_hands=True), phase_now=[10, 10],
                     hand_number=10, scores=[100, 60])
    play(state, "discard R1")
    assert state.outcome is not None and state.outcome.winners == (1,)
    assert state.scores == (100, 90) and state.outcome.detail["decided_by"] == "score"


def test_fixed_hands_last_hand_follows_the_phase_sequence() -> None:
    state = position(["R1", "B1"], rules=rules(fixed_hands=True, phases="odd"), phase_now=[7, 7],
                     hand_number=4)
    play(state, "discard R1")
    assert state.phase_now == (9, 9) and state.outcome is None
    play(state, "draw pile", str(state.observation(1).discard_options()[0]))
    assert state.hand_number == 5


def test_phases_to_win() -> None:
    state = position(["R1", "B1"], rules=rules(phases_to_win=3), phase_now=[3, 3],
                     laid=[3, None], completed=[[1, 2, 3], [1, 2]])
    play(state, "discard R1")
    assert state.outcome is not None and state.outcome.winners == (0,)


@pytest.mark.parametrize(("phases", "first", "second"), [("even", 2, 4), ("odd", 1, 3)])
def test_even_and_odd_phases(phases: str, first: int, second: int) -> None:
    state = position(["R1", "B1"], rules=rules(phases=phases), phase_now=[first, first],
                     laid=[first, None], completed=[[first], []])
    play(state, "discard R1")
    assert state.phase_now == (second, first)


def test_odd_phases_end_on_phase_9() -> None:
    state = position(["R1", "B1"], rules=rules(phases="odd"), phase_now=[9, 9],
                     laid=[9, None], completed=[[1, 3, 5, 7, 9], [1]])
    play(state, "discard R1")
    assert state.outcome is not None and state.outcome.winners == (0,)


def test_any_order_lays_a_named_phase_once() -> None:
    state = position([PHASE10, "B1 B2"], rules=rules(any_order=True),
                     phase_now=[None, None], completed=[[1, 2], []])
    reason = state.why_illegal(state.parse_action("lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3"))
    assert reason == "any-order: say which phase you lay, e.g. lay phase=3 ..."
    reason = state.why_illegal(state.parse_action("lay phase=1 set:R8,B8,G8,Y8,R8 set:R3,B3,G3"))
    assert reason == "phase 1 is not one you may lay; phases left: 3, 4, 5, 6, 7, 8, 9, 10"
    assert [lay.phase for lay in state.observation(0).lay_options()] == [9, 10]
    play(state, "lay phase=10 set:R8,B8,G8,Y8,R8 set:R3,B3,G3")
    assert state.completed[0] == (1, 2, 10) and state.phase_now[0] == 10
    play(state, "discard Y1")
    assert state.phase_now == (None, None) and state.outcome is None
    assert state.observation(0).phases_left == (3, 4, 5, 6, 7, 8, 9)


def test_any_order_first_to_complete_them_all_wins() -> None:
    state = position(["R7 B7 G7 R8 B8 G8", "B1"], rules=rules(any_order=True),
                     phase_now=[None, None], completed=[[2, 3, 4, 5, 6, 7, 8, 9, 10], [1]])
    play(state, "lay phase=1 set:R7,B7,G7 set:R8,B8,G8")
    assert state.outcome is not None and state.outcome.winners == (0,)
