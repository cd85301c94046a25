"""The `meldref` command line: matches, tournaments, replays, a person at the table, bot checks.

Each command lives in a module of its own (`match`, `tournament`, `replay`, `play`, `bot`) that
parses its flags into values and hands them to the layer that does the work.

Exit codes (README.md): 0 done; 1 a check failed (replay verify, bot check, a game the referee
could not finish); 2 the command cannot run (usage, configuration, rule options, a bot that
cannot start, an output folder that cannot be written, no replay files to read), nothing was
played; 130 interrupted (a tournament resumes when rerun).
"""

from __future__ import annotations

from typing import Annotated

import typer

from .. import __version__
from ..protocol.wire import PROTOCOL_VERSION
from ..replay.files import FORMAT_VERSION
from .bot import bot_app
from .contest import contest_app
from .match import match
from .play import play
from .replay import replay_app
from .tournament import tournament

app = typer.Typer(
    no_args_is_help=True,
    help="Referee for Phase 10, Five Crowns and Five Crowns Solitaire bots.",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"meldref {__version__} (protocol {PROTOCOL_VERSION}, replay format "
                   f"{FORMAT_VERSION})")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Print the version of meldref, its protocol and its replay format.")] = False,
) -> None:
    """Referee for Phase 10, Five Crowns and Five Crowns Solitaire bots."""

app.command()(match)
app.command()(tournament)
app.add_typer(replay_app, name="replay")
app.command()(play)
app.add_typer(bot_app, name="bot")
app.add_typer(contest_app, name="contest")


def main() -> None:
    app(prog_name="meldref")


if __name__ == "__main__":
    main()
