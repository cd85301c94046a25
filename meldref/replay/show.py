"""A recorded game told move by move, as one seat saw it if asked (`replay show`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.game import JSON, EventKind, GameState, rules_to_json
from ..protocol.records import event_record
from .files import (
    Outline,
    Replay,
    ReplayError,
    ReplayTruncated,
    Step,
    event_for_seat,
    open_replay,
    read_through,
    simulate,
)
from .games import presentation
from .words import describe_event, format_hand, seat_name, value_text

HAND_KEYS = ("hand_number", "round", "round_number", "hand")


@dataclass(slots=True)
class Telling:
    """The lines of a game's account, with where reading stopped if the file was bad."""

    lines: list[str] = field(default_factory=list)
    problem: ReplayError | None = None

    @property
    def damaged(self) -> bool:
        """Whether the file was bad, not only cut short."""
        return self.problem is not None and not isinstance(self.problem, ReplayTruncated)


class ShowError(ValueError):
    """A `--seat` or `--hand` the replay does not have (a usage error, not a bad file)."""


def tell(path: Path, seat: int | None = None, hand: int | None = None) -> Telling:
    """The game in `path` move by move; as `seat` saw it; only hand `hand` if given.
    `ShowError` for a seat or hand the game does not have."""
    replay = open_replay(path)
    players = int(replay.header["players"])
    if seat is not None and not 0 <= seat < players:
        raise ShowError(f"--seat {seat}: the game has seats 0..{players - 1}")
    names = replay.seat_names() or [f"seat {i}" for i in range(players)]
    telling = Telling(_header_lines(replay, seat))
    story = _Story(telling, names, seat, hand, replay.game.name)
    seen = read_through(replay, story.play)
    if hand is not None and hand not in story.seen:
        raise ShowError(f"--hand {hand}: the replay has hands 1..{max(story.seen)}")
    telling.lines.extend(_footer_lines(seen, names))
    telling.problem = seen.problem
    if telling.problem:
        telling.lines.append(f"!! stopped: {telling.problem}")
    return telling


@dataclass(slots=True)
class _Story:
    """Lines of a game as they happen, each kept only if it belongs to the hand asked for."""

    telling: Telling
    names: Sequence[str]
    seat: int | None
    only_hand: int | None
    game: str
    hand: int = 1
    started: bool = False
    seen: set[int] = field(default_factory=lambda: {1})  # hand numbers dealt so far

    def play(self, replay: Replay) -> None:
        # The events told are the re-simulated ones (what the file stores is checked against
        # them, and may be anything).
        self.events([event_record(e) for e in replay.new_state().opening_events()])
        simulate(replay, on_step=self.step, before=self.before)

    def add(self, line: str) -> None:
        if self.only_hand is None or self.hand == self.only_hand:
            self.telling.lines.append(line)

    def events(self, stored: Sequence[Mapping[str, JSON]]) -> None:
        for data in stored:
            view = event_for_seat(data, self.seat)
            number = next((view[k] for k in HAND_KEYS if isinstance(view.get(k), int)), None)
            if view.get("event") == EventKind.DEAL and number is not None and (
                    number != self.hand or not self.started):
                self.hand, self.started = number, True
                self.seen.add(number)
                self.add(f"-- {presentation(self.game).look.deal_word or 'hand'} {number} --")
            self.add("    " + describe_event(view, self.names, self.game))

    def before(self, record: dict[str, JSON], state: GameState) -> None:
        if self.seat is None or state.to_move != self.seat:
            return
        held = state.observation(self.seat).to_json().get("hand")
        if isinstance(held, list):
            self.add(f"  seat {self.seat} holds {format_hand(held)}")

    def step(self, step: Step, state: GameState) -> None:
        auto = " (played by the referee)" if step.record.get("auto") else ""
        self.add(f"#{step.record.get('n', '?')} {seat_name(self.names, step.seat)} "
                 f"{step.decision}: {step.action}{auto}")
        self.events([event_record(e) for e in step.events])


def _header_lines(replay: Replay, seat: int | None) -> list[str]:
    h = replay.header
    defaults = rules_to_json(replay.game.rules())
    changed = {k: v for k, v in h["rules"].items() if defaults.get(k, v) != v}
    rules = " ".join(f"{k}={value_text(v)}" for k, v in changed.items()) or "default rules"
    lines = [f"{h['game']}  seed {h['seed']}  {h['players']} players  {rules}"]
    for s in h.get("seats") or []:
        version = f" v{s['version']}" if s.get("version") else ""
        lines.append(f"  seat {s['seat']}: {s.get('name')}{version}  [{s.get('spec')}]")
    if "position" in h:  # its cards are not told: `replay position --at 0` writes them
        lines.append("  started from a written position, not a deal (replay position --at 0)")
    if seat is not None:
        lines.append(f"(as seat {seat} saw it: other hands and the draw pile hidden)")
    return lines


def _footer_lines(seen: Outline, names: Sequence[str]) -> list[str]:
    lines = []
    for _, fault in seen.faults:
        lines.append(f"fault: {seat_name(names, fault.get('seat'))} {fault.get('outcome')}"
                     f"{' (fatal)' if fault.get('fatal') else ''}: {fault.get('detail')}")
    result = seen.result
    if result is None:
        lines.append("no result: the replay is truncated (the game did not finish)")
        return lines
    outcome = result.get("outcome", {})
    winners = ", ".join(seat_name(names, s) for s in outcome.get("winners", [])) or "none"
    lines.append(f"result ({outcome.get('termination')}): winner {winners}; places "
                 f"{value_text(outcome.get('places'))}; scores {value_text(outcome.get('scores'))}")
    return lines
