"""`meldref match`: a few games between given seats, played one after another.

The JSON summary holds only what the seed and the bots decide (no times), so a match between
deterministic bots prints the same bytes every run.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine.game import RuleOptionError, find_game, rules_to_json
from ..private import copy_private, folder_problem, private_dir
from ..protocol.errors import BotError
from ..protocol.seats import Limits
from .config import ConfigError
from .runner import make_policy, make_process_limits, run_job, safe_name, which_missing
from .schedule import BotEntry, GameJob, bot_entries

DEFAULT_SEATS = {"phase10": 4, "fivecrowns": 4, "solitaire": 1}
DEFAULT_BOT = "builtin:greedy"


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """A checked match: game, rules texts, seats, seed, games, limits, replay destination."""

    game: str
    rules: Mapping[str, str]
    bots: tuple[BotEntry, ...]
    seed: int
    games: int
    limits: Mapping[str, Any]
    replay: Path | None = None

    def jobs(self) -> list[GameJob]:
        """Game g: seed + g, the seats rotated g places (each bot plays each position)."""
        k = len(self.bots)
        out = []
        for g in range(self.games):
            r = g % k
            seats = self.bots[r:] + self.bots[:r]
            out.append(GameJob(g, f"game-{g + 1:04d}", self.game, dict(self.rules),
                               self.seed + g, g, tuple(seats)))
        return out

    def replay_path(self, job: GameJob) -> Path | None:
        """PATH for one game; PATH/<game id>.jsonl for several."""
        if self.replay is None:
            return None
        if self.games == 1 and not self.replay.is_dir():
            return self.replay
        return self.replay / f"{job.game_id}.jsonl"


def build_match(game: str, specs: Sequence[str], players: int | None, seed: int, games: int,
                rules: Mapping[str, str], limits: Mapping[str, Any],
                replay: Path | None) -> MatchSpec:
    """Check everything a match needs before a bot starts; `ConfigError` with the reason."""
    try:
        info = find_game(game)
    except KeyError as exc:
        raise ConfigError(str(exc.args[0])) from None
    specs = list(specs)
    if not specs:
        specs = [DEFAULT_BOT] * (players or DEFAULT_SEATS[info.name])
    elif players is not None and players != len(specs):
        if len(specs) != 1:
            raise ConfigError(f"--players {players} but {len(specs)} --bot given")
        specs = specs * players
    try:
        info.check_setup(info.rules(dict(rules)), len(specs))
        make_policy(limits)
    except (RuleOptionError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    if games < 1:
        raise ConfigError(f"--games {games}: at least 1")
    spec = MatchSpec(info.name, dict(rules), tuple(bot_entries(specs)), seed, games,
                     dict(limits), replay)
    _check_replay_path(spec)
    return spec


def _check_replay_path(spec: MatchSpec) -> None:
    """Make the folder the replays go to now (owner-only), or `ConfigError` with why not: a
    replay that cannot be written would end every game in error after its bots started."""
    if spec.replay is None:
        return
    first = spec.replay_path(spec.jobs()[0])
    assert first is not None
    if first.is_dir():
        raise ConfigError(f"--replay {first} is a folder, not a file")
    # The folder given may be a shared one: only what we create is made owner-only.
    problem = folder_problem(first.parent, create=True, tighten=False)
    if problem:
        raise ConfigError(f"--replay {spec.replay}: {problem}")


def preflight(game: str, bots: Sequence[BotEntry], startup_time: float,
              keep_dir: Path | None = None,
              limits: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Start every distinct bot program once (handshake, under the resource keys of `limits`)
    so a wrong command, or one that cannot start within its memory cap, fails before any
    game; `ConfigError` naming the bot and the reason, with the end of its stderr (the whole
    log is copied to `keep_dir`, when given, and named). Returns the `id name` each program
    announced, by spec (for `with_announced_names`)."""
    info = find_game(game)
    try:
        rlimits = make_process_limits(limits or {})
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    announced: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="meldref-preflight-") as logs:
        for k, bot in enumerate({b.spec: b for b in bots}.values()):
            log = Path(logs) / f"preflight-{k}-{safe_name(bot.name)}.stderr"
            name = _handshake(info, bot, startup_time, log, keep_dir, rlimits)
            if name:
                announced[bot.spec] = name
    return announced


def _handshake(info: Any, bot: BotEntry, startup_time: float, log: Path,
               keep_dir: Path | None, rlimits: Limits) -> str:
    """The name `bot` announces ("" for none, and for built-in bots); `ConfigError` if it
    cannot start."""
    from ..protocol.seats import seat_from_spec

    if bot.spec.strip().startswith("builtin:"):
        try:
            seat_from_spec(bot.spec, info).close()
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        return ""
    missing = which_missing(bot.spec)
    if missing:
        raise ConfigError(missing)
    seat = seat_from_spec(bot.spec, info, limits=rlimits, log_path=log)
    try:
        seat.connect(startup_time)
    except BotError as exc:
        where = _stderr_tail(_kept(log, keep_dir))
        raise ConfigError(f"bot {bot.name} ({bot.spec}) failed to start: {exc}{where}"
                          ) from None
    finally:
        seat.close()
    return " ".join(str(getattr(seat, "ids", {}).get("name") or "").split())


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


def with_announced_names(spec: MatchSpec, announced: Mapping[str, str]) -> MatchSpec:
    """The match with its bots named as results show them: the name each program announced
    (`id name`; `announced`: spec -> name), else the built-in's or the program's file name;
    made unique with #1, #2... (copies of one bot, or two bots announcing one name)."""
    bots = bot_entries([b.spec for b in spec.bots], None, announced)
    return dataclasses.replace(spec, bots=tuple(bots))


def run_match(spec: MatchSpec) -> list[dict[str, Any]]:
    """Play every game of the match in order; their result lines."""
    return [run_job(job, None, spec.limits, replay=spec.replay_path(job)) for job in spec.jobs()]


def game_summary(line: Mapping[str, Any]) -> dict[str, Any]:
    """One game for `--json`: who won, scores, progress, faults (nothing time-dependent)."""
    out: dict[str, Any] = {"game_id": line["game_id"], "seed": line["seed"],
                           "seats": list(line["bots"]), "status": line["status"]}
    if line["status"] != "ok":
        out["error"] = line.get("error")
        return out
    detail = line.get("detail") or {}
    out.update(
        termination=line["termination"],
        winners=[line["bots"][s] for s in line["winners"]],
        winner_seats=list(line["winners"]),
        places=list(line["places"]),
        scores=list(line["scores"]),
        hands=line.get("hands"),
        actions=line["actions"],
        decisions=line["decisions"],
        seat_status=list(line["seat_status"]),
        faults=[[{"outcome": f["outcome"], "fatal": f["fatal"]} for f in fs]
                for fs in line["faults"]],
        detail={k: v for k, v in detail.items()},
    )
    if "phases_completed" in detail:
        out["phases"] = list(detail["phases_completed"])
    if "rounds" in detail:
        out["rounds"] = detail["rounds"]
    if line.get("replay"):
        out["replay"] = line["replay"]
    return out


def totals(lines: Sequence[Mapping[str, Any]], bots: Sequence[BotEntry]) -> list[dict[str, Any]]:
    """Per bot over the match: games, wins (shared wins split), mean score and place, faults."""
    rows = {b.name: {"bot": b.name, "games": 0, "wins": 0.0, "score": 0, "place": 0,
                     "faults": 0} for b in bots}
    for line in lines:
        if line["status"] != "ok":
            continue
        for seat, name in enumerate(line["bots"]):
            row = rows[name]
            row["games"] += 1
            row["score"] += line["scores"][seat]
            row["place"] += line["places"][seat]
            row["faults"] += len(line["faults"][seat])
            if seat in line["winners"]:  # none in a lost Solitaire game: the deck won
                row["wins"] += 1 / len(line["winners"])
    out = []
    for row in rows.values():
        n = row["games"] or 1
        out.append({"bot": row["bot"], "games": row["games"], "wins": round(row["wins"], 4),
                    "mean_score": round(row["score"] / n, 2),
                    "mean_place": round(row["place"] / n, 3), "faults": row["faults"]})
    return out


def match_json(spec: MatchSpec, lines: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    info = find_game(spec.game)
    return {
        "game": spec.game,
        "rules": rules_to_json(info.rules(dict(spec.rules))),
        "seed": spec.seed,
        "players": len(spec.bots),
        "bots": bots_json(spec.bots),
        "games": [game_summary(line) for line in lines],
        "totals": totals(lines, spec.bots),
    }


def bots_json(bots: Sequence[BotEntry]) -> list[dict[str, Any]]:
    """Each bot's name in the results and how it was seated (`command`: null for built-ins)."""
    return [{"name": b.name, "spec": b.spec,
             "command": None if b.spec.strip().startswith("builtin:") else b.spec}
            for b in bots]
