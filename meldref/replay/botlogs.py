"""Bots' stderr beside a game's page: the logs a tournament keeps under `logs/<game_id>/`
(next to `replays/`, see tournament/runner.py), one file per seat, `seat<K>-<name>.stderr`.

The referee drains stderr on a thread and marks nothing in it, so a log cannot be cut into the
lines of each request: the page shows the end of each bot's log for the whole game. The files
are read as untrusted: regular files only (a symbolic link could point anywhere), at most the
last `EXCERPT` bytes, decoded leniently, control characters but tab and newline dropped.
"""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Final

from ..engine.game import JSON

EXCERPT: Final = 32_768  # bytes from the end of each log
_GAME_ID: Final = re.compile(r"[A-Za-z0-9_#-][A-Za-z0-9_.#-]*")
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def log_folder(replay: Path, game_id: JSON) -> Path | None:
    """Where the tournament that wrote `replay` (in its `replays/`) kept the game's logs."""
    if not isinstance(game_id, str) or not _GAME_ID.fullmatch(game_id):
        return None
    return replay.parent.parent / "logs" / game_id


def bot_logs(replay: Path, game_id: JSON, players: int, seat: int | None,
             ) -> list[dict[str, JSON] | None] | None:
    """Per seat, the end of its bot's stderr log (None: no log); None when the game has no
    logs at all. A seat's page (`seat` K) carries seat K's log only: another bot's stderr
    can name its cards."""
    folder = log_folder(replay, game_id)
    if folder is None or not folder.is_dir():
        return None
    out: list[dict[str, JSON] | None] = []
    for k in range(players):
        found = sorted(folder.glob(f"seat{k}-*.stderr")) if seat in (None, k) else []
        out.append(_excerpt(found[0], folder.parent.parent) if found else None)
    return out if any(out) else None


def _excerpt(path: Path, root: Path) -> dict[str, JSON] | None:
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            return None
        with path.open("rb") as f:
            f.seek(max(0, info.st_size - EXCERPT))
            data = f.read(EXCERPT)
    except OSError:
        return None
    text = _CONTROL.sub("", data.decode("utf-8", errors="replace"))
    return {"file": str(path.relative_to(root)), "bytes": info.st_size,
            "cut": max(0, info.st_size - EXCERPT), "text": text}
