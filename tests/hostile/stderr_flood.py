#!/usr/bin/env python3
"""Hostile: plays the first legal action and writes 256 KiB to stderr at every decision
(megabytes a game). Expected: no fault; its stderr log cut at 1 MiB a game, none of it in a
replay."""

from __future__ import annotations

import sys

from meldref.bots.sdk import Bot, Request, run

CHUNK = "stderr flood " + "x" * (256 * 1024) + "\n"


class Flood(Bot):
    name = "stderr-flood"

    def choose(self, request: Request) -> str:
        sys.stderr.write(CHUNK)
        sys.stderr.flush()
        return self.fallback(request)


if __name__ == "__main__":
    run(Flood())
