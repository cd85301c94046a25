#!/usr/bin/env python3
"""A bot that plays the first `legal` hint and leaves on `quit`, but that never notices the end
of its input: when the referee dies without a `quit`, it stays (ignoring SIGTERM too), as a bot
stuck in a long search would. argv[1] is its name (tests find its processes by it). With a
path as argv[2] it holds instead: it never answers a decision, and creates that file at its
first `go`, so a test knows a game is in progress."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

NAME = sys.argv[1] if len(sys.argv) > 1 else "clingy"
HOLD = Path(sys.argv[2]) if len(sys.argv) > 2 else None
signal.signal(signal.SIGTERM, signal.SIG_IGN)


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


legal: list[str] = []
for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "meldref":
        send(f"id name {NAME}")
        send("ready")
    elif words[0] == "view":
        legal = []
    elif words[0] == "legal":
        legal.append(" ".join(words[1:]))
    elif words[0] == "go" and HOLD is not None:
        HOLD.touch()
    elif words[0] == "go":
        send(f"action {words[1]} {legal[0]}")
    elif words[0] == "ping":
        send(f"pong {words[1]}")
    elif words[0] == "quit":
        sys.exit(0)
while True:  # end of input without `quit`: stuck
    time.sleep(1)
