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
legal_indices (the fixed space's indices of the legal actions, ascending), mask (with
`mask=True`: 1 at each of them, 0 elsewhere, the environments' `action_mask`), action,
action_index (the fixed space's index of the action: a lay-down or a going out laid another
way than the engine's found way has the same index; null for an action the space does not
number), reward (what the environments give that seat for that decision: meldref.envs.rewards'
`reward` kind, "score" by default, summed from its action up to its next decision, so a
seat's rewards add up to its return; a seat's first row also holds anything before it),
elapsed (seconds, null when the referee chose), auto (the referee played for a failed seat),
place, score, winner (whether the seat placed first: these three as the replay's verified
result says, a seat the forfeits put out ranked last; the end's place rewards too), file.

An export is never written where the replay tools would read it as a replay (a `.jsonl` name in
a folder that holds, at any depth, a replay exported): `replay stats` of that folder would fail
on it. `ExportPlaceError` says so before anything is written.
"""

from __future__ import annotations

import csv
import json
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final, Literal, Protocol

from ..engine.game import JSON, GameState, Outcome, Termination
from ..envs.record import GameLog
from ..envs.rewards import Reward, check_reward, end_rewards, step_rewards
from ..private import open_private
from .files import (
    NOT_REPLAYS,
    REPLAY_SUFFIXES,
    Outline,
    ReplayError,
    ReplayWriter,
    Step,
    open_replay,
    replay_files,
    simulate,
)
from .schema import Record

if TYPE_CHECKING:  # numpy's types only: numpy itself is imported when exporting (game_rows)
    from ..envs.codec import Mask, Vector

# One row of an export: a column's name and its value (numbers, texts, lists, an array).
Row = dict[str, object]
Format = Literal["parquet", "csv", "jsonl"]
FORMATS: Final = ("parquet", "csv", "jsonl")
Observation = Literal["vector", "view", "none"]
OBSERVATIONS: Final = ("vector", "view", "none")
BATCH: Final = 2_000  # rows held before a write (a parquet row group): a few MB of vectors
_DEAL: Final = re.compile(r"-d(\d+)-")

COLUMNS: Final = ("game_id", "deal", "seat", "bot", "n", "decision", "observation",
                  "legal_actions", "legal_indices", "mask", "action", "action_index", "reward",
                  "elapsed", "auto", "place", "score", "winner", "file")


@dataclass(frozen=True, slots=True)
class Options:
    """What each row holds beyond the fixed columns."""

    observation: Observation = "vector"
    mask: bool = False
    reward: Reward = "score"

    def columns(self) -> list[str]:
        return [c for c in COLUMNS if (c != "observation" or self.observation != "none")
                and (c != "mask" or self.mask)]


class ExportPlaceError(ReplayError):
    """The export would land where the replay tools read replays."""

    def __init__(self, message: str) -> None:
        super().__init__(0, message)


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export wrote: files read, rows written, files skipped with why."""

    files: int
    rows: int
    skipped: tuple[tuple[Path, str], ...]


def game_rows(path: Path, options: Options = Options()) -> list[Row]:
    """One game's rows (`ReplayError` for a file that does not check out)."""
    # numpy's import (a tenth of a second) only when exporting, not for every `replay` command
    from ..envs.codec import find_codec, legal_indices, mask_of  # noqa: PLC0415 start-up: numpy

    replay = open_replay(path)  # read once, a line at a time: a row a decision is kept
    header = replay.header
    info = replay.game
    codec = find_codec(header["game"])
    players = int(header["players"])
    names = replay.seat_names()
    game_id = header.get("game_id")
    deal = _deal(game_id)
    rows: list[Row] = []
    row_seats: list[int] = []  # each row's seat
    row_rewards: list[float] = []  # each row's reward, summed as the game goes
    last_row: list[int | None] = [None] * players  # each seat's row taking rewards, by place
    early = [0.0] * players  # rewards before a seat's first decision (its first row takes them)
    scores: list[int] = []

    def before(record: Record, state: GameState) -> None:
        seat = int(record["seat"])
        view = state.observation(seat).to_json()
        texts = [str(a) for a in state.legal_actions()]
        numbered = legal_indices(codec, texts, view)
        row: Row = {
            "game_id": game_id, "deal": deal, "seat": seat, "bot": names[seat],
            "n": record["n"], "decision": record["decision"],
            "legal_actions": texts, "legal_indices": sorted(numbered), "action": record["action"],
            "action_index": codec.action_index(record["action"], view),
            "reward": 0.0, "elapsed": record.get("elapsed"),  # the reward: summed at the end
            "auto": bool(record.get("auto")), "file": str(path),
        }
        row_rewards.append(early[seat])
        early[seat] = 0.0
        if options.observation == "vector":
            row["observation"] = codec.encode(view, players)  # float32: 4 bytes a feature
        elif options.observation == "view":
            row["observation"] = json.dumps(view, sort_keys=True)
        if options.mask:
            row["mask"] = mask_of(codec, numbered)
        last_row[seat] = len(rows)
        rows.append(row)
        row_seats.append(seat)
        scores[:] = state.scores

    def after(step: Step, state: GameState) -> None:
        # The end's rewards come from the result record below: a game the forfeits ended has
        # no outcome in the state, and a forfeit moves places.
        rewards = step_rewards(options.reward, info, scores, state.scores, None)
        for seat, reward in enumerate(rewards):
            credit(seat, reward)

    def credit(seat: int, reward: float) -> None:
        at = last_row[seat]
        if at is None:
            early[seat] += reward
        else:
            row_rewards[at] += reward

    seen = Outline()
    records = seen.watch(replay.records)
    simulate(replay.over(records), on_step=after, before=before)
    if seen.problem is not None:
        raise seen.problem
    if seen.result is None:
        raise ReplayError(0, "the game has no result (cut short): nothing exported")
    outcome = result_outcome(seen.result)
    for seat, reward in enumerate(end_rewards(options.reward, outcome, players)):
        credit(seat, reward)
    for row, seat, reward in zip(rows, row_seats, row_rewards, strict=True):
        row.update(reward=reward, place=outcome.places[seat], score=outcome.scores[seat],
                   winner=outcome.places[seat] == 1)
    return rows


def result_outcome(result: Mapping[str, JSON]) -> Outcome:
    """The outcome a replay's result record holds (verified: the referee's, forfeits ranked)."""
    stored = result["outcome"]
    return Outcome(Termination(stored["termination"]), tuple(stored["places"]),
                   tuple(stored["scores"]))


def _deal(game_id: object) -> int | None:
    match = _DEAL.search(str(game_id or ""))
    return int(match.group(1)) if match else None


class RowWriter(Protocol):
    def write(self, rows: list[Row]) -> None: ...

    def close(self) -> None: ...


def export(paths: Iterable[Path], out: Path, fmt: Format = "parquet",
           observation: Observation = "vector",
           on_file: Callable[[Path], object] | None = None, *,
           mask: bool = False, reward: Reward = "score") -> Exported:
    """Write every decision of the replays under `paths` to `out` as `fmt`, streaming;
    `mask` adds the mask column, `reward` is the rewards' kind (meldref.envs.rewards).

    A file that does not check out is skipped and named in the result (the rest export);
    `on_file(path)` is called after each file (progress). `ExportPlaceError` before anything
    is written if `out` would be read as a replay (module docstring)."""
    options = Options(observation, mask, check_reward(reward))
    files = list(replay_files(paths))
    check_place(out, files)
    count = rows = 0
    skipped: list[tuple[Path, str]] = []
    batch: list[Row] = []
    writer = _writer(out, fmt, options)
    try:
        for path in files:
            try:
                batch.extend(game_rows(path, options))
                count += 1
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
    return Exported(count, rows, tuple(skipped))


def check_place(out: Path, replays: Iterable[Path]) -> None:
    """`ExportPlaceError` if `out` would be read as a replay: a name the replay tools take
    (`replay_files`) in a folder holding one of `replays`, at any depth."""
    if not (out.name.endswith(REPLAY_SUFFIXES) and out.name not in NOT_REPLAYS):
        return
    folder = out.absolute().parent.resolve()
    for replay in replays:
        if folder in replay.absolute().resolve().parents:
            raise ExportPlaceError(
                f"{out}: the replay tools would read this file as a replay (they read every "
                f"*.jsonl under {folder}, where {replay} is), so `replay stats` of that folder "
                "would fail on it; write it outside that folder, or name it *.ndjson")


def _writer(out: Path, fmt: Format, options: Options) -> RowWriter:
    columns = options.columns()
    if fmt == "parquet":
        return ParquetRows(out, options.observation, columns)
    if fmt == "csv":
        return CsvRows(out, columns)
    return JsonRows(out)


def _plain(row: Row) -> Row:
    """`row` with its arrays (vector, mask) as lists of numbers (JSON's and CSV's form)."""
    plain = dict(row)
    obs = row.get("observation")
    if obs is not None and not isinstance(obs, str):
        plain["observation"] = [float(x) for x in typing.cast("Vector", obs)]
    if "mask" in row:
        plain["mask"] = typing.cast("Mask", row["mask"]).tolist()
    return plain


class JsonRows:
    """One JSON object a line."""

    def __init__(self, out: Path) -> None:
        self.file: IO[str] = open_private(out, "w", encoding="utf-8")

    def write(self, rows: list[Row]) -> None:
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

    def write(self, rows: list[Row]) -> None:
        for row in rows:
            self.csv.writerow({k: json.dumps(v) if isinstance(v, list) else v
                               for k, v in _plain(row).items()})

    def close(self) -> None:
        self.file.close()


class ParquetRows:
    """Parquet (pyarrow), a row group per batch."""

    def __init__(self, out: Path, observation: Observation, columns: list[str]) -> None:
        try:
            # pyarrow: the `envs` extra's, asked for only by a parquet export
            import pyarrow as pa  # noqa: PLC0415 pyarrow, an extra: parquet only
            import pyarrow.parquet as pq  # noqa: PLC0415 pyarrow, an extra: parquet only
        except ImportError:
            raise ReplayError(0, "parquet needs pyarrow: pip install 'meldref[envs]' "
                                 "(or --format csv / jsonl)") from None
        self.pa = pa
        types = {
            "game_id": pa.string(), "deal": pa.int64(), "seat": pa.int64(), "bot": pa.string(),
            "n": pa.int64(), "decision": pa.string(),
            "observation": pa.list_(pa.float32()) if observation == "vector" else pa.string(),
            "legal_actions": pa.list_(pa.string()), "legal_indices": pa.list_(pa.int64()),
            "mask": pa.list_(pa.int8()), "action": pa.string(),
            "action_index": pa.int64(), "reward": pa.float64(), "elapsed": pa.float64(),
            "auto": pa.bool_(),
            "place": pa.int64(), "score": pa.int64(), "winner": pa.bool_(), "file": pa.string(),
        }
        self.schema = pa.schema([(c, types[c]) for c in columns])
        # Through a file of ours (owner-only, no link followed), not by path.
        self.file: IO[bytes] = open_private(out, "wb")
        self.writer = pq.ParquetWriter(self.file, self.schema)

    def write(self, rows: list[Row]) -> None:
        table = self.pa.Table.from_pylist(rows, schema=self.schema)
        self.writer.write_table(table)

    def close(self) -> None:
        self.writer.close()
        self.file.close()


def read_rows(path: Path) -> Iterator[Row]:
    """The rows of a JSON-lines export (for tests and quick looks)."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


class Played(Protocol):
    """An environment, or a wrapper of one (Gymnasium's, PettingZoo's): `unwrapped` is it."""

    @property
    def unwrapped(self) -> object: ...


def save_replay(env: Played, path: Path) -> Path:
    """The game an environment played (`MeldrefAEC`, `SeatEnv` or one wrapping either), so
    far, as a replay at `path`: `meldref replay verify` accepts it and `replay html` shows it
    (a game not over has no result line yet, and verify says it was cut short)."""
    log = getattr(env.unwrapped, "log", None)
    if not isinstance(log, GameLog):
        raise ValueError("the environment has played no game: call reset() first")
    header, records = log.records()
    with ReplayWriter(path, header) as writer:
        for record in records:
            writer.write(record)
    return path
