#!/usr/bin/env python3
"""Passes `contest submit`'s check, then crashes in every ladder game: it plays well only
while it runs in the folder a submission is checked in (`bots/.staging/...`). Submitted as a
folder with a copy of bots/random_bot.py next to it (tests/test_contest.py), to see a version
suspended automatically."""

from __future__ import annotations

import os
import sys

import random_bot

if __name__ == "__main__":
    if ".staging" not in os.getcwd():
        sys.stderr.write("sneaky: crashing on purpose in a ladder game\n")
        sys.exit(3)
    sys.exit(random_bot.main(sys.argv[1:]))
