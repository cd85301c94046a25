#!/usr/bin/env python3
"""Hostile: before its handshake it leaves a grandchild behind, detached every way it can
(its own session, a double fork, its parent gone, an empty environment, no standard streams;
`python3 -c 'sleep' <its own arguments>`, so a test finds it by its token), then kills its own
parent (the guard, or the sandbox's init) if it can, and plays the first legal action.
It reports what it did (`id version grandchild: PID parent PID: killed|<error>`).
Expected: the grandchild gone when the run ends; the parent beyond its reach in the sandbox."""

from __future__ import annotations

import os
import signal
import sys

from meldref.bots.sdk import Bot, run

SLEEP = "import time; time.sleep(3600)"


def linger() -> int:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(write, str(os.getpid()).encode())
            os.closerange(0, 3)
            os.execve(sys.executable, [sys.executable, "-c", SLEEP, *sys.argv[1:]], {})
        os._exit(0)
    os.waitpid(pid, 0)
    os.close(write)
    return int(os.read(read, 32) or b"0")


def kill_parent() -> str:
    parent = os.getppid()
    try:
        os.kill(parent, signal.SIGKILL)
    except OSError as exc:
        return f"parent {parent}: {exc.strerror}"
    return f"parent {parent}: killed"


if __name__ == "__main__":
    said = f"grandchild: {linger()} {kill_parent()}"
    print(f"lingerer: {said}", file=sys.stderr, flush=True)
    bot = Bot()
    bot.name, bot.version = "lingerer", said
    run(bot)
