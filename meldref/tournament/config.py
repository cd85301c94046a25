"""Tournament configuration: a TOML file and/or command-line flags, checked before any game.

```toml
game = "phase10"
format = "round-robin"     # or "gauntlet": the first bot against every table of the others
players = 2                # seats per table
games = 100                # games per table (whole deal sets when deals are duplicated)
duplicate = true           # each deal replayed in balanced seatings (every seat, every neighbour)
shared-deals = false       # true: deal d the same at every table (docs/tournaments.md)
seed = 1                   # leave out to draw one (kept in the private output folder)
jobs = 2
out = "runs/phase10-a"     # the output folder (default: tournaments/<game>-<fingerprint>)
sprt = "0,10,0.05,0.05"    # two bots only: stop once H0 or H1 is accepted
rank-by = "places"         # or "margin": standings by mean score margin (docs/verdicts.md)
bot-folder = "bots"        # bot programs start in this folder (default: the current one)
# cluster = "tls://10.0.0.1:8786"  # play on a dask cluster (or "local:N"); see cluster.py
# cluster-files = "auto"   # replays and logs: "shared" folder, back to the "client", or auto
# upload-bots = false      # send bot-folder to every worker (dask's upload), checked by hash

[rules]                    # rule options, as `--rules KEY=VALUE`
phases-to-win = 3

[limits]                   # the referee's clocks (seconds) and policy: meldref.settings
move-time = 1.0
memory-mb = 1024           # per bot program (RLIMIT_AS); max-processes, file-size-mb too

[[bot]]
name = "greedy"
cmd = "builtin:greedy"
[[bot]]
cmd = "python3 random_bot.py"  # in bot-folder
```

The file and the flags are read into the same typed values (`Sources`), each checked where it
came from (`players` in the file, `--players` on the command line), then merged: flags win.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ..engine.game import GameInfo, RuleOptionError, Rules, UnknownGameError, find_game
from ..engine.position import Position
from ..engine.registry import DEFAULT_GAME
from ..protocol.referee import MatchPolicy
from ..protocol.seats import BotSpec, Limits
from ..replay.positions import PositionFileError, load_position, position_files
from ..settings import (
    LimitSettings,
    SettingsError,
    Where,
    flag,
    in_table,
    limit_settings,
    parse_rules,
    validate,
)
from ..verdicts.seatings import seatings
from .schedule import BotOptions, GameJob, Plan, bot_entries

if TYPE_CHECKING:  # scipy, under it, takes a second to load: not for every cluster worker
    from ..verdicts.sprt import SprtSpec

MAX_PLAYERS: Final = 64
MAX_CONFIG_BYTES: Final = 1 << 20
MAX_GAMES: Final = 1_000_000  # per table
MAX_JOBS: Final = 256
MAX_TOTAL_GAMES: Final = 10_000_000  # a plan is held in memory: its games are counted first
MAX_SEED: Final = (1 << 63) - 1
MAX_LOCAL_WORKERS: Final = MAX_JOBS
# The flag that sets each top-level key (the file's names are the keys themselves).
FLAGS: Final = {"bots": "--bot", "format": "--format", "out": "--out", "jobs": "--jobs",
                "rules": "--rules", "duplicate": "--duplicate/--no-duplicate",
                "shared-deals": "--shared-deals/--no-shared-deals",
                "upload-bots": "--upload-bots/--no-upload-bots"}
ClusterFiles = Literal["auto", "shared", "client"]
T = TypeVar("T")
_ADDRESS: Final = re.compile(r"(tcp|tls)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*"
                             r"[A-Za-z0-9])?):([0-9]{1,5})")


class ConfigError(SettingsError):
    """A tournament configuration that cannot be played; the message says why."""


class BotItem(BaseModel):
    """A `[[bot]]` table."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    cmd: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterTarget:
    """Where games are played off this process: `local:N`, a dask LocalCluster of N worker
    processes on this machine, or a running dask scheduler's address (`tcp://HOST:PORT`, or
    `tls://HOST:PORT` with dask's TLS settings). `parse(str(t)) == t`."""

    workers: int | None = None  # local:N
    address: str | None = None  # tcp:// or tls://

    @staticmethod
    def parse(text: str) -> ClusterTarget:
        """The target written as `text`; `ValueError` saying what is wrong."""
        text = text.strip()
        if text.startswith("local:"):
            count = text.removeprefix("local:")
            if not count.isdigit() or not 1 <= int(count) <= MAX_LOCAL_WORKERS:
                raise ValueError(f"local:N takes N from 1 to {MAX_LOCAL_WORKERS} worker "
                                 "processes")
            return ClusterTarget(workers=int(count))
        match = _ADDRESS.fullmatch(text)
        if match is None or not 1 <= int(match[3]) <= 65535:
            raise ValueError("local:N, or a dask scheduler's address tcp://HOST:PORT or "
                             "tls://HOST:PORT")
        return ClusterTarget(address=text)

    def __str__(self) -> str:
        return f"local:{self.workers}" if self.address is None else self.address


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """A tournament played on a dask cluster: where, how replays and logs reach the output
    folder ("shared": workers write them there; "client": they come back with each result;
    "auto": shared when every worker sees the folder), and whether the bot folder is uploaded
    to the workers rather than found on a shared filesystem."""

    target: ClusterTarget
    files: ClusterFiles = "auto"
    upload_bots: bool = False
    insecure_tcp: bool = False  # a plain tcp:// address, accepted with what it exposes said


def _cluster_target(value: object) -> object:
    return ClusterTarget.parse(value) if isinstance(value, str) else value


def _format_name(value: object) -> object:
    return value.replace("_", "-") if isinstance(value, str) else value


class Sources(BaseModel):
    """The top-level values of a configuration file, or the flags that set the same things;
    None where not given."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              arbitrary_types_allowed=True)

    game: str | None = None
    format: Annotated[Literal["round-robin", "gauntlet"] | None,
                      BeforeValidator(_format_name)] = None
    players: Annotated[int, Field(ge=1, le=MAX_PLAYERS)] | None = None
    games: Annotated[int, Field(ge=1, le=MAX_GAMES)] | None = None
    duplicate: bool | None = None
    shared_deals: bool | None = Field(None, alias="shared-deals")
    seed: Annotated[int, Field(ge=0, le=MAX_SEED)] | None = None
    jobs: Annotated[int, Field(ge=1, le=MAX_JOBS)] | None = None
    out: str | None = None
    sprt: str | dict[str, float] | None = None
    rank_by: Literal["places", "margin"] | None = Field(None, alias="rank-by")
    rules: dict[str, str | int | bool] = Field(default_factory=dict)
    limits: dict[str, object] = Field(default_factory=dict)  # checked by `limit_settings`
    bot: list[BotItem] = Field(default_factory=list)
    bots: list[str] = Field(default_factory=list)
    bot_folder: str | None = Field(None, alias="bot-folder")
    cluster: Annotated[ClusterTarget, BeforeValidator(_cluster_target)] | None = None
    cluster_files: ClusterFiles | None = Field(None, alias="cluster-files")
    upload_bots: bool | None = Field(None, alias="upload-bots")
    insecure_tcp: bool | None = Field(None, alias="insecure-tcp")
    positions: str | None = None  # a folder of position files: every deal starts from one

    def given(self) -> dict[str, object]:
        """The values given, by field name, as parsed (a `ClusterTarget` stays one)."""
        values = {name: getattr(self, name) for name in type(self).model_fields}
        return {k: v for k, v in values.items() if v not in (None, [], {})}


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A checked tournament: the plan plus how to run it (jobs, folder, limits, SPRT)."""

    plan: Plan
    jobs: int = 1
    out: Path | None = None
    limits: LimitSettings = field(default_factory=LimitSettings)
    sprt: SprtSpec | None = None
    given_names: tuple[str | None, ...] = ()  # per bot: the name the configuration gave, or None
    drawn_from: str | None = None  # the seedless plan's fingerprint, once a seed was drawn
    bot_folder: Path | None = None  # absolute; bot programs start there (None: the cwd)
    cluster: ClusterSpec | None = None  # None: games in local worker processes (`jobs`)
    rank_by: Literal["places", "margin"] = "places"  # how the standings order the bots
    debug_log: Path | None = None  # `--debug-log DIR`: each bot's lines, game by game
    logs: Path | None = None  # `--logs DIR` outside the folder: the stderr logs go there

    @property
    def folder(self) -> Path:
        return self.out or Path("tournaments") / f"{self.plan.game}-{self.plan.fingerprint()}"

    @property
    def policy(self) -> MatchPolicy:
        """The referee's policy, made once when the limits were checked and kept in them."""
        return self.limits.policy()

    @property
    def process_limits(self) -> Limits:
        return self.limits.process_limits()

    def schedule(self) -> Iterator[GameJob]:
        """Every game, as jobs carrying the rules, the policy and the bots' process limits and
        folder, made one at a time (`Plan.jobs`)."""
        cwd = None if self.bot_folder is None else str(self.bot_folder)
        jobs = self.plan.jobs(self.policy, self.process_limits, cwd)
        if self.debug_log is None and self.logs is None:
            return jobs
        debug_log = None if self.debug_log is None else str(self.debug_log.resolve())
        logs = None if self.logs is None else str(self.logs.resolve())
        return (replace(job, debug_log=debug_log, logs=logs) for job in jobs)

    @property
    def logs_folder(self) -> Path:
        """Where the bots' stderr logs go: `--logs DIR`, else `logs/` in the folder."""
        return self.folder / "logs" if self.logs is None else self.logs


def range_problem(flag: str, value: int, low: int, high: int | None = None) -> str | None:
    """A whole number out of its range, worded as the settings word one (`settings.describe`):
    `--games = -1: at least 1`; None if it is in range."""
    if value < low:
        return f"{flag} = {value}: at least {low:,}"
    if high is not None and value > high:
        return f"{flag} = {value}: at most {high:,}"
    return None


def parse_pairs(pairs: Sequence[str], what: str = "--rules") -> dict[str, str]:
    """KEY=VALUE texts as a dict; `ConfigError` on a text without "="."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{what} {pair!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def read_toml(path: Path) -> dict[str, object]:
    """The TOML file at `path`; `ConfigError` if it cannot be read or is not TOML (a special
    file such as a FIFO is refused before it is opened: reading it could wait for ever)."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{path} is not a regular file (a folder, FIFO, device or "
                              "socket), not a configuration")
        if info.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path} is {info.st_size:,} bytes; a configuration is at most "
                              f"{MAX_CONFIG_BYTES:,}")
        with path.open("rb") as f:
            data = tomllib.loads(f.read(MAX_CONFIG_BYTES + 1).decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: not UTF-8 text ({exc.reason} at byte "
                          f"{exc.start})") from None
    except RecursionError:
        raise ConfigError(f"{path} is not valid TOML: nested too deeply") from None
    return data


def file_sources(data: Mapping[str, object]) -> Sources:
    """A configuration file's values; `ConfigError` naming each wrong key."""
    return _sources(data, in_table(""))


def flag_sources(values: Mapping[str, object]) -> Sources:
    """The flags' values (None: not given); `ConfigError` naming each wrong flag."""
    given = {k: v for k, v in values.items() if v not in (None, [], {})}
    return _sources(given, lambda name: FLAGS.get(name, f"--{name}"))


def _sources(data: Mapping[str, object], where: Where) -> Sources:
    try:
        return validate(Sources, data, where)
    except SettingsError as exc:
        raise ConfigError(str(exc)) from None


def build_config(data: Mapping[str, object], flags: Mapping[str, object]) -> TournamentConfig:
    """A checked configuration from TOML data with command-line values on top (`flags`: the
    flags' values by key, None where not given, and `limits`: the limit flags' values);
    `ConfigError` naming the key or flag that is wrong."""
    in_file, in_flags = file_sources(data), flag_sources(
        {k: v for k, v in flags.items() if k != "limits"})
    # Each value was checked where it came from; a value not given (None, an empty table) is
    # no value, so a file's `[sprt]` with nothing in it asks for no SPRT.
    merged = Sources.model_validate({}).model_copy(update={**in_file.given(), **in_flags.given()})
    info = _game(_or(merged.game, DEFAULT_GAME))
    found = _bots(in_file, in_flags)
    specs, names, dirs = ([f[0] for f in found], [f[1] for f in found], [f[2] for f in found])
    bots = bot_entries(specs, names, dirs=dirs)
    rules = _rules(info, in_file.rules, in_flags.rules)
    limit_flags = flags.get("limits")
    limits = _limits(in_file.limits, limit_flags if isinstance(limit_flags, Mapping) else {})
    positions = _positions(merged.positions, info, {**in_file.rules, **in_flags.rules})
    players = _or(merged.players, positions[0].players if positions
                  else info.seats_for(len(bots)))
    duplicate = _or(merged.duplicate, True)
    if positions:
        _check_positions(positions, players)
    # An openings book: by default each position once per table, in every seating.
    book = len(positions) * (len(seatings(players)) if duplicate else 1)
    plan = Plan(game=info.name, bots=tuple(bots), players=players,
                games=_or(merged.games, book or 10), format=merged.format or "round-robin",
                duplicate=duplicate, seed=merged.seed, rules=rules,
                shared_deals=_or(merged.shared_deals, False), positions=positions)
    check_plan(plan, info)
    sprt = _sprt(merged.sprt, len(bots))
    out = _path(merged.out, "--out" if in_flags.out else "out") if merged.out else None
    bot_folder = _bot_folder(merged.bot_folder, in_flags.bot_folder is not None)
    cluster = _cluster(merged, bot_folder, in_flags)
    return TournamentConfig(plan, _or(merged.jobs, 1), out, limits, sprt, tuple(names),
                            bot_folder=bot_folder, cluster=cluster,
                            rank_by=merged.rank_by or "places")



def _or(value: T | None, default: T) -> T:
    """`value` where it was given (False and 0 too), else `default`."""
    return default if value is None else value


def _positions(folder: str | None, info: GameInfo,
               rules: Mapping[str, object]) -> tuple[Position, ...]:
    """The positions of the files under `folder` (`--positions`), in the order of their
    paths, played under the tournament's `rules` over each file's own; `ConfigError` naming
    a file that cannot be read or is of another game."""
    if folder is None:
        return ()
    path = Path(folder)
    if not path.is_dir():
        raise ConfigError(f"--positions {folder}: not a folder of position files")
    try:
        found = tuple(load_position(p, info.name, {k: str(v) for k, v in rules.items()}).position
                      for p in position_files(path))
    except PositionFileError as exc:
        raise ConfigError(f"--positions: {exc}") from None
    if not found:
        raise ConfigError(f"--positions {folder}: no position files (*.toml) in it")
    return found


def _check_positions(positions: tuple[Position, ...], players: int) -> None:
    counts = sorted({p.players for p in positions})
    if counts != [players]:
        raise ConfigError(f"--positions: positions of {', '.join(map(str, counts))} seats; a "
                          f"tournament of tables of {players} plays positions of {players}")


def with_announced_names(config: TournamentConfig,
                         announced: Mapping[BotSpec, str]) -> TournamentConfig:
    """The configuration with its bots named as results show them: a name the configuration
    gave, else the program's `id name` (`announced`: spec -> name), else the default name."""
    specs = [b.spec for b in config.plan.bots]
    bots = bot_entries(specs, list(config.given_names) or None, announced,
                       [b.cwd for b in config.plan.bots])
    return replace(config, plan=replace(config.plan, bots=tuple(bots)))


def _game(name: str) -> GameInfo:
    try:
        return find_game(name)
    except UnknownGameError as exc:
        raise ConfigError(str(exc)) from None


def _bots(in_file: Sources, in_flags: Sources) -> list[tuple[BotSpec, str | None, str | None]]:
    """The bots as (spec, name given, folder given): the flags' `--bot`s if any, else the
    file's `bots` and `[[bot]]` entries. A `--bot` or `bots` text may name its bot and its
    folder (`name=alpha dir=bots/a python3 bot.py`: `BotOptions`)."""
    if in_flags.bots:
        return [_spec(s, "--bot") for s in in_flags.bots]
    found = [_spec(s, "bots") for s in in_file.bots]
    for item in in_file.bot:
        spec, _, folder = _spec(item.cmd, "[[bot]] cmd")
        found.append((spec, item.name, folder))
    return found


def _spec(text: str, where: str) -> tuple[BotSpec, str | None, str | None]:
    try:
        options = BotOptions.parse(text)
        return BotSpec.parse(options.command), options.name, options.dir
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _rules(info: GameInfo, in_file: Mapping[str, object],
           in_flags: Mapping[str, object]) -> Rules:
    """The rules: each source checked where it came from, then the flags over the file."""
    try:
        parse_rules(info.rules_type, in_file, "[rules]")
        parse_rules(info.rules_type, in_flags, "--rules")
        return parse_rules(info.rules_type, {**in_file, **in_flags})
    except SettingsError as exc:
        raise ConfigError(str(exc)) from None


def _limits(in_file: Mapping[str, object], in_flags: Mapping[str, object]) -> LimitSettings:
    """The limits: the file's `[limits]` and the flags, each checked, the flags on top; the
    policy they make is made now (so checked before any game: a time bank over its cap) and
    kept in them for the games."""
    try:
        limits = limit_settings(in_flags, flag).over(
            limit_settings(in_file, in_table("limits")))
        limits.policy()
    except SettingsError as exc:
        raise ConfigError(str(exc)) from None
    return limits


def _path(text: str, key: str) -> Path:
    """A path from the configuration or a flag, if the system can take it: no NUL byte (a C
    string ends there), not too long for a name or a path (ENAMETOOLONG); `ConfigError`
    naming the key, the path shortened."""
    shown = text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"
    if "\0" in text:
        raise ConfigError(f"{key} {shown!r}: a path cannot hold a NUL byte")
    path = Path(text).expanduser()
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass  # made later (out), or said missing by the caller (bot-folder)
    except OSError as exc:  # ENAMETOOLONG, ELOOP, EACCES...
        raise ConfigError(f"{key} {shown!r}: {exc.strerror or exc}") from None
    return path


def _bot_folder(text: str | None, from_flag: bool) -> Path | None:
    """The bot folder, absolute (workers and bots have other working folders)."""
    if not text:
        return None
    folder = _path(text, "--bot-folder" if from_flag else "bot-folder").resolve()
    if not folder.is_dir():
        raise ConfigError(f"{'--bot-folder' if from_flag else 'bot-folder'} {text}: not a "
                          "folder")
    return folder


def _cluster(merged: Sources, bot_folder: Path | None,
             in_flags: Sources) -> ClusterSpec | None:
    """The cluster settings; `ConfigError` for cluster settings given without a cluster, or
    an upload without a folder to upload."""
    def name(key: str) -> str:
        return f"--{key}" if getattr(in_flags, key.replace("-", "_")) is not None else key

    target = merged.cluster
    if target is None:
        for key in ("cluster-files", "upload-bots", "insecure-tcp"):
            if getattr(merged, key.replace("-", "_")) not in (None, False):
                raise ConfigError(f"{name(key)}: only with a cluster (--cluster)")
        return None
    upload = bool(merged.upload_bots)
    if upload and bot_folder is None:
        raise ConfigError(f"{name('upload-bots')}: give the folder to upload (--bot-folder)")
    insecure = bool(merged.insecure_tcp)
    plain = target.address is not None and target.address.startswith("tcp://")
    if plain and not insecure:
        accept = "--insecure-tcp" if in_flags.cluster is not None else "insecure-tcp = true"
        raise ConfigError(f"{name('cluster')} {target}: {TCP_EXPOSES}; use tls:// "
                          f"(docs/cluster.md), or give {accept} to accept that")
    if insecure and not plain:
        raise ConfigError(f"{name('insecure-tcp')}: only with a plain tcp:// address")
    return ClusterSpec(target, merged.cluster_files or "auto", upload, insecure)


# What a plain tcp:// scheduler lets anyone who reaches it do (the refusal and the warning).
TCP_EXPOSES: Final = ("plain TCP lets anyone who can reach the scheduler's port run code on "
                      "every worker as the worker's user, and read every game (hands, seeds)")


def _sprt(value: str | Mapping[str, float] | None, bots: int) -> SprtSpec | None:
    from ..verdicts.sprt import SprtSpec  # noqa: PLC0415 start-up: scipy, not for a match

    if value in (None, ""):
        return None
    if bots != 2:
        raise ConfigError(f"sprt needs exactly two bots, not {bots}")
    if isinstance(value, Mapping):
        value = ",".join(str(value[k]) for k in ("elo0", "elo1", "alpha", "beta") if k in value)
    try:
        return SprtSpec.parse(str(value))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def check_plan(plan: Plan, info: GameInfo) -> None:
    """`ConfigError` for a plan that cannot be played (before any bot starts)."""
    if not plan.bots:
        raise ConfigError("no bots: give --bot SPEC (twice or more) or [[bot]] entries")
    try:
        info.check_setup(plan.rules, plan.players)
    except RuleOptionError as exc:
        raise ConfigError(str(exc)) from None
    if plan.players > 1 and len(plan.bots) < plan.players:
        raise ConfigError(f"{_bots_text(len(plan.bots))} cannot fill tables of {plan.players}"
                          f" ({_fewer_players_hint(plan, info)})")
    if plan.table_count() == 0:
        raise ConfigError("the schedule has no tables")
    games = plan.game_count()
    if games > MAX_TOTAL_GAMES:
        raise ConfigError(f"the schedule has {games:,} games ({plan.table_count():,} tables of "
                          f"{plan.games_per_table():,}); at most {MAX_TOTAL_GAMES:,} in one "
                          "tournament: fewer bots, smaller tables or fewer games per table")


def _bots_text(count: int) -> str:
    return f"{count} bot" if count == 1 else f"{count} bots"


def _fewer_players_hint(plan: Plan, info: GameInfo) -> str:
    """What to give when the bots cannot fill a table: fewer seats only if the game can be
    played with that many (it told one bot of Phase 10 to give --players 1, which then failed)."""
    more = f"give {plan.players - len(plan.bots)} more --bot"
    try:
        info.check_setup(plan.rules, len(plan.bots))
    except RuleOptionError:
        return more
    return f"{more} or --players {len(plan.bots)}"
