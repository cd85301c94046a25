"""The in-process Phase 10 bots and `play_inprocess`."""

from __future__ import annotations

import pytest
from phase10_positions import position

from meldref.bots.phase10 import GreedyBot, RandomBot
from meldref.engine.phase10 import (
    GAME,
    Discard,
    Draw,
    Hit,
    LayDown,
    Phase10Rules,
    Phase10View,
)
from meldref.engine.play import RunawayGameError, play_inprocess


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_random_bots_finish_games(players: int) -> None:
    bots = [RandomBot(i) for i in range(players)]
    outcome, actions = play_inprocess(GAME, Phase10Rules(), bots, players)
    assert outcome.winners and len(outcome.places) == players
    assert any(isinstance(a, LayDown) for a in actions)
    assert any(isinstance(a, Hit) for a in actions)


def test_greedy_beats_random() -> None:
    wins = 0
    for seed in range(8):
        greedy = seed % 2  # both seats in turn
        bots = [RandomBot(seed), RandomBot(seed)]
        bots[greedy] = GreedyBot(seed)  # type: ignore[call-overload]
        outcome, _ = play_inprocess(GAME, Phase10Rules(), bots, seed)
        wins += greedy in outcome.winners
    assert wins >= 7


def test_play_inprocess_takes_action_text_and_stops_runaways() -> None:
    class TextBot:
        name = "text"

        def act(self, view: Phase10View) -> str:
            return str(view.legal_actions()[0]) if view.decision == "draw" else str(
                Discard(max(view.hand, key=lambda c: c.text)))

    outcome, actions = play_inprocess(GAME, Phase10Rules(turn_cap=10, hand_cap=2),
                                      [TextBot(), TextBot()], 1)
    assert outcome.detail["decided_by"] == "hand-cap" and len(actions) == 40
    with pytest.raises(RunawayGameError, match="over 5 actions"):
        play_inprocess(GAME, Phase10Rules(), [TextBot(), TextBot()], 1, max_actions=5)


def test_random_bot_lays_when_it_can_about_half_the_time() -> None:
    state = position(["R7 B7 G7 R8 B8 G8 Y1 Y2", "B1"])
    bot = RandomBot(3)
    lays = sum(isinstance(bot.act(state.observation(0)), LayDown) for _ in range(200))
    assert 60 < lays < 140


def test_greedy_lays_at_once_with_extras() -> None:
    state = position(["R7 B7 G7 Y7 R8 B8 G8 W Y2", "B1"])
    action = GreedyBot(0).act(state.observation(0))
    assert isinstance(action, LayDown)
    assert str(action) == "lay phase=1 set:R7,B7,G7,Y7 set:R8,B8,G8"
    assert state.why_illegal(action) is None


def test_greedy_hits_naturals_before_wilds() -> None:
    state = position(["W Y7 B2", "B1"], table=[(1, "set:R7,B7,G7")], laid=[1, 1])
    action = GreedyBot(0).act(state.observation(0))
    assert action == Hit(1, state.hands[0][1])


def test_greedy_takes_the_discard_only_when_it_helps() -> None:
    hand = "R7 B7 R8 B8 G1 Y3 R5 B10 G11 Y12"
    helps = position([hand, "B1"], decision="draw", discard="G7")
    assert GreedyBot(0).act(helps.observation(0)) == Draw("discard")
    useless = position([hand, "B1"], decision="draw", discard="G2")
    assert GreedyBot(0).act(useless.observation(0)) == Draw("pile")
    wild = position([hand, "B1"], decision="draw", discard="W")
    assert GreedyBot(0).act(wild.observation(0)) == Draw("discard")


def test_greedy_keeps_pairs_and_wilds_and_discards_a_loner() -> None:
    state = position(["R7 B7 R8 B8 W R12 R3 B5 G2 Y1 Y4", "B1"])
    action = GreedyBot(0).act(state.observation(0))
    assert isinstance(action, Discard) and action.card.text == "R12"


def test_greedy_skips_the_leader() -> None:
    state = position(["S R7 B7", "B1", "B2", "B3"], completed=[[], [1], [1, 2, 3], [1]],
                     phase_now=[1, 2, 4, 2])
    action = GreedyBot(0).act(state.observation(0))
    assert action == Discard(state.hands[0][0], 2)


def test_greedy_picks_a_phase_it_can_make_in_any_order() -> None:
    rules = Phase10Rules(dealer="seat0", any_order=True)
    state = position(["G1 G3 G5 G6 G8 G9 G11 R2 Y4", "B1"], rules=rules,
                     phase_now=[None, None])
    action = GreedyBot(0).act(state.observation(0))
    assert isinstance(action, LayDown) and action.phase == 8
    assert state.why_illegal(action) is None


def test_bots_decide_from_the_view_alone() -> None:
    state = GAME.new_game(Phase10Rules(), 3, 4)
    view = state.observation(state.to_move or 0)
    assert not any(isinstance(getattr(view, f), type(state)) for f in view.__dataclass_fields__)
    for bot in (RandomBot(0), GreedyBot(0)):
        assert state.why_illegal(bot.act(view)) is None
