"""One game between seats through the referee, with its replay and bot logs on disk.

`run_job` is what `meldref match` and every tournament worker call; it never raises for a game
that went wrong: the result line says what happened (status "error" and why).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

from ..engine.game import JSON, GameInfo, Rules, find_game
from ..engine.position import Position
from ..private import create_private, open_private, private_dir
from ..protocol.records import GameRecord, ResultLine
from ..protocol.referee import MatchPolicy, close_all, play_game
from ..protocol.seats import BotSpec, Limits, Seat, seat_from_spec
from ..replay.files import ReplayWriter
from .keeper import BotKeeper, kept_here
from .schedule import BotEntry, BotLine, GameJob, bot_entries, bot_seed, seating_of

RecordHook = Callable[[dict[str, JSON]], None]


def replay_file(folder: Path, game_id: str) -> Path:
    """Where a tournament game's replay goes."""
    return folder / "replays" / f"{game_id}.jsonl"


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.#-]+", "_", name)[:40] or "bot"


def log_file(logs: Path, game_id: str, seat: int, bot: BotEntry) -> Path | None:
    """A bot program's stderr log in the logs folder `logs`: one folder a game, one file a
    seat (built-in bots have none)."""
    if bot.spec.builtin is not None:
        return None
    return logs / game_id / f"seat{seat}-{safe_name(bot.name)}.stderr"


def make_seats(info: GameInfo, bots: Sequence[BotEntry], seed: int, game_id: str,
               logs: Sequence[Path | None], limits: Limits | None = None,
               cwd: str | None = None, keeper: BotKeeper | None = None) -> list[Seat]:
    """Seats for `bots` in order (built-in bots seeded by `bot_seed` from the game's seed, the
    seating its id names and the seat; programs under `limits`, started in the folder `cwd`; lent
    by `keeper` when given, so a program kept from an earlier game plays this one); closes
    (or gives back) the ones made so far if one cannot be made."""
    seats: list[Seat] = []
    try:
        for k, (bot, log) in enumerate(zip(bots, logs, strict=True)):
            if log is not None:
                private_dir(log.parent.parent)  # logs/: an older one may be readable by all
                private_dir(log.parent)
                create_private(log)  # empty (a rerun game starts afresh) and owner-only
            if keeper is not None and bot.spec.builtin is None:
                seats.append(keeper.lend(bot.spec, info, limits or Limits(), log,
                                         bot.cwd or cwd))
            else:
                bot_rng = bot_seed(seed, seating_of(game_id), k)
                seats.append(seat_from_spec(bot.spec, info, seed=bot_rng,
                                            limits=limits, log_path=log,
                                            cwd=bot.cwd or cwd))
    except BaseException:
        release_seats(seats, keeper)
        raise
    return seats


def release_seats(seats: Sequence[Seat], keeper: BotKeeper | None, keep: bool = True) -> None:
    """After a game: `keeper` takes its programs back (those fit to play on, unless not
    `keep`), every other seat is closed."""
    if keeper is not None:
        keeper.give_back(seats, keep)
    else:
        close_all(seats)


class SeatLine(BotLine):
    """A seat as a replay's header lists it: the bot, the name its program gave (`id name`),
    and the ids its handshake sent (spec/REPLAY.md)."""

    seat: int
    bot_name: str
    version: str | None
    id: dict[str, str]


class ReplayRecorder:
    """The referee's `on_record`: a replay written line by line as the game goes.

    Its header is made from the game's `start` record, the referee's first: the rules there
    are those the game really played, as it settled them (Five Crowns' `party=auto` becomes on
    or off), and the seats have shaken hands by then, so their names and ids are known.
    """

    def __init__(self, path: Path, game_id: str | None, bots: Sequence[BotEntry],
                 seats: Sequence[Seat], extra: Mapping[str, JSON] | None = None) -> None:
        self.path, self.game_id, self.bots, self.seats = path, game_id, bots, seats
        self.extra = dict(extra or {})
        self.writer: ReplayWriter | None = None

    def __call__(self, record: dict[str, JSON]) -> None:
        if self.writer is None:
            self.writer = ReplayWriter(self.path, self.header(record))
        self.writer.write(record)

    def header(self, start: Mapping[str, JSON]) -> dict[str, JSON]:
        if start.get("type") != "start":
            raise ValueError(f"a replay begins with the referee's start record, not {start!r}")
        return {"game": start["game"], "rules": start["rules"], "seed": start["seed"],
                "players": start["players"], "policy": start["policy"],
                "game_id": self.game_id, **self.extra, "seats": self.seat_info()}

    def seat_info(self) -> list[SeatLine]:
        out: list[SeatLine] = []
        for k, (bot, seat) in enumerate(zip(self.bots, self.seats, strict=True)):
            ids = dict(seat.ids)
            out.append({"seat": k, **bot.to_json(), "bot_name": seat.name,
                        "version": ids.get("version"), "id": ids})
        return out

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def play_recorded(info: GameInfo, rules: Rules, bots: Sequence[BotEntry], seats: Sequence[Seat],
                  seed: int, policy: MatchPolicy, replay: Path | None,
                  game_id: str | None = None, also: RecordHook | None = None,
                  extra: Mapping[str, JSON] | None = None,
                  position: Position | None = None) -> GameRecord:
    """`play_game` with a replay written line by line to `replay` (if given).

    `also` sees every record too; `extra` adds fields to the replay header; a game from a
    `position` starts there, and the header records it (`position`).
    """
    hooks: list[RecordHook] = [also] if also is not None else []
    recorder = None
    if replay is not None:
        if position is not None:
            extra = {**(extra or {}), "position": position.to_json()}
        recorder = ReplayRecorder(replay, game_id, bots, seats, extra)
        hooks.append(recorder)

    def on_record(record: dict[str, JSON]) -> None:
        for hook in hooks:
            hook(record)

    try:
        start = position.start() if position is not None else None
        return play_game(info, rules, seats, seed, policy, on_record=on_record if hooks else None,
                         start=start)
    finally:
        if recorder is not None:
            recorder.close()


# ----------------------------------------------------------------------------------------------
# A scheduled game


@contextlib.contextmanager
def line_logs(job: GameJob, seats: Sequence[Seat]) -> Iterator[None]:
    """With `job.debug_log` (`--debug-log DIR`, cutechess's `-debug`): every line each bot
    program read and wrote in this game, in DIR/<game id>/seat<k>-<bot>.log, one line each,
    `<time> <seat's name> <direction> <line>` (`>` to the bot, `<` from it), the time in
    seconds since the epoch to the microsecond. The referee's own hook on each channel
    (`LineChannel.on_line`); a program kept from an earlier game has its channel already,
    so the hook is put on both, and taken off after the game."""
    if job.debug_log is None:
        yield
        return
    files = []
    try:
        for k, (bot, seat) in enumerate(zip(job.bots, seats, strict=True)):
            if bot.spec.builtin is not None:
                continue
            folder = Path(job.debug_log) / job.game_id
            private_dir(Path(job.debug_log))
            private_dir(folder)
            log = open_private(folder / f"seat{k}-{safe_name(bot.name)}.log", "w",
                               encoding="utf-8")
            files.append(log)
            _hook(seat, _line_writer(log, bot.name))
        yield
    finally:
        for seat in seats:
            _hook(seat, None)
        for log in files:
            log.close()


def _line_writer(log: IO[str], name: str) -> Callable[[str, str], None]:
    def write(direction: str, line: str) -> None:
        log.write(f"{time.time():.6f} {name} {direction} {line}\n")
    return write


def _hook(seat: Seat, hook: Callable[[str, str], None] | None) -> None:
    if hasattr(seat, "on_line"):
        seat.on_line = hook
    channel = getattr(seat, "channel", None)
    if channel is not None:
        channel.on_line = hook


def run_job(job: GameJob, folder: Path | None, keep_logs: bool = False,
            replay: Path | None = None, keeper: BotKeeper | None = None,
            logs_folder: Path | None = None) -> ResultLine:
    """Play `job`, writing `replays/<id>.jsonl` and bot logs under `folder` (or in the job's
    `logs` folder, keeping every one); its result line. Without a `folder`, the bot logs go to
    `logs_folder` (a match's), if given.

    Bot programs come from `keeper` (else this process's, `keeper.keep_bots_here`, in a
    tournament worker) and go back to it after the game, unless the job's limits ask for
    fresh bots: those are stopped after the game (a process the keeper held already, such
    as a match's start-up check's, still plays). Without a keeper each game starts and
    stops its own."""
    keeper = keeper if keeper is not None else kept_here()
    info = find_game(job.game)
    logs: list[Path | None] = [None] * len(job.bots)
    if folder is not None:
        home = folder / "logs" if job.logs is None else Path(job.logs)
        logs = [log_file(home, job.game_id, k, b) for k, b in enumerate(job.bots)]
        keep_logs = keep_logs or job.logs is not None
        replay = replay or replay_file(folder, job.game_id)
    elif logs_folder is not None:
        logs = [log_file(logs_folder, job.game_id, k, b) for k, b in enumerate(job.bots)]
    seats: list[Seat] = []
    played = False  # a game the referee could not finish keeps no bot for the next one
    try:
        seats = make_seats(info, job.bots, job.seed, job.game_id, logs, job.limits, job.cwd,
                           keeper)
        with line_logs(job, seats):
            record = play_recorded(info, job.rules, job.bots, seats, job.seed, job.policy,
                                   replay, job.game_id, position=job.position)
        played = True
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(exc)).strip()
        return job.result(error=detail, replay=_rel(replay, folder),
                          logs=[_rel(p, folder) for p in logs])
    finally:
        release_seats(seats, keeper, played and not job.limits.fresh_bots)
    figures = record.figures()
    return job.result(figures, replay=_rel(replay, folder),
                      logs=_keep_logs(logs, folder, keep_logs, figures.faulty))


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


def which_missing(spec: BotSpec, cwd: str | None = None) -> str | None:
    """Why a bot program cannot start (program not found), or None if it looks runnable;
    a relative path is looked for in `cwd` (None: the current folder)."""
    command = spec.command
    if command is None:
        return None
    program = command.argv[0]
    if "/" in program:
        if not (Path(cwd or ".") / program).exists():
            where = f" in {cwd}" if cwd else ""
            return f"bot command {spec}: {program} does not exist{where}"
        return None
    if shutil.which(program) is None:
        return f"bot command {spec}: {program!r} is not on PATH"
    return None


def play_one(game: str, specs: Sequence[str], seed: int, *, rules: Mapping[str, JSON] | None = None,
             limits: Mapping[str, JSON] | None = None, names: Sequence[str] | None = None,
             replay: Path | None = None, game_id: str = "game") -> ResultLine:
    """One game given as text (bot specs; rules and limits by their public names, as flags
    and TOML give them), checked here and played; its result line. For scripts, benchmarks and
    tests; `SettingsError` or `ValueError` if a value is wrong."""
    # Here, not at the top: a tournament worker imports this module but never checks a
    # setting, and the settings' pydantic models cost it a third of a second of CPU.
    from ..settings import in_table, limit_settings, parse_rules  # noqa: PLC0415 start-up: pydantic

    info = find_game(game)
    settings = limit_settings(limits or {}, in_table("limits"))
    parsed = [BotSpec.parse(s) for s in specs]
    bots = tuple(BotEntry(n, s) for n, s in zip(names, parsed, strict=True)) if names else tuple(
        bot_entries(parsed))
    job = GameJob(0, game_id, info.name, parse_rules(info.rules_type, rules or {}), seed, 0,
                  bots, settings.policy(), settings.process_limits())
    return run_job(job, None, replay=replay)
