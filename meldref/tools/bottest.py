"""`meldref bot test`: a bot's answers in written positions, judged one by one.

Each position (spec/POSITION.md) is put to a fresh bot process at the seat to move, as the
referee would put it in a game reaching that position: the handshake, the game's `game`,
`rule` and `player` lines, then one request (`view`, `item`, `legal`, `go`). The answer is
judged by the engine (legal or not, and why), and compared with the position's `expect` where
it states one: an answer matches when it leaves the game in the same state as an expected
action (so `lay set:r7,b7,w` matches `lay set:R7,B7,W=7`). Then the bot is told `quit`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..engine.game import JSON, rules_to_json
from ..engine.position import same_action, why_not_action
from ..protocol.errors import BotError
from ..protocol.referee import MatchPolicy
from ..protocol.seats import BotSpec, Limits, Request, Setup, seat_from_spec
from ..replay.positions import PositionFile


@dataclass(frozen=True, slots=True)
class Answer:
    """What a bot answered in one position, and the verdict."""

    path: Path
    seat: int
    decision: str
    action: str | None  # None: no answer (the fault says why)
    problem: str | None  # why the answer is not legal, or the bot's fault; None: legal
    expected: tuple[str, ...]
    matched: bool | None  # None: the position states no expected action
    elapsed: float | None

    @property
    def passed(self) -> bool:
        return self.problem is None and self.matched is not False

    def to_json(self) -> dict[str, JSON]:
        return {"position": str(self.path), "seat": self.seat, "decision": self.decision,
                "action": self.action, "legal": self.problem is None and self.action is not None,
                "problem": self.problem, "expected": list(self.expected),
                "matched": self.matched, "elapsed": self.elapsed, "passed": self.passed}


def ask(spec: BotSpec, loaded: PositionFile, policy: MatchPolicy, limits: Limits | None = None,
        log: Path | None = None) -> Answer:
    """Put the position to a new process (or built-in bot) of `spec` and judge its answer."""
    info, position = loaded.game, loaded.position
    state = position.start()
    seat_no = state.to_move
    assert seat_no is not None  # a Position is a game still to play
    decision = state.decision

    def answer(action: str | None, problem: str | None, elapsed: float | None) -> Answer:
        matched = None
        if position.expect:
            matched = problem is None and action is not None and any(
                same_action(state, action, e) for e in position.expect)
        return Answer(loaded.path, seat_no, decision, action, problem, position.expect,
                      matched, elapsed)

    seat = seat_from_spec(spec, info, limits=limits, log_path=log)
    try:
        seat.connect(policy.startup_time)
        names = tuple(seat.name if s == seat_no else f"seat{s}" for s in range(position.players))
        seat.start(Setup(info.name, rules_to_json(loaded.rules), seat_no, names))
        hints = None
        if policy.legal_hints:
            hints = lambda: [str(a) for a in state.legal_actions()]  # noqa: E731
        allowance = max(policy.first_move_time, policy.move_time)
        reply = seat.decide(Request(decision, state.observation(seat_no), allowance,
                                    policy.time_bank, hints))
    except BotError as exc:
        return answer(None, f"{exc.fault.outcome}: {exc.fault.detail}", exc.elapsed)
    finally:
        seat.close()
    return answer(reply.text, why_not_action(state, reply.text), reply.elapsed)


def ask_all(spec: BotSpec, positions: Sequence[PositionFile], policy: MatchPolicy,
             limits: Limits | None = None, log_dir: Path | None = None,
             progress: Callable[[Answer], None] | None = None) -> list[Answer]:
    """`ask` every position in turn; the answers in the same order."""
    answers = []
    for k, loaded in enumerate(positions):
        log = log_dir / f"{k:04d}-{loaded.path.stem}.stderr" if log_dir else None
        result = ask(spec, loaded, policy, limits, log)
        if progress is not None:
            progress(result)
        answers.append(result)
    return answers


__all__ = ["Answer", "ask", "ask_all"]
