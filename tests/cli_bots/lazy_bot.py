#!/usr/bin/env python3
"""Bots with output problems, for `meldref bot check` tests (argv[1] picks one).

  never_flush  writes correct lines but never flushes stdout (they arrive only at exit)
  no_newline   writes `ready` without its newline, flushed
  neither      writes `ready` without its newline and never flushes (it arrives at exit)
"""

from __future__ import annotations

import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "never_flush"
# Block-buffered even under PYTHONUNBUFFERED, as C stdio on a pipe.
if MODE in ("never_flush", "neither"):
    sys.stdout = os.fdopen(1, "w", buffering=8192, closefd=False)

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "meldref":
        if MODE == "no_newline":
            sys.stdout.write("ready")
            sys.stdout.flush()
        elif MODE == "neither":
            sys.stdout.write("ready")
        else:
            sys.stdout.write("id name lazy\nready\n")
    elif words[0] == "ping":
        sys.stdout.write(f"pong {words[1]}\n")
    elif words[0] == "quit":
        break
