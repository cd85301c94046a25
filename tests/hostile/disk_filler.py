#!/usr/bin/env python3
"""Hostile: before its handshake it writes to /tmp and to its own folder, 1 MiB at a time in
files of 8 MiB, until a write fails (or 256 MiB a place, its own bound); it reports how much
each place took and why it stopped (`id version tmp: N MiB (...) own: N MiB (...)`), then
plays the first legal action. Expected in the sandbox: /tmp full at its size (`tmp-mb`), its
own folder read-only (0 MiB)."""

from __future__ import annotations

import os
import signal
import sys

from meldref.bots.sdk import Bot, run

BLOCK = b"\0" * (1 << 20)
BOUND = 256


def fill(folder: str) -> str:
    written = 0
    try:
        while written < BOUND:
            with open(os.path.join(folder, f"filler-{written // 8}.bin"), "ab") as f:
                for _ in range(8):
                    f.write(BLOCK)
                    f.flush()
                    written += 1
    except OSError as exc:
        return f"{written} MiB ({exc.strerror})"
    return f"{written} MiB (its own bound)"


if __name__ == "__main__":
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file-size cap: the write fails instead
    said = f"tmp: {fill('/tmp')} own: {fill(os.getcwd())}"
    print(f"disk-filler: {said}", file=sys.stderr, flush=True)
    bot = Bot()
    bot.name, bot.version = "disk-filler", said
    run(bot)
