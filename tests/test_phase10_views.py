"""What Phase 10 shows: observations, events, action texts, legal actions, snapshots."""

from __future__ import annotations

from typing import Any

import pytest
from phase10_positions import play, position

from meldref.bots.phase10 import RandomBot
from meldref.engine.game import InvalidActionError
from meldref.engine.phase10 import (
    GAME,
    Discard,
    Draw,
    Phase10Rules,
    Phase10State,
    parse_action,
)

SCALARS = (str, int, bool, type(None))


def assert_protocol_friendly(data: dict[str, Any], dicts_allowed: bool) -> None:
    for key, value in data.items():
        assert key.isidentifier() and key == key.lower(), key
        if isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    assert dicts_allowed, key
                    # A record's values are scalars or flat lists of scalars (`completed 1,2`).
                    for v in item.values():
                        inner = v if isinstance(v, list) else [v]
                        assert all(isinstance(x, SCALARS) for x in inner), item
                else:
                    assert isinstance(item, SCALARS), (key, item)
        else:
            assert isinstance(value, SCALARS), (key, value)


def test_observation_holds_what_the_seat_may_know() -> None:
    state = position(["R1 S W", "B2 B3", "Y5"], table=[(1, "set:R7,B7,G7")], laid=[None, 1, None],
                     completed=[[], [1], []], scores=[5, 0, 30], skips=[0, 0, 1], discard="G9")
    view = state.observation(0).to_json()
    assert_protocol_friendly(view, dicts_allowed=True)
    assert view["hand"] == ["R1", "S", "W"]
    assert view["discard_top"] == "G9" and view["draw_pile_size"] == len(state.draw_pile)
    assert view["table"] == [{"id": 1, "owner": 1, "group": "set:R7,B7,G7"}]
    assert view["seats"][1] == {"seat": 1, "playing": True, "phase": 1, "laid": True, "score": 0,
                                "hand_size": 2, "skip_pending": 0, "completed": [1]}
    assert view["seats"][2]["skip_pending"] == 1
    assert view["victims"] == [1]
    assert (view["to_move"], view["decision"], view["phase"], view["needs"]) == (
        0, "play", 1, "2 sets of 3")
    assert view["hand_number"] == 1 and view["dealer"] == 0
    text = repr(view)
    assert "B2" not in text and "Y5" not in text  # nobody else's cards


def test_events_are_protocol_friendly_and_split_public_private() -> None:
    state = GAME.new_game(Phase10Rules(), 3, 5)
    bots = [RandomBot(i) for i in range(3)]
    events = state.opening_events()
    while state.outcome is None and len(events) < 4000:
        seat = state.to_move
        assert seat is not None
        events += state.apply(bots[seat].act(state.observation(seat)))
    for e in events:
        assert_protocol_friendly(dict(e.public), dicts_allowed=False)
        assert_protocol_friendly(dict(e.private), dicts_allowed=False)
        assert not e.private or e.seat is not None
        if e.kind == "draw":
            assert ("card" in e.public) == (e.public["source"] == "discard")
        if e.kind == "deal":
            assert set(e.public) == {"hand_number", "dealer", "phase", "hand_size"}
    assert {e.kind for e in events} >= {"deal", "turn_up", "draw", "discard", "hand_end"}


@pytest.mark.parametrize("text", [
    "draw pile", "draw discard", "lay set:R7,B7,W=7 set:G1,Y1,B1", "lay phase=8 colour:G1,G5,W=G",
    "lay run:R3,R4,W=5,G6", "hit 3 R7", "hit 12 W=8", "hit 1 W=G", "discard S 2", "discard W",
])
def test_action_text_round_trips(text: str) -> None:
    assert str(parse_action(text)) == text
    assert parse_action(str(parse_action(text))) == parse_action(text)


def test_action_text_is_forgiving_about_case_and_spaces() -> None:
    assert parse_action("  DRAW   Pile ") == Draw("pile")
    assert str(parse_action("lay set:r7,b7,w")) == "lay set:R7,B7,W"


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty action"),
    ("jump 3", "unknown action 'jump'"),
    ("draw", "draw takes one word"),
    ("draw top", "draw takes one word"),
    ("lay", "lay needs groups"),
    ("lay phase=x set:R1,R1", "should be phase=N"),
    ("lay book:R1,B1,G1", "Phase 10 groups are set, run or colour"),
    ("lay set:R1,R13", "not a card: 'R13'"),
    ("lay heap:R1,B1", "unknown kind 'heap'"),
    ("lay set:R1,B1=15", "neither a number"),
    ("hit x R1", "hit takes a group id and a card"),
    ("hit 1 Q7", "not a card"),
    ("discard", "discard takes a card"),
    ("discard S left", "discard takes a card"),
])
def test_bad_action_texts_are_clear_errors(text: str, message: str) -> None:
    with pytest.raises(InvalidActionError, match=message):
        parse_action(text)


def test_legal_actions_when_drawing_and_playing() -> None:
    state = position(["R7 B7 G7 R8 B8 G8 S Y9 Y9", "B1", "B2"], table=[(1, "set:R9,B9,G9")],
                     laid=[None, 1, None], decision="draw", discard="G2")
    assert [str(a) for a in state.legal_actions()] == ["draw pile", "draw discard"]
    play(state, "draw discard")
    texts = [str(a) for a in state.legal_actions()]
    assert texts[0] == "lay phase=1 set:R7,B7,G7 set:R8,B8,G8"
    assert "discard S 1" in texts and "discard S 2" in texts and "discard S" not in texts
    assert not any(t.startswith("hit") for t in texts)  # not laid yet
    for action in state.legal_actions():
        assert state.why_illegal(action) is None, action
    play(state, texts[0])
    hits = [str(a) for a in state.legal_actions() if str(a).startswith("hit")]
    assert hits == ["hit 1 Y9"]


def test_autoplay_draws_the_pile_and_discards_the_dearest_card() -> None:
    state = position(["R1 S W R12", "B1"], decision="draw")
    assert state.autoplay_action() == Draw("pile")
    play(state, "draw pile")
    assert state.autoplay_action() == Discard(state.parse_action("discard W").card)
    state = position(["S S", "B1", "B2"])
    assert state.why_illegal(state.autoplay_action()) is None
    assert str(state.autoplay_action()) == "discard S 1"


def play_on(state: Phase10State, seed: int, actions: int) -> list[str]:
    bots = [RandomBot(seed + i) for i in range(state.players)]
    log = []
    while state.outcome is None and len(log) < actions:
        seat = state.to_move
        assert seat is not None
        action = bots[seat].act(state.observation(seat))
        state.apply(action)
        log.append(str(action))
    return log


def test_snapshot_round_trip_mid_game_plays_on_identically() -> None:
    state = GAME.new_game(Phase10Rules(run_wrap=True, skip_repeat="unlimited"), 4, 11)
    play_on(state, 100, 700)
    snap = state.snapshot()
    restored = GAME.from_snapshot(snap)
    assert restored.snapshot() == snap
    assert play_on(state, 7, 3000) == play_on(restored, 7, 3000)
    assert state.snapshot() == restored.snapshot()
    assert state.outcome == restored.outcome


def test_snapshot_keeps_a_full_wrapped_run_as_laid() -> None:
    rules = Phase10Rules(dealer="seat0", run_wrap=True)
    state = position(["B1 R2", "R3"], rules=rules, laid=[6, 6],
                     table=[(1, "run:G2,Y3,B4,B5,R6,R7,W=8,R9,G10,B11,B12,Y1")])
    restored = GAME.from_snapshot(state.snapshot())
    assert restored.table[0].meld == state.table[0].meld
    assert restored.table[0].token == "run:G2,Y3,B4,B5,R6,R7,W=8,R9,G10,B11,B12,Y1"


def test_snapshot_of_a_finished_game() -> None:
    state = GAME.new_game(Phase10Rules(turn_cap=20, hand_cap=2), 2, 3)
    play_on(state, 0, 10_000)
    assert state.outcome is not None
    restored = GAME.from_snapshot(state.snapshot())
    assert restored.outcome == state.outcome and restored.to_move is None


def test_bad_snapshots_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="not a Phase 10 snapshot"):
        GAME.from_snapshot({"game": "fivecrowns"})
    snap = GAME.new_game(Phase10Rules(), 2, 0).snapshot()
    del snap["hands"]
    with pytest.raises(ValueError, match="broken Phase 10 snapshot"):
        GAME.from_snapshot(snap)


def test_public_view_is_the_referees_whole_view() -> None:
    state = GAME.new_game(Phase10Rules(), 3, 0)
    view = state.public_view()
    assert view["hands"] == [[c.text for c in h] for h in state.hands]
    assert len(view["draw_pile"]) == 108 - 31


def test_skip_victims_kept_by_every_argument_that_decides_them() -> None:
    """The Skip's victims are kept in a table: every rule, seat, seating and pending Skip
    that changes the answer is part of its key (asked in an order that would reuse a wrong
    entry if one were left out)."""
    from itertools import product

    from meldref.engine.phase10.view import _skip_victims, skip_victims

    for victim, repeat in product(("choose", "next"), ("once-per-orbit", "unlimited")):
        rules = Phase10Rules(skip_victim=victim, skip_repeat=repeat)  # type: ignore[arg-type]
        for players in (2, 3, 4):
            for seat, playing, skips in product(range(players),
                                                product((True, False), repeat=players),
                                                product((0, 1), repeat=players)):
                got = skip_victims(rules, seat, list(playing), list(skips))
                assert got == _skip_victims(rules, seat, playing, skips)
    assert skip_victims(Phase10Rules(), 0, [True, True, True], [0, 1, 0]) == (2,)
    assert skip_victims(Phase10Rules(skip_repeat="unlimited"), 0, [True, True, True],
                        [0, 1, 0]) == (1, 2)
