"""What the commands share: exit codes, the screens they print on, failing with a message,
and the options several commands take."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Final, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from ..bots import builtin_help
from ..engine.game import GAME_NAMES, find_game, option_name
from ..protocol.referee import MatchPolicy
from ..settings import LimitSettings, SettingsError, limit_settings

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
    typer.Option("--bot", "-b", help=f"A seat: a built-in bot ({builtin_help()}) or a command "
                 'line such as "python3 bots/random_bot.py". Repeat once per seat.'),
]
def _rule_keys() -> str:
    parts = []
    for name in GAME_NAMES:
        rules_type = find_game(name).rules_type
        keys = ", ".join(option_name(f.name) for f in dataclasses.fields(rules_type))
        parts.append(f"{name}: {keys}")
    return "; ".join(parts)


RulesOpt = Annotated[
    list[str] | None,
    typer.Option("--rules", "-r", help="A rule option KEY=VALUE (e.g. phases-to-win=3). "
                 f"Repeat. Keys (spec/RULES.md) -- {_rule_keys()}."),
]
GameArg = Annotated[str, typer.Argument(help=f"The game: {', '.join(GAME_NAMES)}.")]


def stop_on_signals() -> None:
    """`kill PID` (SIGTERM) and a closed terminal (SIGHUP) stop a run as Ctrl-C does: bots
    closed, results kept, exit code 130. A second signal while bots are being closed kills
    them at once (`protocol.process.BotProcess.shutdown`)."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    err.print(f"[bold red]error:[/bold red] {escape(message)}")
    raise typer.Exit(code)


def refuse_overwriting_inputs(inputs: Mapping[str, Path | None],
                              outputs: Mapping[str, Path | None]) -> None:
    """Exit 2, before anything is read or written, if an output path (by its flag) names one
    of the command's inputs: the same path, a link to it or a hard link of it (one file)."""
    for out_flag, output in outputs.items():
        for in_flag, given in inputs.items():
            if output is not None and given is not None and _same_file(output, given):
                fail(f"{out_flag} {output} is also an input ({in_flag} {given}): "
                     "write the output elsewhere")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)  # links and hard links: one device and inode
    except OSError:  # one does not exist (yet): the same only if both name one path
        return os.path.realpath(a) == os.path.realpath(b)


_POLICY: Final = MatchPolicy()
MoveTimeOpt = Annotated[float | None, typer.Option(
    help=f"Seconds per decision (default {_POLICY.move_time:g}).")]
StartupTimeOpt = Annotated[float | None, typer.Option(
    help=f"Seconds a bot program has to start and say ready (default {_POLICY.startup_time:g}).")]
TimeBankOpt = Annotated[float | None, typer.Option(
    help=f"Seconds of time bank each seat starts a game with (default {_POLICY.time_bank:g}).")]
IncrementOpt = Annotated[float | None, typer.Option(
    help=f"Seconds added to the bank after every decision (default {_POLICY.increment:g}).")]
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
_CPU_HELP = ("Cap each bot process's CPU time at this many seconds over its whole life "
             "(RLIMIT_CPU; default none): going over it is a crash.")
CpuOpt = Annotated[int | None, typer.Option(
    help=f"{_CPU_HELP} A process kept across games is restarted before a game once it has "
    "used half of it; --fresh-bots: the cap per game.")]
# `bot check` starts the program afresh for each check: no --fresh-bots to speak of.
CheckCpuOpt = Annotated[int | None, typer.Option("--cpu-seconds", help=_CPU_HELP)]
FreshBotsOpt = Annotated[bool | None, typer.Option(
    "--fresh-bots", help="Start every bot program afresh for each game. Default: one "
    "process per bot kept across the games (of the match; of each worker, in a tournament), "
    "restarted only after a game in which it failed for good.")]
NoNetworkOpt = Annotated[bool | None, typer.Option(
    "--no-network", help="Run each bot program in a network namespace of its own: no "
    "connection anywhere, this machine included (Linux; root, or user namespaces).")]
SandboxOpt = Annotated[bool | None, typer.Option(
    "--sandbox", help="Run each bot program in a sandbox of its own (bubblewrap; as root): "
    "no network, no view of other processes or of the file system but the system's folders, "
    "its own folder and its program's, a uid of its own, cgroup limits (docs/sandbox.md).")]
HintsOpt = Annotated[bool | None, typer.Option(
    "--hints/--no-hints", help="Send the legal actions (`legal` lines) with every request "
    "(default on); --no-hints makes bots build their own actions.")]


def limit_flags(move_time: float | None, startup_time: float | None, *,
                time_bank: float | None = None, increment: float | None = None,
                max_bank: float | None = None, on_failure: str | None = None,
                hints: bool | None = None, memory_mb: int | None = None,
                max_processes: int | None = None, file_size_mb: int | None = None,
                cpu_seconds: int | None = None,
                no_network: bool | None = None, sandbox: bool | None = None,
                fresh_bots: bool | None = None) -> dict[str, Any]:
    """The `[limits]` keys given on the command line (None: not given)."""
    given = {"move-time": move_time, "startup-time": startup_time, "time-bank": time_bank,
             "increment": increment, "max-bank": max_bank, "on-failure": on_failure,
             "legal-hints": hints, "memory-mb": memory_mb, "max-processes": max_processes,
             "file-size-mb": file_size_mb, "cpu-seconds": cpu_seconds,
             "no-network": no_network, "sandbox": sandbox, "fresh-bots": fresh_bots}
    return {key: value for key, value in given.items() if value is not None}


def warn_about(limits: LimitSettings) -> None:
    """Say which limits given cannot work here."""
    for text in limits.warnings():
        err.print(f"warning: {text}", markup=False)
    for text in limits.notes():
        err.print(text, markup=False)


def limits_or_fail(flags: dict[str, Any]) -> LimitSettings:
    """The limit flags as checked values; exit 2 naming the flag when one is wrong."""
    try:
        limits = limit_settings(flags)
        limits.policy()
    except SettingsError as exc:
        fail(str(exc))
    problem = limits.sandbox_problem()
    if problem is not None:
        fail(f"--sandbox: {problem}")
    warn_about(limits)
    return limits
