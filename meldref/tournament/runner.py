"""One game between seats through the referee, with its replay and bot logs on disk.

`run_job` is what `meldref match` and every tournament worker call; it never raises for a game
that went wrong: the result line says what happened (status "error" and why).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import shutil
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..engine.game import GameInfo, find_game, rules_to_json
from ..private import create_private, private_dir
from ..protocol.referee import GameRecord, MatchPolicy, play_game
from ..protocol.seats import Limits, Seat, seat_from_spec
from ..replay.files import ReplayWriter
from .schedule import BotEntry, GameJob

RecordHook = Callable[[dict[str, Any]], None]
POLICY_FIELDS = {f.name for f in dataclasses.fields(MatchPolicy)}
# `[limits]` keys that are rlimits of each bot program (protocol.seats.Limits), not policy.
RESOURCE_KEYS = ("memory-mb", "max-processes", "file-size-mb")


def make_policy(limits: Mapping[str, Any]) -> MatchPolicy:
    """A match policy from `[limits]` keys (`move-time`...); ValueError if one is wrong.
    The resource keys (RESOURCE_KEYS) are checked here too, but belong to `make_process_limits`."""
    make_process_limits(limits)
    kwargs = {}
    for key, value in limits.items():
        if key in RESOURCE_KEYS:
            continue
        name = key.replace("-", "_")
        if name not in POLICY_FIELDS:
            raise ValueError(f"unknown limit {key!r}; known: "
                             f"{', '.join(sorted(f.replace('_', '-') for f in POLICY_FIELDS))}")
        _check_limit(key, name, value)
        kwargs[name] = value
    try:
        return MatchPolicy(**kwargs)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def _check_limit(key: str, name: str, value: Any) -> None:
    # TOML hands over any type; the policy itself checks ranges, not types.
    kind = POLICY_TYPES.get(name, "number")
    if kind == "bool":
        ok = isinstance(value, bool)
        wanted = "true or false"
    elif kind == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
        wanted = "a whole number"
    elif kind == "text":
        ok = isinstance(value, str)
        wanted = "forfeit or autoplay"
    else:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok or (value is None and name == "max_bank")
        wanted = "a number of seconds"
    if not ok:
        raise ValueError(f"limit {key} = {value!r}: {wanted}")


def make_process_limits(limits: Mapping[str, Any]) -> Limits:
    """The rlimits of every bot program from `[limits]` keys (`memory-mb`...; None: none);
    ValueError unless each given one is a positive whole number."""
    kwargs: dict[str, int] = {}
    for key in RESOURCE_KEYS:
        value = limits.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"limit {key} = {value!r}: a whole number >= 1")
        kwargs[key.replace("-", "_")] = value
    return Limits(**kwargs)


POLICY_TYPES = {"illegal_retries": "int", "max_actions": "int", "legal_hints": "bool",
                "on_failure": "text"}


def bot_seed(game_seed: int, seat: int) -> int:
    """The seed of a built-in bot: fixed by the game's seed and its seat."""
    return game_seed * 16 + seat


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.#-]+", "_", name)[:40] or "bot"


def log_path(folder: Path, game_id: str, seat: int, bot: BotEntry) -> Path | None:
    """Where a bot program's stderr goes (built-in bots have none)."""
    if bot.spec.strip().startswith("builtin:"):
        return None
    return folder / "logs" / game_id / f"seat{seat}-{safe_name(bot.name)}.stderr"


def make_seats(info: GameInfo, bots: Sequence[BotEntry], seed: int,
               logs: Sequence[Path | None], limits: Limits | None = None) -> list[Seat]:
    """Seats for `bots` in order (programs under `limits`); closes the ones made so far if one
    cannot be made."""
    seats: list[Seat] = []
    try:
        for k, (bot, log) in enumerate(zip(bots, logs, strict=True)):
            if log is not None:
                private_dir(log.parent.parent)  # logs/: an older one may be readable by all
                private_dir(log.parent)
                create_private(log)  # empty (a rerun game starts afresh) and owner-only
            seats.append(seat_from_spec(bot.spec, info, seed=bot_seed(seed, k), limits=limits,
                                        log_path=log))
    except BaseException:
        close_seats(seats)
        raise
    return seats


def close_seats(seats: Sequence[Seat]) -> None:
    for seat in seats:
        with contextlib.suppress(Exception):
            seat.close()


class ReplayRecorder:
    """The referee's `on_record`: writes the replay header once the seats have shaken hands.

    The header holds the rules the game really played: the start record's, which the game
    settled (Five Crowns' `party=auto` becomes on or off), not the rules as given.
    """

    def __init__(self, path: Path, header: Mapping[str, Any], bots: Sequence[BotEntry],
                 seats: Sequence[Seat]) -> None:
        self.path, self.header, self.bots, self.seats = path, dict(header), bots, seats
        self.writer: ReplayWriter | None = None

    def __call__(self, record: dict[str, Any]) -> None:
        if self.writer is None:
            if record.get("type") == "start" and "rules" in record:
                self.header["rules"] = record["rules"]
            self.writer = ReplayWriter(self.path, {**self.header, "seats": self.seat_info()})
        self.writer.write(record)

    def seat_info(self) -> list[dict[str, Any]]:
        out = []
        for k, (bot, seat) in enumerate(zip(self.bots, self.seats, strict=True)):
            ids = dict(getattr(seat, "ids", {}) or {})
            out.append({"seat": k, "name": bot.name, "spec": bot.spec,
                        "command": None if bot.spec.startswith("builtin:") else bot.spec,
                        "bot_name": seat.name, "version": ids.get("version"), "id": ids})
        return out

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def replay_header(info: GameInfo, rules: Any, players: int, seed: int, policy: MatchPolicy,
                  game_id: str | None) -> dict[str, Any]:
    return {"game": info.name, "rules": rules_to_json(rules), "seed": seed, "players": players,
            "policy": policy.to_json(), "game_id": game_id}


def play_recorded(info: GameInfo, rules: Any, bots: Sequence[BotEntry], seats: Sequence[Seat],
                  seed: int, policy: MatchPolicy, replay: Path | None,
                  game_id: str | None = None, also: RecordHook | None = None,
                  extra: Mapping[str, Any] | None = None) -> GameRecord:
    """`play_game` with a replay written line by line to `replay` (if given).

    `also` sees every record too; `extra` adds fields to the replay header.
    """
    hooks: list[RecordHook] = [also] if also is not None else []
    recorder = None
    if replay is not None:
        header = {**replay_header(info, rules, len(seats), seed, policy, game_id),
                  **(extra or {})}
        recorder = ReplayRecorder(replay, header, bots, seats)
        hooks.append(recorder)

    def on_record(record: dict[str, Any]) -> None:
        for hook in hooks:
            hook(record)

    try:
        return play_game(info, rules, seats, seed, policy, on_record=on_record if hooks else None)
    finally:
        if recorder is not None:
            recorder.close()


# ----------------------------------------------------------------------------------------------
# A scheduled game


def run_job(job: GameJob, folder: Path | None, limits: Mapping[str, Any],
            keep_logs: bool = False, replay: Path | None = None) -> dict[str, Any]:
    """Play `job`, writing `replays/<id>.jsonl` and bot logs under `folder`; its result line."""
    info = find_game(job.game)
    logs: list[Path | None] = [None] * len(job.bots)
    if folder is not None:
        logs = [log_path(folder, job.game_id, k, b) for k, b in enumerate(job.bots)]
        replay = replay or folder / "replays" / f"{job.game_id}.jsonl"
    line = {**job.to_json(), "replay": _rel(replay, folder)}
    seats: list[Seat] = []
    try:
        rules = info.rules(dict(job.rules))
        policy = make_policy(limits)
        seats = make_seats(info, job.bots, job.seed, logs, make_process_limits(limits))
        record = play_recorded(info, rules, job.bots, seats, job.seed, policy, replay,
                               job.game_id)
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(exc)).strip()
        line.update(status="error", error=detail, logs=[_rel(p, folder) for p in logs])
        return line
    finally:
        close_seats(seats)
    line.update(summarize(record))
    line["logs"] = _keep_logs(logs, folder, keep_logs, _failed(line))
    return line


def summarize(record: GameRecord) -> dict[str, Any]:
    """The result line's figures for one played game (no paths, no times)."""
    outcome = record.outcome
    detail = dict(outcome.detail)
    return {
        "status": "ok",
        "termination": outcome.termination.value,
        "winners": list(outcome.winners),
        "places": list(outcome.places),
        "scores": list(outcome.scores),
        "hands": detail.get("hands", detail.get("rounds")),
        "detail": detail,
        "seat_status": list(record.status),
        "faults": [[{"outcome": f.outcome, "detail": f.detail, "fatal": f.fatal} for f in fs]
                   for fs in record.faults],
        "actions": len(record.actions),
        "decisions": record.decisions,
        "names": list(record.names),
        "think_time": [round(t, 4) for t in record.think_time],
        "wall_time": round(record.wall_time, 4),
    }


def _failed(line: Mapping[str, Any]) -> bool:
    return line.get("status") != "ok" or any(line.get("faults") or [])


def _keep_logs(logs: Sequence[Path | None], folder: Path | None, keep_all: bool,
               failed: bool) -> list[str | None]:
    """A failed game keeps every log (even empty: "it wrote nothing" is worth knowing); a clean
    one keeps none, or the non-empty ones with `keep_all`."""
    out: list[str | None] = []
    for path in logs:
        exists = path is not None and path.exists()
        if path is not None and exists and (failed or (keep_all and path.stat().st_size)):
            out.append(_rel(path, folder))
            continue
        if path is not None:
            path.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # only when empty
        out.append(None)
    return out


def _rel(path: Path | None, folder: Path | None) -> str | None:
    if path is None:
        return None
    if folder is not None:
        with contextlib.suppress(ValueError):
            return str(path.relative_to(folder))
    return str(path)


def which_missing(spec: str) -> str | None:
    """Why a bot command cannot start (program not found), or None if it looks runnable."""
    import shlex

    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        return f"bot command {spec!r}: {exc}"
    if not argv:
        return "empty bot command"
    program = argv[0]
    if "/" in program:
        if not Path(program).exists():
            return f"bot command {spec!r}: {program} does not exist"
        return None
    if shutil.which(program) is None:
        return f"bot command {spec!r}: {program!r} is not on PATH"
    return None
