"""meldref: a referee for rummy-family card games played by bot programs."""

from __future__ import annotations

__version__ = "0.1.0"
