"""The `meldref` command line: matches, tournaments, replays, a person at the table, bot checks.

Each command lives in a module of its own (`match`, `tournament`, `replay`, `play`, `bot`) that
parses its flags into values and hands them to the layer that does the work.

Exit codes (README.md): 0 done; 1 a check failed (replay verify, bot check, a game the referee
could not finish); 2 the command cannot run (usage, configuration, rule options, a bot that
cannot start, an output folder that cannot be written, no replay files to read), nothing was
played; 130 interrupted (a tournament resumes when rerun).

Signals (`StopSignals`): from the first thing `main` does, Ctrl-C, SIGTERM and SIGHUP stop a
command as Ctrl-C does, and no later one makes it die by the signal or print a traceback.
"""

from __future__ import annotations

import atexit
import contextlib
import difflib
import importlib
import os
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Annotated, Final, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:  # typer's own click (typer._click), which its classes are made of
    from typer._click import Command, Context

from .. import __version__
from ..build import describe

EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
EXIT_INTERRUPTED: Final = 130
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """How Ctrl-C (SIGINT), `kill PID` (SIGTERM) and a closed terminal (SIGHUP) end a command.

    The first raises `KeyboardInterrupt`, as Ctrl-C does: the command stops in its own way
    (bots closed, results kept, exit code 130; one that does not catch it exits 130 through
    typer, or `main`). A later one calls `take`'s `hurry` (kill every bot still running at
    once, not after its graces) and raises nothing, except in work that is safe to cut short
    anywhere (`every_one_stops`): raised while the stop runs, it lands where it may, and in
    the standard library's own clean-up (`Condition.wait`'s `finally`, under the pool's
    `wait`) it left a lock released twice: a `RuntimeError` traceback and exit code 1. Once
    `main` is done they are ignored: Python puts the default handlers back as it exits, and a
    second SIGTERM then killed the process (rc -15 in 3 runs of 10 in issue 43), or ran the
    handler in an exit handler (a `KeyboardInterrupt` traceback)."""

    def __init__(self) -> None:
        self.received = 0
        self.over = False
        self.cut_short = False  # in `every_one_stops`
        self.hurry: Callable[[], object] | None = None

    def take(self, hurry: Callable[[], object] | None = None) -> None:
        """Handle the stop signals from now on, a command starting: its first one stops it,
        a later one calls `hurry`. One ignored when meldref started stays ignored: SIGHUP
        under `nohup`, SIGINT in a job a shell started in the background (as Python itself
        leaves SIGINT)."""
        self.received, self.over, self.hurry = 0, False, hurry
        for number in STOP_SIGNALS:
            if signal.getsignal(number) is not signal.SIG_IGN:
                signal.signal(number, self._arrived)

    def ignore(self) -> None:
        """The command is over (its exit code settled): ignore the stop signals."""
        self.over = True
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)

    @contextlib.contextmanager
    def every_one_stops(self) -> Iterator[None]:
        """In the block a later signal raises too: for work that may take long and is safe to
        cut short anywhere (a tournament's standings: computation, a file written whole).
        An error that leaves the block after a signal raised in it is that interruption: a
        library may have turned it into its own (choix's `statdist` catches everything
        around its solver, and raises `ValueError`)."""
        self.cut_short, before = True, self.received
        try:
            yield
        except Exception:
            if self.received > before:
                raise KeyboardInterrupt from None
            raise
        finally:
            self.cut_short = False

    def _arrived(self, signum: int, frame: object) -> None:
        self.received += 1
        if self.over:
            return
        if self.received > 1 and self.hurry is not None:
            self.hurry()
        if self.received == 1 or self.cut_short:
            raise KeyboardInterrupt


STOPS = StopSignals()

# The commands by name: the module and the function (or the group of subcommands) in it, and
# the line `meldref --help` shows (the function's docstring's first line, tests/test_cli_help.py
# checks). A command's module is imported only when that command runs or shows its help: the
# engines, the referee and the statistics cost more to import than typer itself (start-up,
# bench/bench_startup.py).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "match": ("match", "match", "Play one or more games between bots and print who won."),
    "tournament": ("tournament", "tournament", "Play a round robin or gauntlet; print the "
                   "standings."),
    "replay": ("replay", "replay_app", "Show, verify, count, resume, view, serve and export "
               "replays."),
    "play": ("play", "play", "Play a seat yourself in the terminal against bots."),
    "bot": ("bot", "bot_app", "Check a bot program against the protocol."),
    "contest": ("contest", "contest_app", "Run a contest: submissions, a ladder, a live "
                "leaderboard."),
}


class LazyCommands(TyperGroup):
    """The group of `COMMANDS`: each listed from its line, imported when it is resolved."""

    def list_commands(self, ctx: Context) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx)
                            if name not in COMMANDS)]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        # Only listed (the group's help): a stand-in with the command's line.
        return typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name][2])

    def resolve_command(self, ctx: Context, args: list[str],
                        ) -> tuple[str | None, Command | None, list[str]]:
        if args and args[0] in COMMANDS and args[0] not in self.commands:
            self.add_command(load_command(args[0]), args[0])
        names = self.list_commands(ctx)
        if args and not args[0].startswith("-") and args[0] not in names:
            close = difflib.get_close_matches(args[0], names)  # typer's own sees none loaded
            if close:
                ctx.fail(f"No such command {args[0]!r}. Did you mean "
                         f"{', '.join(map(repr, close))}?")
        return super().resolve_command(ctx, args)


def load_command(name: str) -> Command:
    """The click command of `COMMANDS[name]`, its module imported now."""
    module, attribute, _ = COMMANDS[name]
    found = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
    if isinstance(found, typer.Typer):
        command = typer.main.get_command(found)
    else:
        single = typer.Typer(add_completion=False)
        single.command(name)(found)
        command = typer.main.get_command(single)
    command.name = name
    with_output_aliases(command)
    plain_help(command)
    return command


def plain_help(command: Command) -> None:
    """Give `command` and its subcommands click's plain help, as wide as the terminal: rich's
    boxes gave the flags' `--no-...` forms a column of their own and left the words a third
    of 80 columns (`tournament --help` took 240 lines; plain, 76)."""
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)
    if isinstance(command, TyperCommand | TyperGroup):  # what typer builds, every one of them
        command.rich_markup_mode = None
    command.context_settings = {**(command.context_settings or {}),
                                "max_content_width": 10_000}
    command.context_class = _terminal_wide(command.context_class)


_WIDE: Final[dict[type[Context], type[Context]]] = {}  # each context class, made wide once


def _terminal_wide(context: type[Context]) -> type[Context]:
    """`context` with help as wide as the terminal (COLUMNS) says, also where click would
    force 80 columns (its test runner's): a help read whole is one line per option."""
    if context not in _WIDE:
        _WIDE[context] = _widened(context)
    return _WIDE[context]


def _widened(context: type[Context]) -> type[Context]:
    base = context.formatter_class

    class Formatter(base):  # type: ignore[valid-type,misc]
        def __init__(self, indent_increment: int = 2, width: int | None = None,
                     max_width: int | None = None) -> None:
            if width is None:
                width = max(min(shutil.get_terminal_size().columns, max_width or 80) - 2, 50)
            super().__init__(indent_increment, width, max_width)

    return type(f"Wide{context.__name__}", (context,), {"formatter_class": Formatter})


# The output flag is `--out/-o` on every command that writes a file or a folder; the names it
# had before (`--replay` on match, play and replay resume, `--output` on tournament and replay
# html, position and export) are still read, and shown nowhere: scripts keep working.
OUTPUT_ALIASES: Final = ("--replay", "--output")


def with_output_aliases(command: Command) -> None:
    """Let every command with an `--out` option (`command` or its subcommands) read its old
    names as `--out`. The arguments are renamed before they are parsed: typer's click fills
    a parameter from the last option of its name processed, so a hidden option of the same
    name would undo an `--out` given before it."""
    for sub in getattr(command, "commands", {}).values():
        with_output_aliases(sub)
    names = {name for param in command.params for name in getattr(param, "opts", ())}
    aliases = tuple(alias for alias in OUTPUT_ALIASES if alias not in names)
    if "--out" not in names or not aliases:
        return
    parse = command.parse_args

    def parse_args(ctx: Context, args: list[str]) -> list[str]:
        return parse(ctx, renamed(args, aliases))

    command.parse_args = parse_args  # type: ignore[method-assign]  # (the instance's own)


def renamed(args: list[str], aliases: tuple[str, ...]) -> list[str]:
    """`args` with `--replay X` and `--replay=X` (each of `aliases`) written `--out`, up to a
    `--` (after which every argument is one as given)."""
    out: list[str] = []
    for k, arg in enumerate(args):
        if arg == "--":
            return out + args[k:]
        name, equals, value = arg.partition("=")
        out.append(f"--out{equals}{value}" if name in aliases else arg)
    return out


app = typer.Typer(
    cls=LazyCommands,
    # The list of commands in click's plain form: typer's rich help imports rich's markdown
    # and costs more than typer itself (bench/bench_startup.py); each command's help is rich.
    rich_markup_mode=None,
    no_args_is_help=True,
    help="Referee for Phase 10, Five Crowns and Five Crowns Solitaire bots.",
)


def _version(value: bool) -> None:
    if value:
        # The versions live with their formats; `meldref --help` imports neither.
        from ..protocol.wire import PROTOCOL_VERSION  # noqa: PLC0415 start-up: --help only cli
        from ..replay.files import FORMAT_VERSION  # noqa: PLC0415 start-up: --help only cli

        typer.echo(f"meldref {__version__} (protocol {PROTOCOL_VERSION}, replay format "
                   f"{FORMAT_VERSION}, {describe()})")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Print the version of meldref, its protocol and its replay format.")] = False,
) -> None:
    """Referee for Phase 10, Five Crowns and Five Crowns Solitaire bots."""


def main() -> None:
    """The `meldref` program. The stop signals are taken first, before a command's module,
    the engines and the referee are imported (half a second of `meldref tournament`'s
    start-up, in which a SIGTERM killed it)."""
    STOPS.take()
    code: int | str | None = 0
    try:
        app(prog_name="meldref")
    except KeyboardInterrupt:  # as typer's handling of one ended: it meant to exit anyway
        code = EXIT_INTERRUPTED
    except SystemExit as done:
        code = done.code
    finally:
        STOPS.ignore()
    if STOPS.received:
        _exit_now(code)
    sys.exit(code)


def _exit_now(code: int | str | None) -> NoReturn:
    """Exit with `code` after a stop signal, the exit handlers run (the fork server stopped,
    the workers' ends), without the interpreter's own last steps. A KeyboardInterrupt that
    the interpreter saw pass on its way, though `main` caught it, makes CPython end itself by
    SIGINT after every handler ran (rc -2: 6-9 in 24 `contest run -j 2` signalled in their
    first half second, 1 in 16 tournaments; `kill(getpid(), SIGINT)` in strace), not with the
    130 decided here."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code if isinstance(code, int) else EXIT_FAILED if code else 0)


if __name__ == "__main__":
    main()
