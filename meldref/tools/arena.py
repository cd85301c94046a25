"""Games in-process from Python: an SDK bot against built-in bots or bot programs, in a few
lines, for tuning and tests (docs/sdk.md).

    from meldref.tools.arena import play
    result = play("fivecrowns", [MyBot(), "builtin:expert"], games=20, seed=1)
    print(result.summary())

A seat is an SDK bot (`meldref.bots.sdk.Bot`), an in-process engine bot (`act(view)`), or the
text of a `--bot`: ``builtin:NAME`` or a program's command line. The referee plays every game
(`protocol.referee.play_game`, as `meldref match` does: the seats rotate one place a game,
game k has seed `seed + k`). An SDK bot is driven through its own `Runner`, line by line, with
the protocol's exact lines but no process and no pipe: it sees what it would see on its
standard input, its clock included, and answers as it would (its worker thread and deadline,
its traceback on stderr when a decision raises).
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from ..bots import sdk
from ..engine.game import JSON, Bot, GameInfo, Rules, find_game
from ..protocol.conversation import Reply, Request, Setup, request_text
from ..protocol.errors import BotProtocolError, Fault, FaultOutcome
from ..protocol.records import GameRecord
from ..protocol.referee import MatchPolicy, close_all, play_game
from ..protocol.seats import BotSpec, InProcessSeat, Seat, seat_from_spec
from ..protocol.wire import error_line, event_line, gameover_line, parse_bot_line, setup_lines

# What `play` seats: an SDK bot, an in-process bot (`act(view)`), or a `--bot` text.
Player = sdk.Bot | Bot | str | BotSpec


class _Lines:
    """What the SDK's writer writes to: its lines, kept for the seat to read."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines += [line for line in text.split("\n") if line]
        return len(text)

    def flush(self) -> None:
        pass


class SdkSeat(Seat):
    """An SDK bot played in this process through its own `Runner`, fed the protocol's lines."""

    def __init__(self, bot: sdk.Bot) -> None:
        self.bot = bot
        self.name = bot.name
        self.out = _Lines()
        # The runner's reader thread waits on a pipe nobody writes to until `close`: the
        # seat hands the runner its lines itself.
        read, self._write = os.pipe()
        self._input: IO[str] = os.fdopen(read, "r")
        self.runner = sdk.Runner(bot, self._input, self.out)  # type: ignore[arg-type]
        self._ids = 0
        self._feed("meldref 1 -")

    @property
    def failures(self) -> int:
        """Decisions of the bot that raised (each answered by its fallback)."""
        return self.runner.failures

    def _feed(self, *lines: str) -> None:
        for line in lines:
            self.runner.handle(line)

    def start(self, setup: Setup) -> None:
        self._feed(*setup_lines(setup.game, setup.seat, setup.rules, setup.names))

    def notify(self, events: Sequence[Mapping[str, JSON]]) -> None:
        self._feed(*(event_line(e) for e in events))

    def decide(self, request: Request) -> Reply:
        self._ids += 1
        self.out.lines.clear()
        began = time.perf_counter()
        self._feed(*request_text(self._ids, request))
        elapsed = time.perf_counter() - began
        for line in self.out.lines:
            msg = parse_bot_line(line)
            if msg is not None and msg.kind == "action" and msg.request_id == self._ids:
                return Reply(msg.text, elapsed, self._ids)
        raise BotProtocolError(Fault(FaultOutcome.MALFORMED, f"no answer to request {self._ids}",
                                     self._ids), elapsed)

    def reject(self, request_id: int | None, reason: str) -> None:
        self._feed(error_line(request_id, reason))

    def finish(self, result: Mapping[str, JSON]) -> None:
        self._feed(gameover_line(result))

    def close(self) -> None:
        if self._write >= 0:
            os.close(self._write)  # the reader thread ends
            self._write = -1


@dataclass
class Standing:
    """One bot over the games played: games, wins (shared wins split), mean place and score."""

    name: str
    games: int = 0
    wins: float = 0.0
    places: list[int] = field(default_factory=list)
    scores: list[int] = field(default_factory=list)
    faults: int = 0

    @property
    def mean_place(self) -> float:
        return statistics.fmean(self.places) if self.places else 0.0

    @property
    def mean_score(self) -> float:
        return statistics.fmean(self.scores) if self.scores else 0.0


@dataclass
class ArenaResult:
    """The games played (`records`, in order) and each bot's standing, by seat entry."""

    records: list[GameRecord]
    standings: list[Standing]

    def summary(self) -> str:
        """One line a bot: games, wins, mean place, mean score, faults."""
        return "\n".join(
            f"{s.name}: {s.games} games, {s.wins:g} wins, mean place {s.mean_place:.2f}, "
            f"mean score {s.mean_score:.1f}, {s.faults} faults" for s in self.standings)


def play(game: str, bots: Sequence[Player], games: int = 1, seed: int = 0,
         rules: Rules | None = None, policy: MatchPolicy | None = None) -> ArenaResult:
    """Play `games` games of `game` between `bots` (see the module docstring); `rules`: the
    game's rules dataclass (default: its defaults)."""
    info = find_game(game)
    rules = rules if rules is not None else info.rules()
    seats = [_seat(bot, info, k) for k, bot in enumerate(bots)]
    standings = [Standing(s.name) for s in seats]
    records = []
    try:
        for g in range(games):
            order = [(k + g) % len(seats) for k in range(len(seats))]  # seat i: entry order[i]
            record = play_game(info, rules, [seats[k] for k in order], seed + g,
                               policy or MatchPolicy())
            records.append(record)
            shared = record.outcome.places.count(1)
            for i, k in enumerate(order):
                standing = standings[k]
                standing.games += 1
                standing.places.append(record.outcome.places[i])
                standing.scores.append(record.outcome.scores[i])
                standing.faults += len(record.faults[i])
                if record.outcome.places[i] == 1:
                    standing.wins += 1 / shared
    finally:
        close_all(seats)
    for standing, seat in zip(standings, seats, strict=True):
        standing.name = seat.name  # a program's `id name`, once it was started
    return ArenaResult(records, standings)


def _seat(bot: Player, info: GameInfo, k: int) -> Seat:
    if isinstance(bot, sdk.Bot):
        return SdkSeat(bot)
    if isinstance(bot, str | BotSpec):
        return seat_from_spec(bot, info, seed=k)
    with contextlib.suppress(AttributeError):
        if callable(bot.act):
            return InProcessSeat(bot)
    raise TypeError(f"not a bot: {bot!r} (an SDK Bot, an object with act(view), or a --bot text)")


__all__ = ["ArenaResult", "SdkSeat", "Standing", "play"]
