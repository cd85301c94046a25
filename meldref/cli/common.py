"""What the commands share: exit codes, the screens they print on, failing with a message,
and the options several commands take."""

from __future__ import annotations

import signal
import sys
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from ..engine.game import GAME_NAMES

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


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


def limit_flags(move_time: float | None, startup_time: float | None, *,
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
