"""`meldref replay show | verify | stats | resume | position | html | serve | export`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from ..engine.game import JSON
from ..private import write_private_text
from ..protocol.seats import BotSpec
from ..replay.audit import verify
from ..replay.export import FORMATS, OBSERVATIONS, export
from ..replay.files import ReplayError, ReplayPathError, check_replay_file, replay_files
from ..replay.html import ViewerError
from ..replay.index import write_pages
from ..replay.positions import PositionFileError, position_at
from ..replay.show import ShowError, tell
from ..replay.stats import gather_stats
from ..replay.words import printable
from .common import (
    EXIT_FAILED,
    EXIT_USAGE,
    BotOpt,
    CertOpt,
    ForwardedHeaderOpt,
    KeyOpt,
    PublicHostOpt,
    TrustProxyOpt,
    err,
    fail,
    out,
    refuse_overwriting_inputs,
)
from .limits import LimitFlags, limits_or_fail, with_limit_flags
from .report import fit_labelled, match_tables, print_fitted, stats_table

replay_app = typer.Typer(no_args_is_help=True, add_completion=False,
                         help="Show, verify, count, resume, view, serve and export replays.")


def replay_exit_code(exc: Exception) -> int:
    """The exit code for a replay that cannot be used, the same from every command that reads
    one: 2 (usage) for a path that is not a replay file to read (missing, a folder, a FIFO or
    a device, unreadable), 1 (a check failed) for a file whose content does not check out
    (damaged, forged, cut where a whole game is needed)."""
    return EXIT_FAILED if isinstance(exc, ReplayError) else EXIT_USAGE


def _unusable(path: Path, exc: Exception) -> NoReturn:
    message = str(exc) if isinstance(exc, ReplayPathError) else f"{path}: {exc}"
    fail(printable(message), replay_exit_code(exc))


def _files(paths: list[Path]) -> list[Path]:
    """The replay files under `paths`; exit 2 if a path cannot be read as replays or none is
    found (nothing to do is a usage error)."""
    try:
        files = list(replay_files(paths))
    except ReplayPathError as exc:
        fail(str(exc))
    if not files:
        fail("no replay files found")
    return files


@replay_app.command("show", short_help="Tell a recorded game move by move.")
def replay_show(
    path: Annotated[Path, typer.Argument(help="A replay file.")],
    seat: Annotated[int | None, typer.Option(
        help="Tell the game as this seat saw it (its hand before each of its moves; other "
        "hands hidden).")] = None,
    hand: Annotated[int | None, typer.Option(help="Only this hand (round).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the account as JSON: its "
                                          "lines, and the problem of a bad file.")] = False,
) -> None:
    """Tell a recorded game move by move. Exit 1 if the replay is damaged (what could be
    read is told), 2 if PATH is not a replay file or --seat/--hand are not in it."""
    try:
        telling = tell(check_replay_file(path), seat, hand)
    except ShowError as exc:
        fail(str(exc))
    except (ReplayError, ReplayPathError) as exc:
        _unusable(path, exc)
    if as_json:  # json.dumps escapes what a terminal would read as a control sequence
        sys.stdout.write(json.dumps({
            "path": str(path), "seat": seat, "hand": hand, "lines": telling.lines,
            "problem": None if telling.problem is None else str(telling.problem),
            "damaged": telling.damaged}, indent=2) + "\n")
    else:
        for line in telling.lines:  # names and details from the file: no escape sequence
            out.print(printable(line), markup=False, highlight=False, soft_wrap=True)
    if telling.damaged:
        raise typer.Exit(EXIT_FAILED)


@replay_app.command("verify", short_help="Check replays by playing them again.")
def replay_verify(
    paths: Annotated[list[Path], typer.Argument(help="Replay files (or folders of them).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print each file's verdict as "
                                          "JSON.")] = False,
) -> None:
    """Re-simulate replays from their seed and actions and check every claim of their results;
    exit 1 naming the first bad line (2 for a path that is not a replay file)."""
    code = 0
    verdicts: list[dict[str, JSON]] = []
    for path in _files(paths):
        try:
            done = verify(path)
        except (ReplayError, ReplayPathError) as exc:
            code = max(code, replay_exit_code(exc))
            verdicts.append({"path": str(path), "ok": False, "problem": str(exc)})
            if not as_json:
                err.print(f"[red]FAIL[/red] {escape(printable(f'{path}: {exc}'))}")
            continue
        verdicts.append({"path": str(path), "ok": True, "actions": done.actions,
                         "faults": done.faults, "winners": done.winners})
        if not as_json:
            winners = ", ".join(done.winners) or "none (the deck won)"
            out.print(printable(f"ok {path}: {done.actions} actions, {done.faults} faults, "
                                f"winner {winners}"), markup=False)
    if as_json:
        sys.stdout.write(json.dumps({"verified": sum(v["ok"] for v in verdicts),
                                     "files": verdicts}, indent=2) + "\n")
    if code:
        raise typer.Exit(code)


@replay_app.command("stats", short_help="Count games, wins, scores and faults.")
def replay_stats(
    paths: Annotated[list[Path], typer.Argument(help="Replay files or folders of them.")],
    check: Annotated[bool, typer.Option("--verify", help="Verify each replay first; "
                                        "failing ones are listed, not counted.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Figures over replays: games, wins per seat and bot, mean scores, faults, hands. Exit 1
    if a file could not be read (the others are counted)."""
    stats = gather_stats(_files(paths), check)
    data = stats.to_json()
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    else:
        seats = ", ".join(f"seat {w['seat']} {w['wins']}" for w in data["wins_by_seat"]) or "-"
        out.print(f"{data['games']} games ({data['finished']} finished), {data['decisions']} "
                  f"decisions, {data['hands']} hands (mean {_or_dash(data['mean_hands'])})",
                  markup=False, soft_wrap=False)
        out.print(f"wins by seat: {seats}", markup=False, soft_wrap=False)
        console = out.console()
        print_fitted(console, *fit_labelled(
            console, [row["bot"] for row in data["bots"]],
            lambda labels: [stats_table(data["bots"], labels)]))
    for problem in data["unreadable"]:  # on stderr with --json too: the rest was counted
        err.print(printable(f"unreadable: {problem}"), markup=False)
    for name in data["truncated"]:
        err.print(printable(f"truncated: {name}"), markup=False)
    if stats.unusable_paths:
        raise typer.Exit(EXIT_USAGE)
    if stats.games == 0 or stats.unreadable:
        raise typer.Exit(EXIT_FAILED)


def _or_dash(value: object) -> str:
    """A figure, or "-" where there is none (a mean over no finished game)."""
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


@replay_app.command("resume", short_help="Play a game on from action --at.")
@with_limit_flags("move_time", "startup_time")
def replay_resume(
    path: Annotated[Path, typer.Argument(help="A replay file (a truncated one too).")],
    at: Annotated[int, typer.Option(help="Replay this many actions (0 = from the deal), "
                                    "then let the bots play on.")],
    bot: BotOpt = None,
    replay: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Where the continued game's replay goes (default: next to PATH, "
        "<name>-resumed-at-N.jsonl).")] = None,
    *,
    limits: LimitFlags,
    trust_replay_bots: Annotated[bool, typer.Option(
        "--trust-replay-bots", help="Without --bot, run the bot commands the replay's header "
        "names (printed first). A replay from someone else can name any program: give --bot "
        "instead.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Continue a recorded game from action --at with the given bots. Without --bot, only a
    game of built-in bots continues with its own; a replay's bot commands run only with
    --trust-replay-bots."""
    # The referee's run machinery (bot processes, their keeper, the tournament's settings):
    # this subcommand's alone, a fifth of every other replay command's start-up.
    from ..tools.resume import resume  # noqa: PLC0415 start-up: the referee, for resume only
    from ..tournament.match import (  # noqa: PLC0415 start-up: the referee, for resume only
        check_output_file,
        game_summary,
    )

    refuse_overwriting_inputs({"PATH": path}, {"--out": replay})
    settings = limits_or_fail(limits)
    try:
        specs = [BotSpec.parse(s) for s in bot or []]
        if replay is not None:
            check_output_file(replay, "--out")
    except ValueError as exc:
        fail(str(exc))
    try:
        done = resume(check_replay_file(path), at, specs, replay, settings,
                      trust_replay_bots=trust_replay_bots,
                      announce=lambda line: err.print(printable(line), markup=False))
    except (ReplayError, ReplayPathError) as exc:
        _unusable(path, exc)
    except (ValueError, OSError) as exc:
        fail(printable(f"{path}: {exc}"))
    if as_json:
        summary = {**game_summary(done.line), "resumed_from": str(path), "at": at,
                   "diverged_at": done.diverged_at}
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        console = out.console()
        print_fitted(console, *match_tables([done.line], f"{path.name} resumed at action {at}",
                                            [], console))
        out.print(f"replay: {done.replay}", markup=False)
    if done.diverged_at is not None:
        err.print(f"warning: the game left the recorded actions at action {done.diverged_at} "
                  "(a seat failed before the resume point)")
    if not done.line.ok:
        raise typer.Exit(EXIT_FAILED)


@replay_app.command("position", short_help="Write the position at action --at.")
def replay_position(
    path: Annotated[Path, typer.Argument(help="A replay file (a truncated one too).")],
    at: Annotated[int, typer.Option(help="The position after this many actions (0 = the "
                                    "start).")],
    output: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write the position file here (default: print it).")] = None,
    expect: Annotated[bool, typer.Option(
        "--expect", help="Add the action the replay played there as `expect` (for "
        "`meldref bot test`).")] = False,
) -> None:
    """Write the position at action --at of a replay as a position file (spec/POSITION.md),
    to play on with `meldref match --position` or to test a bot with `meldref bot test`."""
    refuse_overwriting_inputs({"PATH": path}, {"--out": output})
    try:
        text = position_at(check_replay_file(path), at, expect)
    except PositionFileError as exc:
        fail(printable(str(exc)))
    except (ReplayError, ReplayPathError) as exc:
        _unusable(path, exc)
    if output is None:
        sys.stdout.write(text)
        return
    try:
        write_private_text(output, text)
    except OSError as exc:
        fail(f"--out {output}: {exc.strerror or exc}")
    out.print(f"position: {output}", markup=False)


@replay_app.command("html", short_help="Write viewer pages (HTML).")
def replay_html(
    path: Annotated[Path, typer.Argument(help="A replay file, or a folder of them (a "
                                         "tournament's).")],
    output: Annotated[Path | None, typer.Option(
        "--out", "-o", help="The page to write (a replay; default: PATH with .html), or the "
        "folder of pages and index.html (a folder; default: PATH/viewer).")] = None,
    seat: Annotated[int | None, typer.Option(
        help="Only what this seat saw: the other hands face down, and absent from the page.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the pages written as "
                                          "JSON.")] = False,
) -> None:
    """Write a replay as one self-contained HTML page (a folder: a page per game and an index)."""
    refuse_overwriting_inputs({"PATH": path}, {"--out": output})
    try:
        with _page_progress(path.is_dir()) as on_page:
            written = write_pages(path, output, seat, on_page)
    except ViewerError as exc:
        fail(printable(str(exc)))
    except (ReplayError, ReplayPathError) as exc:
        _unusable(path, exc)
    except OSError as exc:
        fail(f"cannot write the pages: {exc.strerror or exc}")
    if as_json:
        sys.stdout.write(json.dumps({
            "pages": [str(p) for p in written.pages],
            "index": None if written.index is None else str(written.index),
            "problems": list(written.problems)}, indent=2) + "\n")
    elif written.index is not None:
        out.print(f"{len(written.pages)} pages, index: {written.index}", markup=False)
    else:
        out.print(f"page: {written.pages[0]}", markup=False)
    for problem in written.problems:
        err.print(printable(f"warning: {problem}"), markup=False)
    if written.problems:
        raise typer.Exit(EXIT_FAILED)


@contextmanager
def _page_progress(folder: bool) -> Iterator[Callable[[Path, int, int], None]]:
    """What `replay html` tells of each page of a folder: a bar in a terminal, else a line per
    page (a log); nothing for one page."""
    console = err.console()
    if not folder:
        yield lambda replay, done, total: None
        return
    if not console.is_terminal:
        yield lambda replay, done, total: console.print(f"page {done}/{total} {replay}",
                                                         markup=False)
        return

    with Progress(TextColumn("pages"), BarColumn(), MofNCompleteColumn(),
                  console=console) as bar:
        task = bar.add_task("pages", total=None)
        yield lambda replay, done, total: bar.update(task, completed=done, total=total)


@replay_app.command("serve", short_help="Serve a folder's games to a browser.")
def replay_serve(
    folder: Annotated[Path, typer.Argument(help="A folder of replays (a tournament's).")],
    port: Annotated[int, typer.Option(help="The port (0: any free one).")] = 8765,
    host: Annotated[str, typer.Option(
        help="The address to listen on. The replays hold every hand: keep the default "
        "(this machine only) unless every one who can reach the address may see them.")
    ] = "127.0.0.1",
    public_host: PublicHostOpt = None,
    trust_proxy: TrustProxyOpt = None,
    forwarded_header: ForwardedHeaderOpt = None,
    cert: CertOpt = None,
    key: KeyOpt = None,
) -> None:
    """Serve a folder's games in a local web page: results, standings, each game in the viewer.
    Behind a reverse proxy or on TLS as `contest serve` is (the flags, or MELDREF_SERVE_*)."""
    from ..replay.serve import (  # noqa: PLC0415 starlette, uvicorn: 140 modules, for serve only
        ReplayServer,
        ServeError,
        is_loopback,
        serve_options,
    )

    try:
        options = serve_options(host, port, public_hosts=public_host or (),
                                trusted_proxies=trust_proxy or (),
                                forwarded_header=forwarded_header, cert=cert, key=key)
        server = ReplayServer(folder, options=options)
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


@replay_app.command("export", short_help="Write every decision as a table.")
def replay_export(
    paths: Annotated[list[Path], typer.Argument(help="Replay files (or folders of them).")],
    output: Annotated[Path | None, typer.Option(
        "--out", "-o", help="The file to write (a new or regular file; required).")] = None,
    fmt: Annotated[str, typer.Option(
        "--format", help="parquet (needs pyarrow: pip install 'meldref[envs]'), csv or "
        "jsonl.")] = "parquet",
    observation: Annotated[str, typer.Option(
        help="What each row holds of what the seat saw: vector (the environments' encoding, "
        "docs/research.md), view (its view as JSON text) or none.")] = "vector",
    mask: Annotated[bool, typer.Option(
        "--mask", help="Add a mask column: 1 at each legal action of the game's action "
        "space.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what was written as "
                                          "JSON.")] = False,
) -> None:
    """Write every decision of the replays as a table: one row per decision, with the seat's
    observation, the legal actions, the action taken, its time and the game's result. Files
    that do not check out are skipped and named (exit 1); the rest are written."""
    if fmt not in FORMATS:
        fail(f"--format {fmt!r}: one of {', '.join(FORMATS)}")
    if observation not in OBSERVATIONS:
        fail(f"--observation {observation!r}: one of {', '.join(OBSERVATIONS)}")
    if output is None:  # optional to click only: --output, its old name, may give it
        fail("missing option --out FILE: the table to write")
    files = _files(paths)
    if output.exists() and not output.is_file():
        fail(f"--out {output}: not a regular file")
    if output.exists() and any(output.samefile(f) for f in files):
        fail(f"--out {output} is one of the replays read")
    try:
        done = export(files, output, fmt, observation, mask=mask)  # type: ignore[arg-type]
    except ReplayError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"--out {output}: {exc.strerror or exc}")
    for path, why in done.skipped:
        err.print(f"skipped {path}: {why}", markup=False)
    if as_json:
        sys.stdout.write(json.dumps({
            "out": str(output), "rows": done.rows, "games": done.files,
            "skipped": [{"path": str(p), "problem": why} for p, why in done.skipped]},
            indent=2) + "\n")
    else:
        out.print(f"{done.rows} decisions from {done.files} games: {output}", markup=False)
    if done.skipped:
        raise typer.Exit(EXIT_FAILED)
