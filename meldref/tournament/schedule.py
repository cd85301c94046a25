"""Who plays whom, on which deal, in which seat: a tournament's games as a fixed list.

The list is a pure function of the configuration, and every game's id names its place in it
(table, deal, seating), so an interrupted tournament resumes by playing the ids not yet in its
results file, and two runs of one configuration play the same games.

Nothing in it depends on the order the bots were listed in (but the gauntlet's head, listed
first by definition): tables are the sets of bots in the order of their names, each table's
deal d has its own seed, a hash of (seed, the table's bots, d), so nearby seeds share no deal
and more tables mean more independent deals (with `shared_deals`, a hash of (seed, d) alone:
deal d is the same at every table, bridge's duplicate across the room, so the luck of the
cards falls on every bot alike and the verdicts' unit, the deal named by its seed, spans the
tables; docs/tournaments.md says when to choose it); and the seatings of deal d are the balanced
design of `verdicts.seatings` applied to the table's bots in an order drawn from that deal's
seed, so no bot holds one role of the design at every deal. The jobs are made one at a time
as they are needed (`Plan.jobs` is an iterator, `Plan.job` makes any one by index): a plan of
a million games costs no memory until they are played.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Literal, NotRequired, TypedDict

from ..engine.cards import rng_for
from ..engine.game import JSON, Rules, find_game, rules_to_json
from ..engine.position import Position
from ..protocol.records import Figures, ResultLine
from ..protocol.referee import MatchPolicy
from ..protocol.seats import BotSpec, Limits
from ..verdicts.seatings import Seating, seatings

Format = Literal["round-robin", "gauntlet"]


class BotLine(TypedDict):
    """A bot as results, plans and replay headers list it (spec/REPLAY.md's `seats`)."""

    name: str
    spec: str
    command: str | None  # None for a built-in bot
    dir: NotRequired[str]  # the folder its program starts in, when given


@dataclass(frozen=True, slots=True)
class BotEntry:
    """A bot of a tournament: its name in the standings and how to seat it (its program
    started in the folder `cwd`, when given: the spec's `dir=`)."""

    name: str
    spec: BotSpec
    cwd: str | None = None

    def to_json(self) -> BotLine:
        """Its name, spec, and command (None for a built-in bot), as results list bots."""
        out: BotLine = {"name": self.name, "spec": str(self.spec),
                        "command": None if self.spec.builtin is not None else str(self.spec)}
        if self.cwd is not None:
            out["dir"] = self.cwd
        return out


@dataclass(frozen=True, slots=True)
class BotOptions:
    """A `--bot` text read as cutechess reads `-engine`: leading `name=NAME` (its name in the
    results) and `dir=DIR` (the folder its program starts in) before the command, or the
    command as `cmd=...`: `--bot "name=alpha dir=bots/a python3 bot.py"`."""

    command: str
    name: str | None = None
    dir: str | None = None

    @staticmethod
    def parse(text: str) -> BotOptions:
        """`ValueError` for an empty name or folder, or no command."""
        first = text.split(None, 1)
        words = shlex.split(text) if first and "=" in first[0] else []
        found: dict[str, str] = {}
        while words and (key := words[0].partition("=")[0]) in ("name", "dir", "cmd"):
            if key in found:
                raise ValueError(f"bot {text!r}: {key}= given twice")
            found[key] = words.pop(0).partition("=")[2]
        if not found:
            return BotOptions(text)
        command = found.get("cmd") or shlex.join(words)
        if "cmd" in found and words:
            raise ValueError(f"bot {text!r}: cmd= and a command after it")
        for key, value in found.items():
            if not value.strip():
                raise ValueError(f"bot {text!r}: {key}= names nothing")
        if not command.strip():
            raise ValueError(f"bot {text!r}: no command after the name=/dir= options")
        folder = found.get("dir")
        return BotOptions(command, found.get("name"),
                          None if folder is None else os.path.abspath(folder))


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play: everything a worker process needs, as typed values (picklable)."""

    index: int
    game_id: str
    game: str
    rules: Rules  # the game's rules dataclass
    seed: int
    deal: int
    bots: tuple[BotEntry, ...]  # in seat order
    policy: MatchPolicy = field(default_factory=MatchPolicy)
    limits: Limits = field(default_factory=Limits)  # every bot program's process limits
    position: Position | None = None  # the game starts there (its seed is `seed`), not a deal
    cwd: str | None = None  # the folder bot programs run in (None: the referee's own)
    debug_log: str | None = None  # `--debug-log DIR`: every line each bot read and wrote
    logs: str | None = None  # `--logs DIR` elsewhere than the folder's logs/: the stderr logs

    def __reduce__(self) -> tuple[type[GameJob], tuple[object, ...]]:
        # Through the constructor: a dataclass's own state getter looks its fields up for
        # every job, and a cluster's client pickles every job it submits.
        return (GameJob, (self.index, self.game_id, self.game, self.rules, self.seed,
                          self.deal, self.bots, self.policy, self.limits, self.position,
                          self.cwd, self.debug_log, self.logs))

    def result(self, figures: Figures | None = None, error: str | None = None,
               replay: str | None = None, logs: Sequence[str | None] = ()) -> ResultLine:
        """This game's result line: what it gave, or why the referee could not finish it."""
        return ResultLine(self.game_id, self.game, self.seed, tuple(b.name for b in self.bots),
                          tuple(str(b.spec) for b in self.bots), self.index, self.deal, replay,
                          tuple(logs), figures, error)

    def error_line(self, why: str) -> ResultLine:
        """The result line of this game when the referee itself could not finish it."""
        return self.result(error=why)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a tournament plays: the bots, the shape of the schedule, and the rules."""

    game: str
    bots: tuple[BotEntry, ...]
    players: int
    games: int  # per table (rounded up to whole deal sets when deals are duplicated)
    format: Format = "round-robin"
    duplicate: bool = True
    seed: int | None = 1  # None: drawn at random when the tournament starts (`settle_seed`)
    rules: Rules | None = None  # the game's rules dataclass (None: the game's defaults)
    shared_deals: bool = False  # deal d the same at every table (`deal_seed`)
    # `--positions DIR` (an openings book): deal d starts from position d (cycling), played
    # in every seating at every table as a deal is.
    positions: tuple[Position, ...] = ()

    def played_rules(self) -> Rules:
        """The rules every game is dealt under: the plan's, or the game's defaults."""
        return find_game(self.game).rules() if self.rules is None else self.rules

    def to_json(self) -> dict[str, JSON]:
        """The plan as `tournament.json` records it (rules by their public names; positions
        by a digest each); a plan without shared deals or positions leaves their keys out, so
        its fingerprint is the one it always had and its tournament resumes."""
        data = asdict(self)
        data["bots"] = [b.to_json() for b in self.bots]
        data["rules"] = rules_to_json(self.rules) if self.rules is not None else {}
        if not self.shared_deals:
            del data["shared_deals"]
        del data["positions"]
        if self.positions:
            data["positions"] = [hashlib.sha256(p.snapshot_text.encode()).hexdigest()[:16]
                                 for p in self.positions]
        return data

    def fingerprint(self) -> str:
        """A short hash of everything that decides the games (not jobs, paths or limits)."""
        text = json.dumps(self.to_json(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def tables(self) -> list[tuple[BotEntry, ...]]:
        """The groups of bots that sit down together, each in the order of the bots' names
        (the gauntlet's head first), listed in that order too: the listed order of the bots
        changes neither."""
        return list(self._iter_tables())

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

    def game_count(self) -> int:
        """Every game of the plan, counted without making them."""
        return self.table_count() * self.games_per_table()

    def deal_sets(self) -> int:
        """The deal sets of the plan (a deal set: one deal in all its seatings at one table)."""
        return self.game_count() // len(self.seatings())

    def jobs(self, policy: MatchPolicy | None = None, limits: Limits | None = None,
             cwd: str | None = None, start: int = 0) -> Iterator[GameJob]:
        """Every game of the tournament from index `start`, in schedule order (table, deal,
        seating), refereed under `policy` with bot programs under `limits`, started in the
        folder `cwd`; made one at a time, as the caller takes them."""
        seed = self._seed()
        rows = self.seatings()
        per_table = self.games_per_table()
        policy, limits = policy or MatchPolicy(), limits or Limits()
        first_table, first_game = divmod(start, per_table) if per_table else (0, 0)
        tables = itertools.islice(self._iter_tables(), first_table, None)
        for t, table in enumerate(tables, first_table):
            for g in range(first_game if t == first_table else 0, per_table):
                yield self._job(t * per_table + g, t, g, table, seed, rows,
                                (policy, limits, cwd))

    def job(self, index: int) -> GameJob:
        """Game `index` of `jobs()` (without policy, limits or folder), made alone."""
        if not 0 <= index < self.game_count():
            raise IndexError(f"game {index}: the plan has {self.game_count()} games")
        return next(self.jobs(start=index))

    def game_id(self, index: int) -> str:
        """The id of game `index` ("t03-d0012-s05": table, deal, seating), without the job."""
        t, g = divmod(index, self.games_per_table())
        deal, s = divmod(g, len(self.seatings())) if self.duplicate else (g, g % self.players)
        return _game_id(t, deal, s)

    def _seed(self) -> int:
        if self.seed is None:
            raise ValueError("the plan's seed is still to be drawn (tournament.settle_seed)")
        return self.seed

    def _iter_tables(self) -> Iterator[tuple[BotEntry, ...]]:
        # As `tables`, lazily: 30 bots at 7 seats are two million tables.
        bots = sorted(self.bots, key=lambda b: b.name)
        if self.players == 1:
            yield from ((b,) for b in bots)
        elif self.format == "gauntlet":
            head = self.bots[0]
            rest = [b for b in bots if b is not head]
            yield from ((head, *c) for c in itertools.combinations(rest, self.players - 1))
        else:
            yield from itertools.combinations(bots, self.players)

    def _job(self, index: int, t: int, g: int, table: tuple[BotEntry, ...], seed: int,
             rows: tuple[Seating, ...], how: tuple[MatchPolicy, Limits, str | None]
             ) -> GameJob:
        k = len(table)
        if self.duplicate:
            # Deal d is played once per seating, so the luck of the cards and of the seat
            # order cancels over the deal set.
            deal, s = divmod(g, len(rows))
        else:  # each game a fresh deal; the seats still rotate
            deal, s = g, g % k
        room = () if self.shared_deals else table  # shared: every table's deal d alike
        start = self.positions[deal % len(self.positions)] if self.positions else None
        cards = deal_seed(seed, room, deal) if start is None else start.seed
        # The design's roles go to the table's bots in an order drawn from the deal's seed
        # (without duplicate deals, the first deal's, then rotated: each seat k-th of the
        # time exactly): where a bot sits depends on the set of bots, not the listed order.
        drawn = list(table)
        rng_for(cards if self.duplicate else deal_seed(seed, room, 0), "seating").shuffle(drawn)
        seats = tuple(drawn[i] for i in rows[s]) if self.duplicate else (*drawn[s:], *drawn[:s])
        policy, limits, cwd = how
        return GameJob(index, _game_id(t, deal, s), self.game, self.played_rules(), cards, deal,
                       seats, policy, limits, start, cwd=cwd)


def _game_id(table: int, deal: int, seating: int) -> str:
    return f"t{table:02d}-d{deal:04d}-s{seating:02d}"


SEED_BITS = 48  # deal seeds below 2**48: exact in a JSON reader's doubles, as in the viewer's


def deal_seed(seed: int, table: Sequence[BotEntry], deal: int) -> int:
    """The seed of deal `deal` at `table`: a hash of the tournament's seed, the table's bots
    (by name, in name order) and the deal, so two seeds, two tables or two deals share no
    cards (with `seed + deal`, seeds 1000 and 1001 played 198 of 200 games alike). One-seat
    tables (Solitaire) and the tables of a plan with shared deals (`table` empty) all play
    the same deals: bots that never meet are compared on them."""
    names = "\x1f".join(sorted(b.name for b in table)) if len(table) > 1 else ""
    text = f"{seed}:deal:{names}:{deal}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> (64 - SEED_BITS)


def bot_seed(game_seed: int, seating: int, seat: int) -> int:
    """The seed of a built-in bot in seat `seat` of the `seating`-th game dealt from
    `game_seed` (0 for a game that is its own deal, as every match game): the three in
    disjoint bit fields, so each game of a deal set, and each seat, draws its own choices.
    Seeded by the deal and the seat alone, a bot against its own copy made the same choices
    from each seat in both seatings of a deal: every deal set 1-1, whatever the bot."""
    return (seating << 56) + game_seed * 16 + seat


def seating_of(game_id: str) -> int:
    """The seating of a game from its id ("t00-d0003-s05" -> 5; 0 for any other id)."""
    found = re.fullmatch(r"t\d+-d\d+-s(\d+)", game_id)
    return int(found.group(1)) if found else 0


def bot_entries(specs: Sequence[BotSpec], names: Sequence[str | None] | None = None,
                announced: Mapping[BotSpec, str] | None = None,
                dirs: Sequence[str | None] | None = None) -> list[BotEntry]:
    """Bots from specs, named by `names` (given ones), else by `announced` (spec -> the `id
    name` the program sent), else after the built-in or the program; made unique with #1,
    #2... when a name comes more than once. `dirs`: the folder each program starts in."""
    names = list(names or [None] * len(specs))
    folders = list(dirs or [None] * len(specs))
    announced = announced or {}
    raw = [name or announced.get(spec) or default_name(spec)
           for spec, name in zip(specs, names, strict=True)]
    out: list[BotEntry] = []
    seen: dict[str, int] = {}
    for name, spec, folder in zip(raw, specs, folders, strict=True):
        seen[name] = seen.get(name, 0) + 1
        unique = name if raw.count(name) == 1 else f"{name}#{seen[name]}"
        out.append(BotEntry(unique, spec, folder))
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
