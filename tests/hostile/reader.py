#!/usr/bin/env python3
"""Hostile: before its handshake it tries to read what lies around its folder: the contest's
database (`contest.db`), every other submission's files (`bots/*/v*/*`), the replays (every
hand, the seed), from each folder above its own. It reports what it could read on stderr and
in its handshake (`id version read: ...`, kept in every replay's header), then plays the first
legal action. Expected: `read: nothing` in the sandbox."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path

from meldref.bots.sdk import Bot, run


def others(mine: Path) -> list[str]:
    """Files of the contest outside this bot's own folder that it could read a byte of."""
    read = []
    for above in mine.parents:
        for pattern in ("contest.db", "contest.db-wal", "bots/*/v*/*", "bots/*/*/*",
                        "replays/*.jsonl", "logs/*/*"):
            for path in glob.glob(str(above / pattern)):
                if Path(path).resolve().is_relative_to(mine) or Path(path).is_dir():
                    continue
                try:
                    with open(path, "rb") as f:
                        f.read(1)
                except OSError:
                    continue
                read.append(path)
    return sorted(set(read))


if __name__ == "__main__":
    found = others(Path(os.getcwd()).resolve())
    said = f"read: {' '.join(found) if found else 'nothing'}"
    print(f"reader: {said}", file=sys.stderr, flush=True)
    bot = Bot()
    bot.name, bot.version = "reader", said[:2000]
    run(bot)
