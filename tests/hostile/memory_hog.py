#!/usr/bin/env python3
"""Hostile: before its handshake in a ladder game it takes memory, 32 MiB at a time with every
page touched, up to 2 GiB (its own bound); if an allocation fails it lets go, reports how far
it got (`id version took: N MiB (...)`) and plays the first legal action. In the folder
`contest submit` checks it in (`bots/.staging/...`) it takes nothing, so it joins.
Expected: the contest's memory cap (`memory-mb`) stops it: the kernel kills it (a cgroup's
cap: `crashed`, charged to it alone), or its allocation fails below the cap (an rlimit)."""

from __future__ import annotations

import os
import sys

from meldref.bots.sdk import Bot, run

LADDER = ".staging" not in os.getcwd()
CHUNK = 32 << 20
BOUND = 2048 << 20


def hog() -> str:
    held = []
    try:
        while len(held) * CHUNK < BOUND:
            held.append(b"\1" * CHUNK)
    except MemoryError:
        return f"took: {len(held) * 32} MiB (refused)"
    finally:
        held.clear()
    return f"took: {BOUND >> 20} MiB (its own bound)"


if __name__ == "__main__":
    bot = Bot()
    bot.name = "memory-hog"
    if LADDER:
        bot.version = hog()
        print(f"memory-hog: {bot.version}", file=sys.stderr, flush=True)
    run(bot)
