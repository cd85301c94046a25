#!/usr/bin/env python3
"""Hostile: a submission whose own file is harmless (it plays the first legal action) but
whose command starts another submission's program, under the thief's name:
`--cmd "python3 ../../<other>/v1/random_bot.py"` (run in `bots/thief/v1`, `../..` is the
contest's `bots/`). Expected: refused at `contest submit`, naming the file outside its
submission; nothing added."""

from __future__ import annotations

from meldref.bots.sdk import Bot, run

if __name__ == "__main__":
    bot = Bot()
    bot.name = "thief"
    run(bot)
