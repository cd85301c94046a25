"""`meldref contest`: a contest that runs for weeks (init, submit, run, status, retire, final,
serve); the work is done in `meldref.contest`."""

from __future__ import annotations

import itertools
import json
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

# What `contest --help` imports anyway (the protocol, the games, pydantic's settings): the
# contest's store, ladder, board and server wait for the command that uses them (sqlite3,
# numpy and scipy, starlette: `meldref contest --help` 0.54 s, 2.0 s with the board's numpy).
from .. import contest
from ..contest import authors
from ..contest.ladder.events import GamePlayed, RunEvent, Suspended, Unseated
from ..contest.settings import ContestSettings
from ..contest.uploads import DEFAULTS, ServiceSettings, UploadError, post_submission
from ..engine.game import JSON, RuleOptionError, UnknownGameError
from ..engine.registry import DEFAULT_GAME, GAMES
from ..protocol.records import ResultLine
from ..protocol.sandbox import sandbox_problem
from ..web.options import ServeError, is_loopback
from .app import STOPS
from .common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    RulesOpt,
    err,
    fail,
    out,
    stop_on_signals,
)
from .limits import CONTEST_FLAGS, LimitFlags, with_limit_flags

if TYPE_CHECKING:  # the CLI imports the contest's store only when a command runs (start-up)
    from ..contest.board import BoardRow
    from ..contest.store import ContestStore

contest_app = typer.Typer(no_args_is_help=True, help="Run a contest: submissions, a ladder, "
                          "a live leaderboard.")
DirArg = Annotated[Path, typer.Argument(help="The contest folder.")]
JobsOpt = Annotated[int, typer.Option("--jobs", "-j",
                                      help="Games played at once (processes).")]
CmdOpt = Annotated[str | None, typer.Option(
    help='How to start it, run in its folder ("python3 main.py"); default for a file: by its '
    "suffix (python3 bot.py), else ./bot.")]
BuildOpt = Annotated[str | None, typer.Option(
    help='A build step, run once in its folder before the checks, in the sandbox, with the '
    'build limits ("make", "gcc -O2 -o bot bot.c").')]
ClusterOpt = Annotated[str | None, typer.Option(
    help="Play on a dask cluster: local:N or tcp://HOST:PORT (the contest folder at the same "
    "path on every worker).")]


@contest_app.command("init")
@with_limit_flags(*CONTEST_FLAGS)
def init(
    folder: DirArg,
    game: Annotated[str | None, typer.Argument(
        help=f"The game: {DEFAULT_GAME} (default), or another of two seats or more "
        f"({', '.join(GAMES)}).", show_default=False)] = None,
    game_option: Annotated[str | None, typer.Option(
        "--game", hidden=True, help="The old spelling of GAME.")] = None,
    players: Annotated[int | None, typer.Option("--players", "-n",
                                                help="Seats per table.")] = None,
    rules: RulesOpt = None,
    sandbox: Annotated[bool, typer.Option(
        "--sandbox/--no-sandbox", help="Run every bot program in the sandbox (default on; "
        "off only with --no-sandbox).")] = True,
    placement: Annotated[int, typer.Option(
        help="Deal sets a new version plays against opponents spread over the ranking.")] = 6,
    suspend_after: Annotated[int, typer.Option(
        help="Failing games (crash, time-out, illegal...) among a version's last 10 that "
        "suspend it.")] = 3,
    min_share: Annotated[float, typer.Option(
        help="Matchmaking: each version in play sits in at least this share of its fair "
        "share (seats / versions) of the ladder's recent deal sets (10 x the versions in "
        "play).")] = 0.5,
    pair_cap: Annotated[float, typer.Option(
        help="Matchmaking: no two versions sit together in more than this share of the "
        "recent deal sets while another pair can play.")] = 0.25,
    upload_mb: Annotated[int, typer.Option(
        help="Authors' uploads: the largest, in MiB.")] = DEFAULTS.upload_mb,
    archive_entries: Annotated[int, typer.Option(
        help="Authors' uploads: files and folders in an archive, at most."
    )] = DEFAULTS.archive_entries,
    expanded_mb: Annotated[int, typer.Option(
        help="Authors' uploads: what an archive expands to (and a built program's folder "
        "holds), at most, in MiB.")] = DEFAULTS.expanded_mb,
    uploads_per_hour: Annotated[int, typer.Option(
        help="Authors' uploads: per author per hour, refused ones included."
    )] = DEFAULTS.uploads_per_hour,
    build_seconds: Annotated[int, typer.Option(
        help="A submission's build step: its time, in seconds.")] = DEFAULTS.build_seconds,
    build_memory_mb: Annotated[int, typer.Option(
        help="A submission's build step: its memory, in MiB.")] = DEFAULTS.build_memory_mb,
    log_kb_per_game: Annotated[int, typer.Option(
        help="Each bot's stderr kept per game (its end), in KiB.")] = DEFAULTS.log_kb_per_game,
    log_mb_per_bot: Annotated[int, typer.Option(
        help="Each bot's stderr kept over all its games (the newest), in MiB."
    )] = DEFAULTS.log_mb_per_bot,
    log_days: Annotated[int, typer.Option(
        help="Days a game's stderr is kept.")] = DEFAULTS.log_days,
    public_replays: Annotated[bool, typer.Option(
        "--public-replays/--private-replays", help="Every game's replay (every hand) on the "
        "public pages while the contest runs, or only to the authors of its bots "
        "(default).")] = DEFAULTS.public_replays,
    *,
    limits: LimitFlags,
) -> None:
    """Make a contest folder; its settings are fixed from now on."""
    from ..contest.store import ContestStore  # noqa: PLC0415 start-up: sqlite3, replay files
    from ..tournament.config import parse_pairs  # noqa: PLC0415 start-up: the tournament's

    if game is not None and game_option is not None and game != game_option:
        fail(f"GAME {game} and --game {game_option}: give the game once")
    game = game or game_option or DEFAULT_GAME
    try:
        settings = ContestSettings.checked(game, players, parse_pairs(rules or []), limits,
                                           sandbox, placement, suspend_after,
                                           secrets.randbits(48), min_share, pair_cap)
        service = ServiceSettings(upload_mb, archive_entries, expanded_mb, uploads_per_hour,
                                  build_seconds, build_memory_mb, log_kb_per_game,
                                  log_mb_per_bot, log_days, public_replays).checked()
        store = ContestStore.create(folder, settings, service)
    except (ValueError, UnknownGameError, RuleOptionError) as exc:
        fail(str(exc))
    store.close()
    out.print(f"contest {folder}: {settings.summary()}", markup=False)
    out.print(f"limits every bot plays under: {_limits(settings.limits_in_force())}",
              markup=False)
    out.print(f"authors: {service.summary()}", markup=False)
    problem = _sandbox_problem(settings.sandbox)
    if problem is not None:  # made all the same: the folder may be run on another machine
        err.print(f"note: the contest's sandbox cannot run here: {problem}. submit, run and "
                  "final refuse on this machine until it can (or make the contest with "
                  "--no-sandbox)", markup=False)


@contest_app.command("submit")
def submit(
    folder: DirArg,
    path: Annotated[Path, typer.Argument(help="The bot program: a folder or a single file.")],
    name: Annotated[str, typer.Option(help="The bot's name (its versions are numbered).")],
    cmd: CmdOpt = None,
    build: BuildOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Copy a bot program into the contest, build it (--build), check it, and add it as a new
    version."""
    from ..contest.build import BuildFailed  # noqa: PLC0415 start-up: the sandboxed build
    from ..contest.submit import (  # noqa: PLC0415 start-up: the bot check's games
        Submission,
        SubmissionRefused,
    )
    from ..contest.submit import submit as do_submit  # noqa: PLC0415 start-up: as above

    store = _open_ready(folder)
    try:
        version, _ = do_submit(store, Submission.of(path, name, cmd, build))
    except BuildFailed as exc:
        fail(str(exc), EXIT_FAILED)
    except SubmissionRefused as exc:
        if as_json:
            sys.stdout.write(json.dumps({"accepted": False, "error": str(exc),
                                         "check": exc.report.to_json()}, indent=2) + "\n")
        else:
            for check in exc.report.checks:
                out.print(f"{check.status.upper():4} {check.name}: {check.detail}",
                          markup=False)
        fail(str(exc), EXIT_FAILED)
    except ValueError as exc:
        fail(str(exc))
    finally:
        store.close()
    if as_json:
        sys.stdout.write(json.dumps({"accepted": True, "bot": version.bot,
                                     "version": version.number}) + "\n")
    else:
        out.print(f"{version.label} joins the ladder ({version.folder})", markup=False)


author_app = typer.Typer(no_args_is_help=True, help="The contest's remote authors: a token "
                         "each, to upload their bots (`contest upload`, POST /api/submissions).")
contest_app.add_typer(author_app, name="author")
TOKEN_ENV = "MELDREF_TOKEN"


@author_app.command("add")
def author_add(folder: DirArg,
               name: Annotated[str, typer.Argument(help="The author's name.")]) -> None:
    """Add an author; prints their token, once (only its hash is kept)."""
    store = _open(folder)
    try:
        author, token = authors.add(store, name)
    except ValueError as exc:
        fail(str(exc))
    finally:
        store.close()
    err.print(f"author {author.name} added; their token (shown this once, give it to them "
              "alone):", markup=False)
    sys.stdout.write(token + "\n")


@author_app.command("list")
def author_list(folder: DirArg,
                as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False
                ) -> None:
    """The authors, their bots, and whether their token still answers."""
    store = _open(folder)
    try:
        rows = [(a, authors.bots_of(store, a)) for a in authors.every(store)]
    finally:
        store.close()
    if as_json:
        listed = [{**a.to_json(), "bots": bots} for a, bots in rows]
        sys.stdout.write(json.dumps(listed, indent=2) + "\n")
        return
    for author, bots in rows:
        state = "revoked" if author.revoked is not None else "active"
        out.print(f"{author.name}: {state}; bots: {', '.join(bots) or 'none'}", markup=False)
    if not rows:
        out.print("no authors (add one: meldref contest author add FOLDER NAME)", markup=False)


@author_app.command("revoke")
def author_revoke(folder: DirArg,
                  name: Annotated[str, typer.Argument(help="The author.")]) -> None:
    """Revoke an author's token: it answers no request from now on (their versions stay in
    play: `contest retire` retires one)."""
    store = _open(folder)
    try:
        authors.revoke(store, name)
    except ValueError as exc:
        fail(str(exc))
    finally:
        store.close()
    out.print(f"author {name}: token revoked", markup=False)


@contest_app.command("upload")
def upload(
    url: Annotated[str, typer.Argument(help="The contest's address (http://HOST:PORT).")],
    path: Annotated[Path, typer.Argument(
        help="The bot program: a single file, or a .zip / .tar.gz of its folder.")],
    name: Annotated[str, typer.Option(help="The bot's name (its versions are numbered).")],
    token: Annotated[str | None, typer.Option(
        envvar=TOKEN_ENV, help=f"Your author's token (better from ${TOKEN_ENV}: a command "
        "line is visible to the machine's other users).", show_default=False)] = None,
    cmd: CmdOpt = None,
    build: BuildOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
) -> None:
    """Upload a bot program to a contest served elsewhere (an author's command)."""
    if not token:
        fail(f"no token: give --token or set {TOKEN_ENV} (the organiser gave you one)")
    try:
        status_code, answer = post_submission(url, path, name, token, cmd, build)
    except UploadError as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps(answer, indent=2) + "\n")
    if status_code != 201:
        fail(f"{name}: refused (HTTP {status_code}): {answer.get('error', answer)}",
             EXIT_FAILED)
    if not as_json:
        out.print(f"{answer['name']} v{answer['version']} joins the ladder", markup=False)


@contest_app.command("run")
def run(
    folder: DirArg,
    jobs: JobsOpt = 1,
    cluster: ClusterOpt = None,
    games: Annotated[int | None, typer.Option(
        "--games", "-g", help="Stop after this many games (whole deal sets).")] = None,
    hours: Annotated[float | None, typer.Option(
        min=0.0, help="Stop making deal sets after this many hours.")] = None,
    wait: Annotated[bool | None, typer.Option(
        "--wait/--no-wait", help="With fewer versions in play than seats: wait for "
        "submissions (the default without --games and --hours) or stop (the default with "
        "either).", show_default=False)] = None,
) -> None:
    """Play the ladder until stopped (Ctrl-C, SIGTERM) or the games or hours are done;
    rerun to continue."""
    contest.one_blas_thread()  # before the ladder imports numpy
    from ..contest.ladder.run import play_ladder  # noqa: PLC0415 start-up: numpy, scipy
    from ..tournament.config import range_problem  # noqa: PLC0415 start-up: the tournament's

    for problem in (range_problem("--jobs", jobs, 1, 256),
                    None if games is None else range_problem("--games", games, 1)):
        if problem is not None:
            fail(problem)
    _open_ready(folder, cluster).close()
    stop_on_signals()

    waiting, game_played = False, _game_printer()

    def on_event(event: RunEvent) -> None:
        nonlocal waiting
        game_played(event)
        if isinstance(event, Suspended):
            err.print(f"{event.version}: {event.reason}", markup=False)
        elif isinstance(event, Unseated) and event.waits and not waiting:
            err.print(f"waiting for submissions: {event.text()} (Ctrl-C to stop)",
                      markup=False)
        elif isinstance(event, Unseated) and not event.waits:
            err.print(f"stopping: {event.text()}; submit more, or run with --wait to wait "
                      "for them", markup=False)
        waiting = isinstance(event, Unseated) and event.waits

    try:
        result = play_ladder(folder, jobs, cluster, games, hours, on_event, wait)
    except ValueError as exc:
        _refused_or_interrupted(exc)
    for line in result.repair.lines():
        err.print(line, markup=False)
    out.print(f"{result.played} games played, {result.deal_sets} deal sets finished in "
              f"{result.seconds:.1f} s ({result.stopped})", markup=False)
    if result.stopped == "interrupted":
        err.print("interrupted: the games in flight were discarded; rerun to continue")
        raise typer.Exit(EXIT_INTERRUPTED)


def _refused_or_interrupted(exc: ValueError) -> NoReturn:
    """A run or final that ended in a `ValueError`: what it says (exit 2), unless a stop
    signal came first. A signal that lands in the ratings' fit becomes one: choix catches
    everything around its solver and raises "stationary distribution could not be computed"
    (a SIGTERM in `contest run` exited 2 with that line in 1 run of 12, not 130)."""
    if STOPS.received:
        err.print("interrupted: the games in flight were discarded; rerun to continue")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    fail(str(exc))


@contest_app.command("status")
def status(folder: DirArg,
           as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False
           ) -> None:
    """The leaderboard: rank, bot, version, rating with its 95% interval, its ranks' 95%
    interval and chances of first and of the top k (as the pages), games, faults; what is
    running and what is queued."""
    from ..contest.board import chance_columns, leaderboard  # noqa: PLC0415 start-up: numpy

    store = _open(folder)
    try:
        board = leaderboard(store)
        service = store.service
    finally:
        store.close()
    if as_json:
        shown = {**board.to_json(), "service": service.to_json()}
        sys.stdout.write(json.dumps(shown, indent=2) + "\n")
        return
    table = Table(title=f"{board.game} ladder", title_justify="left")
    for column in ("#", "bot", "version", "rating", "95% CI", *chance_columns(board.top_k),
                   "games", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for rank, row in board.ranked():
        table.add_row(str(rank), escape(row.version.bot), f"v{row.version.number}",
                      *_rating(row), *row.chance_cells(), str(row.games), str(row.faults))
    out.print(table)
    for row in board.out_of_play:
        out.print(f"{row.version.label}: {row.version.state} ({row.version.reason})",
                  markup=False)
    running = ", ".join(f"{gid} ({' / '.join(bots)})" for gid, bots in board.running)
    out.print(f"run: {'playing' if board.run else 'stopped'}; running: {running or 'none'}; "
              f"queued: {board.queued}; played: {board.played}", markup=False)
    out.print(f"authors: {service.summary()}", markup=False)


def _limits(values: dict[str, JSON]) -> str:
    """`move-time 1, ..., memory-mb 1024, no-network true`: as a flag or `[limits]` key takes
    each (none: no cap)."""
    def shown(value: JSON) -> str:
        if isinstance(value, bool) or value is None:
            return {True: "true", False: "false", None: "none"}[value]
        return f"{value:g}" if isinstance(value, float) else str(value)

    return ", ".join(f"{key} {shown(value)}" for key, value in values.items())


def _rating(row: BoardRow) -> tuple[str, str]:
    if row.rating is None:
        return "-", "-"
    return f"{row.rating:+.0f}", escape(row.interval_text(".."))


@contest_app.command("retire")
def retire(folder: DirArg,
           name: Annotated[str, typer.Argument(help="The bot whose version in play retires.")]
           ) -> None:
    """Stop scheduling a bot's version in play; it keeps its record."""
    store = _open(folder)
    try:
        found = [v for v in store.in_play() if v.bot == name]
        if not found:
            fail(f"{name}: no version of this bot is in play")
        store.set_state(found[0].id, "retired", "retired by the organiser")
        store.drop_deal_sets_of(found[0].id)
    finally:
        store.close()
    out.print(f"{found[0].label} retired", markup=False)


@contest_app.command("final")
def final(
    folder: DirArg,
    top: Annotated[int, typer.Option(min=2, help="The top K versions of the ladder.")],
    deal_sets: Annotated[int, typer.Option(min=1, help="Deal sets per table.")] = 2,
    jobs: JobsOpt = 1,
    cluster: ClusterOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """A closing round robin of the top K versions on fresh deal sets; its standings beside
    the ladder's. Rerun to resume it."""
    contest.one_blas_thread()  # before the final imports numpy
    from ..contest.final import play_final  # noqa: PLC0415 start-up: numpy, scipy (one thread)
    from .report import standings_table  # noqa: PLC0415 start-up: the standings' statistics

    _open_ready(folder, cluster).close()
    stop_on_signals()
    try:
        result = play_final(folder, top, deal_sets, jobs, cluster, _game_printer())
    except ValueError as exc:
        _refused_or_interrupted(exc)
    if as_json:
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
    else:
        out.print(standings_table(result.report, "final"))
        for row in result.ladder:
            out.print(f"ladder #{row['ladder_rank']}: {row['bot']} ({row['rating']})",
                      markup=False)
    if result.stopped == "interrupted":
        raise typer.Exit(EXIT_INTERRUPTED)


@contest_app.command("serve")
def serve(
    folder: DirArg,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free one).")] = 8766,
    public_host: Annotated[list[str] | None, typer.Option(
        "--public-host", help="A host name the server answers as too: the one a reverse "
        "proxy passes on (contest.example.org, with :PORT if not the scheme's default); "
        "repeat for more.", show_default=False)] = None,
    trust_proxy: Annotated[list[str] | None, typer.Option(
        "--trust-proxy", help="A reverse proxy's address or network (127.0.0.1, "
        "10.0.0.0/8) whose --forwarded-header names the client (for the uploads' audit and "
        "its logs); repeat for more.", show_default=False)] = None,
    forwarded_header: Annotated[str | None, typer.Option(
        help="The header a trusted proxy names the client in [default: X-Forwarded-For].",
        show_default=False)] = None,
    cert: Annotated[Path | None, typer.Option(
        help="Serve HTTPS directly: the certificate (PEM).", show_default=False)] = None,
    key: Annotated[Path | None, typer.Option(
        help="... and its private key (PEM), unless in --cert.", show_default=False)] = None,
) -> None:
    """The leaderboard as a live web page, a page per bot, every game in the viewer, and the
    authors' API and pages (uploads behind their tokens)."""
    from ..contest.serve.server import (  # noqa: PLC0415 start-up: starlette, numpy
        ContestServer,
        contest_options,
    )

    _open(folder).close()
    try:
        options = contest_options(folder, host, port, public_hosts=public_host or (),
                                  trusted_proxies=trust_proxy or (),
                                  forwarded_header=forwarded_header, cert=cert, key=key)
        server = ContestServer(folder, options=options)
    except ServeError as exc:
        fail(str(exc))
    except OSError as exc:  # the port taken, the address not this machine's
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
    if not is_loopback(host):
        err.print(f"warning: {host} may be reachable from other machines; the replays hold "
                  "every hand", markup=False)
    out.print(f"serving {folder} at {server.url} (Ctrl-C to stop)", markup=False)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def _game_printer() -> Callable[[RunEvent], None]:
    """A line on stderr per finished game, as a tournament writes off a terminal (a contest
    runs for weeks with no total to draw a bar against): `game 12 ds000003-s01: alpha v2 won
    (alpha v2 5, bravo v1 85)`; the run's other events go unsaid."""
    count = itertools.count(1)

    def played(event: RunEvent) -> None:
        if isinstance(event, GamePlayed):
            err.print(_with_faults(event.line, next(count)), markup=False)
    return played


def _with_faults(result: ResultLine, done: int) -> str:
    """`game_line`, and whose the faults were: `...; 1 faults (crasher v1: crashed)`."""
    from .tournament import game_line  # noqa: PLC0415 start-up: the tournament's command

    line = game_line(result, done, None)
    if result.figures is None:
        return line
    whose = [f"{bot}: {', '.join(sorted({str(f.outcome) for f in faults}))}"
             for bot, faults in zip(result.bots, result.figures.faults, strict=False) if faults]
    return f"{line} ({'; '.join(whose)})" if whose else line


def _sandbox_problem(on: bool) -> str | None:
    """Why a contest's sandbox (when `on`) cannot run on this machine, or None."""
    return sandbox_problem() if on else None


def _open_ready(folder: Path, cluster: str | None = None) -> ContestStore:
    """`_open`, then exit 2 saying why when the contest's sandbox cannot run here, where its
    checks and games would start no bot (a cluster's workers elsewhere, `tcp://`, need it
    there, not here)."""
    store = _open(folder)
    here = cluster is None or cluster.startswith("local:")
    problem = _sandbox_problem(store.settings.sandbox) if here else None
    if problem is not None:
        store.close()
        fail(f"the contest's sandbox cannot run here: {problem}")
    return store


def _open(folder: Path) -> ContestStore:
    """The contest's store, checked on open (mended where no run holds it); exit 2 if none."""
    from ..contest.store import (  # noqa: PLC0415 start-up: sqlite3, replay files
        ContestStore,
        RunLock,
    )

    try:
        store = ContestStore.open(folder)
    except ValueError as exc:
        fail(str(exc))
    lock = RunLock(folder)
    if lock.try_take():
        try:
            for line in store.repair().lines():
                err.print(line, markup=False)
        finally:
            lock.release()
    return store
