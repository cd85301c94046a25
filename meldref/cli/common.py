"""What the commands share: exit codes (made in `app`, which needs them first), the screens they
print on, failing with a message, and the options several commands take."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from ..bots import builtin_help
from ..engine.game import GAME_NAMES, find_game, option_name
from ..protocol.sweep import kill_all_bots
from .app import EXIT_FAILED as EXIT_FAILED
from .app import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from .app import EXIT_USAGE as EXIT_USAGE
from .app import STOPS


class _Screen:
    """A rich console made when printing, for whatever stdout/stderr is then (tests swap them);
    120 columns when not a terminal, so tables in logs and pipes are not squeezed, unless
    COLUMNS says otherwise (`COLUMNS=80 meldref match | less` fits 80)."""

    def __init__(self, stderr: bool = False) -> None:
        self.stderr = stderr

    def console(self) -> Console:
        stream = sys.stderr if self.stderr else sys.stdout
        width = None if stream.isatty() or os.environ.get("COLUMNS") else 120
        return Console(file=stream, width=width, highlight=False, soft_wrap=True)

    def print(self, *objects: object, markup: bool | None = None,
              highlight: bool | None = None, soft_wrap: bool | None = None) -> None:
        self.console().print(*objects, markup=markup, highlight=highlight, soft_wrap=soft_wrap)


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

# The settings of a served page behind a proxy or on TLS, the same flags for every `serve`
# (meldref.web.options.serve_options reads them over the MELDREF_SERVE_* variables).
PublicHostOpt = Annotated[list[str] | None, typer.Option(
    "--public-host", help="A host name the server answers as too: the one a reverse proxy "
    "passes on (example.org, with :PORT if not the scheme's default); repeat for more.",
    show_default=False)]
TrustProxyOpt = Annotated[list[str] | None, typer.Option(
    "--trust-proxy", help="A reverse proxy's address or network (127.0.0.1, 10.0.0.0/8) "
    "whose --forwarded-header names the client (in the logs); repeat for more.",
    show_default=False)]
ForwardedHeaderOpt = Annotated[str | None, typer.Option(
    help="The header a trusted proxy names the client in [default: X-Forwarded-For].",
    show_default=False)]
CertOpt = Annotated[Path | None, typer.Option(
    help="Serve HTTPS directly: the certificate (PEM).", show_default=False)]
KeyOpt = Annotated[Path | None, typer.Option(
    help="... and its private key (PEM), unless in --cert.", show_default=False)]


def stop_on_signals() -> None:
    """From here on bots may run: Ctrl-C, `kill PID` (SIGTERM) and a closed terminal (SIGHUP)
    stop the run as Ctrl-C does (bots closed, results kept, exit code 130), the first of them
    from now on; a later one kills the bots being closed at once (`kill_all_bots`), and raises
    nothing (`app.StopSignals`). `meldref` takes the signals from its start; this also makes
    it so for a command run by other means (a test's `CliRunner`)."""
    STOPS.take(hurry=kill_all_bots)


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
