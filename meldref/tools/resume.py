"""`meldref replay resume`: continue a recorded game from any action with other (or the same)
bots.

The game is replayed from its seed (or the position it started from) through the referee, each
seat answering with its recorded actions up to the chosen point (a `ScriptedSeat` in front of
the real bot, which sees every event as if it had played), and the bots play on from there. The
new replay is a whole game from the seed (or the position), so `replay verify` checks it like
any other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.game import JSON, find_game
from ..protocol.errors import Fault
from ..protocol.records import ResultLine
from ..protocol.referee import close_all
from ..protocol.seats import BotSpec, Reply, Request, Seat, Setup
from ..replay.files import Outline, Replay, ReplayError, open_replay, replay_stem, simulate
from ..settings import LimitSettings
from ..tournament.runner import make_seats, play_recorded
from ..tournament.schedule import BotEntry, bot_entries


@dataclass(slots=True)
class Script:
    """The recorded action texts to replay, and how many actions the new game has applied."""

    texts: list[str]
    applied: list[str] = field(default_factory=list)

    def on_record(self, record: Mapping[str, JSON]) -> None:
        if record.get("type") == "action":
            self.applied.append(str(record["action"]))

    def next_text(self) -> str | None:
        n = len(self.applied)
        return self.texts[n] if n < len(self.texts) else None

    def diverged_at(self) -> int | None:
        """The first action where the new game left the script (a seat failed), or None."""
        for i, (a, b) in enumerate(zip(self.texts, self.applied, strict=False)):
            if a != b:
                return i
        return None


class ScriptedSeat(Seat):
    """Answers with the script while it lasts, then lets the real seat decide."""

    def __init__(self, inner: Seat, script: Script) -> None:
        self.inner = inner
        self.script = script
        self.name = inner.name
        self.ids = inner.ids

    def _follow_name(self) -> None:
        # A program's name and ids are what its handshake announced: known once it has
        # connected (the seat's record in the replay is made after `start`).
        self.name = self.inner.name
        self.ids = self.inner.ids

    def connect(self, startup_time: float) -> None:
        self.inner.connect(startup_time)
        self._follow_name()

    def start(self, setup: Setup) -> None:
        self.inner.start(setup)
        self._follow_name()

    def decide(self, request: Request) -> Reply:
        text = self.script.next_text()
        if text is not None:
            return Reply(text, 0.0)
        return self.inner.decide(request)

    def notify(self, events: Sequence[Mapping[str, JSON]]) -> None:
        self.inner.notify(events)

    def reject(self, request_id: int | None, reason: str) -> None:
        self.inner.reject(request_id, reason)

    def finish(self, result: Mapping[str, JSON]) -> None:
        self.inner.finish(result)

    def close(self) -> None:
        self.inner.close()

    def take_notes(self) -> list[Fault]:
        return self.inner.take_notes()

    @property
    def alive(self) -> bool:
        return self.inner.alive


@dataclass(frozen=True, slots=True)
class Resumed:
    line: ResultLine
    replay: Path
    bots: tuple[BotEntry, ...]
    diverged_at: int | None


class UntrustedBotsError(ValueError):
    """A replay whose header names bot programs, resumed without `--bot`: a replay is data
    from whoever wrote it, and its commands run only when the user says so."""


def recorded_bots(header: Mapping[str, JSON], trust: bool,
                  announce: Callable[[str], None] | None = None) -> list[BotSpec]:
    """The bots the replay's header names, one per seat. Built-in bots are data (the name of
    one of ours); a program is a command line that anyone who wrote the file chose, so it is
    refused (`UntrustedBotsError`) unless `trust`, and then `announce`d before it runs."""
    specs = [BotSpec.parse(str(s.get("spec") or "builtin:greedy"))
             for s in header.get("seats") or []]
    programs = [(seat, str(spec)) for seat, spec in enumerate(specs) if spec.builtin is None]
    if programs and not trust:
        named = "; ".join(f"seat {seat}: {command!r}" for seat, command in programs)
        raise UntrustedBotsError(
            f"the replay names bot programs ({named}); give a --bot for every seat (the "
            "same command if you trust it), or --trust-replay-bots to run the replay's own")
    for seat, command in programs:
        if announce is not None:
            announce(f"running the replay's command for seat {seat}: {command}")
    return specs


def resume(path: Path, at: int, specs: Sequence[BotSpec], out: Path | None,
           limits: LimitSettings, *, trust_replay_bots: bool = False,
           announce: Callable[[str], None] | None = None) -> Resumed:
    """Replay `at` actions of the game in `path`, then let `specs` play on; without `specs`,
    the replay's own bots (`recorded_bots`: programs only with `trust_replay_bots`).

    `ReplayError` / `ValueError` when the replay or the arguments do not allow it.
    """
    replay = open_replay(path)
    script = Script(_recorded_actions(replay, at))
    header = replay.header
    players = int(header["players"])
    if not specs:
        specs = recorded_bots(header, trust_replay_bots, announce)
    if len(specs) != players:
        raise ValueError(f"the game has {players} seats; give {players} --bot (or none to "
                         f"reuse the recorded ones), not {len(specs)}")
    info = find_game(header["game"])
    rules = replay.rules()
    policy = limits.policy()
    bots = tuple(bot_entries(list(specs)))
    target = out or path.with_name(f"{replay_stem(path)}-resumed-at-{at}.jsonl")
    game_id = str(header.get("game_id") or replay_stem(path))
    seats: list[Seat] = []
    try:
        inner = make_seats(info, bots, int(header["seed"]),
                           game_id, [None] * players,
                           limits.process_limits())
        seats = [ScriptedSeat(s, script) for s in inner]
        position = replay.position() if "position" in header else None
        record = play_recorded(info, rules, bots, seats, header["seed"], policy, target,
                               header.get("game_id"), also=script.on_record,
                               extra={"resumed_from": {"path": str(path), "at": at}},
                               position=position)
    finally:
        close_all(seats)
    line = ResultLine(game_id, info.name, int(header["seed"]),
                      tuple(b.name for b in bots), tuple(str(b.spec) for b in bots),
                      replay=str(target), figures=record.figures())
    return Resumed(line, target, bots, script.diverged_at())


def _recorded_actions(replay: Replay, at: int) -> list[str]:
    """The texts of the first `at` actions of `replay`, which must re-simulate cleanly; the
    whole file read once, a line at a time. A truncated game may be resumed (that is the
    point); a damaged one is refused: what follows the damage cannot be trusted."""
    seen = Outline()
    texts: list[str] = []
    seen.read(replay, lambda r: simulate(r, stop_after=max(at, 0),
                                         before=lambda record, _: texts.append(
                                             str(record["action"]))))
    if seen.damaged is not None:
        raise seen.damaged
    if not 0 <= at <= seen.actions:
        raise ValueError(f"--at {at}: the replay holds actions 0..{seen.actions}")
    return texts


__all__ = ["ReplayError", "Resumed", "ScriptedSeat", "UntrustedBotsError", "recorded_bots",
           "resume"]
