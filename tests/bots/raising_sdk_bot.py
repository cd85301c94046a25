#!/usr/bin/env python3
"""An SDK bot whose `draw` raises on every call (its other decisions are the SDK's fallback):
the SDK answers with its fallback, so it plays legal games, but `bot check` must fail it.
Used by tests/test_botcheck_faults.py."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from meldref.bots.sdk import Bot, Request, run


class Raising(Bot):
    name = "raising"

    def draw(self, request: Request) -> str:
        raise ValueError(f"no idea how to draw with {len(request.view.hand)} cards")


run(Raising())
