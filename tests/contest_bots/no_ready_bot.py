#!/usr/bin/env python3
"""Fails `contest submit`'s check at once: it exits before the handshake."""

import sys

sys.stderr.write("no_ready: I refuse to play\n")
sys.exit(1)
