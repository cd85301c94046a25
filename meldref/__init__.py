"""meldref: a referee for rummy-family card games played by bot programs."""

from __future__ import annotations

import os
import sys

__version__ = "0.1.0"

# MELDREF_PURE=1: the Python sources, even beside a compiled build (meldref/build.py; the test
# as `build.pure_asked`, written out so that a plain start imports nothing more).
if os.environ.get("MELDREF_PURE", "") not in ("", "0"):
    from .build import SourceFirst

    sys.meta_path.insert(0, SourceFirst())
