"""An action is judged once: the referee plays the engine's `Ruling` (with what the check
built, such as a lay-down's melds) without judging it again; a ruling is only good in the
position it was made in."""

from __future__ import annotations

import pytest
from phase10_positions import position

from meldref.engine.game import IllegalActionError
from meldref.engine.phase10.state import LayPlan


def test_a_legal_ruling_carries_the_plan_and_is_played_without_a_second_judgement(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = position(["R7 B7 G7 Y3 B3 G3 R9", "B1 B2"], phase_now=[1, 1])
    ruling = state.judge(state.parse_action("lay set:R7,B7,G7 set:Y3,B3,G3"))
    assert ruling.legal and isinstance(ruling.plan, LayPlan) and ruling.plan.phase == 1

    def judged_again(*_: object) -> str:
        raise AssertionError("the lay-down was judged a second time")

    monkeypatch.setitem(state._checks(), type(ruling.action), judged_again)
    events = state.apply(ruling)
    assert events[0].kind == "lay_down" and state.laid[0] == 1


def test_an_illegal_or_stale_ruling_is_refused() -> None:
    state = position(["R7 B7 G7 Y3 B3 G3 R9", "B1 B2"], phase_now=[1, 1])
    bad = state.judge(state.parse_action("lay set:R7,B7,G7 set:Y3,B3,R9"))
    assert not bad.legal and bad.reason
    with pytest.raises(IllegalActionError):
        state.apply(bad)
    hit = state.judge(state.parse_action("discard R9"))
    lay = state.judge(state.parse_action("lay set:R7,B7,G7 set:Y3,B3,G3"))
    state.apply(lay)
    with pytest.raises(IllegalActionError, match="another position"):
        state.apply(hit)  # judged before the lay-down: the position has changed since
