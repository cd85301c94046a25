"""The referee loop with in-process seats: records, re-simulation, ranking under forfeit and
autoplay, clocks, determinism."""

from __future__ import annotations

import json
from typing import Any

import fakegame
import pytest

from meldref.engine.game import rules_from_json
from meldref.protocol.errors import Fault, FaultOutcome
from meldref.protocol.referee import MatchPolicy, _Clock, play_game
from meldref.protocol.seats import InProcessSeat, Reply, Request, Seat, Setup, seat_from_spec

GAME = fakegame.GAME


class ScriptedSeat(Seat):
    """Answers from a list, then plays like the random fake bot."""

    def __init__(self, answers: list[str], seed: int = 0) -> None:
        self.answers = list(answers)
        self.bot = fakegame.RandomFakeBot(seed)
        self.name = "scripted"
        self.rejected: list[str] = []
        self.results: list[Any] = []

    def start(self, setup: Setup) -> None:
        self.setup = setup

    def decide(self, request: Request) -> Reply:
        text = self.answers.pop(0) if self.answers else self.bot.act(request.observation)
        return Reply(text, 0.001, request_id=None)

    def reject(self, request_id: int | None, reason: str) -> None:
        self.rejected.append(reason)

    def finish(self, result: Any) -> None:
        self.results.append(result)


def seats(*specs: str) -> list[Seat]:
    return [seat_from_spec(s, GAME, seed=i) for i, s in enumerate(specs)]


def test_records_are_json_and_replay_to_the_same_outcome() -> None:
    records: list[dict[str, Any]] = []
    record = play_game(GAME, GAME.rules(turns=9), seats("builtin:random", "builtin:random",
                                                        "builtin:random"), 11,
                       on_record=records.append)
    json.dumps(records)
    start, result = records[0], records[-1]
    assert start["type"] == "start" and start["protocol"] == 1 and start["players"] == 3
    assert result["type"] == "result" and result["outcome"] == record.outcome.to_json()
    actions = [r for r in records if r["type"] == "action"]
    assert [a["n"] for a in actions] == list(range(len(actions)))
    assert [a["action"] for a in actions] == record.actions
    draw = next(a for a in actions if a["action"] == "draw pile")
    assert draw["events"][0]["private"] == ["card"] and "card" in draw["events"][0]
    state = GAME.new_game(rules_from_json(fakegame.FakeRules, start["rules"]), 3, start["seed"])
    for a in actions:
        assert state.to_move == a["seat"] and state.decision == a["decision"]
        state.apply(state.parse_action(a["action"]))
    assert state.outcome == record.outcome.__class__(
        record.outcome.termination, record.outcome.places, record.outcome.scores)


def test_same_seed_same_game() -> None:
    a = play_game(GAME, GAME.rules(), seats("builtin:random", "builtin:random"), 5)
    b = play_game(GAME, GAME.rules(), seats("builtin:random", "builtin:random"), 5)
    assert a.actions == b.actions and a.outcome == b.outcome


def test_illegal_answer_is_rejected_with_its_reason_then_retried() -> None:
    me = ScriptedSeat(["draw sideways", "discard R1", "draw pile"])
    record = play_game(GAME, GAME.rules(), [me, *seats("builtin:random")], 2)
    assert [f.outcome for f in record.faults[0]] == ["illegal", "illegal"]
    assert "draw from `pile` or `discard`" in me.rejected[0]
    assert "it is time to draw, not to discard" in me.rejected[1]
    assert record.status == ["ok", "ok"] and record.actions[0] == "draw pile"
    assert me.results and me.results[0]["termination"] == "normal"


def test_retries_exhausted_forfeits_and_ranks_last() -> None:
    me = ScriptedSeat(["nonsense"] * 3)
    policy = MatchPolicy(illegal_retries=2)
    record = play_game(GAME, GAME.rules(), [*seats("builtin:random", "builtin:random"), me], 2,
                       policy)
    assert [(f.outcome, f.fatal) for f in record.faults[2]] == [
        ("illegal", False), ("illegal", False), ("illegal", True)]
    assert record.status == ["ok", "ok", "forfeit"]
    assert record.outcome.places[2] == 3 and sorted(record.outcome.places[:2]) in ([1, 2], [1, 1])
    assert record.outcome.termination == "normal"  # two seats still played it out


def test_two_player_forfeit_ends_the_game_at_once() -> None:
    record = play_game(GAME, GAME.rules(), seats("builtin:crasher", "builtin:random"), 2)
    assert record.outcome.termination == "forfeit"
    assert record.outcome.places == (2, 1)
    assert record.faults[0][0].outcome == "crashed"
    assert "ZeroDivisionError" in record.faults[0][0].detail


def test_autoplay_keeps_playing_and_ranks_normally() -> None:
    policy = MatchPolicy(on_failure="autoplay")
    record = play_game(GAME, GAME.rules(), seats("builtin:crasher", "builtin:random"), 2, policy)
    assert record.status == ["autoplay", "ok"]
    assert record.outcome.termination == "normal"
    assert record.outcome.detail["autoplayed"] == [0]


def test_solitaire_like_single_seat_forfeit() -> None:
    record = play_game(GAME, GAME.rules(), seats("builtin:crasher"), 2)
    # Alone and out: it has lost (place 2, no winner), as a lost Solitaire game.
    assert record.outcome.termination == "forfeit" and record.outcome.places == (2,)
    assert record.outcome.winners == ()


def test_clock_charges_only_time_over_the_allowance() -> None:
    clock = _Clock(MatchPolicy(move_time=1.0, first_move_time=3.0, time_bank=2.0,
                               increment=0.5))
    assert clock.allowance() == 3.0
    clock.charge(3.5)  # first move: 0.5 over
    assert clock.bank == pytest.approx(2.0) and clock.allowance() == 1.0
    clock.charge(0.2)
    assert clock.bank == pytest.approx(2.5)
    clock.charge(9.0)
    assert clock.bank == pytest.approx(0.5)


def test_bank_is_capped_by_max_bank() -> None:
    # bank = min(max(0, bank - max(0, elapsed - time)) + increment, max_bank)
    clock = _Clock(MatchPolicy(move_time=1.0, time_bank=2.0, increment=0.5, max_bank=2.2))
    clock.charge(0.1)
    assert clock.bank == pytest.approx(2.2)  # 2.5 capped
    clock.charge(1.7)
    assert clock.bank == pytest.approx(2.0)  # 2.2 - 0.7 + 0.5, under the cap
    with pytest.raises(ValueError, match="max-bank"):
        MatchPolicy(time_bank=5.0, max_bank=1.0)


def test_first_decision_is_never_shorter_than_the_others() -> None:
    clock = _Clock(MatchPolicy(move_time=4.0, first_move_time=2.0))
    assert clock.allowance() == 4.0
    seen: list[Request] = []

    class Probe(ScriptedSeat):
        def decide(self, request: Request) -> Reply:
            seen.append(request)
            return super().decide(request)

    play_game(GAME, GAME.rules(turns=4), [Probe([]), *seats("builtin:random")], 1,
              MatchPolicy(move_time=1.0, first_move_time=5.0))
    assert [r.time for r in seen[:3]] == [5.0, 1.0, 1.0]


def test_forfeit_cuts_the_game_short_with_the_running_scores() -> None:
    class FailsLater(ScriptedSeat):
        def decide(self, request: Request) -> Reply:
            if len(request.observation.to_json()["hand"]) == 4 and request.observation.data[
                    "turn"] >= 2:
                return Reply("nonsense", 0.001)
            return super().decide(request)

    record = play_game(GAME, GAME.rules(turns=40), [FailsLater([]), *seats("builtin:random")], 4)
    assert record.outcome.termination == "forfeit"
    state = GAME.new_game(GAME.rules(turns=40), 2, 4)
    for text in record.actions:  # the failure itself adds no referee action
        state.apply(state.parse_action(text))
    assert len(record.actions) == 5 and state.to_move == 0
    assert record.outcome.scores == tuple(state.scores) != (0, 0)


@pytest.mark.parametrize("bad", [dict(on_failure="retry"), dict(move_time=0),
                                 dict(illegal_retries=-1)])
def test_policy_checks_its_values(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        MatchPolicy(**bad)


def test_unknown_builtin_bot_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="built-in bots: random, crasher"):
        seat_from_spec("builtin:nope", GAME)


def test_fault_record_shape() -> None:
    assert Fault(FaultOutcome.TIMEOUT, "slow", 3, True).to_record(1) == {
        "type": "fault", "seat": 1, "outcome": "timeout", "detail": "slow", "request": 3,
        "fatal": True}


def test_in_process_seat_passes_the_observation_object() -> None:
    seen: list[Any] = []

    class Bot:
        name = "probe"

        def act(self, view: Any) -> str:
            seen.append(view)
            return "draw pile" if len(view.to_json()["hand"]) == 3 else \
                f"discard {view.to_json()['hand'][0]}"

    play_game(GAME, GAME.rules(turns=2), [InProcessSeat(Bot()), *seats("builtin:random")], 1)
    assert seen and all(isinstance(v, fakegame.FakeView) for v in seen)
