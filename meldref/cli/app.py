"""The `meldref` command line: matches, tournaments, replays, a person at the table, bot checks.

Each command lives in a module of its own (`match`, `tournament`, `replay`, `play`, `bot`) that
parses its flags into values and hands them to the layer that does the work.

Exit codes (README.md): 0 done; 1 a check failed (replay verify, bot check, a game the referee
could not finish); 2 the command cannot run (usage, configuration, rule options, a bot that
cannot start, an output folder that cannot be written, no replay files to read), nothing was
played; 130 interrupted (a tournament resumes when rerun).
"""

from __future__ import annotations

import difflib
import importlib
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from .. import __version__

# The commands by name: the module and the function (or the group of subcommands) in it, and
# the line `meldref --help` shows (the function's docstring's first line, tests/test_cli_help.py
# checks). A command's module is imported only when that command runs or shows its help: the
# engines, the referee and the statistics cost more to import than typer itself (start-up,
# bench/bench_startup.py).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "match": ("match", "match", "Play one or more games between bots and print who won."),
    "tournament": ("tournament", "tournament", "Play a round robin or gauntlet; print the "
                   "standings."),
    "replay": ("replay", "replay_app", "Show, verify, count and resume replays; write "
               "positions."),
    "play": ("play", "play", "Play a seat yourself in the terminal against bots."),
    "bot": ("bot", "bot_app", "Check a bot program against the protocol."),
    "contest": ("contest", "contest_app", "Run a contest: submissions, a ladder, a live "
                "leaderboard."),
}


class LazyCommands(TyperGroup):
    """The group of `COMMANDS`: each listed from its line, imported when it is resolved."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx)
                            if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        # Only listed (the group's help): a stand-in with the command's line.
        return typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name][2])

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] in COMMANDS and args[0] not in self.commands:
            self.add_command(load_command(args[0]), args[0])
        names = self.list_commands(ctx)
        if args and not args[0].startswith("-") and args[0] not in names:
            close = difflib.get_close_matches(args[0], names)  # typer's own sees none loaded
            if close:
                ctx.fail(f"No such command {args[0]!r}. Did you mean "
                         f"{', '.join(map(repr, close))}?")
        return super().resolve_command(ctx, args)


def load_command(name: str) -> Any:
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
    return command


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
        from ..build import describe
        from ..protocol.wire import PROTOCOL_VERSION
        from ..replay.files import FORMAT_VERSION

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
    app(prog_name="meldref")


if __name__ == "__main__":
    main()
