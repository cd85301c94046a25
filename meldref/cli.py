"""The `meldref` command line."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, help="Referee for Phase 10 and Five Crowns bots.")


def main() -> None:
    app()
