"""Who plays whom, on which deal, in which seat: a tournament's games as a fixed list.

The list is a pure function of the configuration, and every game's id names its place in it
(table, deal, rotation), so an interrupted tournament resumes by playing the ids not yet in its
results file, and two runs of one configuration play the same games.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any, Literal

Format = Literal["round-robin", "gauntlet"]


@dataclass(frozen=True, slots=True)
class BotEntry:
    """A bot of a tournament: its name in the standings and how to seat it."""

    name: str
    spec: str  # "builtin:greedy" or a command line


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play: everything a worker process needs (picklable)."""

    index: int
    game_id: str
    game: str
    rules: Mapping[str, Any]  # option texts as given (KEY -> VALUE)
    seed: int
    deal: int
    bots: tuple[BotEntry, ...]  # in seat order

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "game_id": self.game_id, "game": self.game,
                "seed": self.seed, "deal": self.deal,
                "bots": [b.name for b in self.bots], "specs": [b.spec for b in self.bots]}


@dataclass(frozen=True, slots=True)
class Plan:
    """What a tournament plays: the bots, the shape of the schedule, and the rules."""

    game: str
    bots: tuple[BotEntry, ...]
    players: int
    games: int  # per table (rounded up to whole rotations when deals are duplicated)
    format: Format = "round-robin"
    duplicate: bool = True
    seed: int | None = 1  # None: drawn at random when the tournament starts (`settle_seed`)
    rules: Mapping[str, Any] = field(default_factory=dict)

    def fingerprint(self) -> str:
        """A short hash of everything that decides the games (not jobs, paths or limits)."""
        data = asdict(self)
        text = json.dumps(data, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def tables(self) -> list[tuple[BotEntry, ...]]:
        """The groups of bots that sit down together."""
        if self.players == 1:
            return [(b,) for b in self.bots]
        if self.format == "gauntlet":
            head, rest = self.bots[0], self.bots[1:]
            return [(head, *combo) for combo in itertools.combinations(rest, self.players - 1)]
        return list(itertools.combinations(self.bots, self.players))

    def games_per_table(self) -> int:
        if not self.duplicate:
            return self.games
        return -(-self.games // self.players) * self.players

    def jobs(self) -> list[GameJob]:
        """Every game of the tournament, in schedule order."""
        if self.seed is None:
            raise ValueError("the plan's seed is still to be drawn (tournament.settle_seed)")
        out: list[GameJob] = []
        for t, table in enumerate(self.tables()):
            for g in range(self.games_per_table()):
                out.append(self._job(len(out), t, g, table, self.seed))
        return out

    def _job(self, index: int, t: int, g: int, table: tuple[BotEntry, ...],
             seed: int) -> GameJob:
        k = len(table)
        # Duplicate deals: deal d is played k times, the bots rotated one seat each time, so
        # every bot holds every seat's cards once. Without them, each game is a fresh deal and
        # the seats still rotate.
        deal, rotation = (g // k, g % k) if self.duplicate else (g, g % k)
        seats = table[rotation:] + table[:rotation]
        game_id = f"t{t:02d}-d{deal:04d}-r{rotation}"
        return GameJob(index, game_id, self.game, dict(self.rules), seed + deal, deal,
                       tuple(seats))


def bot_entries(specs: Sequence[str], names: Sequence[str | None] | None = None,
                announced: Mapping[str, str] | None = None) -> list[BotEntry]:
    """Bots from specs, named by `names` (given ones), else by `announced` (spec -> the `id
    name` the program sent), else after the built-in or the program; made unique with #1,
    #2... when a name comes more than once."""
    names = list(names or [None] * len(specs))
    announced = announced or {}
    raw = [name or announced.get(spec) or default_name(spec)
           for spec, name in zip(specs, names, strict=True)]
    out: list[BotEntry] = []
    seen: dict[str, int] = {}
    for name, spec in zip(raw, specs, strict=True):
        seen[name] = seen.get(name, 0) + 1
        unique = name if raw.count(name) == 1 else f"{name}#{seen[name]}"
        out.append(BotEntry(unique, spec))
    return out


def default_name(spec: str) -> str:
    """"builtin:greedy" -> "greedy"; "python3 bots/random_bot.py" -> "random_bot"."""
    spec = spec.strip()
    if spec.startswith("builtin:"):
        return spec.removeprefix("builtin:")
    try:
        words = shlex.split(spec)
    except ValueError:
        words = spec.split()
    if not words:
        return "bot"
    interpreters = {"python", "python3", "node", "ruby", "java", "pypy3", "bash", "sh"}
    rest = words[1:] if PurePath(words[0]).name in interpreters else []
    if rest[:1] == ["-m"] and len(rest) > 1:
        return rest[1]  # a module name, dots and all
    pick = rest[0] if rest else words[0]
    return PurePath(pick).stem or pick
