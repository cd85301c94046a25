"""Position files (spec/POSITION.md): TOML read into a checked `Position`, and written back.

The engine reads and writes positions as mappings (`engine.position`); this module is the file
around them: TOML (`tomllib` to read, `tomlkit` to write, for its readable layout), the `game`
key, the `[rules]` table read like every rule option (`settings.parse_rules`, with `--rules`
over it), and folders of positions for `meldref bot test`.
"""

from __future__ import annotations

import datetime
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import tomlkit

from ..engine.game import JSON, GameInfo, Rules, UnknownGameError, find_game, rules_to_json
from ..engine.position import Position, PositionError, position_of, read_position
from ..settings import SettingsError, parse_rules
from .files import Outline, ReplayError, open_replay, simulate

MAX_BYTES: Final = 1 << 20  # a position is a few KB; a larger file is not one
HEADER: Final = ("meldref position (spec/POSITION.md): every card of the deck exactly once; "
                 "piles are written top card first")


class PositionFileError(ValueError):
    """A position file that cannot be read or played; the message names the file."""


@dataclass(frozen=True, slots=True)
class PositionFile:
    """A position read from a file: its game, the rules it is played under, the position."""

    path: Path
    game: GameInfo
    rules: Rules
    position: Position


def load_position(path: Path, game: str | None = None, rules: Mapping[str, JSON] | None = None,
                  seed: int | None = None) -> PositionFile:
    """The position in the TOML file `path`; `game` (when given) must be the file's, `rules`
    (option texts, as `--rules` gives them) go over its `[rules]`, and `seed` over its seed.
    `PositionFileError` naming the file and what is wrong."""
    data = _read_toml(path)
    try:
        info = find_game(str(data.get("game") or game or ""))
    except UnknownGameError as exc:
        raise PositionFileError(f"{path}: game: {exc}") from None
    if game is not None and find_game(game).name != info.name:
        raise PositionFileError(f"{path}: a {info.name} position, not {find_game(game).name}")
    options = data.pop("rules", {})
    if not isinstance(options, dict):
        raise PositionFileError(f"{path}: rules: a table of rule options ([rules])")
    try:
        rule_set = parse_rules(info.rules_type, {**options, **(rules or {})},
                               where=f"{path} [rules]")
        if seed is not None:
            data["seed"] = seed
        position = read_position(info, rule_set, data)
    except (SettingsError, PositionError) as exc:
        raise PositionFileError(f"{path}: {exc}") from None
    settled = position.start()
    return PositionFile(path, info, settled.rules, position)


def _read_toml(path: Path) -> dict[str, JSON]:
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise PositionFileError(f"{path}: not a regular file")
        if path.stat().st_size > MAX_BYTES:
            raise PositionFileError(f"{path}: over {MAX_BYTES} bytes: not a position")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PositionFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PositionFileError(f"{path}: cannot read it: {exc}") from None
    try:
        return _json_values(path, tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise PositionFileError(f"{path}: not TOML: {exc}") from None
    except RecursionError:  # tomllib recurses per level: a file nested thousands deep
        raise PositionFileError(f"{path}: not TOML a position can hold: nested too deeply"
                                ) from None


def _json_values(path: Path, data: dict[str, JSON]) -> dict[str, JSON]:
    """`data` once every value in it is JSON's: TOML also has dates and times, which no
    position holds (the checks' messages write values as JSON, and a date is none)."""
    stack: list[tuple[str, JSON]] = list(data.items())
    while stack:  # not recursive: tomllib reads files nested nearly as deep as Python allows
        where, value = stack.pop()
        if isinstance(value, datetime.date | datetime.time):  # a datetime is a date
            raise PositionFileError(f"{path}: {where} = {value}: a date or time, which no "
                                    "position holds")
        if isinstance(value, dict):
            stack += [(f"{where}.{key}", item) for key, item in value.items()]
        elif isinstance(value, list):
            stack += [(f"{where}[{k}]", item) for k, item in enumerate(value)]
    return data


def position_files(folder: Path) -> list[Path]:
    """The position files of a folder (`*.toml`, sorted); `PositionFileError` if none."""
    if not folder.is_dir():
        raise PositionFileError(f"{folder}: not a folder")
    files = sorted(p for p in folder.rglob("*.toml") if p.is_file())
    if not files:
        raise PositionFileError(f"{folder}: no position files (*.toml)")
    return files


def position_toml(position: Mapping[str, JSON], rules: Rules) -> str:
    """A position (`Position.to_json`, `engine.position.position_of`) and the rules it is
    played under as the text of a position file: the options that differ from the defaults
    in `[rules]`, then the seats, the table and the piles."""
    defaults = rules_to_json(type(rules)())
    changed = {k: ("none" if v is None else v) for k, v in rules_to_json(rules).items()
               if v != defaults[k]}
    doc = tomlkit.document()
    doc.add(tomlkit.comment(HEADER))
    tables = ("seat", "table", "piles")
    for key, value in position.items():
        if key not in tables:
            doc.add(key, value)
    if changed:
        doc.add("rules", changed)
    for key in tables:
        if key in position:
            doc.add(key, position[key])
    return tomlkit.dumps(doc)


def position_at(path: Path, at: int, expect: bool = False) -> str:
    """The position file of the replay `path` after `at` actions; with `expect`, the action
    the replay played there as `expect`. `ReplayError` or `PositionFileError` saying why not.
    The file is read once, a line at a time."""
    replay = open_replay(path)
    seen = Outline()
    records = seen.watch(replay.records)
    state = simulate(replay.over(records), stop_after=max(at, 0))
    # The records after the position: the next action is the one played there.
    following = next((r for _, r in records if r["type"] == "action"), None)
    for _ in records:
        pass  # the rest is read: a file damaged anywhere is refused, as it always was
    if seen.damaged is not None:
        raise seen.damaged
    if not 0 <= at <= seen.actions:
        raise PositionFileError(f"--at {at}: the replay holds actions 0..{seen.actions}")
    if state.to_move is None:
        raise PositionFileError(f"--at {at}: the game is over there; a position is a game "
                                "still to play")
    try:
        data = position_of(state)
    except PositionError as exc:
        raise ReplayError(0, str(exc)) from None
    if expect:
        if following is None:
            raise PositionFileError(f"--expect: the replay has no action {at} (it stops there)")
        data["expect"] = str(following["action"])
    return position_toml(data, state.rules)


__all__ = ["PositionFile", "PositionFileError", "load_position", "position_at",
           "position_files", "position_toml"]
