#!/usr/bin/env python3
"""A bot that says which process played which game: plays the first `legal` hint.

    pid_bot.py PIDS_FILE [CRASH_IN_GAME]

It appends its pid to PIDS_FILE when it starts (one line per process), and writes
`pid <pid> game <n> <event>` lines to stderr as it goes (n counts the games of this process:
at `game`, each `go`, `gameover`), so per-game logs can be checked. With CRASH_IN_GAME = k it
exits with code 3 at its first decision of the k-th game of a process. With PID_BOT_BURN set,
it spends that many seconds of CPU at every `game` line. With PID_BOT_QUIT_ON_GAMEOVER set, it
exits (code 0) on every `gameover`, as a bot that plays one game a process does. At `quit` it
appends its pid to PIDS_FILE.quit (a bot told to go, not killed). Used by
tests/test_kept_bots.py and tests/test_restart_between_games.py.
"""

from __future__ import annotations

import os
import sys
import time

PIDS = sys.argv[1]
CRASH_IN = int(sys.argv[2]) if len(sys.argv) > 2 else 0
BURN = float(os.environ.get("PID_BOT_BURN", "0"))
QUIT_ON_GAMEOVER = bool(os.environ.get("PID_BOT_QUIT_ON_GAMEOVER"))
with open(PIDS, "a") as f:
    f.write(f"{os.getpid()}\n")


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def note(what: str) -> None:
    sys.stderr.write(f"pid {os.getpid()} game {games} {what}\n")
    sys.stderr.flush()


legal: list[str] = []
games = 0
for raw in sys.stdin:
    words = raw.split()
    if not words:
        continue
    kind = words[0]
    if kind == "meldref":
        send("id name pidbot")
        send("ready")
    elif kind == "game":
        games += 1
        note("begins")
        until = time.process_time() + BURN
        while time.process_time() < until:
            pass
    elif kind == "view":
        legal = []
    elif kind == "legal":
        legal.append(" ".join(words[1:]))
    elif kind == "go":
        note("decides")
        if games == CRASH_IN:
            note("crashes")
            sys.exit(3)
        send(f"action {words[1]} {legal[0]}")
    elif kind == "gameover":
        note("ends")
        if QUIT_ON_GAMEOVER:
            break
    elif kind == "ping":
        send(f"pong {words[1]}")
    elif kind == "quit":
        with open(PIDS + ".quit", "a") as f:  # told to go, as the spec's goodbye says
            f.write(f"{os.getpid()}\n")
        break
