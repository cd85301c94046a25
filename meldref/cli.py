"""The `meldref` command line: matches, tournaments, replays, a person at the table, bot checks.

Exit codes (README.md): 0 done; 1 a check failed (replay verify, bot check, a game the referee
could not finish); 2 the command cannot run (usage, configuration, rule options, a bot that
cannot start, an output folder that cannot be written, no replay files to read), nothing was
played; 130 interrupted (a tournament resumes when rerun).
"""

from __future__ import annotations

import json
import random
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from .config import ConfigError, build_config, parse_pairs, read_toml
from .engine.game import GAME_NAMES

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Referee for Phase 10, Five Crowns and Five Crowns Solitaire bots.",
)
replay_app = typer.Typer(no_args_is_help=True, help="Show, verify, count and resume replays.")
bot_app = typer.Typer(no_args_is_help=True, help="Check a bot program against the protocol.")
app.add_typer(replay_app, name="replay")
app.add_typer(bot_app, name="bot")


class _Screen:
    """A rich console made when printing, for whatever stdout/stderr is then (tests swap them);
    120 columns when not a terminal, so tables in logs and pipes are not squeezed."""

    def __init__(self, stderr: bool = False) -> None:
        self.stderr = stderr

    def console(self) -> Console:
        stream = sys.stderr if self.stderr else sys.stdout
        width = None if stream.isatty() else 120
        return Console(file=stream, width=width, highlight=False, soft_wrap=True)

    def print(self, *objects: Any, **options: Any) -> None:
        self.console().print(*objects, **options)


out = _Screen()
err = _Screen(stderr=True)

BotOpt = Annotated[
    list[str] | None,
    typer.Option("--bot", "-b", help='A seat: "builtin:greedy", "builtin:random" or a command '
                 'line such as "python3 bots/random_bot.py". Repeat once per seat.'),
]
RulesOpt = Annotated[
    list[str] | None,
    typer.Option("--rules", "-r", help="A rule option KEY=VALUE (e.g. phases-to-win=3). Repeat."),
]
GameArg = Annotated[str, typer.Argument(help=f"The game: {', '.join(GAME_NAMES)}.")]


def stop_on_sigterm() -> None:
    """`kill PID` stops a run like Ctrl-C does: bots closed, results kept, exit code 130."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    err.print(f"[bold red]error:[/bold red] {escape(message)}")
    raise typer.Exit(code)


MoveTimeOpt = Annotated[float | None, typer.Option(help="Seconds per decision.")]
StartupTimeOpt = Annotated[float | None, typer.Option(
    help="Seconds a bot program has to start and say ready.")]
TimeBankOpt = Annotated[float | None, typer.Option(
    help="Seconds of time bank each seat starts a game with (default 5).")]
IncrementOpt = Annotated[float | None, typer.Option(
    help="Seconds added to the bank after every decision (default 0).")]
MaxBankOpt = Annotated[float | None, typer.Option(
    help="The bank never grows over this many seconds (default: no cap).")]
OnFailureOpt = Annotated[str | None, typer.Option(
    help="After a bot's final failure: forfeit (out, ranked last; default) or autoplay "
    "(the referee plays its turns, ranked normally).")]
MemoryOpt = Annotated[int | None, typer.Option(
    help="Cap each bot program's address space at this many MiB (RLIMIT_AS; default none): "
    "going over it is a crash.")]
ProcessesOpt = Annotated[int | None, typer.Option(
    help="Cap the processes of the user running the bots (RLIMIT_NPROC counts ALL of that "
    "user's processes, so only with a separate bot user; default none).")]
FileSizeOpt = Annotated[int | None, typer.Option(
    help="The largest file a bot program may write, in MiB (RLIMIT_FSIZE; default none).")]
HintsOpt = Annotated[bool | None, typer.Option(
    "--hints/--no-hints", help="Send the legal actions (`legal` lines) with every request "
    "(default on); --no-hints makes bots build their own actions.")]


def _limits(move_time: float | None, startup_time: float | None, *,
            time_bank: float | None = None, increment: float | None = None,
            max_bank: float | None = None, on_failure: str | None = None,
            hints: bool | None = None, memory_mb: int | None = None,
            max_processes: int | None = None, file_size_mb: int | None = None) -> dict[str, Any]:
    """The `[limits]` keys given on the command line (None: not given)."""
    given = {"move-time": move_time, "startup-time": startup_time, "time-bank": time_bank,
             "increment": increment, "max-bank": max_bank, "on-failure": on_failure,
             "legal-hints": hints, "memory-mb": memory_mb, "max-processes": max_processes,
             "file-size-mb": file_size_mb}
    return {key: value for key, value in given.items() if value is not None}


# ----------------------------------------------------------------------------------------------
# match


@app.command()
def match(
    game: GameArg = "phase10",
    bot: BotOpt = None,
    players: Annotated[int | None, typer.Option(
        "--players", "-n", help="Seats of built-in greedy bots when no --bot is given "
        "(or copies of a single --bot).")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the first game (game k: seed + k); "
                                                  "random when left out. For research and "
                                                  "debugging: other processes can read it "
                                                  "via /proc.")] = None,
    games: Annotated[int, typer.Option("--games", "-g", help="Games to play; the seats rotate "
                                       "one place each game.")] = 1,
    rules: RulesOpt = None,
    replay: Annotated[Path | None, typer.Option(
        help="Write the replay to PATH (one game) or PATH/game-0001.jsonl... (several).")] = None,
    move_time: MoveTimeOpt = None,
    startup_time: StartupTimeOpt = None,
    time_bank: TimeBankOpt = None,
    increment: IncrementOpt = None,
    max_bank: MaxBankOpt = None,
    on_failure: OnFailureOpt = None,
    hints: HintsOpt = None,
    memory_mb: MemoryOpt = None,
    max_processes: ProcessesOpt = None,
    file_size_mb: FileSizeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON "
                                          "(deterministic: no times).")] = False,
) -> None:
    """Play one or more games between bots and print who won."""
    from .match import build_match, match_json, preflight, run_match, with_announced_names
    from .report import match_table, totals_table

    if seed is None:
        seed = random.SystemRandom().randrange(1_000_000)
    try:
        limits = _limits(move_time, startup_time, time_bank=time_bank, increment=increment,
                         max_bank=max_bank, on_failure=on_failure, hints=hints,
                         memory_mb=memory_mb, max_processes=max_processes,
                         file_size_mb=file_size_mb)
        spec = build_match(game, bot or [], players, seed, games, parse_pairs(rules or []),
                           limits, replay)
        announced = preflight(spec.game, spec.bots, startup_time or 10.0, limits=spec.limits)
        spec = with_announced_names(spec, announced)  # results show each bot's `id name`
    except ConfigError as exc:
        fail(str(exc))
    began = time.perf_counter()
    stop_on_sigterm()
    try:
        lines = run_match(spec)
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)
    if as_json:
        sys.stdout.write(json.dumps(match_json(spec, lines), indent=2) + "\n")
    else:
        title = f"{spec.game} seed {spec.seed}: {len(lines)} game(s)"
        out.print(match_table(lines, title))
        if len(lines) > 1:
            out.print(totals_table(match_json(spec, lines)["totals"]))
        out.print(f"wall time {time.perf_counter() - began:.2f} s")
    if any(line["status"] != "ok" for line in lines):
        raise typer.Exit(EXIT_FAILED)


# ----------------------------------------------------------------------------------------------
# tournament


SEED_ON_ARGV = ("warning: --seed on the command line is visible to other processes on this "
                "machine via /proc (a bot could rebuild every deal); use the config file's "
                "`seed` for contests, or leave it out to draw one")


@app.command()
def tournament(
    config: Annotated[Path | None, typer.Argument(
        help="A TOML file (see README); flags given here override it.")] = None,
    bot: BotOpt = None,
    game: Annotated[str | None, typer.Option(help="The game (default phase10).")] = None,
    players: Annotated[int | None, typer.Option("--players", "-n",
                                                help="Seats per table.")] = None,
    games: Annotated[int | None, typer.Option("--games", "-g",
                                              help="Games per table (pairing).")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j",
                                             help="Games played at once (processes).")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="round-robin or gauntlet "
                                            "(the first bot against all the others).")] = None,
    duplicate: Annotated[bool | None, typer.Option(
        "--duplicate/--no-duplicate", help="Replay each deal with the bots rotated through "
        "the seats (default on).")] = None,
    seed: Annotated[int | None, typer.Option(
        help="Seed of the first deal (default: the config's, else drawn at random and kept in "
        "the output folder). Visible to every process via /proc: not for contests.")] = None,
    rules: RulesOpt = None,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output folder (default tournaments/<game>-<fingerprint>); rerun "
        "with the same folder to resume.")] = None,
    sprt: Annotated[str | None, typer.Option(
        help="Two bots: stop when the SPRT elo0,elo1[,alpha,beta] decides.")] = None,
    move_time: MoveTimeOpt = None,
    startup_time: StartupTimeOpt = None,
    time_bank: TimeBankOpt = None,
    increment: IncrementOpt = None,
    max_bank: MaxBankOpt = None,
    on_failure: OnFailureOpt = None,
    hints: HintsOpt = None,
    memory_mb: MemoryOpt = None,
    max_processes: ProcessesOpt = None,
    file_size_mb: FileSizeOpt = None,
    keep_logs: Annotated[bool, typer.Option(
        help="Keep every bot's stderr log, not only those of failed games.")] = False,
    stop_after: Annotated[int | None, typer.Option(
        help="Play at most this many games now, then stop (resume later).")] = None,
    progress: Annotated[bool, typer.Option(help="Show a live progress bar.")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print the standings as JSON.")] = False,
) -> None:
    """Play a round robin or gauntlet, streaming results to disk; print standings."""
    from .config import with_announced_names
    from .match import preflight
    from .private import folder_problem
    from .tournament import check_folder, prepare_folder, run_tournament, settle_seed

    if seed is not None:
        err.print(SEED_ON_ARGV, markup=False)
    try:
        data = read_toml(config) if config is not None else {}
        if config is not None and "seed" in data and _readable_by_others(config):
            err.print(f"warning: {config} holds the seed and other users can read it; "
                      f"chmod 600 it for contests", markup=False)
        overrides = {
            "bots": bot or [], "game": game, "players": players, "games": games, "jobs": jobs,
            "format": fmt, "duplicate": duplicate, "seed": seed, "out": out_dir, "sprt": sprt,
            "rules": parse_pairs(rules or []),
            "limits": _limits(move_time, startup_time, time_bank=time_bank,
                              increment=increment, max_bank=max_bank, on_failure=on_failure,
                              hints=hints, memory_mb=memory_mb, max_processes=max_processes,
                              file_size_mb=file_size_mb),
        }
        cfg = build_config(data, overrides)
        problem = folder_problem(cfg.folder)  # before a bot starts: its logs would go there
        if problem:
            raise ConfigError(problem)
        startup = float(cfg.limits.get("startup-time", 10.0))
        announced = preflight(cfg.plan.game, cfg.plan.bots, startup, cfg.folder / "logs",
                              cfg.limits)
        cfg = with_announced_names(cfg, announced)  # standings show each bot's `id name`
        cfg = settle_seed(cfg)  # no seed given: drawn now, or the one this folder already used
        check_folder(cfg)
        prepare_folder(cfg)  # made now: a folder that cannot be written stops before any game
    except ConfigError as exc:
        fail(str(exc))
    stop_on_sigterm()
    run = _run_with_progress(cfg, run_tournament, stop_after, keep_logs, progress)
    _print_tournament(run, cfg, as_json)
    if run.stopped == "interrupted":
        err.print(f"interrupted: {run.missing} games missing; rerun the same command to resume")
        raise typer.Exit(EXIT_INTERRUPTED)
    if any(r.get("status") != "ok" for r in run.results):
        raise typer.Exit(EXIT_FAILED)


def _readable_by_others(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & 0o044)
    except OSError:
        return False


def _run_with_progress(cfg: Any, run_tournament: Any, stop_after: int | None, keep_logs: bool,
                       show: bool) -> Any:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    total = len(cfg.plan.jobs())
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[note]}"),
                   console=err.console(), disable=not show, transient=False)
    failed = 0

    def on_result(result: dict[str, Any], done: int, total: int) -> None:
        nonlocal failed
        failed += result.get("status") != "ok" or any(result.get("faults") or [])
        note = f"[red]{failed} failed[/red]" if failed else ""
        bar.update(task, completed=done, note=note)

    with bar:
        task = bar.add_task(f"{cfg.plan.game} {cfg.plan.format}", total=total, note="")
        run = run_tournament(cfg, on_result=on_result, stop_after=stop_after,
                             keep_logs=keep_logs,
                             on_start=lambda done, _: bar.update(task, completed=done))
        bar.update(task, completed=len(run.results))
    return run


def _print_tournament(run: Any, cfg: Any, as_json: bool) -> None:
    from .match import bots_json
    from .report import head_to_head_lines, standings_table

    if as_json:
        data = {"folder": str(run.folder), "games": run.total, "played_now": run.played,
                "found_done": run.already_done, "missing": run.missing, "stopped": run.stopped,
                "bots": bots_json(cfg.plan.bots), **run.standings.to_json()}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    out.print(standings_table(run.standings))
    for line in head_to_head_lines(run.standings):
        out.print(line, markup=False)
    failures = run.folder / "failures.txt"
    out.print(f"{len(run.results)}/{run.total} games in {run.folder} "
              f"({run.played} played now, {run.already_done} found done)", markup=False)
    if failures.exists() and failures.stat().st_size:
        out.print(f"failures: {failures}", markup=False)
    if run.stopped == "sprt":
        out.print("stopped early: the SPRT decided")


# ----------------------------------------------------------------------------------------------
# replay


@replay_app.command("show")
def replay_show(
    path: Annotated[Path, typer.Argument(help="A replay file.")],
    seat: Annotated[int | None, typer.Option(
        help="Tell the game as this seat saw it (its hand before each of its moves; other "
        "hands hidden).")] = None,
    hand: Annotated[int | None, typer.Option(help="Only this hand (round).")] = None,
) -> None:
    """Tell a recorded game move by move."""
    from .replay import ReplayError
    from .replay_show import ShowError, tell

    try:
        telling = tell(path, seat, hand)
    except ShowError as exc:
        fail(str(exc))
    except (ReplayError, OSError) as exc:
        fail(f"{path}: {exc}", EXIT_FAILED)
    for line in telling.lines:
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    if telling.problem and "truncated" not in telling.problem:
        raise typer.Exit(EXIT_FAILED)


@replay_app.command("verify")
def replay_verify(
    paths: Annotated[list[Path], typer.Argument(help="Replay files (or folders of them).")],
) -> None:
    """Re-simulate replays from their seed and actions; exit 1 naming the first bad line."""
    from .replay import ReplayError, verify
    from .replay_show import replay_files

    bad = 0
    files = list(replay_files(paths))
    if not files:  # nothing to check is a usage error, as for `replay stats`
        fail("no replay files found")
    for path in files:
        try:
            done = verify(path)
        except ReplayError as exc:
            bad += 1
            err.print(f"[red]FAIL[/red] {escape(f'{path}: {exc}')}")
            continue
        except OSError as exc:
            bad += 1
            err.print(f"[red]FAIL[/red] {escape(f'{path}: {exc.strerror or exc}')}")
            continue
        outcome = done.result.get("outcome", {})
        out.print(f"ok {path}: {done.actions} actions, {done.faults} faults, winners "
                  f"{outcome.get('winners')}", markup=False)
    if bad:
        raise typer.Exit(EXIT_FAILED)


@replay_app.command("stats")
def replay_stats(
    paths: Annotated[list[Path], typer.Argument(help="Replay files or folders of them.")],
    check: Annotated[bool, typer.Option("--verify", help="Verify each replay first; "
                                        "failing ones are listed, not counted.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Figures over replays: games, wins per seat and bot, mean scores, faults, hands."""
    from rich.table import Table

    from .replay_show import gather_stats, replay_files

    if not any(True for _ in replay_files(paths)):
        fail("no replay files found")
    stats = gather_stats(paths, check)
    data = stats.to_json()
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        out.print(f"{data['games']} games ({data['finished']} finished), {data['decisions']} "
                  f"decisions, {data['hands']} hands (mean {_or_dash(data['mean_hands'])}), "
                  f"wins by seat {data['wins_by_seat']}", markup=False)
        table = Table(title="bots", title_justify="left")
        for column in ("bot", "games", "wins", "mean score", "faults"):
            table.add_column(column)
        for row in data["bots"]:
            faults = " ".join(f"{k}:{v}" for k, v in row["faults"].items()) or "-"
            table.add_row(escape(row["bot"]), str(row["games"]), str(row["wins"]),
                          _or_dash(row["mean_score"]), faults)
        out.print(table)
        for problem in data["unreadable"]:
            err.print(f"unreadable: {problem}", markup=False)
        for name in data["truncated"]:
            err.print(f"truncated: {name}", markup=False)
    if stats.games == 0 or stats.unreadable:
        raise typer.Exit(EXIT_FAILED)


def _or_dash(value: Any) -> str:
    """A figure, or "-" where there is none (a mean over no finished game)."""
    return "-" if value is None else str(value)


@replay_app.command("resume")
def replay_resume(
    path: Annotated[Path, typer.Argument(help="A replay file (a truncated one too).")],
    at: Annotated[int, typer.Option(help="Replay this many actions (0 = from the deal), "
                                    "then let the bots play on.")],
    bot: BotOpt = None,
    replay: Annotated[Path | None, typer.Option(
        help="Where the continued game's replay goes (default: next to PATH, "
        "<name>-resumed-at-N.jsonl).")] = None,
    move_time: MoveTimeOpt = None,
    startup_time: StartupTimeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Continue a recorded game from action --at with the given bots (default: its own)."""
    from .match import game_summary
    from .replay import ReplayError
    from .report import match_table
    from .resume import resume

    try:
        done = resume(path, at, bot or [], replay, _limits(move_time, startup_time))
    except (ReplayError, ValueError, OSError) as exc:
        fail(f"{path}: {exc}")
    if as_json:
        summary = {**game_summary(done.line), "resumed_from": str(path), "at": at,
                   "diverged_at": done.diverged_at}
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        out.print(match_table([done.line], f"{path.name} resumed at action {at}"))
        out.print(f"replay: {done.replay}", markup=False)
    if done.diverged_at is not None:
        err.print(f"warning: the game left the recorded actions at action {done.diverged_at} "
                  "(a seat failed before the resume point)")
    if done.line.get("status") != "ok":
        raise typer.Exit(EXIT_FAILED)


# -- replay html / replay serve: the viewer (meldref/replay_html.py, replay_index.py,
# -- replay_serve.py) ---------------------------------------------------------------- begin --


@replay_app.command("html")
def replay_html(
    path: Annotated[Path, typer.Argument(help="A replay file, or a folder of them (a "
                                         "tournament's).")],
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="The page to write (a replay; default: PATH with .html), or the "
        "folder of pages and index.html (a folder; default: PATH/viewer).")] = None,
    seat: Annotated[int | None, typer.Option(
        help="Only what this seat saw: the other hands face down, and absent from the page.")
    ] = None,
) -> None:
    """Write a replay as one self-contained HTML page (a folder: a page per game and an index)."""
    from .replay_html import ViewerError
    from .replay_index import write_pages

    try:
        written = write_pages(path, output, seat)
    except ViewerError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the pages: {exc.strerror or exc}")
    if written.index is not None:
        out.print(f"{len(written.pages)} pages, index: {written.index}", markup=False)
    else:
        out.print(f"page: {written.pages[0]}", markup=False)
    for problem in written.problems:
        err.print(f"warning: {problem}", markup=False)
    if written.problems:
        raise typer.Exit(EXIT_FAILED)


@replay_app.command("serve")
def replay_serve(
    folder: Annotated[Path, typer.Argument(help="A folder of replays (a tournament's).")],
    port: Annotated[int, typer.Option(help="The port (0: any free one).")] = 8765,
    host: Annotated[str, typer.Option(
        help="The address to listen on. The replays hold every hand: keep the default "
        "(this machine only) unless every one who can reach the address may see them.")
    ] = "127.0.0.1",
) -> None:
    """Serve a folder's games in a local web page: results, standings, each game in the viewer."""
    from .replay_serve import ReplayServer, ServeError, is_loopback

    try:
        server = ReplayServer(folder, host, port)
    except ServeError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    if not is_loopback(host):
        err.print(f"warning: {host} may be reachable from other machines; the replays hold "
                  "every hand", markup=False)
    out.print(f"serving {folder} at {server.url} (Ctrl-C stops)", markup=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass  # stopping the server is how it ends
    finally:
        server.server_close()


# -- replay html / replay serve ------------------------------------------------------ end --


# ----------------------------------------------------------------------------------------------
# play


@app.command()
def play(
    game: GameArg = "phase10",
    bot: BotOpt = None,
    seat: Annotated[int, typer.Option(help="Your seat (0 plays first after the dealer's "
                                      "left... as the deal falls).")] = 0,
    players: Annotated[int | None, typer.Option(
        "--players", "-n", help="Seats in all, when no --bot is given (the others are "
        "built-in greedy bots).")] = None,
    seed: Annotated[int | None, typer.Option(help="The deal's seed (random if left out).")] = None,
    rules: RulesOpt = None,
    replay: Annotated[Path | None, typer.Option(help="Write the game's replay here.")] = None,
) -> None:
    """Play a seat yourself in the terminal against bots."""
    from .human import HumanSeat, QuitGame
    from .match import DEFAULT_SEATS, preflight
    from .protocol.referee import MatchPolicy
    from .runner import close_seats, make_seats, play_recorded
    from .schedule import BotEntry, bot_entries

    if seed is None:
        seed = random.SystemRandom().randrange(1_000_000)
    try:
        from .engine.game import find_game

        info = find_game(game)
        specs = list(bot or [])
        if not specs:
            specs = ["builtin:greedy"] * ((players or DEFAULT_SEATS[info.name]) - 1)
        if not 0 <= seat <= len(specs):
            raise ConfigError(f"--seat {seat}: seats are 0..{len(specs)}")
        rule_set = info.rules(parse_pairs(rules or []))
        info.check_setup(rule_set, len(specs) + 1)
        bots = bot_entries(specs, None, preflight(info.name, bot_entries(specs), 10.0))
    except (ConfigError, KeyError, ValueError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    entries = [*bots[:seat], BotEntry("you", "human"), *bots[seat:]]
    console = out.console()
    human = HumanSeat(info, rule_set, len(entries), seed, seat, console,
                      read=lambda prompt: console.input(prompt))
    day = 24 * 3600.0
    policy = MatchPolicy(move_time=day, first_move_time=day, startup_time=30.0,
                         illegal_retries=5)
    seats: list[Any] = []
    try:
        others = make_seats(info, [b for b in entries if b.spec != "human"], seed,
                            [None] * (len(entries) - 1))
        seats = [*others[:seat], human, *others[seat:]]
        play_recorded(info, rule_set, entries, seats, seed, policy, replay, also=human.on_record)
    except (QuitGame, KeyboardInterrupt):
        err.print("you left the game")
    finally:
        close_seats([s for s in seats if s is not human])
    if replay is not None:
        out.print(f"replay: {replay}", markup=False)


# ----------------------------------------------------------------------------------------------
# bot check


@bot_app.command("check")
def bot_check(
    command: Annotated[str, typer.Argument(help='The bot\'s command line, quoted: '
                                           '"python3 bots/random_bot.py".')],
    game: Annotated[list[str] | None, typer.Option(
        "--game", help="A game to check (repeat); default: the games it claims with "
        "`id games ...`, else all.")] = None,
    startup_time: Annotated[float, typer.Option(help="Seconds to say ready.")] = 10.0,
    move_time: Annotated[float, typer.Option(help="Seconds per decision.")] = 1.0,
    first_move_time: Annotated[float, typer.Option(
        help="Seconds for the first decision of a game.")] = 5.0,
    logs: Annotated[Path | None, typer.Option(help="Folder for the bot's stderr logs.")] = None,
    memory_mb: MemoryOpt = None,
    max_processes: ProcessesOpt = None,
    file_size_mb: FileSizeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checklist as JSON.")] = False,
) -> None:
    """Check a bot program: handshake, ping, flushing, quit, and legal full games of every
    decision type. Exit 0 only if every check passes."""
    from rich.table import Table

    from .botcheck import check_bot
    from .runner import make_process_limits

    try:
        rlimits = make_process_limits({"memory-mb": memory_mb, "max-processes": max_processes,
                                       "file-size-mb": file_size_mb})
    except ValueError as exc:
        fail(str(exc))
    games = []
    for name in game or []:
        try:
            from .engine.game import find_game

            games.append(find_game(name).name)
        except (KeyError, ImportError) as exc:
            fail(str(exc))
    marks = {"pass": "[green]PASS[/green]", "fail": "[red]FAIL[/red]",
             "warn": "[yellow]WARN[/yellow]"}

    def show(check: Any) -> None:
        if not as_json and sys.stderr.isatty():
            err.print(f"{marks[check.status]} {check.name}", highlight=False)

    report = check_bot(command, games, startup_time, move_time, logs, show, first_move_time,
                       rlimits)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        table = Table(title=escape(f"bot check: {command}"), title_justify="left")
        for column in ("check", "result", "why"):
            table.add_column(column)
        for check in report.checks:
            table.add_row(escape(check.name), marks[check.status], escape(check.detail))
        out.print(table)
        verdict = "[green]all checks pass[/green]" if report.passed else "[red]not conformant[/red]"
        out.print(verdict)
    if not report.passed:
        raise typer.Exit(EXIT_FAILED)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
