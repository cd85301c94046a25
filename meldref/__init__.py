"""meldref: a referee for rummy-family card games played by bot programs."""

from __future__ import annotations

import sys

from .build import SourceFirst, pure_asked

__version__ = "0.1.0"

if pure_asked():  # MELDREF_PURE=1: the Python sources, even beside a compiled build
    sys.meta_path.insert(0, SourceFirst())
