"""The list of a folder's games: one row per replay with its seats, result and faults, and the
tournament's standings when the folder has them. `replay html FOLDER` writes it as index.html
next to one page per game; `replay serve FOLDER` serves it with each game opening in the viewer.

Rows come from the tournament's `results.jsonl` where it lists a replay (fault outcomes
included), else from the replay's first and last lines only (header and result), so a folder
of thousands of games is listed without re-reading every action. Every file of the folder is
read as a replay is (spec/REPLAY.md): a line at a time, each line's JSON counted before it is
built, so no file can take the memory.
"""

from __future__ import annotations

import gzip
import io
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import BinaryIO, Final

from ..engine.game import JSON
from ..private import private_dir, write_private_text
from .files import (
    MAX_LINE,
    ReplayError,
    ReplayPathError,
    ReplayTruncated,
    check_replay_file,
    decode_json,
    decode_line,
    open_replay,
    open_replay_bytes,
    replay_files,
    replay_stem,
)
from .html import ENUMS, ViewerError, asset, fill, replay_page, script_json, site_style

TAIL_BYTES = 1 << 16  # a result line is a few hundred bytes; this leaves room for long names
# A tournament's standings.json holds a table of every pair of bots: 6 bots make 14 KB and 939
# JSON values, 100 bots about 260,000. One larger is listed without it: what it would cost to
# build is not bounded by its bytes (at most about 30 MB here), and it may not be a tournament's.
STANDINGS_BYTES: Final = 8 << 20
STANDINGS_VALUES: Final = 1 << 18


def relative(path: Path, folder: Path) -> str:
    """`path` inside `folder`, with forward slashes (an URL's path and an index key)."""
    return path.resolve().relative_to(folder.resolve()).as_posix()


def _first_and_last_lines(path: Path) -> tuple[dict[str, JSON], dict[str, JSON] | None]:
    header = open_replay(path).header  # checked as every reader checks it
    with open_replay_bytes(path) as f:
        tail = _last_line(f).rstrip(b"\n")
    last = decode_line(tail) if tail else None
    return header, last if last is not None and last["type"] == "result" else None


def _last_line(f: io.BufferedIOBase) -> bytes:
    """The last line of a replay: read from its end, or through a compressed one (it cannot
    seek from the end; a game's compressed replay is some tens of KB)."""
    if f.seekable() and not isinstance(f, gzip.GzipFile):
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - TAIL_BYTES))
        return f.read(TAIL_BYTES).rstrip(b"\n").rsplit(b"\n", 1)[-1]
    kept = deque(_lines(f), maxlen=1)
    return kept[0] if kept else b""


def row_from_replay(path: Path, folder: Path) -> dict[str, JSON]:
    """A list row from a replay's header and result lines (a truncated game has no result)."""
    try:
        header, result = _first_and_last_lines(path)
    except (OSError, ValueError) as exc:  # json's errors are ValueErrors, as is ReplayError
        return {"path": relative(path, folder), "id": replay_stem(path), "problem": str(exc)}
    seats = header.get("seats") or []
    outcome = (result or {}).get("outcome") or {}
    return {
        "path": relative(path, folder), "id": header.get("game_id") or replay_stem(path),
        "game": header.get("game"), "names": [str(s.get("name")) for s in seats],
        "scores": outcome.get("scores"), "places": outcome.get("places"),
        "winners": outcome.get("winners"), "termination": outcome.get("termination"),
        "status": (result or {}).get("status"), "faults": (result or {}).get("faults"),
        "outcomes": None, "actions": (result or {}).get("actions"),
        "hands": outcome.get("hands") or outcome.get("rounds"),
        "problem": None if result else "truncated: no result line",
    }


def row_from_result(line: Mapping[str, JSON]) -> dict[str, JSON]:
    """A list row from a tournament's `results.jsonl` line."""
    faults = line.get("faults") or []
    return {
        "path": line.get("replay"), "id": line.get("game_id"), "game": line.get("game"),
        "names": list(line.get("bots") or []), "scores": line.get("scores"),
        "places": line.get("places"), "winners": line.get("winners"),
        "termination": line.get("termination"), "status": line.get("seat_status"),
        "faults": [len(f) for f in faults],
        "outcomes": [sorted({str(x.get("outcome")) for x in f}) for f in faults],
        "actions": line.get("actions"), "hands": line.get("hands"),
        "problem": None if line.get("status") == "ok" else f"status {line.get('status')}",
    }


def _results(folder: Path) -> dict[str, dict[str, JSON]]:
    path = folder / "results.jsonl"
    rows: dict[str, dict[str, JSON]] = {}
    if not path.is_file():
        return rows
    with path.open("rb") as f:
        for raw in _lines(f):
            try:
                line = decode_json(raw)
            except ReplayError:  # a line cut by a kill (the tournament replays that game),
                continue  # or one no tournament wrote
            if isinstance(line, dict) and isinstance(line.get("replay"), str):
                rows[line["replay"]] = row_from_result(line)
    return rows


def _lines(f: io.BufferedIOBase | BinaryIO) -> Iterator[bytes]:
    """The lines of `f` of at most `MAX_LINE` bytes, one at a time (longer ones skipped)."""
    while raw := f.readline(MAX_LINE + 1):
        if len(raw) <= MAX_LINE:
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = f.readline(MAX_LINE + 1)


def page_name(replay: Path) -> str:
    """The name of a replay's page: x.html for x.jsonl and x.jsonl.gz alike."""
    return replay_stem(replay) + ".html"


def folder_replays(folder: Path) -> list[Path]:
    """The replay files under `folder` (as `replay stats` finds them), never outside it."""
    root = folder.resolve()
    return [p for p in replay_files([folder]) if p.resolve().is_relative_to(root)]


def game_rows(folder: Path, paths: Iterable[Path] | None = None) -> list[dict[str, JSON]]:
    """One row per replay under `folder`, in file order."""
    known = _results(folder)
    rows = []
    for path in folder_replays(folder) if paths is None else paths:
        key = relative(path, folder)
        # A replay compressed after its game (x.jsonl.gz) is listed under the name it was
        # written as (x.jsonl); the row names the file there is.
        listed = known.get(key) or known.get(key.removesuffix(".gz"))
        rows.append({**listed, "path": key} if listed else row_from_replay(path, folder))
    return rows


def standings(folder: Path) -> list[dict[str, JSON]] | None:
    """The tournament's standings (`standings.json`), or None where there are none."""
    try:
        with (folder / "standings.json").open("rb") as f:
            text = f.read(STANDINGS_BYTES + 1)
        data = decode_json(text, STANDINGS_VALUES) if len(text) <= STANDINGS_BYTES else None
    except (OSError, ValueError):
        return None
    table = data.get("standings") if isinstance(data, dict) else None
    return table if isinstance(table, list) else None


def list_page(title: str, rows: list[dict[str, JSON]], table: list[dict[str, JSON]] | None,
              link: Callable[[dict[str, JSON]], str | None], seat_links: bool = False) -> str:
    """The page listing `rows` (each linked by `link(row)`) with the standings `table`."""
    for row in rows:
        row["href"] = link(row)
    data = {"title": title, "rows": rows, "standings": table, "seat_links": seat_links,
            "enums": ENUMS}
    return fill(asset("list.html"), TITLE=escape(title), STYLE=site_style("list.css"),
                SCRIPT=asset("list.js"), DATA=script_json(data))


# ----------------------------------------------------------------------------------------------
# `replay html`: the pages on disk


@dataclass(slots=True)
class Written:
    """What `write_pages` wrote, and the replays it could not show whole."""

    pages: list[Path] = field(default_factory=list)
    index: Path | None = None
    problems: list[str] = field(default_factory=list)


# Called as each replay of a folder is done: (the replay, how many are done, of how many).
OnPage = Callable[[Path, int, int], None]


def write_pages(path: Path, out: Path | None = None, seat: int | None = None,
                on_page: OnPage | None = None) -> Written:
    """One page for the replay `path` (to `out`, default `path` with .html), or for a folder
    one page per replay under it plus index.html (in `out`, default `path`/viewer), telling
    `on_page` of each. Pages are owner-only, like the replays: a full view holds every hand.
    `ViewerError` before anything is written if the input cannot be shown at all."""
    if path.is_dir():
        return _write_folder(path, out or path / "viewer", seat, on_page)
    check_replay_file(path)  # a FIFO or device would hang the reading
    target = out or path.with_name(page_name(path))
    if target.is_dir():
        target = target / page_name(path)
    html, problem = replay_page(path, seat)
    private_dir(target.parent, tighten=False)
    write_private_text(target, html)
    return Written([target], None, [f"{path}: {problem}"] if _bad(problem) else [])


def _bad(problem: ReplayError | None) -> bool:
    return problem is not None and not isinstance(problem, ReplayTruncated)


def _check_seat(replays: Iterable[Path], seat: int) -> None:
    for path in replays:
        try:
            players = int(_first_and_last_lines(path)[0]["players"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an unreadable replay is a problem of its own, reported with its page
        if not 0 <= seat < players:
            raise ViewerError(f"--seat {seat}: {path} has seats 0..{players - 1}")


def _write_folder(folder: Path, out: Path, seat: int | None,
                  on_page: OnPage | None = None) -> Written:
    replays = [p for p in folder_replays(folder) if not p.resolve().is_relative_to(out.resolve())]
    if not replays:
        raise ViewerError(f"{folder}: no replay files found")
    if out.exists() and not out.is_dir():
        raise ViewerError(f"{out} is not a folder")
    if seat is not None:
        _check_seat(replays, seat)
    written = Written()
    pages: dict[str, str] = {}
    tell = on_page or (lambda replay, done, total: None)
    for done, replay in enumerate(replays, start=1):
        key = relative(replay, folder)
        page = Path(key).with_name(page_name(replay)).as_posix()
        target = out / page
        back = Path(os.path.relpath(out / "index.html", target.parent)).as_posix()
        try:
            html, problem = replay_page(replay, seat, back)
        except (ReplayError, ReplayPathError) as exc:  # the rest of the folder is shown
            written.problems.append(f"{replay}: {exc}")
            tell(replay, done, len(replays))
            continue
        if _bad(problem):
            written.problems.append(f"{replay}: {problem}")
        private_dir(target.parent)
        write_private_text(target, html)
        written.pages.append(target)
        pages[key] = page
        tell(replay, done, len(replays))
    written.index = out / "index.html"
    private_dir(out)  # made by the first page, unless none could be shown
    title = f"{folder.resolve().name}: {len(replays)} games"
    html = list_page(title, game_rows(folder, replays), standings(folder),
                     lambda row: pages.get(str(row.get("path"))))
    write_private_text(written.index, html)
    return written
