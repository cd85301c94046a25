#!/usr/bin/env python3
"""A bot that escapes the guard outside a sandbox: before it plays it leaves behind a
grandchild in a session of its own with an empty environment (double fork, `setsid`, no
`MELDREF_BOT` cookie), which kills the bot's guard (its parent, SIGKILL: the one signal the
guard cannot catch) once the game is under way, then lingers. The bot itself plays as
`bad_bot.py good` until it dies with its guard. The referee must leave nothing running.

    guard_killer_bot.py TOKEN [DELAY]

TOKEN ends up in the lingerer's command line, so a test can look for it in /proc."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

TOKEN = sys.argv[1]
DELAY = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
LINGER = ("import os, signal, sys, time\n"
          "time.sleep(float(sys.argv[2]))\n"
          "try:\n    os.kill(int(sys.argv[1]), signal.SIGKILL)\nexcept OSError:\n    pass\n"
          "time.sleep(300)\n")


def leave_lingerer(guard: int) -> None:
    if os.fork():
        os.wait()
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.execve(sys.executable, [sys.executable, "-c", LINGER, str(guard), str(DELAY), TOKEN],
              {})


leave_lingerer(os.getppid())
time.sleep(0.05)
bad = Path(__file__).with_name("bad_bot.py")
os.execv(sys.executable, [sys.executable, str(bad), "good", TOKEN])
