"""The seeds' last Phase 10 readings as rule options (spec/RULES.md), each against its wording.

- seeds 000/001: "a player is chosen to be dealer (alternatively the deal may rotate to the
  left after each hand)": `deal-rotation=fixed`;
- seed 002: "a player wins when they complete phase 10 and run out of cards":
  `win=last-phase-and-out`;
- seed 003 (encyclopedia part): "a tie-break round is played in which everyone takes part":
  `tiebreak-players=everyone`.
"""

from __future__ import annotations

import pytest
from phase10_positions import kinds, play, position

from meldref.engine.game import RuleOptionError
from meldref.engine.phase10 import Phase10Rules, Phase10State
from meldref.settings import parse_rules

NINE = [1, 2, 3, 4, 5, 6, 7, 8, 9]
TEN = [*NINE, 10]
PHASE10 = "R8 B8 G8 Y8 R8 R3 B3 G3 Y1"


def rules(**values: object) -> Phase10Rules:
    return Phase10Rules(dealer="seat0", **values)  # type: ignore[arg-type]


def test_the_options_read_from_text_with_the_printed_rules_as_defaults() -> None:
    parsed = parse_rules(Phase10Rules, {"deal-rotation": "fixed", "win": "last-phase-and-out",
                                        "tiebreak-players": "everyone"})
    assert (parsed.deal_rotation, parsed.win, parsed.tiebreak_players) == (
        "fixed", "last-phase-and-out", "everyone")
    default = Phase10Rules()
    assert (default.deal_rotation, default.win, default.tiebreak_players) == (
        "left", "last-phase", "tied")


# -- seeds 000/001: a fixed dealer -------------------------------------------------------------


def end_first_hand(rotation: str) -> Phase10State:
    """Seat 0 goes out in hand 1, dealt by seat 0 (`dealer=seat0`)."""
    state = position(["R1", "B1 B2 B3 B4 B5 B6 B7 B8 B9 B10", "G1 G2 G3 G4 G5 G6 G7 G8 G9 G10"],
                     rules=rules(deal_rotation=rotation), laid=[1, None, None],
                     table=[(0, "set:R7,B7,G7"), (0, "set:R9,B9,G9")])
    play(state, "discard R1")
    assert state.hand_number == 2
    return state


def test_the_deal_passes_left_by_default() -> None:
    state = end_first_hand("left")
    assert state.dealer == 1 and state.to_move == 2


def test_a_fixed_dealer_deals_every_hand_and_the_same_seat_starts() -> None:
    state = end_first_hand("fixed")
    assert state.dealer == 0 and state.to_move == 1


def test_a_fixed_dealer_through_a_whole_game() -> None:
    from meldref.bots import builtin_bot
    from meldref.engine.phase10 import GAME

    dealers = set()
    state = GAME.new_game(Phase10Rules(deal_rotation="fixed", phases_to_win=2), 3, 5)
    bots = [builtin_bot("phase10", "greedy", s) for s in range(3)]
    while (seat := state.to_move) is not None:
        for event in state.apply(bots[seat].act(state.observation(seat))):
            if event.kind == "deal":
                dealers.add(event.public["dealer"])
    assert state.hand_number > 1 and len(dealers) == 1


# -- seed 002: win by completing the last phase and going out ---------------------------------


def finish_two(scores: list[int], **values: object) -> Phase10State:
    """Seats 0 and 1 complete phase 10 this hand; seat 0 goes out, seat 1 keeps R1 (5)."""
    state = position(["Y1", "R1", "B2 B4"], rules=rules(**values), phase_now=[10, 10, 9],
                     laid=[10, 10, None], completed=[TEN, TEN, NINE[:8]], scores=scores)
    play(state, "discard Y1")
    return state


def test_by_default_the_lowest_total_of_those_who_completed_wins() -> None:
    state = finish_two([60, 30, 0])
    assert state.outcome is not None and state.outcome.winners == (1,)


def test_must_go_out_the_seat_that_went_out_having_completed_it_wins() -> None:
    state = finish_two([60, 30, 0], win="last-phase-and-out")
    assert state.outcome is not None and state.outcome.winners == (0,)
    assert state.outcome.detail["decided_by"] == "phase-and-out"
    assert state.outcome.places == (1, 2, 3)


def completed_without_going_out(win: str) -> Phase10State:
    """Seat 0 lays phase 10 this hand; seat 1 (on phase 3) goes out."""
    state = position([PHASE10 + " Y8", "R1", "B1 B2 B3 B4 B5 B6 B7 B8 B9 B10"],
                     rules=rules(win=win), phase_now=[10, 3, 9], laid=[None, 3, None],
                     completed=[NINE, [1, 2, 3], NINE[:8]],
                     table=[(1, "set:R6,B6,G6,Y6"), (1, "run:R1,R2,R3,R4")], draw="B11 R5")
    play(state, "lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3", "discard Y1", "draw pile", "hit 2 R5",
         "discard R1")
    return state


def test_by_default_completing_phase_10_wins_without_going_out() -> None:
    state = completed_without_going_out("last-phase")
    assert state.outcome is not None and state.outcome.winners == (0,)


def test_must_go_out_completing_phase_10_alone_does_not_end_the_game() -> None:
    state = completed_without_going_out("last-phase-and-out")
    assert state.outcome is None and state.hand_number == 2
    assert state.completed[0] == tuple(TEN)
    # The phase made, not yet out: phase 10 again, to lay before hitting and going out.
    assert state.phase_now[0] == 10
    assert state.observation(0).phases_left == (10,)
    assert state.observation(0).to_json()["needs"] == "1 set of 5 + 1 set of 3"


def test_must_go_out_laying_the_last_phase_again_then_going_out_wins() -> None:
    state = position([PHASE10 + " Y8", "B1 B2 B3 B4 B5 B6 B7 B8 B9 B10"],
                     rules=rules(win="last-phase-and-out"), phase_now=[10, 4],
                     completed=[TEN, [1, 2, 3]], hand_number=5, scores=[90, 20], draw="B5 B6")
    play(state, "lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3")
    assert state.completed[0] == tuple(TEN)  # laid again, nothing new completed
    play(state, "hit 1 Y8")
    events = play(state, "discard Y1")
    assert kinds(events)[-2:] == ["hand_end", "game_over"]
    assert state.outcome is not None and state.outcome.winners == (0,)


def test_must_go_out_excludes_fixed_hands() -> None:
    with pytest.raises(RuleOptionError, match="fixed-hands and win=last-phase-and-out"):
        Phase10Rules(fixed_hands=True, win="last-phase-and-out")


# -- seed 003: a tie-break hand that everyone plays ---------------------------------------------


def test_by_default_only_the_tied_are_dealt_in() -> None:
    state = finish_two([55, 50, 0])
    assert state.tied == (0, 1) and state.playing == (True, True, False)


def test_everyone_is_dealt_into_the_tiebreak_hand_all_on_the_last_phase() -> None:
    state = finish_two([55, 50, 0], tiebreak_players="everyone")
    assert state.outcome is None and state.tied == (0, 1)
    assert state.playing == (True, True, True)
    assert state.phase_now == (10, 10, 10) and all(len(h) >= 10 for h in state.hands)
    assert state.to_move == 2  # left of the dealer (seat 1), as in any hand
    view = state.observation(2)
    assert view.tiebreak and view.phases_left == (10,)


def everyone_tiebreak(tiebreak: str) -> Phase10State:
    """A tie-break hand between seats 0 and 1 that seat 2 (not tied) plays too."""
    return position(
        ["B1 B2 B3 B4 B5 B6 B7 B8 B9 B10", "G1 G2 G4 G5 G6 G7 G8 G9 G10 G11",
         PHASE10 + " Y8"],
        rules=rules(tiebreak=tiebreak, tiebreak_players="everyone"), phase_now=[10, 10, 10],
        completed=[TEN, TEN, NINE], tied=[0, 1], playing=[0, 1, 2], scores=[55, 55, 0],
        hand_number=12, to_move=2, draw="B5 B6")


def test_everyone_a_seat_not_tied_going_out_decides_nothing() -> None:
    state = everyone_tiebreak("first-out")
    play(state, "lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3", "hit 1 Y8")
    events = play(state, "discard Y1")
    assert "hand_end" in kinds(events) and state.outcome is None
    assert state.hand_number == 13 and state.tied == (0, 1)
    assert state.scores == (55, 55, 0)  # tie-break hands score nothing
    assert state.completed[2] == tuple(NINE)  # nor complete anything


def test_everyone_first_to_lay_only_a_tied_seat_wins_by_laying() -> None:
    state = everyone_tiebreak("first-to-lay")
    events = play(state, "lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3")
    assert kinds(events) == ["lay_down"] and state.outcome is None


def test_everyone_a_tied_seat_going_out_wins() -> None:
    state = position(
        [PHASE10 + " Y8", "G1 G2 G4 G5 G6 G7 G8 G9 G10 G11", "B1 B2 B3 B4 B5 B6 B7 B8 B9 B10"],
        rules=rules(tiebreak_players="everyone"), phase_now=[10, 10, 10],
        completed=[TEN, TEN, NINE], tied=[0, 1], playing=[0, 1, 2], scores=[55, 55, 0],
        hand_number=12, draw="B5 B6")
    play(state, "lay set:R8,B8,G8,Y8,R8 set:R3,B3,G3", "hit 1 Y8", "discard Y1")
    assert state.outcome is not None and state.outcome.winners == (0,)
    assert state.outcome.detail["decided_by"] == "tiebreak-first-out"
