"""Positions (spec/POSITION.md): every state between two actions writes as a position that reads
back as the same state and plays on the same way; positions no game reaches are refused, with
the reason."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from meldref.bots import builtin_bot
from meldref.engine.game import GameInfo, GameState, find_game
from meldref.engine.position import (
    Position,
    PositionError,
    position_of,
    read_position,
    same_action,
)
from meldref.replay.positions import position_toml

# (game, players, rule options, bot): variants that reach tie-breaks, re-laid last phases,
# fixed dealers, any-order, party mode and the tie-break round.
GAMES = [
    ("phase10", 3, {}, "greedy"),
    ("phase10", 2, {"any_order": True, "phases_to_win": 2}, "random"),
    ("phase10", 3, {"win": "last-phase-and-out", "phases_to_win": 2, "deal_rotation": "fixed"},
     "greedy"),
    ("phase10", 4, {"tiebreak_players": "everyone", "phases_to_win": 1, "tiebreak": "first-to-lay",
                    "skip_repeat": "unlimited"}, "greedy"),
    ("phase10", 2, {"fixed_hands": True, "phases": "even"}, "greedy"),
    ("fivecrowns", 3, {"tiebreak": "round"}, "greedy"),
    ("fivecrowns", 8, {"natural": "group"}, "greedy"),
    ("solitaire", 1, {}, "greedy"),
]


def games() -> Iterator[tuple[str, GameInfo, Any, GameState, list[Any]]]:
    for name, players, options, bot in GAMES:
        info = find_game(name)
        for seed in (1, 2):
            rules = info.rules(**options)
            yield name, info, rules, info.new_game(rules, players, seed), [
                builtin_bot(name, bot, seed * 10 + s) for s in range(players)]


def restored(info: GameInfo, rules: Any, state: GameState) -> GameState:
    data = json.loads(json.dumps(position_of(state)))  # only what a file can hold
    return read_position(info, rules, data).start()


@pytest.mark.parametrize(("name", "players", "options", "bot"), GAMES)
def test_every_point_of_a_game_round_trips_and_plays_on_alike(
        name: str, players: int, options: dict[str, Any], bot: str) -> None:
    info = find_game(name)
    for seed in (1, 2):
        rules = info.rules(**options)
        state = info.new_game(rules, players, seed)
        bots = [builtin_bot(name, bot, seed * 10 + s) for s in range(players)]
        copy = restored(info, rules, state)
        points = 0
        while (seat := state.to_move) is not None:
            assert copy.snapshot() == state.snapshot(), f"{name} seed {seed} action {points}"
            action = bots[seat].act(state.observation(seat))
            text = str(action)
            # The same action on the position read back makes the same events...
            assert [e.for_seat(None) for e in copy.apply(copy.parse_action(text))] == [
                e.for_seat(None) for e in state.apply(action)]
            points += 1
            # ... and a position written there reads back as the state after it.
            if state.to_move is not None:
                copy = restored(info, rules, state)
        assert copy.outcome == state.outcome and points > 20


# Tie-breaks are rare in played games: these start in one, written by hand.
TEN = list(range(1, 11))
TIEBREAKS = [
    ("phase10", {}, {
        "hand_number": 15, "to_move": 1, "decision": "draw", "tiebreak": [0, 1],
        "discard_pile": "Y12", "draw_pile": "shuffled",
        "seat": [{"hand": "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10", "score": 90, "completed": TEN},
                 {"hand": "B1 B2 B3 B4 B5 B6 B7 B8 B9 B10", "score": 90, "completed": TEN},
                 {"hand": "", "score": 40, "completed": [1, 2, 3]}]}),
    ("phase10", {"tiebreak_players": "everyone", "tiebreak": "first-to-lay"}, {
        "hand_number": 15, "to_move": 2, "decision": "draw", "tiebreak": [0, 1],
        "discard_pile": "Y12", "draw_pile": "shuffled",
        "seat": [{"hand": "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10", "score": 90, "completed": TEN},
                 {"hand": "B1 B2 B3 B4 B5 B6 B7 B8 B9 B10", "score": 90, "completed": TEN},
                 {"hand": "G1 G2 G3 G4 G5 G6 G7 G8 G9 G10", "score": 40,
                  "completed": [1, 2, 3]}]}),
    ("fivecrowns", {"tiebreak": "round"}, {
        "round": 12, "to_move": 0, "dealer": 2, "decision": "draw", "tiebreak": [0, 2],
        "discard_pile": "9H", "draw_pile": "shuffled", "history": ["out 0"] * 11,
        "seat": [{"hand": "3H 4H 5H 6H 7C 8C", "score": 50}, {"hand": "", "score": 80},
                 {"hand": "KS KD KH X 7S 8S", "score": 50}]}),
]


@pytest.mark.parametrize(("name", "options", "data"), TIEBREAKS)
def test_tiebreaks_round_trip_to_the_end(name: str, options: dict[str, Any],
                                         data: dict[str, Any]) -> None:
    info = find_game(name)
    rules = info.rules(**options)
    for seed in range(3):
        state = read_position(info, rules, {**data, "seed": seed}).start()
        bots = [builtin_bot(name, "greedy", s) for s in range(len(data["seat"]))]
        while (seat := state.to_move) is not None:
            assert restored(info, rules, state).snapshot() == state.snapshot()
            state.apply(bots[seat].act(state.observation(seat)))
        assert state.outcome is not None and "tiebreak" in str(state.outcome.detail)


def test_the_rest_of_a_game_is_the_same_from_any_point() -> None:
    info = find_game("phase10")
    rules = info.rules(phases_to_win=2)
    state = info.new_game(rules, 3, 9)
    bots = [builtin_bot("phase10", "greedy", s) for s in range(3)]
    texts: list[str] = []
    snapshots = []
    while (seat := state.to_move) is not None:
        snapshots.append(position_of(state))
        action = bots[seat].act(state.observation(seat))
        texts.append(str(action))
        state.apply(action)
    for at in (0, len(texts) // 3, len(texts) - 1):
        copy = read_position(info, rules, snapshots[at]).start()
        for text in texts[at:]:
            copy.apply(copy.parse_action(text))
        assert copy.outcome == state.outcome and copy.snapshot() == state.snapshot()


def test_a_position_file_round_trips_through_toml() -> None:
    for name, info, rules, state, bots in games():
        for _ in range(40):
            if state.to_move is None:
                break
            state.apply(bots[state.to_move].act(state.observation(state.to_move)))
        if state.to_move is None:
            continue
        text = position_toml(position_of(state), getattr(state, "rules", rules))
        data = tomllib.loads(text)
        data.pop("rules", None)
        assert read_position(info, rules, data).start().snapshot() == state.snapshot(), name


# ----------------------------------------------------------------------------------------------
# Written by hand

P10 = {
    "game": "phase10", "seed": 3, "hand_number": 2, "dealer": 1, "to_move": 0,
    "decision": "draw", "discard_pile": "G9", "draw_pile": "R7 shuffled",
    "seat": [{"hand": "R7 B7 W Y3 G3 B3 R10 G11 Y12 S", "score": 40, "completed": [1]},
             {"hand": "R1 R2 R3 R4 B5 B6 G9 Y9 B12 S", "score": 25, "completed": []}],
}


def p10(**changes: Any) -> Position:
    data = {**json.loads(json.dumps(P10)), **changes}
    return read_position(find_game("phase10"), find_game("phase10").rules(), data)


def seat(k: int, **changes: Any) -> list[dict[str, Any]]:
    seats: list[dict[str, Any]] = json.loads(json.dumps(P10["seat"]))
    seats[k].update(changes)
    return seats


def test_a_written_position_is_the_state_it_says() -> None:
    state = p10().start()
    snap = state.snapshot()
    assert snap["hands"][0][:3] == ["R7", "B7", "W"] and snap["discard_pile"] == ["G9"]
    assert snap["draw_pile"][-1] == "R7"  # named first: on top
    assert len(snap["draw_pile"]) == 108 - 21 and snap["phase_now"] == [2, 1]
    view = state.observation(0)
    assert view.phase == 2 and view.to_json()["needs"] == "1 set of 3 + 1 run of 4"
    assert state.apply(state.parse_action("draw pile"))[0].private == {"card": "R7"}


def test_the_shuffled_rest_is_fixed_by_the_seed() -> None:
    assert p10().snapshot == p10().snapshot
    assert p10().snapshot["draw_pile"] != p10(seed=4).snapshot["draw_pile"]


@pytest.mark.parametrize(("changes", "message"), [
    # every card exactly once
    ({"discard_pile": "R7"}, "R7 is in the position 3 times (seat 0 hand, discard_pile, "
                             "draw_pile); the deck has 2"),
    ({"draw_pile": "R7"}, "86 cards of the deck are nowhere"),
    ({"discard_pile": "X"}, "X is in the position 1 times (discard_pile); it is not a card of "
                            "this deck"),
    ({"seat": seat(0, hand="R7 B7 W Y3 G3 B3 R10 G11 Y12 R13")}, "seat 0: hand = "),
    # impossible phases
    ({"seat": seat(0, completed=[2])}, "seat 0: completed = 2: the first phases of the "
                                       "sequence, in order"),
    ({"seat": seat(0, completed=[1, 11])}, "seat 0: completed = 1, 11: phases of 1, 2"),
    ({"seat": seat(0, phase=4)}, "seat 0: phase = 4: it is on phase 2 this hand, having "
                                 "completed 1"),
    ({"seat": seat(0, completed=list(range(1, 11)))}, "the game ended when it completed phase "
                                                      "10"),
    ({"seat": seat(0, laid=2)}, "laid = 2 is not in completed"),
    ({"seat": seat(0, laid=3, completed=[1, 3])}, "seat 0: laid = 3: having completed 1 before "
                                                   "this hand, it makes phase 2 in it"),
    ({"seat": seat(0, laid=1)}, "seat 0: its groups on the table are not phase 1"),
    # other states no game reaches
    ({"seat": seat(1, hand="R1 R2 R3 R4 B5 B6 G9 Y9 B12")}, "seat 1: it holds 9 cards; a "
                                                            "seat that has not laid"),
    ({"seat": seat(0, skips=1)}, "skips = 1, but it is to move"),
    ({"table": [{"owner": 1, "group": "set:G1,G1,Y1"}]}, "seat 1 has not laid its phase"),
    ({"to_move": 2}, "to_move = 2: 0..1"),
    ({"decision": "discard"}, "decision = 'discard': one of draw, play"),
    ({"hnad_number": 2}, "unknown key hnad_number"),
    ({"tiebreak": [0, 1]}, "tied seats have equal scores"),
    ({"laid_this_turn": True}, "laid_this_turn = true: only the seat to move"),
    ({"expect": "draw discrad"}, "expect = 'draw discrad': not an action"),
    ({"game": "fivecrowns"}, "game = 'fivecrowns': this is a phase10 position"),
])
def test_impossible_positions_are_refused_naming_the_problem(changes: dict[str, Any],
                                                             message: str) -> None:
    with pytest.raises(PositionError) as caught:
        p10(**changes)
    assert message in str(caught.value)


def test_phase10_table_groups_must_be_the_laid_phase() -> None:
    seats = seat(0, laid=2, completed=[1, 2], hand="W Y12 S")
    table = [{"owner": 0, "group": "set:R7,B7,G7"}, {"owner": 0, "group": "set:Y3,G3,B3"}]
    with pytest.raises(PositionError, match="its groups on the table are not phase 2"):
        p10(seat=seats, table=table)
    table[1]["group"] = "run:Y3,G4,B5,R6"
    state = p10(seat=seats, table=table, draw_pile="shuffled").start()
    assert [g.id for g in state.table] == [1, 2] and state.observation(0).has_laid


FC = {
    "game": "fivecrowns", "round": 2, "dealer": 0, "to_move": 1, "decision": "discard",
    "discard_pile": "9H", "draw_pile": "shuffled",
    "seat": [{"hand": "3H 4H 5H 6H", "score": 12}, {"hand": "KS KD KH X 7C", "score": 0},
             {"hand": "8C 9C 10C JC", "score": 30}],
}


def fc(**changes: Any) -> Position:
    data = {**json.loads(json.dumps(FC)), **changes}
    return read_position(find_game("fivecrowns"), find_game("fivecrowns").rules(), data)


def test_five_crowns_positions_and_their_checks() -> None:
    state = fc().start()
    assert state.observation(1).to_json()["wild_rank"] == "4"
    state.apply(state.parse_action("discard 7C book:KS,KD,KH,X"))  # seat 1 goes out
    assert state.to_move == 2
    with pytest.raises(PositionError, match="wild = '5': round 2 deals 4 cards: 4s are wild"):
        fc(wild="5")
    with pytest.raises(PositionError, match="seat 0: it holds 4 cards"):
        fc(to_move=0)
    out = fc(went_out=1, to_move=0, decision="draw",
             seat=[FC["seat"][0], {"hand": "", "score": 0}, {"hand": "9C", "score": 30}],
             table=[{"seat": 1, "group": "book:KS,KD,KH,X"},
                    {"seat": 2, "group": "run:10C,JC,QC"}], discard_pile="7C 9H")
    assert out.start().snapshot()["had_last_turn"] == [False, False, True]
    with pytest.raises(PositionError, match="groups are laid by the seat that went out"):
        fc(table=[{"seat": 1, "group": "book:KS,KD,KH,X"}])
    with pytest.raises(PositionError, match="round 12 is the tie-break round"):
        fc(round=12, tiebreak=[0, 1])


def test_solitaire_positions_and_their_checks() -> None:
    info = find_game("solitaire")
    state = info.new_game(info.rules(), 1, 5)
    data = position_of(state)
    assert set(data["piles"]) == {str(s) for s in range(3, 14)}
    assert read_position(info, info.rules(), data).start().snapshot() == state.snapshot()
    data["piles"]["5"] = data["piles"]["5"].rsplit(" ", 1)[0]
    with pytest.raises(PositionError, match="pile 5 always holds 5 cards, not 4"):
        read_position(info, info.rules(), data)


def test_expected_actions_match_by_what_they_do() -> None:
    state = fc().start()
    assert same_action(state, "discard 7c book:ks,kd,kh,x", "discard 7C book:KS,KD,KH,X=K")
    assert not same_action(state, "discard 7C book:KS,KD,KH,X", "discard X")


# ----------------------------------------------------------------------------------------------
# Issue 19: checks the reader lacked


def test_table_entries_are_numbered_from_1_as_group_ids_are() -> None:
    for read, table in ((p10, {"owner": 1, "group": "set:G1,G1,Y1"}),
                        (fc, {"seat": 0, "group": "book:3H,4H,5H"})):
        with pytest.raises(PositionError) as caught:
            read(table=[table])
        assert str(caught.value).startswith("table group 1: ")
    seats = seat(0, laid=2, completed=[1, 2], hand="W Y12 S")
    table = [{"owner": 0, "group": "set:R7,B7,G7"}, {"owner": 0, "group": "run:Y3,G4,B5,R6"},
             {"owner": 1, "group": "set:G1,G1,Y1"}]
    with pytest.raises(PositionError, match=r"^table group 3: owner = 1: seat 1 has not laid"):
        p10(seat=seats, table=table, draw_pile="shuffled")


def test_a_five_crowns_position_past_the_turn_cap_is_refused_once_a_seat_is_out() -> None:
    # Three seats, turn-cap 50: 150 turns before anyone goes out, then one last turn each.
    # Seat 1 went out, seat 2 had its last turn, seat 0 is on its own: turn 152 at most.
    out = {"went_out": 1, "to_move": 0, "decision": "draw", "discard_pile": "7C 9H",
           "seat": [FC["seat"][0], {"hand": "", "score": 0}, {"hand": "9C", "score": 30}],
           "table": [{"seat": 1, "group": "book:KS,KD,KH,X"},
                     {"seat": 2, "group": "run:10C,JC,QC"}]}
    assert fc(**out, turn=152).start().snapshot()["turns"] == 152
    for turn in (153, 500):
        with pytest.raises(PositionError, match=f"turn = {turn}: turn-cap=50: "):
            fc(**out, turn=turn)
    # The going-out turn and seat 2's last turn came before this one.
    with pytest.raises(PositionError, match="turn = 2: seat 1 went out"):
        fc(**out, turn=2)
    assert fc(**out, turn=3).start().snapshot()["turns"] == 3


P10_THREE = {
    "game": "phase10", "seed": 3, "hand_number": 2, "dealer": 2, "to_move": 0,
    "decision": "draw", "turn": 7, "discard_pile": "G9", "draw_pile": "shuffled",
    "seat": [{"hand": "R7 B7 W Y3 G3 B3 R10 G11 Y12 S", "completed": [1]},
             {"hand": "R1 R2 R3 R4 B5 B6 G9 Y9 B12 S"},
             {"hand": "G1 G2 G3 G4 G5 G6 G7 G8 Y10 Y11"}],
}


def three(skips: list[int], turn: int = 7, **options: Any) -> Position:
    data = json.loads(json.dumps(P10_THREE))
    for s, count in enumerate(skips):
        data["seat"][s]["skips"] = count
    data["turn"] = turn
    info = find_game("phase10")
    return read_position(info, info.rules(**options), data)


def test_skips_pending_only_as_a_game_leaves_them() -> None:
    # Seat 0 to move, after seats 1 and 2 played. A Skip pending against a seat was discarded
    # after its last turn, by a seat that played since: seat 2 may have skipped seat 1, but
    # nobody played after seat 2 to skip it.
    assert three([0, 1, 0]).start().snapshot()["skips"] == [0, 1, 0]
    for skips in ([0, 1, 1], [0, 0, 1]):
        with pytest.raises(PositionError, match="seat 2: skips = 1: no seat played after it"):
            three(skips)
    # skip-repeat=unlimited: Skips pile up over turns, one seat's skipped turn using one.
    assert three([0, 2, 1], skip_repeat="unlimited").start().snapshot()["skips"] == [0, 2, 1]
    with pytest.raises(PositionError, match="3 Skips pending, but 2 turns were played"):
        three([0, 2, 1], turn=3, skip_repeat="unlimited")
    # The next player is skipped at once: between two turns no Skip is pending.
    with pytest.raises(PositionError, match="seat 1: skips = 1: skip-victim=next"):
        three([0, 1, 0], skip_victim="next")
    with pytest.raises(PositionError, match="seat 1: skips = 1: with two players"):
        p10(seat=seat(1, skips=1))
