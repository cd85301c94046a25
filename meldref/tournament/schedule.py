"""Who plays whom, on which deal, in which seat: a tournament's games as a fixed list.

The list is a pure function of the configuration, and every game's id names its place in it
(table, deal, seating), so an interrupted tournament resumes by playing the ids not yet in its
results file, and two runs of one configuration play the same games.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from ..engine.game import rules_to_json
from ..engine.position import Position
from ..protocol.referee import MatchPolicy
from ..protocol.seats import BotSpec, Limits
from ..verdicts.seatings import Seating, seatings

Format = Literal["round-robin", "gauntlet"]


@dataclass(frozen=True, slots=True)
class BotEntry:
    """A bot of a tournament: its name in the standings and how to seat it."""

    name: str
    spec: BotSpec

    def to_json(self) -> dict[str, Any]:
        """Its name, spec, and command (None for a built-in bot), as results list bots."""
        return {"name": self.name, "spec": str(self.spec),
                "command": None if self.spec.builtin is not None else str(self.spec)}


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play: everything a worker process needs, as typed values (picklable)."""

    index: int
    game_id: str
    game: str
    rules: Any  # the game's rules dataclass
    seed: int
    deal: int
    bots: tuple[BotEntry, ...]  # in seat order
    policy: MatchPolicy = field(default_factory=MatchPolicy)
    limits: Limits = field(default_factory=Limits)  # every bot program's process limits
    position: Position | None = None  # the game starts there (its seed is `seed`), not a deal
    cwd: str | None = None  # the folder bot programs run in (None: the referee's own)

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "game_id": self.game_id, "game": self.game,
                "seed": self.seed, "deal": self.deal,
                "bots": [b.name for b in self.bots], "specs": [str(b.spec) for b in self.bots]}

    def error_line(self, why: str) -> dict[str, Any]:
        """The result line of this game when the referee itself could not finish it."""
        return {**self.to_json(), "status": "error", "error": why}


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
    rules: Any = None  # the game's rules dataclass (None: the game's defaults)

    def to_json(self) -> dict[str, Any]:
        """The plan as `tournament.json` records it (rules by their public names)."""
        data = asdict(self)
        data["bots"] = [b.to_json() for b in self.bots]
        data["rules"] = rules_to_json(self.rules) if self.rules is not None else {}
        return data

    def fingerprint(self) -> str:
        """A short hash of everything that decides the games (not jobs, paths or limits)."""
        text = json.dumps(self.to_json(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def tables(self) -> list[tuple[BotEntry, ...]]:
        """The groups of bots that sit down together."""
        if self.players == 1:
            return [(b,) for b in self.bots]
        if self.format == "gauntlet":
            head, rest = self.bots[0], self.bots[1:]
            return [(head, *combo) for combo in itertools.combinations(rest, self.players - 1)]
        return list(itertools.combinations(self.bots, self.players))

    def table_count(self) -> int:
        """How many tables `tables` makes, counted without making them."""
        if self.players == 1:
            return len(self.bots)
        if self.format == "gauntlet":
            return math.comb(len(self.bots) - 1, self.players - 1)
        return math.comb(len(self.bots), self.players)

    def seatings(self) -> tuple[Seating, ...]:
        """The seatings one deal is played in (duplicate deals): every bot in every seat and
        after every other bot equally often (`verdicts.seatings`); one game per deal without
        duplicate deals."""
        return seatings(self.players) if self.duplicate else ((),)

    def games_per_table(self) -> int:
        """`games`, rounded up to whole deal sets (every seating of each deal)."""
        m = len(self.seatings())
        return -(-self.games // m) * m

    def jobs(self, policy: MatchPolicy | None = None, limits: Limits | None = None,
             cwd: str | None = None) -> list[GameJob]:
        """Every game of the tournament, in schedule order (table, deal, seating), refereed
        under `policy` with bot programs under `limits`, started in the folder `cwd`."""
        if self.seed is None:
            raise ValueError("the plan's seed is still to be drawn (tournament.settle_seed)")
        out: list[GameJob] = []
        rows = self.seatings()
        for t, table in enumerate(self.tables()):
            for g in range(self.games_per_table()):
                job = self._job(len(out), t, g, table, self.seed, rows)
                out.append(dataclasses.replace(job, policy=policy or MatchPolicy(),
                                               limits=limits or Limits(), cwd=cwd))
        return out

    def _job(self, index: int, t: int, g: int, table: tuple[BotEntry, ...], seed: int,
             rows: tuple[Seating, ...]) -> GameJob:
        k = len(table)
        if self.duplicate:
            # Deal d is played once per seating, so the luck of the cards and of the seat
            # order cancels over the deal set.
            deal, s = divmod(g, len(rows))
            seats = tuple(table[i] for i in rows[s])
        else:  # each game a fresh deal; the seats still rotate
            deal, s = g, g % k
            seats = table[s:] + table[:s]
        game_id = f"t{t:02d}-d{deal:04d}-s{s:02d}"
        return GameJob(index, game_id, self.game, self.rules, seed + deal, deal, seats)


def bot_entries(specs: Sequence[BotSpec], names: Sequence[str | None] | None = None,
                announced: Mapping[BotSpec, str] | None = None) -> list[BotEntry]:
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


def default_name(spec: BotSpec) -> str:
    """"builtin:greedy" -> "greedy"; "python3 bots/random_bot.py" -> "random_bot"."""
    if spec.builtin is not None:
        return spec.builtin
    words = shlex.split(spec.text)
    interpreters = {"python", "python3", "node", "ruby", "java", "pypy3", "bash", "sh"}
    rest = words[1:] if PurePath(words[0]).name in interpreters else []
    if rest[:1] == ["-m"] and len(rest) > 1:
        return rest[1]  # a module name, dots and all
    pick = rest[0] if rest else words[0]
    return PurePath(pick).stem or pick
