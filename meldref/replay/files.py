"""Replay files: JSON Lines written record by record, read back, checked and re-simulated.

Layout (spec/REPLAY.md): a header line, then the referee's records in order (start, action,
fault, ...), then a result line. Every line ends with a `"sum"` field chaining a hash of the
line's bytes to the previous line's sum, so `verify` finds the first altered line even where the
change does not alter play (a name, a fault's detail), and a line cut short is a truncation.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import stat
import zlib
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final, NoReturn

from .. import __version__
from ..engine.game import (
    JSON,
    Event,
    GameInfo,
    GameState,
    IllegalActionError,
    InvalidActionError,
    RuleOptionError,
    Rules,
    Termination,
    UnknownGameError,
    find_game,
    rules_from_json,
)
from ..engine.position import Position, PositionError, read_position
from ..private import open_private, private_dir
from ..protocol.records import event_record

if TYPE_CHECKING:
    from . import schema
    from .schema import Record

FORMAT = "meldref-replay"
FORMAT_VERSION = 1
_SUM = re.compile(rb',"sum":"([0-9a-f]{16})"\}\n\Z')  # a line read whole, with its newline
# A replay is written as .jsonl and may be kept compressed at rest (`compress_replay`): every
# reader takes both, told apart by the file's first bytes (gzip's magic number), not its name.
REPLAY_SUFFIXES: Final = (".jsonl.gz", ".jsonl")
NOT_REPLAYS: Final = ("results.jsonl", "results.jsonl.gz")  # a tournament's result lines
GZIP_MAGIC: Final = b"\x1f\x8b"
GZIP_LEVEL: Final = 6  # zlib's default: most of level 9's saving at a third of its time


def _digest(previous: str, *body: bytes | memoryview) -> str:
    # Over the body's parts as they are: a reader need not copy a long line to join them.
    digest = hashlib.sha256(previous.encode())
    for part in body:
        digest.update(part)
    return digest.hexdigest()[:16]


def _dumps(record: Mapping[str, JSON]) -> str:
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class ReplayWriter:
    """Writes one replay, flushing every line so a killed referee leaves a readable file."""

    def __init__(self, path: str | os.PathLike[str], header: Mapping[str, JSON]) -> None:
        self.path = Path(path)
        private_dir(self.path.parent, tighten=False)  # the folder given may be a shared one
        self._file: IO[str] | None = open_private(self.path, "w", encoding="utf-8",
                                                  newline="\n")
        self._sum = ""
        self.write({"type": "header", "format": FORMAT, "version": FORMAT_VERSION,
                    "meldref": __version__, **header})

    def write(self, record: Mapping[str, JSON]) -> None:
        """Append one record (a JSON-able dict with a "type") and flush it to disk."""
        if self._file is None:
            raise ValueError(f"replay {self.path} is closed")
        clean = {k: v for k, v in record.items() if k != "sum"}
        body = _dumps(clean)
        self._sum = _digest(self._sum, body.encode())
        self._file.write(f'{body[:-1]},"sum":"{self._sum}"}}\n')
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> ReplayWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ----------------------------------------------------------------------------------------------
# Reading


class ReplayPathError(ValueError):
    """A path given as a replay that is not one to read: missing, a folder where a file is
    wanted, or a special file (a FIFO, a device, a socket) that reading would hang on."""


def write_first_actions(source: Path, target: Path, actions: int) -> Path:
    """A copy of replay `source` cut after `actions` actions, as a game stopped there leaves
    it (no result record); `target`."""
    replay = open_replay(source)
    header = {k: v for k, v in replay.header.items()
              if k not in ("type", "format", "version", "meldref")}
    with ReplayWriter(target, header) as writer:
        seen = 0
        for _, record in replay.records:
            if record["type"] == "action":
                if seen == actions:
                    break
                seen += 1
            if record["type"] != "result":
                writer.write(record)
    return target


def check_replay_file(path: Path) -> Path:
    """`path`, if it is a regular file to read a replay from; `ReplayPathError` saying why not."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise ReplayPathError(f"{path}: no such file") from None
    except OSError as exc:
        raise ReplayPathError(f"{path}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise ReplayPathError(f"{path} is a folder, not a replay file")
    if not stat.S_ISREG(mode):
        raise ReplayPathError(f"{path} is not a regular file (a FIFO, device or socket), "
                              "not a replay")
    return path


def replay_files(paths: Iterable[Path]) -> Iterator[Path]:
    """The replay files named: files as given, folders searched for *.jsonl and *.jsonl.gz (a
    tournament's replays/ folder; its results.jsonl is not a replay); `ReplayPathError` for a
    path that does not exist or is a special file. Where x.jsonl and x.jsonl.gz both are (a
    compression stopped before it removed the first), the game is x.jsonl.gz: whole, it was
    renamed into place."""
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            found = {p for suffix in REPLAY_SUFFIXES for p in path.rglob(f"*{suffix}")
                     if p.name not in NOT_REPLAYS and p.is_file()}
            yield from sorted(p for p in found if p.with_name(p.name + ".gz") not in found)
        else:
            yield check_replay_file(path)


def replay_stem(path: Path) -> str:
    """A replay file's name without .jsonl or .jsonl.gz: its game's id as a tournament names
    it, and the name of its page."""
    for suffix in REPLAY_SUFFIXES:
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.name[:-len(suffix)]
    return path.stem


def open_replay_bytes(path: Path) -> io.BufferedIOBase:
    """`path` opened to read its lines: decompressed if it is gzip (`compress_replay`)."""
    with path.open("rb") as f:
        compressed = f.read(len(GZIP_MAGIC)) == GZIP_MAGIC
    return gzip.open(path, "rb") if compressed else path.open("rb")


def compress_replay(path: Path) -> Path:
    """Replay `path` (x.jsonl, a finished game's) kept compressed at rest: x.jsonl.gz,
    owner-only, written beside it under a temporary name, synced and renamed into place, then
    x.jsonl removed; the new path. A reader finds one whole file or the other, never half of
    one (`replay_files` takes the .gz where a stop left both)."""
    target = path.with_name(path.name + ".gz")
    temporary = path.with_name(f".{path.name}.{os.getpid()}.gz-part")
    try:
        with open_private(path, "rb") as source, open_private(temporary, "wb") as raw:
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=GZIP_LEVEL,
                               mtime=0) as packed:
                shutil.copyfileobj(source, packed)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    path.unlink()
    return target


class ReplayError(ValueError):
    """A replay that cannot be read or does not check out; `line` is 1-based (0: the file)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.reason = message


class ReplayTruncated(ReplayError):
    """A replay that stops before its game's end: a cut last line, or no result line. What it
    holds is whole: it can be shown, resumed and counted as a game not finished."""


@dataclass(frozen=True, slots=True)
class Replay:
    """A replay's header and its records (each with its 1-based line number): read from the
    file one line at a time whenever they are iterated (`open_replay`), or held (`load_replay`,
    for small files)."""

    path: Path
    header: Record
    records: Iterable[tuple[int, Record]] = ()

    def over(self, records: Iterable[tuple[int, Record]]) -> Replay:
        """The same replay, its records taken from `records` (an `Outline` watching them)."""
        return Replay(self.path, self.header, records)

    @property
    def result(self) -> Record | None:
        """The result record (a pass over the records)."""
        return next((record for _, record in self.records if record["type"] == "result"), None)

    @property
    def game(self) -> GameInfo:
        return find_game(self.header["game"])

    def actions(self) -> list[tuple[int, Record]]:
        """Every action record, held: for tests and small files (commands use an `Outline`)."""
        return [(n, r) for n, r in self.records if r["type"] == "action"]

    def faults(self) -> list[Record]:
        return [r for _, r in self.records if r["type"] == "fault"]

    def rules(self) -> Rules:
        return rules_from_json(self.game.rules_type, self.header["rules"])

    def new_state(self) -> GameState:
        """The game as it starts, from the header: a new deal, or its `position`;
        `ReplayError` if the header cannot start one (rules that are not the game's, a player
        count it does not take, a position that is not one)."""
        h = self.header
        try:
            if "position" in h:
                return self.position().start()
            return self.game.new_game(self.rules(), int(h["players"]), h["seed"])
        except (RuleOptionError, ValueError, TypeError) as exc:
            raise ReplayError(1, f"cannot start the game from the header: {exc}") from None

    def position(self) -> Position:
        """The header's `position` (a game that started there), checked against its seed and
        players; `PositionError` if it is not a position of this game and header."""
        h = self.header
        data = h["position"]
        if not isinstance(data, dict):
            raise PositionError("position: a table of the position's keys")
        position = read_position(self.game, self.rules(), data)
        if position.seed != h["seed"] or position.players != h["players"]:
            raise PositionError(f"position: seed {position.seed} and {position.players} seats, "
                                f"the header's {h['seed']!r} and {h['players']!r}")
        return position

    def seat_names(self) -> list[str]:
        seats = self.header.get("seats") or []
        return [str(s.get("name") or s.get("command") or f"seat {i}")
                for i, s in enumerate(seats)]


@dataclass(frozen=True, slots=True)
class _FileRecords:
    """A replay's records after its header, read again from the file at each iteration."""

    path: Path
    header: Record

    def __iter__(self) -> Iterator[tuple[int, Record]]:
        lines = read_lines(self.path)
        if next(lines)[1] != self.header:
            raise ReplayError(1, "the file changed while it was read (another header)")
        yield from lines


def open_replay(path: str | os.PathLike[str]) -> Replay:
    """The replay in `path`, its header read and checked; its records are read from the file,
    one line at a time and with every check of `read_lines`, each time they are iterated."""
    lines = read_lines(path)
    try:
        _, header = next(lines)
    finally:
        lines.close()
    return Replay(Path(path), header, _FileRecords(Path(path), header))


def load_replay(path: str | os.PathLike[str]) -> Replay:
    """A replay with every record held in memory: for tests and small files. A command reads
    with `open_replay`, which holds one record at a time."""
    replay = open_replay(path)
    return replay.over(list(replay.records))


@dataclass(slots=True)
class Outline:
    """What one pass over a replay's records keeps besides the game: the number of actions,
    the fault records (each with the number of actions before it), the result, and the bad
    line that ended the pass (None: none did). Bounded whatever the file: `read_lines` lets
    through at most 148 faults a seat (`schema.Order`), with details of 1,000 characters."""

    actions: int = 0
    faults: list[tuple[int, Record]] = field(default_factory=list)
    result: Record | None = None
    problem: ReplayError | None = None

    def watch(self, records: Iterable[tuple[int, Record]],
              ) -> Iterator[tuple[int, Record]]:
        """`records`, noted as they pass; a bad line ends them and is kept as `problem`."""
        try:
            for number, record in records:
                if record["type"] == "action":
                    self.actions += 1
                elif record["type"] == "fault":
                    self.faults.append((self.actions, record))
                elif record["type"] == "result":
                    self.result = record
                yield number, record
        except ReplayError as exc:
            self.problem = exc

    @property
    def damaged(self) -> ReplayError | None:
        """The bad line, unless it is only a cut last line (what a killed referee leaves)."""
        return None if isinstance(self.problem, ReplayTruncated) else self.problem

    def fault_records(self) -> list[Record]:
        return [record for _, record in self.faults]

    def read(self, replay: Replay, play: Callable[[Replay], object] | None = None) -> Outline:
        """One pass over the records of `replay`: `play(replay)` (a `simulate`) over them,
        then the rest read (a game that went wrong part way still has its faults and
        result). The first problem, a bad line or a bad action (`ReplayError` from `play`),
        is `problem`."""
        records = self.watch(replay.records)
        failed: ReplayError | None = None
        try:
            if play is not None:
                play(replay.over(records))
        except ReplayError as exc:
            failed = exc
        for _ in records:
            pass
        if failed is not None and (self.problem is None or failed.line < self.problem.line):
            self.problem = failed
        return self


def read_through(replay: Replay, play: Callable[[Replay], object] | None = None) -> Outline:
    """One pass over the records of `replay` (`Outline.read`)."""
    return Outline().read(replay, play)


# A replay line is small: the largest meldref writes, a hand's end at 14 seats, is 3.4 KB. A
# longer line is not a replay's, and what reading it costs is bounded by these two caps (issue
# 43): its bytes (1 MiB: at most 4 MiB of text once decoded, four bytes a character) and its
# JSON values, counted before JSON builds any. Bytes alone do not bound the values: 1 MiB of
# `[{},{},...]` is 350,000 objects, 30 MB once built. The count is an upper bound, from the
# marks that precede every value but the first (`[`, `{`, `,`, `:`; strings not skipped).
# The largest record meldref writes holds under 600 values; 65,536 leave a later writer's keys
# room and cost at most 8 MB to build.
MAX_LINE: Final = 1 << 20
MAX_VALUES: Final = 1 << 16
_MARKS: Final = (b"[", b"{", b",", b":")


def read_lines(path: str | os.PathLike[str]) -> Generator[tuple[int, Record], None, None]:
    """Each line as a dict, checking its sum chain, its record's shape (`schema`) and where it
    stands (`schema.Order`: the header first, then the start, the result last), read one line
    at a time; `ReplayError` at the first bad line (`ReplayTruncated` for a cut last line),
    `ReplayPathError` if the file cannot be read (permissions, an I/O error: a problem of the
    path, not of its content)."""
    try:
        yield from _read_lines(check_replay_file(Path(path)))
    except OSError as exc:
        raise ReplayPathError(f"{path}: {exc.strerror or exc}") from None


def _read_lines(path: Path) -> Iterator[tuple[int, Record]]:
    try:
        with open_replay_bytes(path) as f:
            yield from _checked_lines(f)
    except EOFError:  # gzip's: the stream stops before its end marker
        raise ReplayTruncated(0, "the compressed file is cut short") from None
    except (gzip.BadGzipFile, zlib.error) as exc:  # an OSError, but of the content
        raise ReplayError(0, f"damaged compressed data: {exc}") from None


def _checked_lines(f: io.BufferedIOBase) -> Iterator[tuple[int, Record]]:
    # Imported when a replay is read, not written: the schema's pydantic models cost a
    # tournament worker, which only writes, a third of a second of CPU to import.
    from . import schema  # noqa: PLC0415 start-up: pydantic, not for a worker that writes

    previous = ""
    number = 0
    order: schema.Order | None = None
    while raw := f.readline(MAX_LINE + 1):
        number += 1
        if number == 1:
            _check_first(raw)
        if len(raw) > MAX_LINE:
            raise ReplayError(number, f"altered: a line longer than {MAX_LINE >> 20} MiB (a "
                                      "replay line is a few KB)")
        record, previous = _check_line(number, raw, previous)
        if order is None:
            check_header(record)
            order = schema.Order(int(record["players"]))
        else:
            _check_place(order, number, record)
        yield number, record
    if number == 0:
        raise ReplayError(1, "empty file (no header)")


def _check_place(order: schema.Order, number: int, record: Record) -> None:
    wrong = order.problem(record)
    if wrong is not None:
        raise ReplayError(number, f"altered: {wrong}")
    if record["type"] == "result":
        check_result_shape(order.players, number, record)


def _check_first(raw: bytes) -> None:
    if b'"type":"header"' not in raw and FORMAT.encode() not in raw:
        # Neither mark of a header (one changed byte cannot take both): another kind of file.
        raise ReplayError(1, "not a meldref replay (no header)")


def _check_line(number: int, raw: bytes, previous: str) -> tuple[Record, str]:
    # `raw` with its newline: a copy without it would cost its size again.
    if not raw.endswith(b"\n"):
        raise ReplayTruncated(number, "truncated: the last line is cut short (no newline)")
    text = _text(number, raw)
    match = _SUM.search(raw)
    if match is None:
        raise ReplayError(number, 'altered: the line does not end with its "sum" field')
    claimed = match.group(1).decode()
    if _digest(previous, memoryview(raw)[: match.start()], b"}") != claimed:
        raise ReplayError(number, "altered: the line's sum does not match its contents")
    record = _record(number, text)
    record.pop("sum", None)
    from . import schema  # noqa: PLC0415 start-up: pydantic, not for a worker that writes

    wrong = schema.problem(record)
    if wrong is not None:
        raise ReplayError(number, f"altered: a {record['type']} record with {wrong}")
    return record, claimed


def decode_line(raw: bytes, line: int = 0) -> Record:
    """The JSON object with a "type" that one line's bytes hold (its sum unchecked: the line
    is read alone, as a folder's list reads a result), with the checks of any replay line
    before it is built; `ReplayError` saying why not."""
    return _record(line, _text(line, raw))


def decode_json(raw: bytes, most: int = MAX_VALUES) -> JSON:
    """The JSON value in `raw` (a line of a tournament's results, its standings) if it holds
    at most `most` values, counted before any is built; `ReplayError` saying why not."""
    return _json(0, _text(0, raw, most))


def _text(number: int, raw: bytes, most: int = MAX_VALUES) -> str:
    values = 1 + sum(raw.count(mark) for mark in _MARKS)
    if values > most:
        raise ReplayError(number, f"altered: a line of up to {values:,} JSON values, over the "
                                  f"{most:,} a replay line may hold (a record meldref writes "
                                  "holds under 1,000)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplayError(number, "altered: not valid UTF-8") from None


def _json(number: int, text: str) -> JSON:
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, huge numbers, deep nesting
        reason = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
        raise ReplayError(number, f"altered: not JSON a replay can hold ({reason})") from None


def _record(number: int, text: str) -> Record:
    record = _json(number, text)
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise ReplayError(number, 'altered: not a JSON object with a "type"')
    return record


def _no_constant(name: str) -> NoReturn:
    # Python's json reads NaN and Infinity, which are not JSON and which no writer of ours
    # writes; a NaN clock in a header's policy would pass every comparison with it.
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, JSON]]) -> Record:
    # A key given twice means one thing to Python's json (the last) and another to readers
    # that take the first: a line that says two things is not a replay's.
    record = dict(pairs)
    if len(record) != len(pairs):
        counts = Counter(k for k, _ in pairs)
        twice = next(k for k, _ in pairs if counts[k] > 1)
        raise ValueError(f"the key {twice!r} given twice in one object")
    return record


def check_header(header: Record) -> None:
    if header.get("type") != "header" or header.get("format") != FORMAT:
        raise ReplayError(1, f"not a meldref replay header (format {FORMAT!r} expected)")
    if header.get("version") != FORMAT_VERSION:
        raise ReplayError(1, f"replay format version {header.get('version')!r} is not "
                             f"{FORMAT_VERSION}")
    missing = [k for k in ("game", "rules", "seed", "players") if k not in header]
    if missing:
        raise ReplayError(1, f"header lacks {', '.join(missing)}")
    try:
        game = find_game(str(header["game"]))
    except UnknownGameError as exc:
        raise ReplayError(1, str(exc)) from None
    players = int(header["players"])
    if not game.min_players <= players <= game.max_players:
        raise ReplayError(1, f"altered: {players} players; {game.name} seats "
                             f"{game.min_players}..{game.max_players}")
    seats = header.get("seats") or []
    if seats and [s["seat"] for s in seats] != list(range(players)):
        raise ReplayError(1, f"altered: the header's seats are {[s['seat'] for s in seats]}, "
                             f"not one per each of the {players} players in order")


def check_result_shape(players: int, line: int, result: Record) -> None:
    """`ReplayError` unless the result speaks of the game's `players` seats: one place, score
    and status per seat, winners among them, a termination the games know. (What it claims is
    checked by `verify`; this is what any reader needs to count it.)"""
    outcome = result["outcome"]
    for key, value in (("places", outcome["places"]), ("scores", outcome["scores"]),
                       ("status", result.get("status")), ("faults", result.get("faults"))):
        if value is not None and len(value) != players:
            raise ReplayError(line, f"altered: the result's {key} name {len(value)} seats, the "
                                    f"game has {players}")
    if any(seat >= players for seat in outcome.get("winners", [])):
        raise ReplayError(line, f"altered: a winner that is not one of the {players} seats")
    if outcome["termination"] not in {t.value for t in Termination}:
        raise ReplayError(line, f"altered: termination {outcome['termination']!r} is none of "
                                f"{', '.join(t.value for t in Termination)}")


# ----------------------------------------------------------------------------------------------
# Re-simulation


def event_for_seat(data: Mapping[str, JSON], seat: int | None) -> Record:
    """A stored event (`protocol.referee.event_record`) as `seat` saw it (None: everything)."""
    private = set(data.get("private") or ())
    show_all = seat is None or data.get("seat") == seat
    return {k: v for k, v in data.items() if k != "private" and (show_all or k not in private)}


@dataclass(slots=True)
class Step:
    """One applied action during re-simulation."""

    line: int
    record: Record
    seat: int
    decision: str
    action: str
    events: list[Event]


def simulate(
    replay: Replay,
    on_step: Callable[[Step, GameState], None] | None = None,
    stop_after: int | None = None,
    before: Callable[[Record, GameState], None] | None = None,
) -> GameState:
    """Replay the actions from the seed, checking each one; `ReplayError` at the first bad line.

    `before(record, state)` sees the state before each action, `on_step` after it;
    `stop_after` stops once that many actions are applied, reading no record past the last
    of them (for `replay position` and `resume`, which read on from there).
    """
    state = replay.new_state()
    applied = 0
    for line, record in replay.records:
        if record["type"] == "start":
            check_start(replay, state, line, record)
        elif record["type"] == "action":
            if before is not None:
                before(record, state)
            step = apply_record(state, line, record, applied)
            applied += 1
            if on_step is not None:
                on_step(step, state)
        if stop_after is not None and applied >= stop_after:
            break
    return state


def check_start(replay: Replay, state: GameState, line: int, record: Record) -> None:
    for key in ("game", "seed", "players", "rules"):
        if key in record and record[key] != replay.header.get(key):
            raise ReplayError(line, f"start record {key} {record[key]!r} differs from the "
                                    f"header's {replay.header.get(key)!r}")
    stored = record.get("events")
    if stored is not None:
        _same_events(line, "the events of the first deal", stored, state.opening_events())


def _same_events(line: int, what: str, stored: JSON, events: list[Event]) -> None:
    expected = [event_record(e) for e in events]
    if stored == expected:
        return
    if not isinstance(stored, list) or len(stored) != len(expected):
        count = len(stored) if isinstance(stored, list) else "no"
        raise ReplayError(line, f"{what}: {count} events stored, {len(expected)} re-simulated")
    for i, (got, want) in enumerate(zip(stored, expected, strict=True)):
        if got != want:
            keys = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
            raise ReplayError(line, f"{what}: event {i} ({want.get('event')}) differs from the "
                                    f"re-simulated one in {', '.join(keys)}")


def apply_record(state: GameState, line: int, record: Record, applied: int) -> Step:
    if record.get("n", applied) != applied:
        raise ReplayError(line, f"action number {record.get('n')!r}, expected {applied}")
    if state.to_move is None:
        raise ReplayError(line, "an action after the game was over")
    seat, decision = state.to_move, state.decision
    if record.get("seat", seat) != seat:
        raise ReplayError(line, f"seat {record.get('seat')} acts, but seat {seat} is to move")
    if record.get("decision", decision) != decision:
        raise ReplayError(line, f"decision {record.get('decision')!r}, expected {decision!r}")
    text = record.get("action")
    if not isinstance(text, str):
        raise ReplayError(line, "action record without an action text")
    events = _apply_text(state, line, text)
    stored = record.get("events")
    if stored is not None:
        _same_events(line, f"the events of {text!r}", stored, events)
    return Step(line, record, seat, decision, text, events)


def _apply_text(state: GameState, line: int, text: str) -> list[Event]:
    try:
        action = state.parse_action(text)
    except InvalidActionError as exc:
        raise ReplayError(line, f"{text!r} is not an action: {exc}") from None
    reason = state.why_illegal(action)
    if reason is not None:
        raise ReplayError(line, f"{text!r} is illegal here: {reason}")
    try:
        return state.apply(action)
    except IllegalActionError as exc:
        raise ReplayError(line, f"{text!r} is illegal here: {exc}") from None

