"""A game played through an environment, kept so it can be saved as a replay.

An environment applies each action through `GameLog.apply`, which keeps the seat, decision,
text and events; `records()` turns them into the header and the referee's records
(protocol.records: `start`, `action`, `result`, built there and nowhere else), which
`meldref.replay.export.save_replay` writes as a replay that `meldref replay verify` accepts and
the viewer shows. Keeping tuples and building the records only when saved costs a step an
append. The environment is the referee here: no clocks (each action's time is 0), no faults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.game import JSON, Action, Event, GameInfo, GameState, rules_to_json
from ..protocol.errors import SeatStatus
from ..protocol.policy import MatchPolicy
from ..protocol.records import GameRecord, action_record, result_record, start_record
from ..protocol.referee import rank  # the referee's own ending (none forfeited)
from ..protocol.wire import PROTOCOL_VERSION


@dataclass
class GameLog:
    """One game's actions as an environment applied them (module docstring)."""

    info: GameInfo
    seed: int
    names: list[str]  # per seat, the name the replay shows
    state: GameState
    specs: list[str] | None = None  # per seat, what played it (default: "environment")
    opening: list[Event] = field(init=False)
    actions: list[tuple[int, str, str, list[Event]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.opening = self.state.opening_events()

    def apply(self, action: Action | str) -> list[Event]:
        """Apply `action` (an engine action, or its protocol text) to the state; keep it."""
        state = self.state
        seat, decision = state.to_move, state.decision
        assert seat is not None, "the game is over"
        if isinstance(action, str):
            action = state.parse_action(action)
        events = state.apply(action)
        self.actions.append((seat, decision, str(action), events))
        return events

    def _specs(self) -> list[str]:
        return self.specs or ["environment"] * len(self.names)

    def records(self) -> tuple[dict[str, JSON], list[dict[str, JSON]]]:
        """The replay's header fields and its records (no result for a game not over)."""
        rules = rules_to_json(self.state.rules)
        policy = MatchPolicy().to_json()
        header = {"game": self.info.name, "rules": rules, "seed": self.seed,
                  "players": len(self.names), "policy": policy, "game_id": None,
                  "seats": [{"seat": s, "name": n, "spec": spec, "bot_name": n}
                            for s, (n, spec) in enumerate(zip(self.names, self._specs(),
                                                              strict=True))]}
        out = [start_record(PROTOCOL_VERSION, self.info.name, rules, self.names, self.seed,
                            policy, self.opening)]
        out += [action_record(n, seat, decision, text, 0.0, events)
                for n, (seat, decision, text, events) in enumerate(self.actions)]
        outcome = self.state.outcome
        if outcome is not None:
            seats = len(self.names)
            status = [SeatStatus.OK] * seats
            out.append(result_record(GameRecord(
                self.info.name, self.seed, rules, self.names, rank(outcome, status), status,
                [[] for _ in range(seats)], [a[2] for a in self.actions], len(self.actions),
                0.0, [0.0] * seats)))
        return header, out


def view_text(log: GameLog, seat: int | None) -> str:
    """The last action, who is to move, and what `seat` sees (None: the seat to move, or seat
    0 once the game is over), in words a person reads: the environments' ansi rendering."""
    state = log.state
    lines = []
    if log.actions:
        who, _, text, _ = log.actions[-1]
        lines.append(f"last: {log.names[who]} (seat {who}) {text}")
    outcome = state.outcome
    if outcome is not None:
        lines.append("game over: " + "; ".join(
            f"{name} place {place}, score {score}"
            for name, place, score in zip(log.names, outcome.places, outcome.scores,
                                          strict=True)))
    else:
        mover = state.to_move
        assert mover is not None
        lines.append(f"{log.names[mover]} (seat {mover}) to {state.decision}")
    viewer = seat if seat is not None else state.to_move or 0
    lines.append(f"what {log.names[viewer]} (seat {viewer}) sees:")
    for key, value in state.observation(viewer).to_json().items():
        if key in ("seat", "to_move", "decision"):
            continue
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"  {key}:")
            lines += ["    " + ", ".join(f"{k} {_value(v)}" for k, v in item.items())
                      for item in value]
        else:
            lines.append(f"  {key}: {_value(value)}")
    return "\n".join(lines)


def _value(value: JSON) -> str:
    if value is None or value == []:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " ".join(_value(v) for v in value)
    return str(value)


