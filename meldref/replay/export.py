"""Replays as data: one row per decision, for parquet, CSV or JSON lines (`meldref replay export`).

Each replay is re-simulated from its seed and actions (every line's sum and every action
checked as `replay verify` does), so each row holds what the seat saw when it decided: its
observation in the environments' encoding (meldref.envs.codec, docs/research.md), the legal
actions, the action taken and its index, the time the bot took, and the game's result for that
seat. Replays are read a line at a time and rows written in batches, so memory holds one game's
rows at most, whatever the number of files (bench/bench_export.py measures it).

Columns: game_id, deal (from a tournament id `t<table>-d<deal>-s<seating>`, else null), seat,
bot, n (the action's number in the game), decision, observation (a list of floats, or the view
as JSON text with `observation="view"`, or absent with "none"), legal_actions (texts),
action, action_index (the fixed space's index of the action: a lay-down or a going out
laid another way than the engine's found way has the same index; null for an action the space
does not number), elapsed (seconds,
null when the referee chose), auto (the referee played for a failed seat), place, score,
winner (whether the seat placed first), file.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final, Literal, Protocol

from ..engine.game import GameState
from ..private import open_private
from .files import Outline, ReplayError, open_replay, replay_files, simulate

Format = Literal["parquet", "csv", "jsonl"]
FORMATS: Final = ("parquet", "csv", "jsonl")
Observation = Literal["vector", "view", "none"]
OBSERVATIONS: Final = ("vector", "view", "none")
BATCH: Final = 2_000  # rows held before a write (a parquet row group): a few MB of vectors
_DEAL: Final = re.compile(r"-d(\d+)-")

COLUMNS: Final = ("game_id", "deal", "seat", "bot", "n", "decision", "observation",
                  "legal_actions", "action", "action_index", "elapsed", "auto", "place",
                  "score", "winner", "file")


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export wrote: files read, rows written, files skipped with why."""

    files: int
    rows: int
    skipped: tuple[tuple[Path, str], ...]


def game_rows(path: Path, observation: Observation = "vector") -> list[dict[str, Any]]:
    """One game's rows (`ReplayError` for a file that does not check out)."""
    from ..envs.codec import find_codec  # numpy: only when exporting

    replay = open_replay(path)  # read once, a line at a time: a row a decision is kept
    header = replay.header
    codec = find_codec(header["game"])
    players = int(header["players"])
    names = replay.seat_names()
    game_id = header.get("game_id")
    deal = _deal(game_id)
    rows: list[dict[str, Any]] = []

    def before(record: dict[str, Any], state: GameState) -> None:
        seat = int(record["seat"])
        view = state.observation(seat).to_json()
        texts = [str(a) for a in state.legal_actions()]
        row: dict[str, Any] = {
            "game_id": game_id, "deal": deal, "seat": seat, "bot": names[seat],
            "n": record["n"], "decision": record["decision"],
            "legal_actions": texts, "action": record["action"],
            "action_index": codec.action_index(record["action"], view),
            "elapsed": record.get("elapsed"), "auto": bool(record.get("auto")),
            "file": str(path),
        }
        if observation == "vector":
            row["observation"] = codec.encode(view, players)  # float32: 4 bytes a feature
        elif observation == "view":
            row["observation"] = json.dumps(view, sort_keys=True)
        rows.append(row)

    seen = Outline()
    records = seen.watch(replay.records)
    state = simulate(replay.over(records), before=before)
    if seen.problem is not None:
        raise seen.problem
    outcome = state.outcome
    if seen.result is None or outcome is None:
        raise ReplayError(0, "the game has no result (cut short): nothing exported")
    for row in rows:
        seat = row["seat"]
        row.update(place=outcome.places[seat], score=outcome.scores[seat],
                   winner=outcome.places[seat] == 1)
    return rows


def _deal(game_id: object) -> int | None:
    match = _DEAL.search(str(game_id or ""))
    return int(match.group(1)) if match else None


class RowWriter(Protocol):
    def write(self, rows: list[dict[str, Any]]) -> None: ...

    def close(self) -> None: ...


def export(paths: Iterable[Path], out: Path, fmt: Format = "parquet",
           observation: Observation = "vector",
           on_file: Any = None) -> Exported:
    """Write every decision of the replays under `paths` to `out` as `fmt`, streaming.

    A file that does not check out is skipped and named in the result (the rest export);
    `on_file(path)` is called after each file (progress)."""
    files = rows = 0
    skipped: list[tuple[Path, str]] = []
    batch: list[dict[str, Any]] = []
    writer = _writer(out, fmt, observation)
    try:
        for path in replay_files(paths):
            try:
                batch.extend(game_rows(path, observation))
                files += 1
            except ReplayError as exc:
                skipped.append((path, str(exc)))
            if len(batch) >= BATCH:
                writer.write(batch)
                rows += len(batch)
                batch = []
            if on_file is not None:
                on_file(path)
        if batch:
            writer.write(batch)
            rows += len(batch)
    finally:
        writer.close()
    return Exported(files, rows, tuple(skipped))


def _writer(out: Path, fmt: Format, observation: Observation) -> RowWriter:
    columns = [c for c in COLUMNS if observation != "none" or c != "observation"]
    if fmt == "parquet":
        return ParquetRows(out, observation, columns)
    if fmt == "csv":
        return CsvRows(out, columns)
    return JsonRows(out)


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """`row` with its vector as a list of numbers (JSON's and CSV's form)."""
    obs = row.get("observation")
    if obs is None or isinstance(obs, str):
        return row
    return {**row, "observation": [float(x) for x in obs]}


class JsonRows:
    """One JSON object a line."""

    def __init__(self, out: Path) -> None:
        self.file: IO[str] = open_private(out, "w", encoding="utf-8")

    def write(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            self.file.write(json.dumps(_plain(row), separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.file.close()


class CsvRows:
    """CSV with a header line; lists (observation, legal actions) as JSON text in their cell."""

    def __init__(self, out: Path, columns: list[str]) -> None:
        self.file: IO[str] = open_private(out, "w", encoding="utf-8", newline="")
        self.csv = csv.DictWriter(self.file, fieldnames=columns)
        self.csv.writeheader()

    def write(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            self.csv.writerow({k: json.dumps(v) if isinstance(v, list) else v
                               for k, v in _plain(row).items()})

    def close(self) -> None:
        self.file.close()


class ParquetRows:
    """Parquet (pyarrow), a row group per batch."""

    def __init__(self, out: Path, observation: Observation, columns: list[str]) -> None:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ReplayError(0, "parquet needs pyarrow: pip install 'meldref[envs]' "
                                 "(or --format csv / jsonl)") from None
        self.pa = pa
        types = {
            "game_id": pa.string(), "deal": pa.int64(), "seat": pa.int64(), "bot": pa.string(),
            "n": pa.int64(), "decision": pa.string(),
            "observation": pa.list_(pa.float32()) if observation == "vector" else pa.string(),
            "legal_actions": pa.list_(pa.string()), "action": pa.string(),
            "action_index": pa.int64(), "elapsed": pa.float64(), "auto": pa.bool_(),
            "place": pa.int64(), "score": pa.int64(), "winner": pa.bool_(), "file": pa.string(),
        }
        self.schema = pa.schema([(c, types[c]) for c in columns])
        # Through a file of ours (owner-only, no link followed), not by path.
        self.file: IO[bytes] = open_private(out, "wb")
        self.writer = pq.ParquetWriter(self.file, self.schema)

    def write(self, rows: list[dict[str, Any]]) -> None:
        table = self.pa.Table.from_pylist(rows, schema=self.schema)
        self.writer.write_table(table)

    def close(self) -> None:
        self.writer.close()
        self.file.close()


def read_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a JSON-lines export (for tests and quick looks)."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)
