"""Tournament configuration: a TOML file and/or command-line flags, checked before any game.

```toml
game = "phase10"
format = "round-robin"     # or "gauntlet": the first bot against every table of the others
players = 4                # seats per table
games = 100                # games per table (whole rotations when deals are duplicated)
duplicate = true           # each deal replayed with the bots rotated through the seats
seed = 1                   # leave out to draw one (kept in the private output folder)
jobs = 2
out = "runs/phase10-a"     # the output folder (default: tournaments/<game>-<fingerprint>)
sprt = "0,10,0.05,0.05"    # two bots only: stop once H0 or H1 is accepted

[rules]                    # rule options, as `--rules KEY=VALUE`
phases-to-win = 3

[limits]                   # the match policy (seconds); see LIMIT_KEYS
move-time = 1.0
startup-time = 5.0
max-bank = 30.0            # the time bank never grows over this (default: no cap)
legal-hints = false        # send no `legal` lines: bots build their own actions
memory-mb = 1024           # per bot program (RLIMIT_AS); max-processes, file-size-mb too

[[bot]]
name = "greedy"
cmd = "builtin:greedy"
[[bot]]
cmd = "python3 bots/random_bot.py"
```
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..engine.game import GAME_NAMES, RuleOptionError, find_game
from .schedule import Plan, bot_entries
from .standings import SprtSpec

LIMIT_KEYS = ("move-time", "first-move-time", "startup-time", "time-bank", "increment",
              "max-bank", "illegal-retries", "on-failure", "legal-hints", "memory-mb",
              "max-processes", "file-size-mb")
TOP_KEYS = {"game", "format", "players", "games", "duplicate", "seed", "jobs", "out", "sprt",
            "rules", "limits", "bot", "bots"}


class ConfigError(ValueError):
    """A tournament configuration that cannot be played; the message says why."""


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A checked tournament: the plan plus how to run it (jobs, folder, limits, SPRT)."""

    plan: Plan
    jobs: int = 1
    out: Path | None = None
    limits: Mapping[str, Any] = field(default_factory=dict)
    sprt: SprtSpec | None = None
    given_names: tuple[str | None, ...] = ()  # per bot: the name the configuration gave, or None
    drawn_from: str | None = None  # the seedless plan's fingerprint, once a seed was drawn

    @property
    def folder(self) -> Path:
        return self.out or Path("tournaments") / f"{self.plan.game}-{self.plan.fingerprint()}"


def option_text(value: Any) -> str:
    """A TOML value as the text a `--rules KEY=VALUE` flag would give."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def parse_pairs(pairs: Sequence[str], what: str = "--rules") -> dict[str, str]:
    """KEY=VALUE texts as a dict; `ConfigError` on a text without "="."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{what} {pair!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    unknown = set(data) - TOP_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown keys {sorted(unknown)}; known: {sorted(TOP_KEYS)}")
    return data


def _bots_from_data(data: Mapping[str, Any]) -> tuple[list[str], list[str | None]]:
    specs: list[str] = []
    names: list[str | None] = []
    for item in data.get("bots", []):
        if not isinstance(item, str):
            raise ConfigError(f"bots: each entry is a command or builtin:NAME, not {item!r}")
        specs.append(item)
        names.append(None)
    for item in data.get("bot", []):
        if not isinstance(item, dict) or not isinstance(item.get("cmd"), str):
            raise ConfigError(f"[[bot]] needs cmd = \"...\" (got {item!r})")
        specs.append(item["cmd"])
        names.append(item.get("name"))
    return specs, names


def build_config(data: Mapping[str, Any], overrides: Mapping[str, Any]) -> TournamentConfig:
    """A checked configuration from TOML data with command-line values on top."""
    merged = {**data, **{k: v for k, v in overrides.items() if v not in (None, [], {})}}
    game = _game(merged.get("game", "phase10"))
    specs, names = ((list(overrides["bots"]), [None] * len(overrides["bots"]))
                    if overrides.get("bots") else _bots_from_data(data))
    bots = bot_entries(specs, names)
    rules = {k: option_text(v) for k, v in dict(data.get("rules", {})).items()}
    rules.update(overrides.get("rules") or {})
    players = _int(merged, "players", _default_players(game, len(bots)), 1)
    plan = Plan(game=game, bots=tuple(bots), players=players,
                games=_int(merged, "games", 10, 1), format=_format(merged),
                duplicate=bool(merged.get("duplicate", True)), seed=_seed(merged), rules=rules)
    check_plan(plan)
    limits = _limits(data.get("limits", {}), overrides.get("limits") or {})
    sprt = _sprt(merged.get("sprt"), len(bots))
    out = Path(merged["out"]) if merged.get("out") else None
    return TournamentConfig(plan, _int(merged, "jobs", 1, 1), out, limits, sprt, tuple(names))


def with_announced_names(config: TournamentConfig,
                         announced: Mapping[str, str]) -> TournamentConfig:
    """The configuration with its bots named as results show them: a name the configuration
    gave, else the program's `id name` (`announced`: spec -> name), else the default name."""
    specs = [b.spec for b in config.plan.bots]
    bots = bot_entries(specs, list(config.given_names) or None, announced)
    return replace(config, plan=replace(config.plan, bots=tuple(bots)))


def _game(name: Any) -> str:
    try:
        return find_game(str(name)).name
    except KeyError:
        raise ConfigError(f"unknown game {name!r}; games: {', '.join(GAME_NAMES)}") from None


def _default_players(game: str, bots: int) -> int:
    if game == "solitaire":
        return 1
    return max(2, min(bots, 4))


def _int(data: Mapping[str, Any], key: str, default: int, low: int) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ConfigError(f"{key} = {value!r}: a whole number >= {low}")
    return value


def _seed(data: Mapping[str, Any]) -> int | None:
    # No seed: the tournament draws one when it starts, so none needs to be on a command line.
    return None if data.get("seed") is None else _int(data, "seed", 0, 0)


def _format(data: Mapping[str, Any]) -> Any:
    value = str(data.get("format", "round-robin")).replace("_", "-")
    if value not in ("round-robin", "gauntlet"):
        raise ConfigError(f"format = {value!r}: round-robin or gauntlet")
    return value


def _limits(data: Mapping[str, Any], flags: Mapping[str, Any]) -> dict[str, Any]:
    from .runner import make_policy

    merged = {str(k).replace("_", "-"): v for k, v in {**data, **flags}.items() if v is not None}
    unknown = set(merged) - set(LIMIT_KEYS)
    if unknown:
        raise ConfigError(f"[limits]: unknown keys {sorted(unknown)}; known: {list(LIMIT_KEYS)}")
    try:
        make_policy(merged)  # wrong values stop the command here, not every game later
    except ValueError as exc:
        raise ConfigError(f"[limits]: {exc}") from None
    return merged


def _sprt(value: Any, bots: int) -> SprtSpec | None:
    if value in (None, "", False):
        return None
    if bots != 2:
        raise ConfigError(f"sprt needs exactly two bots, not {bots}")
    if isinstance(value, Mapping):
        value = ",".join(str(value[k]) for k in ("elo0", "elo1", "alpha", "beta") if k in value)
    try:
        return SprtSpec.parse(str(value))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def check_plan(plan: Plan) -> None:
    """`ConfigError` for a plan that cannot be played (before any bot starts)."""
    info = find_game(plan.game)
    if not plan.bots:
        raise ConfigError("no bots: give --bot SPEC (twice or more) or [[bot]] entries")
    try:
        info.check_setup(info.rules(dict(plan.rules)), plan.players)
    except RuleOptionError as exc:
        raise ConfigError(str(exc)) from None
    if plan.players > 1 and len(plan.bots) < plan.players:
        raise ConfigError(f"{len(plan.bots)} bots cannot fill tables of {plan.players} "
                          f"(give more bots or --players {len(plan.bots)})")
    if not plan.tables():
        raise ConfigError("the schedule has no tables")


def with_out(config: TournamentConfig, out: Path | None) -> TournamentConfig:
    return config if out is None else replace(config, out=out)
