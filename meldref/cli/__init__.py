"""The `meldref` command line: a thin layer that parses flags and delegates."""

from .app import app, main

__all__ = ["app", "main"]
