#!/usr/bin/env python3
"""Hostile: before its handshake it forks children that sleep, until a fork fails (or 400,
its own bound, well above any process cap it should meet); it reports how many it made
(`id version forked: N ...`), lets 8 of them go (room for the SDK's threads) and keeps the
rest, and plays the first legal action. Expected: stopped at the contest's process cap
(`max-processes`, the bot counted), every child gone with the bot."""

from __future__ import annotations

import os
import signal
import sys
import time

from meldref.bots.sdk import Bot, run

BOUND = 400


def bomb() -> str:
    children: list[int] = []
    why = "its own bound"
    while len(children) < BOUND:
        try:
            pid = os.fork()
        except OSError as exc:
            why = exc.strerror or str(exc)
            break
        if pid == 0:
            os.closerange(0, 3)
            time.sleep(3600)
            os._exit(0)
        children.append(pid)
    for pid in children[-8:]:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    return f"forked: {len(children)} stopped: {why}"


if __name__ == "__main__":
    said = bomb()
    print(f"fork-bomb: {said}", file=sys.stderr, flush=True)
    bot = Bot()
    bot.name, bot.version = "fork-bomb", said
    run(bot)
