#!/usr/bin/env python3
"""A bot that plays the first `legal` hint, but that only SIGKILL can stop: it ignores `quit`,
the end of its input, SIGTERM, SIGINT and SIGHUP (a bot stuck in a search, or written to
survive). argv[1] is its name (tests find its processes by it); argv[2], if given, is a delay
in seconds before each answer; argv[3], if given, a file it appends a line to at each
decision (so a test knows a game is in progress)."""

from __future__ import annotations

import signal
import sys
import time

NAME = sys.argv[1] if len(sys.argv) > 1 else "deaf"
DELAY = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
MARK = sys.argv[3] if len(sys.argv) > 3 else ""
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)


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
    elif words[0] == "go":
        if MARK:
            with open(MARK, "a") as mark:
                mark.write("go\n")
        time.sleep(DELAY)
        send(f"action {words[1]} {legal[0]}")
    elif words[0] == "ping":
        send(f"pong {words[1]}")
while True:  # `quit` or the end of input: it stays
    time.sleep(1)
