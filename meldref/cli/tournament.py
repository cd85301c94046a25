"""`meldref tournament`: a round robin or gauntlet from a TOML file and flags."""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..bots import builtin_help
from ..engine.registry import DEFAULT_GAME, GAMES
from ..private import folder_problem
from ..protocol.records import ResultLine
from ..tournament.config import (
    TCP_EXPOSES,
    ConfigError,
    TournamentConfig,
    build_config,
    parse_pairs,
    range_problem,
    read_toml,
    with_announced_names,
)
from ..tournament.match import bots_json, preflight
from ..verdicts.tally import Tally
from .app import STOPS
from .common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    err,
    fail,
    out,
    refuse_overwriting_inputs,
    stop_on_signals,
)
from .limits import LIMIT_FLAGS, LimitFlags, warn_about, with_limit_flags
from .report import fitted, head_to_head_lines, print_fitted

if TYPE_CHECKING:  # the run's module is loaded when the command runs (scipy, for standings)
    from ..tournament.run import OpenTournament, TournamentRun

KEEP_LOGS_DEPRECATED = ("warning: --keep-logs is deprecated: --logs DIR keeps every bot's stderr "
                        "log in DIR, as it does for match and bot check (--logs OUT/logs: where "
                        "--keep-logs kept them)")
SEED_ON_ARGV = ("warning: --seed on the command line is visible to other processes on this "
                "machine via /proc (a bot could rebuild every deal); use the config file's "
                "`seed` for contests, or leave it out to draw one")


@with_limit_flags(*LIMIT_FLAGS)
def tournament(
    game: Annotated[str | None, typer.Argument(
        help=f"{', '.join(GAMES)} (default {DEFAULT_GAME}, or the CONFIG's).",
        show_default=False)] = None,
    config: Annotated[Path | None, typer.Argument(
        help="A TOML file (docs/tournaments.md); flags override it.",
        show_default=False)] = None,
    bot: Annotated[list[str] | None, typer.Option(
        "--bot", "-b", help=f"{builtin_help()}, or a command line; repeat.")] = None,
    old_game: Annotated[str | None, typer.Option(
        "--game", hidden=True, help="The old spelling of GAME.")] = None,
    players: Annotated[int | None, typer.Option("--players", "-n",
                                                help="Seats per table.")] = None,
    games: Annotated[int | None, typer.Option("--games", "-g",
                                              help="Games per table (pairing).")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j",
                                             help="Games played at once (processes).")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="round-robin or gauntlet "
                                            "(first vs rest).")] = None,
    duplicate: Annotated[bool | None, typer.Option(
        "--duplicate/--no-duplicate", help="Each deal in balanced seatings (default on).")
        ] = None,
    shared_deals: Annotated[bool | None, typer.Option(
        "--shared-deals/--no-shared-deals", help="Deal d the same at every table.")] = None,
    seed: Annotated[int | None, typer.Option(
        help="First deal's seed (default: drawn, kept).")] = None,
    rules: Annotated[list[str] | None, typer.Option(
        "--rules", "-r", help="A rule KEY=VALUE (spec/RULES.md); repeat.")] = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output folder; rerun with it to resume.")] = None,
    sprt: Annotated[str | None, typer.Option(
        help="Two bots: SPRT elo0,elo1[,alpha,beta].")] = None,
    rank_by: Annotated[str | None, typer.Option(
        "--rank-by", help="places (rating, default) or margin.")] = None,
    *,
    limits: LimitFlags,
    logs: Annotated[Path | None, typer.Option(
        help="Keep every bot's stderr log in DIR (default: OUT/logs, failed games').",
        metavar="DIR")] = None,
    keep_logs: Annotated[bool, typer.Option(
        "--keep-logs", hidden=True, help="Deprecated: --logs OUT/logs.")] = False,
    stop_after: Annotated[int | None, typer.Option(
        help="Play at most N games now (resume later).")] = None,
    cluster: Annotated[str | None, typer.Option(
        help="Play on dask: local:N or tls://HOST:PORT.")] = None,
    bot_folder: Annotated[Path | None, typer.Option(
        help="Start bot programs in this folder.")] = None,
    upload_bots: Annotated[bool | None, typer.Option(
        "--upload-bots/--no-upload-bots", help="Send --bot-folder to cluster workers.")
        ] = None,
    cluster_files: Annotated[str | None, typer.Option(
        help="Cluster files: shared, client or auto.")] = None,
    insecure_tcp: Annotated[bool | None, typer.Option(
        "--insecure-tcp", help="Accept a plain tcp:// --cluster (unsafe).")] = None,
    plan: Annotated[bool, typer.Option(
        "--plan", help="With --sprt: its expected length, power.")] = False,
    progress: Annotated[bool, typer.Option(help="A live progress bar.", show_default=False)
                        ] = True,
    positions: Annotated[Path | None, typer.Option(
        help="Deal d from DIR's d-th position (a book).")] = None,
    debug_log: Annotated[Path | None, typer.Option(
        help="Each bot's lines, timestamped, in DIR.")] = None,
    rating_interval: Annotated[int | None, typer.Option(
        help="Standings so far every N games.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON.")] = False,
) -> None:
    """Play a round robin or gauntlet; print the standings.

    Results are streamed to the output folder as games end: rerun the same command to resume.
    Every option in full: docs/commands.md#tournament (--cluster needs pip install
    'meldref[cluster]')."""
    game, config = _game_and_config(game, config, old_game)
    from ..tournament.run import (  # noqa: PLC0415 start-up: scipy (standings), not for --help
        StandingsInterrupted,
        run_tournament,
    )

    refuse_overwriting_inputs({"CONFIG": config, "--bot-folder": bot_folder},
                              {"--out": out_dir, "--logs": logs})
    if keep_logs:
        err.print(KEEP_LOGS_DEPRECATED, markup=False)
        if logs is not None:
            fail("--keep-logs and --logs: give --logs DIR alone")
    if seed is not None:
        err.print(SEED_ON_ARGV, markup=False)
    for flag, value in (("--stop-after", stop_after), ("--rating-interval", rating_interval)):
        if value is not None and (problem := range_problem(flag, value, 1)):
            fail(problem)
    if plan:
        _print_sprt_plan(sprt, as_json)
        return
    stop_on_signals()  # from here on bots may run: a signal must close them
    overrides = {
        "bots": bot or [], "game": game, "players": players, "games": games, "jobs": jobs,
        "format": fmt, "duplicate": duplicate, "shared-deals": shared_deals, "seed": seed,
        "sprt": sprt, "rank-by": rank_by,
        "out": None if out_dir is None else str(out_dir), "cluster": cluster,
        "bot-folder": None if bot_folder is None else str(bot_folder),
        "upload-bots": upload_bots, "cluster-files": cluster_files,
        "insecure-tcp": insecure_tcp, "limits": limits,
        "positions": None if positions is None else str(positions),
    }
    try:
        opened = _opened(config, overrides, rules or [], debug_log, logs)
    except ConfigError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted before the first game", EXIT_INTERRUPTED)
    try:  # a cluster's start-up check fails here, when the first games are due
        run = _run_with_progress(opened, run_tournament, stop_after,
                                 keep_logs or logs is not None, progress,
                                 rating_interval)
    except ConfigError as exc:
        fail(str(exc))
    except StandingsInterrupted as exc:
        fail(f"{exc}: {shlex.join(['meldref', *sys.argv[1:]])}", EXIT_INTERRUPTED)
    _print_tournament(run, opened.config, as_json)
    if run.stopped == "interrupted":
        err.print(f"interrupted: {run.missing} games missing; rerun the same command to resume")
        raise typer.Exit(EXIT_INTERRUPTED)
    if not all(r.ok for r in run.results):
        raise typer.Exit(EXIT_FAILED)


def _print_sprt_plan(sprt: str | None, as_json: bool = False) -> None:
    """`--plan`: what the SPRT `sprt` costs and how often it accepts H1 (Wald's
    approximations with the bounds' overshoot, verdicts.sprt.plan), on deal sets of two
    games without draws: at elo0, half-way and at elo1."""
    from ..verdicts.sprt import SprtSpec, SprtSpecError, plan  # noqa: PLC0415 start-up: scipy

    if sprt is None:
        fail("--plan: give the test with --sprt elo0,elo1[,alpha,beta]")
    try:
        spec = SprtSpec.parse(sprt)
    except SprtSpecError as exc:
        fail(f"--sprt: {exc}")
    plans = [plan(spec, elo) for elo in (spec.elo0, (spec.elo0 + spec.elo1) / 2, spec.elo1)]
    if as_json:
        sys.stdout.write(json.dumps({"plan": [p.to_json() for p in plans]}, indent=2) + "\n")
        return
    out.print(f"SPRT [{spec.elo0:g}, {spec.elo1:g}], alpha {spec.alpha:g} beta {spec.beta:g}, "
              "deal sets of 2 games:", markup=False)
    for each in plans:
        out.print(f"  {each.text()}", markup=False)


def _opened(config: Path | None, flags: Mapping[str, object], rules: list[str],
            debug_log: Path | None, logs: Path | None = None) -> OpenTournament:
    """The tournament of the CONFIG file and the flags (`--rules` as given; `--debug-log`
    and `--logs`: how this run is watched, not the tournament), checked, its bot programs started
    once each (a wrong command fails before any game; the standings show each bot's `id
    name`), then opened (`open_tournament`: the seed settled, the folder made); `ConfigError`
    saying what is wrong."""
    from ..tournament.run import (  # noqa: PLC0415 start-up: scipy (standings), not for --help
        cluster_missing,
        open_tournament,
    )

    data = read_toml(config) if config is not None else {}
    if config is not None and "seed" in data and _readable_by_others(config):
        err.print(f"warning: {config} holds the seed and other users can read it; "
                  f"chmod 600 it for contests", markup=False)
    cfg = build_config(data, {**flags, "rules": parse_pairs(rules)})
    cfg = dataclasses.replace(cfg, debug_log=debug_log, logs=_logs_elsewhere(cfg, logs))
    warn_about(cfg.limits)
    if cfg.cluster is not None and cfg.cluster.insecure_tcp:
        err.print(f"warning: --cluster {cfg.cluster.target}: {TCP_EXPOSES}", markup=False)
    problem = folder_problem(cfg.folder)  # before a bot starts: its logs would go there
    if problem or (cfg.cluster is not None and (problem := cluster_missing())):
        raise ConfigError(problem)
    if cfg.logs is not None and (problem := folder_problem(cfg.logs)):  # as `match --logs`
        raise ConfigError(f"--logs {cfg.logs}: {problem}")
    announced = preflight(cfg.plan.game, cfg.plan.bots, cfg.policy.startup_time,
                          cfg.logs_folder, cfg.process_limits,
                          None if cfg.bot_folder is None else str(cfg.bot_folder))
    return open_tournament(with_announced_names(cfg, announced))


def _game_and_config(game: str | None, config: Path | None,
                      old_game: str | None) -> tuple[str | None, Path | None]:
    """GAME and CONFIG as meant: one word that is no game's name is the CONFIG (the spelling
    before GAME came first: `meldref tournament t.toml`); `--game` is GAME's old spelling."""
    if game is not None and config is None and not _names_a_game(game):
        if not Path(game).exists() and Path(game).suffix != ".toml":
            fail(f"{game}: neither a game ({', '.join(GAMES)}) nor a configuration file")
        config = Path(game)
        game = None
    if old_game is not None:
        if game is not None and game != old_game:
            fail(f"the game is given twice: {game} and --game {old_game}")
        game = old_game
    return game, config


def _names_a_game(word: str) -> bool:
    """A game's name (or a game from outside, module:ATTR), not a file's."""
    return word in GAMES or (":" in word and not word.endswith(".toml")
                                  and not Path(word).exists())


def _logs_elsewhere(cfg: TournamentConfig, logs: Path | None) -> Path | None:
    """`--logs DIR` where it is not the output folder's own `logs/` (None: it is, or not
    given); `ConfigError` for a cluster, whose workers send each game's logs back into the
    output folder."""
    if logs is None or logs.resolve() == (cfg.folder / "logs").resolve():
        return None
    if cfg.cluster is not None:
        raise ConfigError(f"--logs {logs}: on a cluster the logs come back to "
                          f"{cfg.folder / 'logs'}; give that, or leave --logs out")
    return logs


def _readable_by_others(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & 0o044)
    except OSError:
        return False


def _run_with_progress(tournament: OpenTournament, run_tournament: Callable[..., TournamentRun],
                       stop_after: int | None, keep_logs: bool, show: bool,
                       interval: int | None = None) -> TournamentRun:
    plan = tournament.config.plan
    total = plan.table_count() * plan.games_per_table()
    console = err.console()
    so_far = RunningStandings([b.name for b in plan.bots], interval)
    if not console.is_terminal:  # a log file or a pipe: a line per game instead of a bar

        def logged(result: ResultLine, done: int, total: int) -> None:
            lines = [game_line(result, done, total)] if show else []
            for line in lines + so_far.add(result):
                console.print(line, markup=False)

        return run_tournament(tournament, stop_after=stop_after, keep_logs=keep_logs,
                              interruptible=STOPS.every_one_stops, on_result=logged)
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[note]}"),
                   console=console, disable=not show, transient=False)
    failed = 0

    def on_result(result: ResultLine, done: int, total: int) -> None:
        nonlocal failed
        failed += result.failed
        note = f"[red]{failed} failed[/red]" if failed else ""
        bar.update(task, completed=done, note=note)
        for line in so_far.add(result):  # above the bar, which stays at the bottom
            bar.console.print(line, markup=False, highlight=False)

    with bar:
        task = bar.add_task(f"{plan.game} {plan.format}", total=total, note="")
        run = run_tournament(tournament, on_result=on_result, stop_after=stop_after,
                             keep_logs=keep_logs, interruptible=STOPS.every_one_stops,
                             on_start=lambda done, _: bar.update(task, completed=done))
        bar.update(task, completed=len(run.results))
    return run


class RunningStandings:
    """`--rating-interval N` (fastchess's `-ratinginterval`, cutechess's score line): every N
    games played now, the standings of those games in a few lines -- wins, win rate, mean
    place, faults -- counted as the final standings count them (`Tally`); the ratings and
    their intervals are the final standings' (a fit per line would cost seconds)."""

    def __init__(self, bots: list[str], every: int | None) -> None:
        self.every, self.played, self.tally = every, 0, Tally(bots)

    def add(self, result: ResultLine) -> list[str]:
        """The lines to print after `result` (none between intervals)."""
        if self.every is None:
            return []
        self.played += 1
        if result.figures is not None:
            self.tally.add(result.bots, result.figures.outcome, result.figures.faults)
        if self.played % self.every:
            return []
        rows = sorted(self.tally.rows(), key=lambda r: (r.mean_place is None, r.mean_place))
        lines = [f"standings after {self.played} games played now:"]
        for k, row in enumerate(rows, 1):
            rate = "-" if row.win_rate is None else f"{100 * row.win_rate:.1f}%"
            place = "-" if row.mean_place is None else f"{row.mean_place:.2f}"
            lines.append(f"  {k}. {row.name}: {row.games} games, {row.wins:g} wins ({rate}), "
                         f"mean place {place}, {row.fault_count} faults")
        return lines


def game_line(result: ResultLine, done: int, total: int | None) -> str:
    """A finished game in one line, for logs: `game 3/12 t00-d0001-s00: greedy won (greedy 5,
    random 85)`, with its faults, or why it failed (`game 3 ...` when no total is known)."""
    head = f"game {done}{'' if total is None else f'/{total}'} {result.game_id}"
    if result.figures is None:
        return f"{head}: failed: {result.error}"
    bots, outcome = result.bots, result.figures.outcome
    winners = ", ".join(bots[s] for s in outcome.winners) or "nobody"
    scores = ", ".join(f"{b} {s}" for b, s in zip(bots, outcome.scores, strict=False))
    faults = sum(len(f) for f in result.figures.faults)
    return f"{head}: {winners} won ({scores})" + (f"; {faults} faults" if faults else "")


def _print_tournament(run: TournamentRun, cfg: TournamentConfig, as_json: bool) -> None:
    if as_json:
        data = {"folder": str(run.folder), "games": run.total, "played_now": run.played,
                "found_done": run.already_done, "missing": run.missing, "stopped": run.stopped,
                "bots": bots_json(cfg.plan.bots), **run.standings.to_json()}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    console = out.console()
    print_fitted(console, *fitted(run.standings, console))
    for line in head_to_head_lines(run.standings):
        out.print(line, markup=False)
    failures = run.folder / "failures.txt"
    out.print(f"{len(run.results)}/{run.total} games in {run.folder} "
              f"({run.played} played now, {run.already_done} found done)", markup=False)
    if failures.exists() and failures.stat().st_size:
        out.print(f"failures: {failures}", markup=False)
    if run.stopped == "sprt":
        out.print("stopped early: the SPRT decided")
