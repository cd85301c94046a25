#!/usr/bin/env python3
"""Hostile: before its handshake it sends SIGKILL to every process it can name, pids 1 to
32768 (the referee, the other bots, its parent) but itself, and reports which it reached
(`id version signalled: none|PIDS`); then plays the first legal action.
It sends real signals only where it is held in a PID namespace of its own as a user of its
own (a sandbox: pid under 100, uid not 0); anywhere else it only asks (signal 0), so a test
run without the sandbox harms nothing. Expected in the sandbox: `signalled: none`."""

from __future__ import annotations

import os
import signal
import sys

from meldref.bots.sdk import Bot, run

CONTAINED = os.getuid() != 0 and os.getpid() < 100


def send_all() -> str:
    hit = []
    for pid in range(1, 32769):
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL if CONTAINED else 0)
        except OSError:
            continue
        hit.append(str(pid))
    verb = "signalled" if CONTAINED else "could signal (asked only)"
    return f"{verb}: {' '.join(hit) if hit else 'none'}"


if __name__ == "__main__":
    said = send_all()
    print(f"signal-sender: {said}", file=sys.stderr, flush=True)
    bot = Bot()
    bot.name, bot.version = "signal-sender", said[:2000]
    run(bot)
