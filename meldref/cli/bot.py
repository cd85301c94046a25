"""`meldref bot check`: a bot program against the protocol's checklist."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Annotated, Final

import typer
from rich.markup import escape

from ..bots import BUILTIN_PREFIX, builtin_names
from ..bots.serve import program_games
from ..engine.game import GAME_NAMES, UnknownGameError, find_game
from ..protocol.seats import BotSpec
from ..replay.positions import PositionFileError, load_position, position_files
from ..tools.botcheck import Check, check_bot
from ..tools.bottest import Answer, ask_all
from .common import (
    EXIT_FAILED,
    err,
    fail,
    out,
    refuse_overwriting_inputs,
    stop_on_signals,
)
from .limits import CHECK_CPU, LimitFlag, LimitFlags, limits_or_fail, with_limit_flags
from .report import answers_table, checks_table

bot_app = typer.Typer(no_args_is_help=True, add_completion=False,
                      help="Check a bot program against the protocol.")

BotArg = Annotated[str, typer.Argument(
    metavar="BOT", help='The bot: a command line, quoted ("python3 bots/random_bot.py"), or '
    'builtin:NAME.', show_default=False)]


# `bot check` plays with a match's clocks (LIMIT_FLAGS: the referee's defaults), the bank too.
CHECK_CLOCKS: Final = ("startup_time", "move_time", "first_move_time", "time_bank", "increment",
                       "max_bank")
STARTUP_FLAG: Final = LimitFlag("startup-time", Annotated[float, typer.Option(
    help="Seconds to say ready.")], 10.0)


@bot_app.command("check")
@with_limit_flags(*CHECK_CLOCKS, "memory_mb", "max_processes", "file_size_mb", "cpu_seconds",
                  "no_network", "sandbox", cpu_seconds=CHECK_CPU)
def bot_check(
    bot: BotArg,
    game: Annotated[list[str] | None, typer.Argument(
        help="The games to check; default: the games it claims with `id games ...`, else "
        "all.", show_default=False)] = None,
    old_game: Annotated[list[str] | None, typer.Option(
        "--game", hidden=True, help="The old spelling of GAME.")] = None,
    logs: Annotated[Path | None, typer.Option(help="Folder for the bot's stderr logs.")] = None,
    *,
    limits: LimitFlags,
    as_json: Annotated[bool, typer.Option("--json", help="Print the checklist as JSON.")] = False,
    strict: Annotated[bool, typer.Option(
        "--strict", help="No time bank: every decision within its own allowance (default: a "
        "match's clocks, the bank included).")] = False,
    position: Annotated[Path | None, typer.Option(
        help="Check the bot from this position file (spec/POSITION.md) instead of full games: "
        "its answer there (legal, and the expected one if the file says), then the game "
        "played on to the end.")] = None,
) -> None:
    """Check a bot program: handshake, ping, flushing, quit, and legal full games of every
    decision type. Exit 0 only if every check passes."""
    refuse_overwriting_inputs({"--position": position}, {"--logs": logs})
    banked = sorted(f"--{k}" for k in ("time-bank", "increment", "max-bank") if k in limits)
    if strict and banked:
        fail(f"--strict checks without a time bank: leave out {', '.join(banked)}, or --strict")
    command = program_line(bot)
    settings = limits_or_fail(limits)
    games = []
    for name in [*(game or []), *(old_game or [])]:
        try:
            games.append(find_game(name).name)
        except UnknownGameError as exc:
            fail(str(exc))
    marks = {"pass": "[green]PASS[/green]", "fail": "[red]FAIL[/red]",
             "warn": "[yellow]WARN[/yellow]"}

    def show(check: Check) -> None:
        if not as_json and sys.stderr.isatty():
            err.print(f"{marks[check.status]} {check.name}", highlight=False)

    loaded = None
    if position is not None:
        try:
            loaded = load_position(position)
        except PositionFileError as exc:
            fail(str(exc))
    stop_on_signals()  # from here on the bot runs: a signal must close it
    report = check_bot(command, games, policy=settings.policy(), strict=strict, log_dir=logs,
                       progress=show, limits=settings.process_limits(), position=loaded)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
    else:
        out.print(checks_table(report.checks, f"bot check: {bot}", marks))
        verdict = "[green]all checks pass[/green]" if report.passed else "[red]not conformant[/red]"
        out.print(verdict)
    if not report.passed:
        raise typer.Exit(EXIT_FAILED)


@bot_app.command("test")
@with_limit_flags("startup_time", "move_time", "hints", "memory_mb", "max_processes",
                  "file_size_mb", "sandbox", startup_time=STARTUP_FLAG,
                  move_time=LimitFlag("move-time", Annotated[float, typer.Option(
                      help="Seconds for each answer.")], 5.0))
def bot_test(
    bot: BotArg,
    folder: Annotated[Path, typer.Argument(help="A folder of position files (*.toml, "
                                           "spec/POSITION.md), searched below too.")],
    logs: Annotated[Path | None, typer.Option(help="Folder for the bot's stderr logs.")] = None,
    *,
    limits: LimitFlags,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answers as JSON.")] = False,
) -> None:
    """Ask the bot for its decision in each position of FOLDER and judge every answer: legal
    or not (and why), and, where the file states an `expect`ed action, whether it is that one.
    Exit 0 only if every answer is legal and every expected action was found."""
    refuse_overwriting_inputs({"FOLDER": folder}, {"--logs": logs})
    # Every answer has the same time, the first of a game's too, and no bank.
    settings = limits_or_fail({**limits, "first-move-time": limits["move-time"],
                               "time-bank": 0.0})
    try:
        spec = BotSpec.parse(bot)
        loaded = [load_position(p) for p in position_files(folder)]
    except (PositionFileError, ValueError) as exc:
        fail(str(exc))

    def show(answer: Answer) -> None:
        if not as_json and sys.stderr.isatty():
            mark = "[green]PASS[/green]" if answer.passed else "[red]FAIL[/red]"
            err.print(f"{mark} {escape(answer.path.name)}", highlight=False)

    stop_on_signals()  # from here on the bot runs: a signal must close it
    answers = ask_all(spec, loaded, settings.policy(), settings.process_limits(), logs, show)
    passed = sum(a.passed for a in answers)
    if as_json:
        sys.stdout.write(json.dumps({"command": bot, "passed": passed,
                                     "positions": len(answers),
                                     "answers": [a.to_json() for a in answers]}, indent=2)
                         + "\n")
    else:
        out.print(answers_table(answers, folder, f"bot test: {bot}"))  # fits 80 columns
        out.print(f"{passed} of {len(answers)} positions passed")
    if passed < len(answers):
        raise typer.Exit(EXIT_FAILED)


def program_line(bot: str) -> str:
    """The command line of the program to check: `bot` itself, or for builtin:NAME the
    built-in bot served as a program (`meldref.bots.serve`); exit 2 for an unknown NAME."""
    if not bot.startswith(BUILTIN_PREFIX):
        return bot
    name = bot.removeprefix(BUILTIN_PREFIX)
    if not program_games(name):
        known = sorted({n for g in GAME_NAMES for n in builtin_names(g)})
        fail(f"no built-in bot {name!r}; built-in bots: {', '.join(known)}")
    return shlex.join([sys.executable, "-m", "meldref.bots.serve", name])
