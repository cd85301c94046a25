"""The contest folder's database (`contest.db`, SQLite in WAL mode) and the files it names.

The folder holds:
- `contest.db`: settings, bots, versions, deal sets, games with their result lines, ratings;
- `bots/<name>/v<n>/`: each version's program, copied in at `submit`;
- `replays/<game id>.jsonl.gz` (compressed before the game is recorded: a `.jsonl`, or
  compression's temporary file, is a game in flight's), `logs/<game id>/...`: as a
  tournament's;
- `run.lock`: held (flock) by the one `contest run` playing the ladder.

Why it agrees with its replay folder after a `kill -9` at any moment: a game's row is marked
"running" (committed) before its replay is written, and "done" with its result line in one
transaction after the replay is closed. So a replay without a done row is a game that was in
flight; opening the contest with no run holding the lock (`repair`) deletes such replays and
queues their games again, and a done row whose replay has gone is queued again too. The games
in flight are all a kill can lose. `submit`, `status` and `serve` read and write while `run`
writes: WAL lets readers read during a write, and every writer waits for the others
(`busy_timeout`).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import itertools
import json
import os
import shutil
import sqlite3
import stat
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final, Literal, TypedDict

from ..engine.game import JSON
from ..private import folder_problem, open_private, private_dir
from ..protocol.records import ResultLine
from ..replay.files import replay_stem
from ..verdicts.games import GameResult
from .settings import ContestError, ContestSettings
from .uploads import DEFAULTS, ServiceSettings

SCHEMA_VERSION: Final = 3
# Remote authors (issue 46): who they are (a token's hash, never the token), which bot names
# each holds, every upload tried (the audit), and each version's build and its log. "IF NOT
# EXISTS": the step may meet a database that has them (one made by this schema and marked
# older by hand, as a test of an earlier step does).
AUTHORS: Final = (
    "CREATE TABLE IF NOT EXISTS authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
    "token_hash TEXT NOT NULL UNIQUE, created REAL NOT NULL, revoked REAL)",
    "CREATE TABLE IF NOT EXISTS owners (bot TEXT PRIMARY KEY, author INTEGER NOT NULL "
    "REFERENCES authors(id))",
    "CREATE TABLE IF NOT EXISTS uploads (id INTEGER PRIMARY KEY, at REAL NOT NULL, "
    "author INTEGER, address TEXT, bot TEXT, file TEXT, sha256 TEXT, bytes INTEGER, "
    "charged INTEGER NOT NULL, "
    "outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'accepted', 'refused')), "
    "version INTEGER, reason TEXT)",
    "CREATE INDEX IF NOT EXISTS uploads_by_author ON uploads (author, at)",
    "CREATE TABLE IF NOT EXISTS builds (version INTEGER PRIMARY KEY REFERENCES versions(id), "
    "command TEXT NOT NULL, seconds REAL NOT NULL, log TEXT NOT NULL)",
)
# Each step brings a database of the schema before it to the next, in place.
MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {
    # 1 -> 2: the reason a rating has no interval (issue 21's ladder intervals).
    1: ("ALTER TABLE ratings ADD COLUMN no_interval TEXT",),
    # 2 -> 3: authors, their bots' names, the uploads' audit, builds (issue 46).
    2: AUTHORS,
}
DB_NAME: Final = "contest.db"
BUSY_MS: Final = 30_000
STAGING: Final = ".staging"  # bots/.staging/<id>: a submission being checked
STAGING_AGE: Final = 6 * 3600.0  # a check abandoned this long ago was killed
REFEREE_ERROR: Final = "referee error"  # what a seat of a game the referee failed shows
VersionState = Literal["active", "superseded", "retired", "suspended"]
DealKind = Literal["placement", "ladder", "final"]

SCHEMA: Final = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE versions (
    id INTEGER PRIMARY KEY, bot TEXT NOT NULL, number INTEGER NOT NULL,
    command TEXT NOT NULL, folder TEXT NOT NULL, submitted REAL NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('active', 'superseded', 'retired', 'suspended')),
    reason TEXT, UNIQUE (bot, number));
CREATE TABLE deal_sets (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, final INTEGER, seed INTEGER NOT NULL,
    versions TEXT NOT NULL, created REAL NOT NULL, finished REAL,
    state TEXT NOT NULL CHECK (state IN ('open', 'done', 'discarded')));
CREATE TABLE tables (
    deal_set INTEGER NOT NULL REFERENCES deal_sets(id), version INTEGER NOT NULL,
    PRIMARY KEY (deal_set, version));
CREATE INDEX tables_by_version ON tables (version);
CREATE TABLE games (
    id INTEGER PRIMARY KEY, deal_set INTEGER NOT NULL REFERENCES deal_sets(id),
    seating INTEGER NOT NULL, game_id TEXT NOT NULL UNIQUE, versions TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'error', 'dropped')),
    result TEXT, finished REAL);
CREATE INDEX games_by_state ON games (state);
CREATE INDEX games_by_deal_set ON games (deal_set);
CREATE TABLE seats (
    game INTEGER NOT NULL REFERENCES games(id), seat INTEGER NOT NULL,
    version INTEGER NOT NULL REFERENCES versions(id), place INTEGER, score REAL,
    failed INTEGER NOT NULL, outcomes TEXT, log TEXT, PRIMARY KEY (game, seat));
CREATE INDEX seats_by_version ON seats (version, game);
CREATE TABLE ratings (
    at INTEGER NOT NULL, version INTEGER NOT NULL, rating REAL, low REAL, high REAL,
    games INTEGER NOT NULL, no_interval TEXT, PRIMARY KEY (at, version));
CREATE INDEX ratings_by_version ON ratings (version, at);
CREATE TABLE finals (
    id INTEGER PRIMARY KEY, top INTEGER NOT NULL, deal_sets INTEGER NOT NULL,
    versions TEXT NOT NULL, created REAL NOT NULL, standings TEXT);
""" + "".join(f"{statement};\n" for statement in AUTHORS)


PRUNE_EVERY: Final = 500  # games recorded between two prunings of the kept stderr logs


class NameTaken(ContestError):
    """An author's submission under a bot name another holds (the organiser, or another
    author); the message says whose it is."""


@dataclass(frozen=True, slots=True)
class Build:
    """A version's build step: its command, how long it ran, the end of its log."""

    command: str
    seconds: float
    log: str


# A saved rating: rating, low, high, games, why there is no interval.
SavedRating = tuple[float | None, float | None, float | None, int, str | None]
NO_RATING: Final[SavedRating] = (None, None, None, 0, None)
# A seat's row as `seats` keeps it: game, seat, version, place, score, failed, outcomes, log.
SeatValues = tuple[int, int, int, int | None, float | None, int, str, str | None]


class LadderPlace(TypedDict):
    """A finalist's place on the ladder when the final was made."""

    bot: str
    ladder_rank: int
    rating: float | None


class FinalRecord(TypedDict):
    """A final as `contest final --json` prints it: its standings (the tournament's
    `Report.to_json`), each finalist's ladder place, and why it stopped (None: it did not)."""

    final: dict[str, JSON]
    ladder: list[LadderPlace]
    stopped: str | None


class SavedFinal(FinalRecord):
    """A finished final as the store keeps it (and the board shows it): when it finished."""

    finished: float


def _migrated(db: sqlite3.Connection, version: str | None) -> str | None:
    """Brings a contest database of an older schema to this one (`MIGRATIONS`, in one
    transaction); its schema version after."""
    if version is None or not version.isdigit() or int(version) not in MIGRATIONS:
        return version
    db.execute("BEGIN IMMEDIATE")  # re-read inside: another process may have migrated it
    try:
        now = int(db.execute("SELECT value FROM meta WHERE key = 'schema_version'")
                  .fetchone()[0])
        for step in range(now, SCHEMA_VERSION):
            for statement in MIGRATIONS[step]:
                db.execute(statement)
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                   (str(SCHEMA_VERSION),))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return str(SCHEMA_VERSION)


@dataclass(frozen=True, slots=True)
class Version:
    """One submitted version of a bot: its number under the bot's name, how it starts, its
    folder in the contest (relative), and whether it is still scheduled."""

    id: int
    bot: str
    number: int
    command: str
    folder: str
    submitted: float
    state: VersionState
    reason: str | None = None

    @property
    def label(self) -> str:
        """How results and pages name it: `alice v2`."""
        return f"{self.bot} v{self.number}"

    @property
    def in_play(self) -> bool:
        return self.state == "active"


@dataclass(frozen=True, slots=True)
class GameRow:
    """A game of a deal set: its id (`ds000012-s03`), seats (version ids) and state."""

    id: int
    deal_set: int
    seating: int
    game_id: str
    versions: tuple[int, ...]
    state: str
    seed: int
    kind: str


@dataclass(frozen=True, slots=True)
class Recorded:
    """A game recorded: its deal set, whether that is now complete (done: its games count),
    and the versions that sat at it."""

    deal_set: int
    complete: bool
    versions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class SeatRow:
    """A version's seat in a recorded game: the game, whether the seat failed (a fault) and
    its faults' outcomes (a game the referee failed: `REFEREE_ERROR`), its kept stderr log,
    place and score (None: the game did not finish), the game's result line, the version's
    number and the game's row (`bot_seats` pages from it)."""

    game_id: str
    failed: bool
    outcomes: tuple[str, ...]
    log: str | None
    place: int | None
    score: float | None
    result: ResultLine
    version: int
    row: int


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """A version with its ladder record, as the board reads it in one query: games finished
    and failed in (a fault on its seat), and its last saved rating (`NO_RATING`: none)."""

    version: Version
    games: int
    faults: int
    rating: SavedRating


@dataclass(slots=True)
class Repair:
    """What the check on open found and mended (empty: the folder agreed)."""

    requeued: list[str] = field(default_factory=list)  # games in flight, played again
    removed: list[str] = field(default_factory=list)  # replays of games not done
    lost: list[str] = field(default_factory=list)  # done games whose replay was gone

    def lines(self) -> list[str]:
        out = []
        if self.requeued:
            out.append(f"{len(self.requeued)} games in flight when a run stopped are queued "
                       f"again: {', '.join(self.requeued[:5])}")
        if self.removed:
            out.append(f"{len(self.removed)} replays of unfinished games removed")
        if self.lost:
            out.append(f"{len(self.lost)} finished games had lost their replay and are queued "
                       f"again: {', '.join(self.lost[:5])}")
        return out


def game_id(deal_set: int, seating: int) -> str:
    return f"ds{deal_set:06d}-s{seating:02d}"


def deal_seed(contest_seed: int, deal_set: int) -> int:
    """The seed of a deal set's deal, derived from the contest's secret seed."""
    digest = hashlib.sha256(f"{contest_seed}:deal-set:{deal_set}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def final_deal_seed(contest_seed: int, final: int, deal: int) -> int:
    """The seed of deal `deal` of final `final`, the same at every table of the final (the
    cards' luck common to all tables: bridge's duplicate across the room); no ladder deal
    set's seed (another text is hashed)."""
    digest = hashlib.sha256(f"{contest_seed}:final:{final}:deal:{deal}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


class ContestStore:
    """The database of one contest folder. Open it with `create` or `open`; close it."""

    def __init__(self, folder: Path, db: sqlite3.Connection, settings: ContestSettings) -> None:
        self.folder, self.db, self.settings = folder, db, settings
        self._service: ServiceSettings | None = None
        self._recorded = 0  # games recorded by this store: the logs are pruned every so many

    # -- opening -------------------------------------------------------------------------------

    @staticmethod
    def create(folder: Path, settings: ContestSettings,
               service: ServiceSettings = DEFAULTS) -> ContestStore:
        """A new contest in `folder` (made owner-only); `ContestError` if it holds one
        already with other settings (naming the first), the same contest if it agrees."""
        if (folder / DB_NAME).exists():
            store = ContestStore.open(folder)
            differs = store.settings.differs(settings) or store.service.differs(service)
            if differs is not None:
                store.close()
                raise ContestError(f"{folder} holds a contest whose {differs}: settings are "
                                   "fixed at init (start another contest to change them)")
            return store
        problem = folder_problem(folder, create=True)
        if problem:
            raise ContestError(problem)
        for inner in ("bots", "replays", "logs"):
            private_dir(folder / inner)
        db = _connect(folder / DB_NAME)
        with db:
            db.executescript(SCHEMA)
            db.executemany("INSERT INTO meta VALUES (?, ?)", [
                ("schema_version", str(SCHEMA_VERSION)),
                ("settings", json.dumps(settings.to_json())),
                ("service", json.dumps(service.to_json())),
                ("created", repr(time.time()))])
        return ContestStore(folder, db, settings)

    @staticmethod
    def open(folder: Path) -> ContestStore:
        """The contest in `folder`; `ContestError` if there is none, or one of another schema."""
        path = folder / DB_NAME
        if not path.is_file():
            raise ContestError(f"{folder}: no contest here (make one with `meldref contest "
                               "init`)")
        try:
            db = _connect(path)
        except sqlite3.DatabaseError as exc:
            raise ContestError(f"{path}: not a contest database ({exc})") from None
        try:  # the connection is closed here on every way out but the store's
            return ContestStore(folder, db, _settings_of(db, path))
        except BaseException:
            db.close()
            raise

    def close(self) -> None:
        self.db.close()

    @property
    def service(self) -> ServiceSettings:
        """The limits of uploads, builds and kept stderr (`uploads`), as `init` fixed them;
        the defaults for a contest made before them."""
        if self._service is None:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'service'").fetchone()
            self._service = (DEFAULTS if row is None
                             else ServiceSettings.from_json(json.loads(row[0])))
        return self._service

    def name_holder(self, bot: str, author: int) -> str | None:
        """Why the bot name `bot` is not the author's to submit under (another author holds
        it, or the organiser submitted it), or None: it is theirs, or free."""
        row = self.db.execute("SELECT author FROM owners WHERE bot = ?", (bot,)).fetchone()
        if row is not None:
            return None if row[0] == author else (f"the name {bot} belongs to another author: "
                                                  "choose another name")
        if self.db.execute("SELECT 1 FROM versions WHERE bot = ?", (bot,)).fetchone():
            return f"the name {bot} belongs to the organiser's entry: choose another name"
        return None

    def owner(self, bot: str) -> int | None:
        """The author id holding the bot name `bot`, None for the organiser's or a free one."""
        row = self.db.execute("SELECT author FROM owners WHERE bot = ?", (bot,)).fetchone()
        return None if row is None else int(row[0])

    def build_of(self, vid: int) -> Build | None:
        row = self.db.execute("SELECT command, seconds, log FROM builds WHERE version = ?",
                              (vid,)).fetchone()
        return None if row is None else Build(row[0], row[1], row[2])

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (BEGIN IMMEDIATE: no upgrade deadlock)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- versions ------------------------------------------------------------------------------

    def versions(self, bot: str | None = None) -> list[Version]:
        query = "SELECT * FROM versions" + (" WHERE bot = ?" if bot else "") + " ORDER BY id"
        return [Version(*row) for row in self.db.execute(query, (bot,) if bot else ())]

    def version(self, vid: int) -> Version:
        row = self.db.execute("SELECT * FROM versions WHERE id = ?", (vid,)).fetchone()
        return Version(*row)

    def in_play(self) -> list[Version]:
        return [v for v in self.versions() if v.in_play]

    def join(self, bot: str, command: str, staged: Path, author: int | None = None,
             build: Build | None = None) -> Version:
        """The program checked in `staged` joins the ladder as the bot's next version, moved
        to `bots/<bot>/v<n>`; the bot's earlier active version is superseded (it keeps its
        record). Number, folder and row are settled in one transaction: two submissions at
        once get two numbers. An author's submission takes the name if it is free, and is
        refused (`NameTaken`, nothing moved) if another holds it: two authors submitting a
        new name at once, one gets it."""
        with self.write() as db:
            if author is not None:
                taken = self.name_holder(bot, author)
                if taken is not None:
                    raise NameTaken(taken)
                db.execute("INSERT OR IGNORE INTO owners VALUES (?, ?)", (bot, author))
            row = db.execute("SELECT MAX(number) FROM versions WHERE bot = ?", (bot,))
            number = int(row.fetchone()[0] or 0) + 1
            folder = Path("bots") / bot / f"v{number}"
            private_dir(self.folder / "bots" / bot)
            staged.rename(self.folder / folder)
            try:
                version = self._insert(db, bot, number, command, str(folder))
                if build is not None:
                    db.execute("INSERT INTO builds VALUES (?, ?, ?, ?)",
                               (version.id, build.command, build.seconds, build.log))
                return version
            except BaseException:
                (self.folder / folder).rename(staged)
                raise

    def _insert(self, db: sqlite3.Connection, bot: str, number: int, command: str,
                folder: str) -> Version:
        db.execute("UPDATE versions SET state = 'superseded', reason = ? WHERE bot = ? "
                   "AND state = 'active'", (f"superseded by v{number}", bot))
        cur = db.execute("INSERT INTO versions (bot, number, command, folder, submitted, "
                         "state) VALUES (?, ?, ?, ?, ?, 'active')",
                         (bot, number, command, folder, time.time()))
        assert cur.lastrowid is not None
        return self.version(cur.lastrowid)

    def set_state(self, vid: int, state: VersionState, reason: str) -> None:
        with self.write() as db:
            db.execute("UPDATE versions SET state = ?, reason = ? WHERE id = ?",
                       (state, reason, vid))

    # -- deal sets and games -------------------------------------------------------------------

    def add_deal_set(self, kind: DealKind, table: Sequence[int],
                     seatings: Sequence[Sequence[int]], final: int | None = None,
                     seed: int | None = None) -> int:
        """A deal set of `table` (version ids) played in every seating, queued; dealt from
        `seed` (a final's deal shared by its tables), else from the deal set's own."""
        with self.write() as db:
            cur = db.execute("INSERT INTO deal_sets (kind, final, seed, versions, created, "
                             "state) VALUES (?, ?, 0, ?, ?, 'open')",
                             (kind, final, json.dumps(list(table)), time.time()))
            ds = cur.lastrowid
            assert ds is not None
            db.execute("UPDATE deal_sets SET seed = ? WHERE id = ?",
                       (deal_seed(self.settings.seed, ds) if seed is None else seed, ds))
            db.executemany("INSERT OR IGNORE INTO tables VALUES (?, ?)",
                           [(ds, v) for v in table])
            db.executemany(
                "INSERT INTO games (deal_set, seating, game_id, versions, state) "
                "VALUES (?, ?, ?, ?, 'queued')",
                [(ds, s, game_id(ds, s), json.dumps([table[i] for i in row]))
                 for s, row in enumerate(seatings)])
        return ds

    def recent_tables(self, limit: int) -> list[tuple[int, ...]]:
        """The tables (version ids) of the ladder's last `limit` deal sets, done or in
        flight, oldest first (matchmaking's share and cap count them)."""
        rows = self.db.execute("SELECT versions FROM deal_sets WHERE kind != 'final' AND state "
                               "!= 'discarded' ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        return [tuple(json.loads(r[0])) for r in reversed(rows)]

    def queued_games(self, kind: str | None = None, final: int | None = None) -> list[GameRow]:
        """Queued games of open deal sets, oldest deal set first."""
        query = ("SELECT g.id, g.deal_set, g.seating, g.game_id, g.versions, g.state, d.seed, "
                 "d.kind FROM games g JOIN deal_sets d ON d.id = g.deal_set "
                 "WHERE g.state = 'queued' AND d.state = 'open'")
        args: list[str | int] = []
        if kind is not None:
            query += " AND d.kind " + ("= ?" if kind == "final" else "!= ?")
            args.append("final")
        if final is not None:
            query += " AND d.final = ?"
            args.append(final)
        rows = self.db.execute(query + " ORDER BY g.deal_set, g.seating", args).fetchall()
        return [GameRow(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), r[5], r[6], r[7])
                for r in rows]

    def mark_running(self, gid: int) -> None:
        with self.write() as db:
            db.execute("UPDATE games SET state = 'running' WHERE id = ?", (gid,))

    def record(self, line: ResultLine) -> Recorded:
        """Store a game's result line (its seats' places, scores and faults; the game is the
        row `line.index`); its deal set is marked done when complete, or discarded if a game
        of it failed."""
        if line.index is None:
            raise ValueError(f"{line.game_id}: a result line without its game's row")
        gid = line.index
        row = self.db.execute("SELECT deal_set, versions FROM games WHERE id = ?",
                              (gid,)).fetchone()
        ds, versions = int(row[0]), tuple(int(v) for v in json.loads(row[1]))
        with self.write() as db:
            db.execute("UPDATE games SET state = ?, result = ?, finished = ? WHERE id = ?",
                       ("done" if line.ok else "error",
                        json.dumps(line.to_json(), separators=(",", ":")), time.time(), gid))
            db.executemany("INSERT OR REPLACE INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           _seat_rows(gid, versions, line))
            left = db.execute("SELECT COUNT(*) FROM games WHERE deal_set = ? AND state IN "
                              "('queued', 'running')", (ds,)).fetchone()[0]
            complete = False
            if not left:
                failed = db.execute("SELECT COUNT(*) FROM games WHERE deal_set = ? AND state "
                                    "!= 'done'", (ds,)).fetchone()[0]
                db.execute("UPDATE deal_sets SET state = ?, finished = ? WHERE id = ? AND "
                           "state = 'open'", ("discarded" if failed else "done", time.time(), ds))
                complete = not failed
        self._kept_logs(line)
        return Recorded(ds, complete, versions)

    def _kept_logs(self, line: ResultLine) -> None:
        """A recorded game's stderr logs cut to their last `log-kb-per-game` KiB each; every
        `PRUNE_EVERY` games, the logs past each bot's budget or age removed (`prune_logs`)."""
        keep = self.service.log_kb_per_game << 10
        for log in line.logs:
            if log is not None:
                _keep_tail(self.folder / log, keep)
        self._recorded += 1
        if self._recorded % PRUNE_EVERY == 0:
            self.prune_logs()

    def prune_logs(self, now: float | None = None) -> int:
        """Each bot's kept stderr logs, newest first, past its `log-mb-per-bot` MiB or older
        than `log-days`, removed (their seats' `log` cleared); how many went."""
        service = self.service
        cutoff = (now or time.time()) - service.log_days * 86400.0
        budget = service.log_mb_per_bot << 20
        used: dict[str, int] = {}
        gone: list[tuple[int, int]] = []
        for game, seat, log, bot, finished in self.db.execute(
                "SELECT s.game, s.seat, s.log, v.bot, g.finished FROM seats s JOIN versions v "
                "ON v.id = s.version JOIN games g ON g.id = s.game WHERE s.log IS NOT NULL "
                "ORDER BY g.finished DESC, s.game DESC").fetchall():
            path = self.folder / log
            try:
                size = path.lstat().st_size
            except OSError:
                size = 0
            used[bot] = used.get(bot, 0) + size
            if (finished or 0.0) < cutoff or used[bot] > budget:
                path.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    path.parent.rmdir()  # only when empty
                gone.append((game, seat))
        if gone:
            with self.write() as db:
                db.executemany("UPDATE seats SET log = NULL WHERE game = ? AND seat = ?", gone)
        return len(gone)

    def drop_deal_sets_of(self, vid: int) -> None:
        """A version out of play: its open ladder deal sets stop (games queued are dropped,
        the deal set discarded; its finished games keep their record)."""
        with self.write() as db:
            for (ds, versions) in db.execute("SELECT id, versions FROM deal_sets WHERE state = "
                                             "'open' AND kind != 'final'").fetchall():
                if vid in json.loads(versions):
                    db.execute("UPDATE games SET state = 'dropped' WHERE deal_set = ? AND "
                               "state = 'queued'", (ds,))
                    db.execute("UPDATE deal_sets SET state = 'discarded' WHERE id = ?", (ds,))

    def discard_in_flight(self) -> list[str]:
        """Games marked running go back to the queue, their replays and logs removed: a
        stopped run's games in flight, or a killed one's (`repair`)."""
        rows = self.db.execute("SELECT id, game_id FROM games WHERE state = 'running'").fetchall()
        for _, gid in rows:
            self._remove_files(gid)
        with self.write() as db:
            db.executemany("UPDATE games SET state = 'queued' WHERE id = ?",
                           [(r[0],) for r in rows])
        return [r[1] for r in rows]

    def _remove_files(self, gid: str) -> None:
        """A game's replay (plain, compressed, or half compressed: `compress_replay`'s
        temporary file) and stderr logs."""
        replays = self.folder / "replays"
        for path in (replays / f"{gid}.jsonl", replays / f"{gid}.jsonl.gz",
                     *replays.glob(f".{glob.escape(gid)}.jsonl.*.gz-part")):
            path.unlink(missing_ok=True)
        shutil.rmtree(self.folder / "logs" / gid, ignore_errors=True)

    def repair(self) -> Repair:
        """Make the database and the replay folder agree (see the module docstring). Call
        only while holding the run lock: a live run's games in flight are not debris."""
        report = Repair(self.discard_in_flight())
        done = {r[0] for r in self.db.execute("SELECT game_id FROM games WHERE state = 'done'")}
        replays = self.folder / "replays"
        on_disk = {replay_stem(p) for pattern in ("*.jsonl", "*.jsonl.gz")
                   for p in replays.glob(pattern)} if replays.is_dir() else set()
        for gid in sorted(on_disk - done):
            self._remove_files(gid)
            report.removed.append(gid)
        lost = sorted(done - on_disk)
        if lost:
            with self.write() as db:
                for gid in lost:
                    ds = db.execute("SELECT deal_set FROM games WHERE game_id = ?",
                                    (gid,)).fetchone()[0]
                    db.execute("UPDATE games SET state = 'queued', result = NULL WHERE "
                               "game_id = ?", (gid,))
                    db.execute("DELETE FROM seats WHERE game = (SELECT id FROM games WHERE "
                               "game_id = ?)", (gid,))
                    db.execute("UPDATE deal_sets SET state = 'open', finished = NULL WHERE "
                               "id = ? AND state = 'done'", (ds,))
            report.lost = lost
        self._sweep_programs()
        self.prune_logs()
        return report

    def _sweep_programs(self) -> None:
        """Program folders no version row names (a submit killed between moving its folder
        in and committing), and checks abandoned by a killed submit, are removed. Inside a
        write transaction: a submit still committing is waited for."""
        with self.write() as db:
            known = {r[0] for r in db.execute("SELECT folder FROM versions")}
            for path in (self.folder / "bots").glob("*/v*"):
                if path.is_dir() and str(path.relative_to(self.folder)) not in known:
                    shutil.rmtree(path, ignore_errors=True)
            for path in (self.folder / "bots" / STAGING).glob("*"):
                if time.time() - path.stat().st_mtime > STAGING_AGE:
                    shutil.rmtree(path, ignore_errors=True)

    # -- reading -------------------------------------------------------------------------------

    def done_deal_sets(self, kind: str = "ladder") -> list[tuple[int, list[GameResult]]]:
        """Finished deal sets (ladder: placement and ladder; or "final") with their games, in
        deal-set order."""
        where = "d.kind != 'final'" if kind == "ladder" else "d.kind = 'final'"
        return self._done_games(where, ())

    def deal_set_games(self, ds: int) -> list[GameResult]:
        """The games of one deal set, finished."""
        return [game for _, games in self._done_games("d.id = ?", (ds,)) for game in games]

    def _done_games(self, where: str, args: tuple[int, ...]
                    ) -> list[tuple[int, list[GameResult]]]:
        """The games of the done deal sets `where` says, by deal set, read off their seats
        in one query (no result line parsed): each game's deal (its deal set, dealt from the
        deal set's seed), its versions by label in seat order, their places and scores, as
        its result line has them (`GameResult.from_json` of it gives the same game)."""
        rows = self.db.execute(
            "SELECT d.id, d.seed, g.id, v.bot, v.number, s.place, s.score FROM deal_sets d "
            "JOIN games g ON g.deal_set = d.id JOIN seats s ON s.game = g.id JOIN versions v "
            f"ON v.id = s.version WHERE d.state = 'done' AND g.state = 'done' AND {where} "
            "ORDER BY d.id, g.seating, s.seat", args).fetchall()
        out: dict[int, list[GameResult]] = {}
        for (ds, seed, _), seats in itertools.groupby(rows, key=lambda r: (r[0], r[1], r[2])):
            taken = list(seats)
            out.setdefault(ds, []).append(GameResult(
                ds, tuple(f"{r[3]} v{r[4]}" for r in taken), tuple(int(r[5]) for r in taken),
                tuple(float(r[6]) for r in taken), seed))
        return list(out.items())

    def deal_set_counts(self) -> dict[int, tuple[int, int]]:
        """Per version: its ladder deal sets done, and open (queued or in flight)."""
        out: dict[int, list[int]] = {}
        for vid, state, count in self.db.execute(
                "SELECT t.version, d.state, COUNT(*) FROM tables t JOIN deal_sets d ON d.id = "
                "t.deal_set WHERE d.kind != 'final' AND d.state != 'discarded' "
                "GROUP BY t.version, d.state"):
            cell = out.setdefault(int(vid), [0, 0])
            cell[0 if state == "done" else 1] += int(count)
        return {vid: (c[0], c[1]) for vid, c in out.items()}

    def counts(self) -> dict[str, int]:
        rows = self.db.execute("SELECT state, COUNT(*) FROM games GROUP BY state").fetchall()
        return {str(k): int(v) for k, v in rows}

    def running(self) -> list[tuple[str, list[int]]]:
        return [(r[0], json.loads(r[1])) for r in self.db.execute(
            "SELECT game_id, versions FROM games WHERE state = 'running' ORDER BY id")]

    def version_record(self, vid: int) -> tuple[int, int]:
        """Games a version finished, and those it failed in (a fault on its seat)."""
        row = self.db.execute("SELECT COUNT(*), COALESCE(SUM(failed), 0) FROM seats s JOIN "
                              "games g ON g.id = s.game JOIN deal_sets d ON d.id = g.deal_set "
                              "WHERE s.version = ? AND d.kind != 'final'", (vid,)).fetchone()
        return int(row[0]), int(row[1])

    def recent_seats(self, vid: int, limit: int) -> list[SeatRow]:
        """The version's last `limit` games, newest first."""
        return [_seat_row(r) for r in self.db.execute(
            f"SELECT {SEAT_COLUMNS} FROM seats s JOIN games g ON g.id = s.game JOIN versions v "
            "ON v.id = s.version WHERE s.version = ? ORDER BY g.finished DESC LIMIT ?",
            (vid, limit))]

    def bot_seats(self, bot: str, limit: int, before: int | None = None) -> list[SeatRow]:
        """Every seat of the bot's versions, newest game first, `limit` of them, from the game
        before the row `before` (a page of them: the last one's `row` is the next page's
        `before`)."""
        return [_seat_row(r) for r in self.db.execute(
            f"SELECT {SEAT_COLUMNS} FROM seats s JOIN games g ON g.id = s.game "
            "JOIN versions v ON v.id = s.version WHERE v.bot = ? AND g.id < ? "
            "ORDER BY g.id DESC LIMIT ?", (bot, before or 1 << 62, limit))]

    def version_records(self) -> list[VersionRecord]:
        """Every version with its ladder record and last saved rating, by id, in one query
        (the board's: a query per version made a board of 200 versions 400 queries)."""
        rows = self.db.execute(
            "WITH record AS (SELECT s.version, COUNT(*) AS games, SUM(s.failed) AS faults "
            "FROM seats s JOIN games g ON g.id = s.game JOIN deal_sets d ON d.id = g.deal_set "
            "WHERE d.kind != 'final' GROUP BY s.version), "
            "latest AS (SELECT * FROM ratings WHERE at = (SELECT MAX(at) FROM ratings)) "
            "SELECT v.*, COALESCE(r.games, 0), COALESCE(r.faults, 0), l.version, l.rating, "
            "l.low, l.high, l.games, l.no_interval FROM versions v "
            "LEFT JOIN record r ON r.version = v.id LEFT JOIN latest l ON l.version = v.id "
            "ORDER BY v.id").fetchall()
        return [VersionRecord(Version(*r[:8]), int(r[8]), int(r[9]),
                              NO_RATING if r[10] is None else (r[11], r[12], r[13], r[14], r[15]))
                for r in rows]

    def save_ratings(self, rows: Sequence[tuple[int, float | None, float | None, float | None,
                                                int, str | None]]) -> int:
        """A snapshot of the ladder's ratings (version, rating, low, high, games, why there is
        no interval); its number (the ladder deal sets done when it was taken)."""
        at = self.db.execute("SELECT COUNT(*) FROM deal_sets WHERE state = 'done' AND kind != "
                             "'final'").fetchone()[0]
        with self.write() as db:
            db.execute("DELETE FROM ratings WHERE at = ?", (at,))
            db.executemany("INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?)",
                           [(at, *row) for row in rows])
        return int(at)

    def latest_ratings(self) -> dict[int, SavedRating]:
        at = self.db.execute("SELECT MAX(at) FROM ratings").fetchone()[0]
        if at is None:
            return {}
        return {r[0]: (r[1], r[2], r[3], r[4], r[5]) for r in self.db.execute(
            "SELECT version, rating, low, high, games, no_interval FROM ratings WHERE at = ?",
            (at,))}

    def rating_history(self, vid: int) -> list[tuple[int, float, float, float]]:
        return [(r[0], r[1], r[2], r[3]) for r in self.db.execute(
            "SELECT at, rating, low, high FROM ratings WHERE version = ? AND rating IS NOT NULL "
            "ORDER BY at", (vid,))]

    def add_final(self, top: int, deal_sets: int, versions: Sequence[int]) -> int:
        with self.write() as db:
            cur = db.execute("INSERT INTO finals (top, deal_sets, versions, created) VALUES "
                             "(?, ?, ?, ?)", (top, deal_sets, json.dumps(list(versions)),
                                              time.time()))
        assert cur.lastrowid is not None
        return cur.lastrowid

    def open_final(self) -> tuple[int, list[int]] | None:
        row = self.db.execute("SELECT id, versions FROM finals WHERE standings IS NULL ORDER BY "
                              "id DESC LIMIT 1").fetchone()
        return None if row is None else (int(row[0]), json.loads(row[1]))

    def final_lines(self, final: int) -> list[ResultLine]:
        """The result lines of a final's finished games, as they were recorded."""
        return [ResultLine.from_json(json.loads(r[0])) for r in self.db.execute(
            "SELECT g.result FROM games g JOIN deal_sets d ON d.id = g.deal_set WHERE "
            "d.final = ? AND g.state = 'done' ORDER BY g.id", (final,))]

    def save_final(self, final: int, standings: SavedFinal) -> None:
        with self.write() as db:
            db.execute("UPDATE finals SET standings = ? WHERE id = ?",
                       (json.dumps(standings), final))

    def last_final(self) -> SavedFinal | None:
        row = self.db.execute("SELECT standings FROM finals WHERE standings IS NOT NULL ORDER BY "
                              "id DESC LIMIT 1").fetchone()
        found: SavedFinal | None = None if row is None else json.loads(row[0])  # as saved
        return found


def _settings_of(db: sqlite3.Connection, path: Path) -> ContestSettings:
    """The settings of the contest database `db` (at `path`), brought to this schema;
    `ContestError` if it is no contest database, or one of another schema."""
    try:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise ContestError(f"{path}: not a contest database ({exc})") from None
    meta["schema_version"] = _migrated(db, meta.get("schema_version"))
    if meta.get("schema_version") != str(SCHEMA_VERSION):
        raise ContestError(f"{path}: schema version {meta.get('schema_version')}, this "
                           f"meldref reads {SCHEMA_VERSION}")
    return ContestSettings.from_json(json.loads(meta["settings"]))


SEAT_COLUMNS: Final = ("g.game_id, s.failed, s.outcomes, s.log, s.place, s.score, g.result, "
                       "v.number, g.id")


# A row of SEAT_COLUMNS as the schema stores it (sqlite's values: the columns' own types).
_SeatColumns = tuple[str, int, str | None, str | None, int | None, float | None, str, int, int]


def _seat_row(r: _SeatColumns) -> SeatRow:
    return SeatRow(r[0], bool(r[1]), tuple(json.loads(r[2] or "[]")), r[3], r[4], r[5],
                   ResultLine.from_json(json.loads(r[6])), r[7], r[8])


def _keep_tail(path: Path, keep: int) -> None:
    """The log at `path` cut to its last `keep` bytes (a regular file only, opened through
    no link); a missing one is left missing."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    with open(fd, "r+b") as log:
        size = os.fstat(fd).st_size
        if not stat.S_ISREG(os.fstat(fd).st_mode) or size <= keep:
            return
        log.seek(size - keep)
        tail = log.read(keep)
        log.seek(0)
        log.write(tail)
        log.truncate()


def _connect(path: Path) -> sqlite3.Connection:
    fresh = not path.exists()
    if fresh:
        open_private(path, "a").close()  # owner-only: the database holds the seed
    db = sqlite3.connect(path, timeout=BUSY_MS / 1000, isolation_level=None,
                         check_same_thread=False)
    try:  # a file that is no database fails here: its connection closed now, not when collected
        db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: a commit survives a kill -9
        db.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        db.close()
        raise
    return db


def _seat_rows(gid: int, versions: Sequence[int], line: ResultLine) -> list[SeatValues]:
    """Each seat's row of a game: its place, score and faults. A game the referee could not
    finish (`status` error) charges no seat: the failure is the referee's, and no seat of it
    can be told from another (charging them all let one version's crash, through a referee
    fault, suspend the versions beside it)."""
    figures = line.figures
    rows: list[SeatValues] = []
    for seat, vid in enumerate(versions):
        log = line.logs[seat] if seat < len(line.logs) else None
        if figures is None:
            rows.append((gid, seat, vid, None, None, 0, json.dumps([REFEREE_ERROR]), log))
            continue
        faults = figures.faults[seat] if seat < len(figures.faults) else ()
        outcomes = sorted({f.outcome.value for f in faults})
        rows.append((gid, seat, vid, figures.outcome.places[seat],
                     figures.outcome.scores[seat], int(bool(outcomes)), json.dumps(outcomes),
                     log))
    return rows


class RunLock:
    """The lock of the one `contest run` (an flock on `run.lock`: the kernel drops it when
    the process dies, also on kill -9)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "run.lock"
        self._file: IO[str] | None = None

    def try_take(self) -> bool:
        handle = open_private(self.path, "a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        try:
            handle.truncate(0)
            handle.write(f"{os.getpid()}\n")
            handle.flush()
        except BaseException:  # the pid not written (a full disk): the lock given back with it
            handle.close()
            raise
        self._file = handle
        return True

    def holder(self) -> str:
        with contextlib.suppress(OSError):
            return self.path.read_text().strip() or "?"
        return "?"

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@contextlib.contextmanager
def held(folder: Path, busy: str) -> Iterator[ContestStore]:
    """The contest in `folder` with its run lock taken, both given back once on leaving (the
    store closed, then the lock released, whatever happens in between); `ContestError` with
    `busy` (its `{pid}` the holder's) when another process holds the lock."""
    store = ContestStore.open(folder)
    lock = RunLock(folder)
    if not lock.try_take():
        store.close()
        raise ContestError(f"{folder}: {busy.format(pid=lock.holder())}")
    try:
        yield store
    finally:
        try:
            store.close()
        finally:
            lock.release()


def is_running(folder: Path) -> bool:
    """Whether a `contest run` holds the folder's lock now."""
    lock = RunLock(folder)
    if lock.try_take():
        lock.release()
        return False
    return True
