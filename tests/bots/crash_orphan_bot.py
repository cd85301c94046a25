#!/usr/bin/env python3
"""A bot that plays the first `legal` hint, then exits with code 3 at one of its decisions.

    crash_orphan_bot.py MODE [DECISION]

MODE `orphan`: just before exiting it starts a child (`sleep $BOT_ORPHAN_SLEEP`, default 600)
that inherits its stdout, so the pipe to the referee stays open after the bot is gone; `plain`:
no child, the pipe closes with it. DECISION (default 3) counts the `go` lines of the whole
session. With BOT_EXIT_STAMP set, the moment it exits (`time.time()`) is written to that file.
Used by tests/test_crash_detection.py and bench/bench_crash.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "orphan"
CRASH_AT = int(sys.argv[2]) if len(sys.argv) > 2 else 3
STAMP = os.environ.get("BOT_EXIT_STAMP", "")
SLEEP = os.environ.get("BOT_ORPHAN_SLEEP", "600")


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def crash() -> None:
    if MODE == "orphan":
        subprocess.Popen(["sleep", SLEEP], stdin=subprocess.DEVNULL)  # stdout inherited
    if STAMP:
        with open(STAMP, "w") as f:
            f.write(repr(time.time()))
    os._exit(3)


legal: list[str] = []
asked = 0
for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    kind = words[0]
    if kind == "meldref":
        send(f"id name crash-{MODE}")
        send("ready")
    elif kind == "view":
        legal = []
    elif kind == "legal":
        legal.append(" ".join(words[1:]))
    elif kind == "go":
        asked += 1
        if asked == CRASH_AT:
            crash()
        send(f"action {words[1]} {legal[0]}")
    elif kind == "ping":
        send(f"pong {words[1]}")
    elif kind == "quit":
        break
