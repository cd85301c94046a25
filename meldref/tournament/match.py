"""`meldref match`: a few games between given seats, played one after another.

The JSON summary holds only what the seed and the bots decide (no times), so a match between
deterministic bots prints the same bytes every run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..bots import UnknownBotError
from ..engine.game import (
    JSON,
    GameInfo,
    RuleOptionError,
    Rules,
    UnknownGameError,
    find_game,
    rules_to_json,
)
from ..engine.position import Position
from ..engine.registry import DEFAULT_GAME
from ..private import copy_private, existing_file_problem, folder_problem, private_dir
from ..protocol.errors import BotError
from ..protocol.launch import network_isolation_problem
from ..protocol.records import ResultLine
from ..protocol.sandbox import sandbox_problem
from ..protocol.seats import BotSpec, Limits, ProcessSeat, seat_from_spec
from ..replay.files import ReplayError, ReplayPathError, read_lines
from ..replay.positions import load_position
from ..settings import LimitSettings, SettingsError, parse_rules
from ..verdicts.tally import Tally
from .config import MAX_GAMES, MAX_PLAYERS, ConfigError, range_problem
from .keeper import BotKeeper
from .runner import run_job, safe_name, which_missing
from .schedule import BotEntry, BotLine, BotOptions, GameJob, bot_entries

DEFAULT_BOT: Final = BotSpec("builtin:greedy")


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """A checked match: game, rules, seats, seed, games, limits, replay destination."""

    game: str
    rules: Rules  # the game's rules dataclass
    bots: tuple[BotEntry, ...]
    seed: int
    games: int
    limits: LimitSettings
    replay: Path | None = None
    position: Position | None = None  # every game starts there (`--position`), its seed `seed`
    logs: Path | None = None  # the bot programs' stderr logs (`--logs`), else `logs_folder()`
    given_names: tuple[str | None, ...] = ()  # per seat, a `name=` of its --bot (`BotOptions`)
    debug_log: Path | None = None  # `--debug-log DIR`: each bot's lines, game by game

    def logs_folder(self) -> Path | None:
        """Where the bots' stderr logs go: `--logs`, else `logs/` beside the replays (in the
        replay folder, or beside a one-game replay file); None: no folder named (the caller
        keeps them in a temporary one)."""
        if self.logs is not None:
            return self.logs
        if self.replay is None:
            return None
        if self.games == 1 and not self.replay.is_dir():
            return self.replay.parent / "logs"
        return self.replay / "logs"

    def jobs(self) -> list[GameJob]:
        """Game g: seed + g, the seats rotated g places (each bot plays each position). From a
        position every game starts in the same state (seed included): only the seats rotate."""
        k = len(self.bots)
        policy, limits = self.limits.policy(), self.limits.process_limits()
        out = []
        for g in range(self.games):
            r = g % k
            seats = self.bots[r:] + self.bots[:r]
            seed = self.seed if self.position is not None else self.seed + g
            out.append(GameJob(g, f"game-{g + 1:04d}", self.game, self.rules, seed, g,
                               tuple(seats), policy, limits, self.position,
                               debug_log=None if self.debug_log is None
                               else str(self.debug_log.resolve())))
        return out

    def replay_path(self, job: GameJob) -> Path | None:
        """PATH for one game; PATH/<game id>.jsonl for several."""
        if self.replay is None:
            return None
        if self.games == 1 and not self.replay.is_dir():
            return self.replay
        return self.replay / f"{job.game_id}.jsonl"


def build_match(game: str | None, specs: Sequence[str], players: int | None, seed: int | None,
                games: int, rules: Mapping[str, str], limits: LimitSettings,
                replay: Path | None, position: Path | None = None,
                logs: Path | None = None, force: bool = False) -> MatchSpec:
    """Check everything a match needs before a bot starts; `ConfigError` with the reason.

    From a `position` file, the game, the rules (`rules` over its own), the seats and the seed
    (`seed` over its own) are the position's; else `seed` is required. An existing replay
    of another game is not overwritten unless `force` (`other_game_problem`).
    """
    start = None
    try:
        options = [BotOptions.parse(s) for s in specs]
        bots = [BotSpec.parse(o.command) for o in options]
        if position is not None:
            loaded = load_position(position, game, rules, seed)
            info, rule_set, start = loaded.game, loaded.rules, loaded.position
            if players is not None and players != start.players:
                raise ConfigError(f"--players {players}: the position has {start.players} "
                                  "seats")
            if len(bots) > 1 and len(bots) != start.players:
                raise ConfigError(f"the position has {start.players} seats, not {len(bots)} "
                                  "--bot")
            seed, players = start.seed, start.players
        else:
            info = find_game(game or DEFAULT_GAME)
            rule_set = parse_rules(info.rules_type, rules)
    except (UnknownGameError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    if seed is None:
        raise ConfigError("a match needs a seed")
    problem = (None if players is None else range_problem("--players", players, 1, MAX_PLAYERS)
               ) or range_problem("--games", games, 1, MAX_GAMES)
    if problem:
        raise ConfigError(problem)
    if not bots:
        bots = [DEFAULT_BOT] * (players or info.default_players)
        options = [BotOptions(str(DEFAULT_BOT))] * len(bots)
    elif players is not None and players != len(bots):
        if len(bots) != 1:
            raise ConfigError(f"--players {players} but {len(bots)} --bot given")
        bots, options = bots * players, options * players
    try:
        info.check_setup(rule_set, len(bots))
        limits.policy()
    except (RuleOptionError, SettingsError) as exc:
        raise ConfigError(str(exc)) from None
    names, dirs = [o.name for o in options], [o.dir for o in options]
    spec = MatchSpec(info.name, rule_set, tuple(bot_entries(bots, names, dirs=dirs)), seed,
                     games, limits, replay, start, logs, tuple(names))
    _check_output_paths(spec, force)
    return spec


def _check_output_paths(spec: MatchSpec, force: bool) -> None:
    """Make the folder the replays go to now (owner-only), and check the `--logs` folder, or
    `ConfigError` with why not: an output that cannot be written, or that another user could
    bend, would end every game in error after its bots started."""
    if spec.logs is not None and (problem := folder_problem(spec.logs)):
        raise ConfigError(f"--logs {spec.logs}: {problem}")
    if spec.replay is None:
        return
    if spec.games > 1 and (spec.replay.suffix == ".jsonl" or spec.replay.is_file()):
        raise ConfigError(f"--out {spec.replay}: {spec.games} games write one replay each "
                          "into a folder; give a folder (or --games 1 for one file)")
    first = spec.replay_path(spec.jobs()[0])
    assert first is not None
    check_output_file(first, "--out")
    for job in [] if force else spec.jobs():
        path = spec.replay_path(job)
        if path is not None and (problem := other_game_problem(path, job)):
            raise ConfigError(f"--out {problem}: give --force to overwrite it, or another "
                              "--out")


def other_game_problem(path: Path, job: GameJob) -> str | None:
    """Why writing `job`'s replay at `path` would lose another: a file is there that is not a
    replay of this game (its game, seed, game id or seats differ, or it is no replay). None
    if there is nothing (or an empty file), or the replay of this same game (the same command
    run again writes it anew)."""
    try:
        if not path.is_file() or path.stat().st_size == 0:
            return None
        _, header = next(read_lines(path))
    except (ReplayError, ReplayPathError, OSError, StopIteration):
        return f"{path} is there and is not a meldref replay"
    seats = header.get("seats") or []
    found = (header.get("game"), header.get("seed"), header.get("game_id"),
             [s.get("spec") for s in seats if isinstance(s, dict)])
    if found == (job.game, job.seed, job.game_id, [str(b.spec) for b in job.bots]):
        return None
    names = ", ".join(str(s.get("name")) for s in seats if isinstance(s, dict))
    return (f"{path} holds the replay of another game ({header.get('game')} seed "
            f"{header.get('seed')}: {names})")


def check_output_file(path: Path, flag: str) -> None:
    """Make the folder an output file goes to (owner-only), or `ConfigError` with why not: the
    path is a folder, a link, a device, a FIFO or a socket, or another user's file, or its
    folder cannot be written or is not one to keep private files in (`folder_trust`). Checked
    before any bot starts: nothing is written, and no mode of anything is changed."""
    if path.is_dir():
        raise ConfigError(f"{flag} {path} is a folder, not a file")
    try:
        info = path.lstat()
    except OSError:  # missing, or under a file: the folder's check says which
        info = None
    if info is not None and (problem := existing_file_problem(path, info)):
        raise ConfigError(f"{flag} {problem}")
    # The folder given may be a shared one: only what we create is made owner-only.
    problem = folder_problem(path.parent, create=True, tighten=False)
    if problem:
        raise ConfigError(f"{flag} {path}: {problem}")


def preflight(game: str, bots: Sequence[BotEntry], startup_time: float,
              keep_dir: Path | None = None, limits: Limits | None = None,
              cwd: str | None = None, keeper: BotKeeper | None = None) -> dict[BotSpec, str]:
    """Start every distinct bot program once (handshake, under the resource keys of `limits`,
    in the folder `cwd`) so a wrong command, or one that cannot start within its memory cap,
    fails before any game; `ConfigError` naming the bot and the reason, with the end of its
    stderr (the whole log is copied to `keep_dir`, when given, and named). Returns the `id
    name` each program announced, by spec (for `with_announced_names`). With a `keeper`, the
    programs started stay running for the games (a match's first game plays them)."""
    info = find_game(game)
    rlimits = limits or Limits()
    if rlimits.no_network and any(b.spec.builtin is None for b in bots):
        problem = network_isolation_problem()
        if problem is not None:
            raise ConfigError(f"--no-network: {problem}")
    if rlimits.sandbox and any(b.spec.builtin is None for b in bots):
        problem = sandbox_problem()
        if problem is not None:
            raise ConfigError(f"--sandbox: {problem}")
    announced: dict[BotSpec, str] = {}
    with tempfile.TemporaryDirectory(prefix="meldref-preflight-") as logs:
        for k, bot in enumerate({b.spec: b for b in bots}.values()):
            log = Path(logs) / f"preflight-{k}-{safe_name(bot.name)}.stderr"
            name = _handshake(info, bot, startup_time, log, keep_dir, rlimits, bot.cwd or cwd,
                              keeper)
            if name:
                announced[bot.spec] = name
    return announced


def _handshake(info: GameInfo, bot: BotEntry, startup_time: float, log: Path,
               keep_dir: Path | None, rlimits: Limits, cwd: str | None,
               keeper: BotKeeper | None = None) -> str:
    """The name `bot` announces ("" for none, and for built-in bots); `ConfigError` if it
    cannot start."""
    if bot.spec.builtin is not None:
        try:
            seat_from_spec(bot.spec, info).close()
        except UnknownBotError as exc:
            raise ConfigError(str(exc)) from None
        return ""
    missing = which_missing(bot.spec, cwd)
    if missing:
        raise ConfigError(missing)
    seat = seat_from_spec(bot.spec, info, limits=rlimits, log_path=log, cwd=cwd)
    try:
        seat.connect(startup_time)
    except BotError as exc:
        seat.close()
        where = _stderr_tail(_kept(log, keep_dir))
        raise ConfigError(f"bot {bot.name} ({bot.spec}) failed to start: {exc}{where}"
                          ) from None
    except BaseException:
        seat.close()
        raise
    name = " ".join(str(seat.ids.get("name") or "").split())
    if keeper is not None and isinstance(seat, ProcessSeat):
        keeper.adopt(seat, bot.spec, rlimits, cwd)  # its first game plays this process
    else:
        seat.close()
    return name


def _kept(log: Path, keep_dir: Path | None) -> tuple[Path, bool]:
    """The log to quote, and whether it stays on disk (copied to `keep_dir`) to be named."""
    if keep_dir is None or not log.exists():
        return log, False
    private_dir(keep_dir)
    kept = keep_dir / log.name
    copy_private(log, kept)
    return kept, True


def _stderr_tail(where: tuple[Path, bool]) -> str:
    log, named = where
    if not log.exists() or not log.stat().st_size:
        return ""
    tail = log.read_bytes()[-300:].decode("utf-8", "replace").strip().splitlines()[-2:]
    shown = f" ({log})" if named else ""
    return f"; its stderr{shown} ends: {' / '.join(tail)}"


def with_announced_names(spec: MatchSpec, announced: Mapping[BotSpec, str]) -> MatchSpec:
    """The match with its bots named as results show them: the name each program announced
    (`id name`; `announced`: spec -> name), else the built-in's or the program's file name;
    made unique with #1, #2... (copies of one bot, or two bots announcing one name)."""
    bots = bot_entries([b.spec for b in spec.bots], list(spec.given_names) or None, announced,
                       [b.cwd for b in spec.bots])
    return dataclasses.replace(spec, bots=tuple(bots))


def run_match(spec: MatchSpec, keeper: BotKeeper | None = None,
              scratch: Path | None = None) -> list[ResultLine]:
    """Play every game of the match in order; their result lines. Bot programs are kept from
    game to game by `keeper` (the one `preflight` filled, which the caller closes; without
    one, a keeper of this match's own, closed at its end), unless the match's limits ask for
    fresh bots. Their stderr goes to `spec.logs_folder()`, where a log is kept when it is not
    empty or its game had a fault, else to `scratch` (a temporary folder), where only the
    logs of games with a fault are kept (`failed_bots` quotes them)."""
    logs = spec.logs_folder() or scratch
    with contextlib.ExitStack() as stack:
        if keeper is None:
            keeper = stack.enter_context(BotKeeper())
        return [run_job(job, None, keep_logs=logs != scratch, replay=spec.replay_path(job),
                        keeper=keeper, logs_folder=logs)
                for job in spec.jobs()]


def failed_bots(lines: Sequence[ResultLine]) -> list[str]:
    """One line per seat that failed for good in a game: game, seat, bot, the fault, and the
    end of its stderr log with the log's path (a program's)."""
    out = []
    for line in lines:
        faults = line.figures.faults if line.figures is not None else ()
        for seat, seat_faults in enumerate(faults):
            for fault in (f for f in seat_faults if f.fatal):
                log = line.logs[seat] if seat < len(line.logs) else None
                where = _stderr_tail((Path(log), True)) if log else ""
                out.append(f"{line.game_id} seat {seat} {line.bots[seat]}: "
                           f"{fault.outcome}: {fault.detail}{where}")
    return out


def game_summary(line: ResultLine) -> dict[str, JSON]:
    """One game for `--json`: who won, scores, progress, faults (nothing time-dependent)."""
    out: dict[str, JSON] = {"game_id": line.game_id, "seed": line.seed,
                           "seats": list(line.bots),
                           "status": "ok" if line.ok else "error"}
    figures = line.figures
    if figures is None:
        out["error"] = line.error
        return out
    outcome, detail = figures.outcome, dict(figures.outcome.detail)
    out.update(
        termination=outcome.termination.value,
        winners=[line.bots[s] for s in outcome.winners],
        winner_seats=list(outcome.winners),
        places=list(outcome.places),
        scores=list(outcome.scores),
        hands=figures.hands,
        actions=figures.actions,
        decisions=figures.decisions,
        seat_status=list(figures.status),
        faults=[[{"outcome": f.outcome, "fatal": f.fatal, "detail": f.detail} for f in fs]
                for fs in figures.faults],
        detail=detail,
    )
    if "phases_completed" in detail:
        out["phases"] = list(detail["phases_completed"])
    if "rounds" in detail:
        out["rounds"] = detail["rounds"]
    if line.replay:
        out["replay"] = line.replay
    if any(line.logs):
        out["logs"] = list(line.logs)
    return out


def totals(lines: Sequence[ResultLine], bots: Sequence[BotEntry]) -> list[dict[str, JSON]]:
    """Per bot over the match: games, wins (shared wins split), mean score and place, faults."""
    tally = Tally(b.name for b in bots)
    for line in lines:
        if line.figures is not None:
            tally.add(line.bots, line.figures.outcome, line.figures.faults)
    return [{"bot": row.name, "games": row.games, "wins": round(row.wins, 4),
             "mean_score": None if row.mean_score is None else round(row.mean_score, 2),
             "mean_place": None if row.mean_place is None else round(row.mean_place, 3),
             "faults": row.fault_count} for row in tally.rows()]


def played_rules(spec: MatchSpec) -> Rules:
    """The rules the games are played under: a game settles some options for its number of
    seats when it starts (Five Crowns' `party=auto` becomes on or off: the game's
    `check_rules` returns the rules so settled), and the replays and the seats' `rule` lines
    say the settled value."""
    settle = find_game(spec.game).check_rules
    settled = None if settle is None else settle(spec.rules, len(spec.bots))
    return spec.rules if settled is None else settled


def match_json(spec: MatchSpec, lines: Sequence[ResultLine]) -> dict[str, JSON]:
    position = {"position": spec.position.to_json()} if spec.position is not None else {}
    return {
        "game": spec.game,
        "rules": rules_to_json(played_rules(spec)),
        "seed": spec.seed,
        **position,
        "players": len(spec.bots),
        "bots": bots_json(spec.bots),
        "games": [game_summary(line) for line in lines],
        "totals": totals(lines, spec.bots),
    }


def bots_json(bots: Sequence[BotEntry]) -> list[BotLine]:
    """Each bot's name in the results and how it was seated (`command`: null for built-ins)."""
    return [b.to_json() for b in bots]
