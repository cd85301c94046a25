"""Phase 10 turns (digest 1.2-1.5): deal, draw, lay down, hit, discard, Skips, going out, piles."""

from __future__ import annotations

import pytest
from phase10_positions import count_cards, hand, kinds, play, position

from meldref.engine.cards import parse_cards, phase10_deck, rng_for, shuffled
from meldref.engine.game import IllegalActionError, InvalidActionError
from meldref.engine.phase10 import GAME, Phase10Rules, Phase10State

SEAT0 = Phase10Rules(dealer="seat0")


def why(state: Phase10State, text: str) -> str | None:
    return state.why_illegal(state.parse_action(text))


def first_turned(seed: int, players: int) -> str:
    deck = shuffled(phase10_deck(), rng_for(seed, "deal", 1))
    return deck[-players * 10 - 1].text


def seed_turning(card: str, players: int = 3) -> int:
    return next(s for s in range(5000) if (first_turned(s, players) == "S") == (card == "S"))


# -- the deal (1.2) ----------------------------------------------------------------------------


def test_ten_cards_each_dealt_one_at_a_time_from_the_dealers_left() -> None:
    seed = seed_turning("not S")
    state = GAME.new_game(SEAT0, 3, seed)
    deck = shuffled(phase10_deck(), rng_for(seed, "deal", 1))
    top_down = deck[::-1]
    assert state.dealer == 0
    assert state.hands[1] == top_down[0:30:3]
    assert state.hands[2] == top_down[1:30:3]
    assert state.hands[0] == top_down[2:30:3]
    assert state.discard_pile == [top_down[30]]
    assert state.draw_pile == deck[:-31]
    assert (state.to_move, state.decision, state.hand_number) == (1, "draw", 1)
    events = state.opening_events()
    assert kinds(events) == ["deal", "deal", "deal", "turn_up"]
    assert events[0].seat == 1 and events[0].private["hand"] == hand(state, 1)


def test_random_dealer_is_seeded() -> None:
    dealers = {GAME.new_game(Phase10Rules(), 4, s).dealer for s in range(40)}
    assert dealers == {0, 1, 2, 3}
    for s in range(5):
        assert GAME.new_game(Phase10Rules(), 4, s).dealer == rng_for(s, "dealer").randrange(4)


def test_turned_up_skip_skips_the_first_player() -> None:
    seed = seed_turning("S")
    state = GAME.new_game(SEAT0, 3, seed)
    assert state.discard_pile[-1].text == "S"
    assert state.to_move == 2
    assert kinds(state.opening_events())[-2:] == ["turn_up", "skipped"]
    assert state.opening_events()[-1].seat == 1
    assert why(state, "draw discard") == "S cannot be drawn from the discard pile"


def test_twist_covers_a_turned_up_skip() -> None:
    seed = seed_turning("S")
    state = GAME.new_game(Phase10Rules(dealer="seat0", first_skip="twist"), 3, seed)
    assert state.discard_pile[0].text == "S" and state.discard_pile[-1].text != "S"
    assert state.to_move == 1
    assert "skipped" not in kinds(state.opening_events())
    assert sum(count_cards(state).values()) == 108


def test_the_deal_passes_left() -> None:
    state = position(["R1", "R2 R3", "R4 R5"], to_move=0)
    events = play(state, "discard R1")
    assert "hand_end" in kinds(events)
    assert (state.dealer, state.hand_number, state.to_move) == (1, 2, 2)


# -- drawing -----------------------------------------------------------------------------------


def test_draw_from_the_pile_is_private() -> None:
    state = position(["R1 R2", "R3 R4"], decision="draw", draw="B5 B6", discard="G7")
    [event] = play(state, "draw pile")
    assert hand(state, 0) == ["R1", "R2", "B6"]
    assert event.public == {"source": "pile"} and event.private == {"card": "B6"}
    assert state.decision == "play"


def test_draw_from_the_discard_pile_is_public() -> None:
    state = position(["R1 R2", "R3 R4"], decision="draw", discard="Y9 G7")
    [event] = play(state, "draw discard")
    assert hand(state, 0) == ["R1", "R2", "G7"]
    assert event.public == {"source": "discard", "card": "G7"} and not event.private
    assert [c.text for c in state.discard_pile] == ["Y9"]


def test_draw_exactly_once_and_first() -> None:
    state = position(["R1 R2", "R3 R4"], decision="draw")
    assert why(state, "discard R1") == "draw first: draw pile or draw discard"
    assert why(state, "hit 1 R1") == "draw first: draw pile or draw discard"
    play(state, "draw pile")
    assert why(state, "draw pile") == "you have drawn already: lay, hit or discard"
    with pytest.raises(IllegalActionError, match="drawn already"):
        play(state, "draw discard")


# -- laying down (1.4, 1.5.2) ------------------------------------------------------------------

PHASE1 = "R5 B5 G5 Y5 R5 R7 B7 G7 R10 B10 G10"


def test_worked_example_extra_fives_join_the_set_of_fives() -> None:
    state = position([PHASE1, "R1"])
    events = play(state, "lay set:R5,B5,G5,Y5,R5 set:R7,B7,G7")
    assert events[0].public == {"phase": 1, "groups": ["set:R5,B5,G5,Y5,R5", "set:R7,B7,G7"],
                                "group_ids": [1, 2]}
    assert hand(state, 0) == ["R10", "B10", "G10"]
    assert state.laid[0] == 1 and state.completed[0] == (1,)


def test_worked_example_three_tens_are_not_a_third_set() -> None:
    state = position([PHASE1, "R1"])
    assert why(state, "lay set:R5,B5,G5 set:R7,B7,G7 set:R10,B10,G10") == (
        "phase 1 needs 2 sets of 3, not 3 groups (extra cards may only extend the phase's "
        "own groups)"
    )


def test_worked_example_wild_as_the_five_of_a_run() -> None:
    state = position(["R8 B8 G8 R3 B4 W G6 Y1", "R1"], phase_now=[2, 1])
    play(state, "lay set:R8,B8,G8 run:R3,B4,W,G6")
    assert state.table[1].token == "run:R3,B4,W=5,G6"


def test_worked_example_six_greens_and_a_wild_make_phase_8() -> None:
    state = position(["G1 G3 G3 G8 G11 G12 W R4", "R1"], phase_now=[8, 1])
    play(state, "lay colour:G1,G3,G3,G8,G11,G12,W")
    assert state.table[0].token == "colour:G1,G3,G3,G8,G11,G12,W=G"


def test_worked_example_a_run_of_nine_on_phase_4_counts_once() -> None:
    state = position(["R1 B2 G3 Y4 R5 B6 G7 Y8 R9 R12", "B12 G12"], phase_now=[4, 1],
                     discard="Y11", completed=[[1, 2, 3], []])
    play(state, "lay run:R1,B2,G3,Y4,R5,B6,G7,Y8,R9", "discard R12")
    assert state.completed[0] == (1, 2, 3, 4)
    assert state.hand_number == 2 and state.phase_now[0] == 5


def test_the_whole_phase_at_once() -> None:
    state = position(["R8 B8 G8 R3 B4 W G6 Y1", "R1"], phase_now=[2, 1])
    assert why(state, "lay set:R8,B8,G8") == (
        "phase 2 needs 1 set of 3 + 1 run of 4, not 1 group (extra cards may only extend the "
        "phase's own groups)"
    )
    assert why(state, "lay set:R8,B8,G8 set:R3,W") == (
        "phase 2 needs 1 set of 3 + 1 run of 4, not set + set"
    )
    assert why(state, "lay set:R8,B8 run:G6,R3,B4,W") == (
        "phase 2 needs 1 set of 3 + 1 run of 4: set:R8,B8 has 2 cards, not 3"
    )
    assert why(state, "lay phase=3 set:R8,B8,G8 run:R3,B4,W,G6") == (
        "you are on phase 2 this hand, not phase 3"
    )


def test_larger_need_gets_the_larger_group() -> None:
    state = position(["R8 B8 G8 Y8 R8 W R3 B3 Y1", "R1"], phase_now=[9, 1])
    assert why(state, "lay set:R3,B3 set:R8,B8,G8,Y8,R8") is None
    assert why(state, "lay set:R3,B3,W set:R8,B8,G8,Y8") == (
        "phase 9 needs 1 set of 5 + 1 set of 2: set:R8,B8,G8,Y8 has 4 cards, not 5"
    )


def test_two_groups_may_share_a_number() -> None:
    state = position(["R7 B7 G7 Y7 R7 B7 R1", "R2"])
    assert why(state, "lay set:R7,B7,G7 set:Y7,R7,B7") is None


def test_cards_must_be_held_and_groups_valid() -> None:
    state = position(["R3 R4 W R7 B8 G8 Y8 R1", "R2"], phase_now=[2, 1])
    assert why(state, "lay set:B8,G8,Y8 run:R3,R4,W,R7") == (
        "run R3 R4 W R7: gap at 5, 6 not covered"
    )
    assert why(state, "lay set:B8,G8,Y8 run:R3,R4,W,W") == "you hold only 1 W, the lay uses 2"
    assert why(state, "lay set:B8,G8,B8 run:R3,R4,W,R1") == "you hold only 1 B8, the lay uses 2"
    assert why(state, "lay set:B8,G8,Y8 run:R3,R4,W,R12") == "you hold no R12, the lay uses 1"
    assert why(state, "lay set:B8,G8,Y8=7 run:R3,R4,W,R1") == (
        "set B8 G8 Y8=7: Y8 is not wild and cannot stand for 7"
    )


def test_a_skip_is_never_part_of_a_phase() -> None:
    state = position(["R3 R4 S R6 B8 G8 Y8 R1", "R2"], phase_now=[2, 1])
    assert why(state, "lay set:B8,G8,Y8 run:R3,R4,S,R6") == (
        "run R3 R4 S R6: a Skip is never part of a group"
    )


def test_runs_do_not_wrap_unless_the_option_says_so() -> None:
    cards = ["R11 R12 B1 B2 G9 B9 Y9 R5", "R6"]
    state = position(cards, phase_now=[2, 1])
    assert why(state, "lay set:G9,B9,Y9 run:R11,R12,B1,B2") == (
        "run R11 R12 B1 B2: gap at 3, 4, 5, 6, 7, 8, 9, 10 not covered"
    )
    wrap = position(cards, phase_now=[2, 1], rules=Phase10Rules(dealer="seat0", run_wrap=True))
    play(wrap, "lay set:G9,B9,Y9 run:R11,R12,B1,B2")
    assert wrap.table[1].token == "run:R11,R12,B1,B2"


@pytest.mark.parametrize(
    ("natural", "lay", "reason"),
    [
        ("phase", "lay set:W,W,W set:W,W,W", "natural=phase: a phase needs at least one natural"),
        ("phase", "lay set:R7,W,W set:W,W,W", None),
        ("group", "lay set:R7,W,W set:W,W,W", "natural=group: set:W=12,W=12,W=12 needs a natural"),
        ("group", "lay set:R7,W,W set:R8,W,W", None),
        ("none", "lay set:W,W,W set:W,W,W", None),
    ],
)
def test_natural_card_rule(natural: str, lay: str, reason: str | None) -> None:
    rules = Phase10Rules(dealer="seat0", natural=natural)  # type: ignore[arg-type]
    state = position(["W W W W W W R7 R8 R1", "R2"], rules=rules)
    got = why(state, lay)
    assert got == reason if reason is None else got is not None and got.startswith(reason)


def test_one_phase_per_hand() -> None:
    state = position(["R7 B7 G7 R8 B8 G8 R1 B1 G1 B2", "R2"])
    play(state, "lay set:R7,B7,G7 set:R8,B8,G8")
    assert why(state, "lay set:R1,B1,G1 set:R8,B8,G8") == "you have laid phase 1 already this hand"


# -- hits (1.5.3) ------------------------------------------------------------------------------

TABLE = [(1, "set:R7,B7,G7"), (1, "run:R9,B10,G11,Y12"), (1, "colour:G1,G3,G5,G6,G8,G9,W=G")]


def laid_position(cards: str, **kw: object) -> Phase10State:
    return position([cards, "R2 B2 Y2"], table=TABLE, laid=[1, 2], **kw)  # type: ignore[arg-type]


def test_hits_come_after_ones_own_phase() -> None:
    state = position(["Y7 R1", "R2"], table=TABLE, laid=[None, 2])
    assert why(state, "hit 1 Y7") == (
        "you have not laid your phase yet: hits come after your own phase is down"
    )


def test_hits_where_the_card_fits() -> None:
    state = laid_position("Y7 B8 W W G12 R4 S R1")
    assert why(state, "hit 4 Y7") == "no group 4 on the table; groups: 1, 2, 3"
    assert why(state, "hit 1 G12") == "G12 on set:R7,B7,G7: the group is of 7, the card is 12"
    assert why(state, "hit 2 G12") == "G12 on run:R9,B10,G11,Y12: only 8 can extend this run"
    assert why(state, "hit 3 R4") == (
        "R4 on colour:G1,G3,G5,G6,G8,G9,W=G: the group is of G, the card is R"
    )
    assert why(state, "hit 1 S") == "S on set:R7,B7,G7: a Skip is never part of a group"
    assert why(state, "hit 1 B8=7") == "B8 is not wild: write it without =7"
    events = play(state, "hit 1 Y7", "hit 2 B8", "hit 3 G12", "hit 2 W")
    assert events[1].public == {"group_id": 2, "card": "B8", "group": "run:B8,R9,B10,G11,Y12"}
    assert [g.token for g in state.table] == [
        "set:R7,B7,G7,Y7", "run:W=7,B8,R9,B10,G11,Y12", "colour:G1,G3,G5,G6,G8,G9,W=G,G12",
    ]
    with pytest.raises(InvalidActionError, match=r"'13' is neither a number 1\.\.12 nor a colour"):
        state.parse_action("hit 2 W=13")


def test_a_run_stops_at_1_and_12() -> None:
    state = position(["W W R5 R1", "R2"], table=[(0, "run:R1,B2,G3,Y4"), (1, "run:R9,B10,G11,Y12")],
                     laid=[2, 2])
    assert state.table[0].fits(state.hands[0][0]) == (5,)
    assert state.table[1].fits(state.hands[0][0]) == (8,)
    assert why(state, "hit 2 W=1") == "W on run:R9,B10,G11,Y12: only 8 can extend this run"
    play(state, "hit 1 R5", "hit 2 W")
    assert state.table[1].token == "run:W=8,R9,B10,G11,Y12"


def test_wrapping_runs_continue_past_12() -> None:
    rules = Phase10Rules(dealer="seat0", run_wrap=True)
    state = position(["W R1 R5", "R2"], table=[(1, "run:R9,B10,G11,Y12")], laid=[2, 2],
                     rules=rules)
    assert state.table[0].fits(state.hands[0][0]) == (1, 8)
    play(state, "hit 1 R1", "hit 1 W=2")
    assert state.table[0].token == "run:R9,B10,G11,Y12,R1,W=2"


def test_a_wild_keeps_the_value_it_was_laid_with() -> None:
    state = position(["R5 R2", "R2"], table=[(1, "run:R3,R4,W=5,R6")], laid=[2, 2])
    assert why(state, "hit 1 R5") == "R5 on run:R3,R4,W=5,R6: only 2 or 7 can extend this run"
    play(state, "hit 1 R2")
    assert state.table[0].token == "run:R2,R3,R4,W=5,R6"


def test_hit_on_lay_turn_any_group_by_default() -> None:
    state = position(["R7 B7 G7 R8 B8 G8 Y9 Y1", "R1"], table=[(1, "set:R9,B9,G9")],
                     laid=[None, 1])
    play(state, "lay set:R7,B7,G7 set:R8,B8,G8", "hit 1 Y9")
    assert state.table[0].token == "set:R9,B9,G9,Y9"


def test_hit_on_lay_turn_own_groups_only_variant() -> None:
    rules = Phase10Rules(dealer="seat0", hit_on_lay_turn="own")
    state = position(["R7 B7 G7 R8 B8 G8 Y9 Y7 Y1", "R1 R1"], table=[(1, "set:R9,B9,G9")],
                     laid=[None, 1], rules=rules, draw="R3 R4 R5 R6")
    play(state, "lay set:R7,B7,G7 set:R8,B8,G8")
    assert why(state, "hit 1 Y9") == (
        "hit-on-lay-turn=own: in the turn you lay your phase you may hit only your own groups"
    )
    assert state.observation(0).hit_options() == [
        h for h in state.legal_actions() if str(h).startswith("hit")
    ]
    play(state, "hit 2 Y7", "discard Y1", "draw pile", "discard R6", "draw pile")
    assert why(state, "hit 1 Y9") is None


# -- discarding and Skips (1.5.4) --------------------------------------------------------------


def test_discard_ends_the_turn() -> None:
    state = position(["R1 R2", "R3", "R4"])
    events = play(state, "discard R1")
    assert events[0].public == {"card": "R1"}
    assert (state.to_move, state.decision) == (1, "draw")
    assert why(state, "discard R3") == "draw first: draw pile or draw discard"
    play(state, "draw pile")
    assert why(state, "discard R9") == "you do not hold R9"
    assert why(state, "discard R3 2") == "only a Skip names a victim"


def test_skip_victim_is_chosen() -> None:
    state = position(["S R1", "R3", "R4", "R5"])
    assert why(state, "discard S") == "say whom the Skip skips: discard S <seat>, one of 1, 2, 3"
    assert why(state, "discard S 0") == "you cannot skip yourself; victims now: 1, 2, 3"
    assert why(state, "discard S 4").startswith("seat 4 is not playing this hand")
    events = play(state, "discard S 2")
    assert events[1].kind == "skip" and events[1].public == {"victim": 2}
    assert state.skips[2] == 1 and state.to_move == 1
    events = play(state, "draw pile", "discard R3")
    assert kinds(events)[-1] == "skipped" and events[-1].seat == 2
    assert state.to_move == 3 and state.skips[2] == 0


def test_a_skip_pending_once_per_orbit() -> None:
    state = position(["S R1", "S R3", "R4", "R5 R6"], to_move=0)
    play(state, "discard S 3", "draw pile")
    assert why(state, "discard S 3") == (
        "seat 3 already has a Skip pending (once per orbit); victims now: 2, 0"
    )
    assert state.observation(1).victims == (2, 0)
    play(state, "discard S 2")  # seat 2 and seat 3 both lose their turns
    assert state.to_move == 0
    assert state.skips == (0, 0, 0, 0)


def test_skips_unlimited_variant_stacks() -> None:
    rules = Phase10Rules(dealer="seat0", skip_repeat="unlimited")
    state = position(["S R1", "S R3", "R4 R5", "R6"], rules=rules)
    play(state, "discard S 2", "draw pile", "discard S 2")
    assert state.to_move == 3 and state.skips[2] == 1
    play(state, "draw pile", "discard R6", "draw pile", "discard R1")
    assert state.to_move == 1
    play(state, "draw pile", "discard R3")
    assert state.to_move == 3  # seat 2's second Skip took its next turn too


def test_skip_next_variant() -> None:
    rules = Phase10Rules(dealer="seat0", skip_victim="next")
    state = position(["S S R1", "R3", "R4"], rules=rules)
    assert state.observation(0).victims == (1,)
    assert why(state, "discard S 2") == "skip-victim=next: the Skip skips the next seat, 1"
    play(state, "discard S")
    assert state.to_move == 2


def test_two_players_the_discarder_plays_again() -> None:
    for rules in (SEAT0, Phase10Rules(dealer="seat0", skip_victim="next")):
        state = position(["S R1", "R3"], rules=rules)
        events = play(state, "discard S")
        assert kinds(events) == ["discard", "skip", "skipped"]
        assert (state.to_move, state.decision) == (0, "draw")


# -- going out ---------------------------------------------------------------------------------


def test_going_out_by_discarding() -> None:
    state = position(["R1", "R3 W S"])
    events = play(state, "discard R1")
    end = next(e for e in events if e.kind == "hand_end")
    assert end.public["went_out"] == 0 and end.public["ended"] == "out"
    assert end.public["points"] == [0, 45] and state.scores == (0, 45)
    assert end.public["hands"] == ["", "R3 W S"]


def test_going_out_by_a_skip_discard_skips_nobody() -> None:
    state = position(["S", "R3", "R4"])
    events = play(state, "discard S 1")
    assert "skip" not in kinds(events) and kinds(events)[1] == "hand_end"


def test_going_out_by_hitting() -> None:
    state = position(["R7", "R3"], table=[(1, "set:R7,B7,G7")], laid=[1, 1])
    events = play(state, "hit 1 R7")
    assert kinds(events)[:2] == ["hit", "hand_end"]
    assert events[1].public["went_out"] == 0


def test_going_out_by_laying_every_card() -> None:
    state = position(["R7 B7 G7 R8 B8 G8", "R3"])
    events = play(state, "lay set:R7,B7,G7 set:R8,B8,G8")
    assert kinds(events)[:2] == ["lay_down", "hand_end"]


def test_must_discard_variant() -> None:
    rules = Phase10Rules(dealer="seat0", going_out="must-discard")
    state = position(["R7", "R3"], table=[(1, "set:R7,B7,G7")], laid=[1, 1], rules=rules)
    assert why(state, "hit 1 R7") == "going-out=must-discard: keep your last card to discard"
    assert state.legal_actions() == [state.parse_action("discard R7")]
    state = position(["R7 B7 G7 R8 B8 G8", "R3"], rules=rules)
    assert why(state, "lay set:R7,B7,G7 set:R8,B8,G8") == (
        "going-out=must-discard: keep a card to discard"
    )
    assert why(state, "lay set:R7,B7,G7 set:R8,B8") is not None
    state = position(["R1", "R3"], rules=rules)
    assert kinds(play(state, "discard R1"))[1] == "hand_end"


# -- the piles ---------------------------------------------------------------------------------


def test_empty_draw_pile_reshuffles_the_discards_but_the_top() -> None:
    state = position(["R1 R2", "R3 R4"], draw="", discard="B1 B2 B3 B4 B5")
    events = play(state, "discard R1")
    assert kinds(events) == ["discard", "reshuffle"]
    assert events[1].public == {"draw_pile_size": 5}
    assert state.draw_pile == shuffled(parse_cards("B1 B2 B3 B4 B5"),
                                       rng_for(1, "reshuffle", 1, 1))
    assert [c.text for c in state.discard_pile] == ["R1"]
    assert state.reshuffles == 1


def test_a_lone_discard_must_be_taken() -> None:
    state = position(["R1 R2", "R3 R4"], draw="", discard="B1", decision="draw")
    assert why(state, "draw pile") == "the draw pile is empty: draw discard"
    assert state.legal_actions() == [state.parse_action("draw discard")]


def test_nothing_to_draw_ends_the_hand_with_nobody_out() -> None:
    state = position(["R1 R2", "S R4"], draw="", discard="", to_move=1)
    events = play(state, "discard S 0")
    end = next(e for e in events if e.kind == "hand_end")
    assert end.public["ended"] == "no-cards" and end.public["went_out"] is None
    assert end.public["points"] == [10, 5]


def test_turn_cap_ends_the_hand_with_nobody_out() -> None:
    rules = Phase10Rules(dealer="seat0", turn_cap=3)
    state = position(["R1 R2", "R3 R4"], rules=rules, turns=1)
    play(state, "discard R1", "draw pile", "discard R3", "draw pile")
    events = play(state, "discard R2")
    end = next(e for e in events if e.kind == "hand_end")
    assert end.public["ended"] == "turn-cap"
    assert state.history[-1]["ended"] == "turn-cap"
    assert state.hand_number == 2 and state.turns == 1


def test_illegal_actions_raise_with_the_reason() -> None:
    state = position(["R1 R2", "R3 R4"])
    with pytest.raises(IllegalActionError, match="you do not hold R9"):
        play(state, "discard R9")
    assert state.why_illegal("discard R1") == "not a Phase 10 action: 'discard R1'"
