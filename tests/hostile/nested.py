#!/usr/bin/env python3
"""Hostile: before its handshake it tries to make a user namespace of its own, where it would
be root again over what it makes: `unshare -U -r true` (util-linux), and unshare(2) with
CLONE_NEWUSER in a child of its own; it reports each (`id version unshare: blocked|OPEN
clone: blocked|OPEN`), then plays the first legal action. Expected: both blocked in the
sandbox."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

from meldref.bots.sdk import Bot, run

CLONE_NEWUSER = 0x10000000


def by_command() -> str:
    try:
        done = subprocess.run(["unshare", "-U", "-r", "true"], capture_output=True, timeout=30)
    except OSError as exc:
        return f"blocked ({exc.strerror})"
    return "OPEN" if done.returncode == 0 else "blocked"


def by_call() -> str:
    pid = os.fork()
    if pid == 0:  # the child tries, so the bot itself stays where it is
        libc = ctypes.CDLL(None, use_errno=True)
        os._exit(0 if libc.unshare(CLONE_NEWUSER) == 0 else 1)
    _, status = os.waitpid(pid, 0)
    return "OPEN" if os.waitstatus_to_exitcode(status) == 0 else "blocked"


if __name__ == "__main__":
    said = f"unshare: {by_command()} clone: {by_call()}"
    print(f"nested: {said}", file=sys.stderr, flush=True)
    bot = Bot()
    bot.name, bot.version = "nested", said
    run(bot)
