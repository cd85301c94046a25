#!/usr/bin/env python3
"""A bot that shakes hands, then kills the process that started it (SIGKILL to its parent) when
asked for its first decision: on a cluster, the dask worker playing its game dies every time.
A start-up check (the handshake only) passes."""

from __future__ import annotations

import os
import signal
import sys


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def starter() -> int:
    """The referee's process: the parent, or above meldref's guard (protocol/guard.py)."""
    pid = os.getppid()
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        if b"guard.py" in f.read():
            with open(f"/proc/{pid}/stat", "rb") as g:
                pid = int(g.read().rsplit(b")", 1)[1].split()[1])
    return pid


for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    if words[0] == "meldref":
        send("id name killer")
        send("ready")
    elif words[0] == "go":
        os.kill(starter(), signal.SIGKILL)
    elif words[0] == "ping":
        send(f"pong {words[1]}")
    elif words[0] == "quit":
        sys.exit(0)
