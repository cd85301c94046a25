"""The contest's remote authors: who they are, how they prove it, what they tried to upload.

An author is a name and a token. `add` draws the token (32 random bytes, `secrets`) and
shows it once; the database keeps only its SHA-256. Why not a slow hash (scrypt, argon2):
those protect passwords people choose, which an attacker holding the database can guess;
a token of 256 random bits cannot be guessed through any hash, so a slow one would only make
every request of the API cost the server ~50 ms of CPU (scrypt's usual setting), a way to
load it. A revoked token stays in the table (the audit names its author), answering no
request.

A bot name belongs to the author whose upload first joined under it (`store.join` takes it
in the transaction that adds the version); another author's upload under it is refused.

The audit (`uploads` table): every upload tried, with who (or no one: no token, a wrong
one), when, from which address, the file's name, size and SHA-256, and what came of it (a
row is written `pending` before the upload is read, then `accepted` with its version or
`refused` with why). The hourly limit counts an author's rows of the last hour that were
charged: those that got as far as their file.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypedDict

from .settings import ContestError

if TYPE_CHECKING:  # the store is its callers' (the command line imports this when it starts)
    from .store import ContestStore

TOKEN_PREFIX: Final = "mr_"  # a token is recognisable where it leaks (a log, a commit)
AUTHOR_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
HOUR: Final = 3600.0


@dataclass(frozen=True, slots=True)
class Author:
    """An author: their id, name, when they were added, and when revoked (None: active)."""

    id: int
    name: str
    created: float
    revoked: float | None

    def to_json(self) -> AuthorJSON:
        return {"name": self.name, "created": self.created, "revoked": self.revoked}


class AuthorJSON(TypedDict):
    """An author as `author list --json` gives them (with their `bots` there)."""

    name: str
    created: float
    revoked: float | None


class UploadJSON(TypedDict):
    """An upload as the audit keeps it (`uploads_of`), newest first."""

    at: float
    author: str | None
    address: str | None
    bot: str | None
    file: str | None
    sha256: str | None
    bytes: int | None
    outcome: str
    version: int | None
    reason: str | None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def add(store: ContestStore, name: str) -> tuple[Author, str]:
    """A new author and their token (shown once: only its hash is kept); `ContestError` for
    a name taken or not of letters, digits and `_.@-`."""
    if not AUTHOR_NAME.fullmatch(name):
        raise ContestError(f"author {name!r}: 1 to 64 letters, digits, '_', '.', '@' or '-', "
                           "starting with a letter or digit")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with store.write() as db:
        if db.execute("SELECT 1 FROM authors WHERE name = ?", (name,)).fetchone():
            raise ContestError(f"author {name} exists already (revoke them and add another "
                               "name for a new token)")
        db.execute("INSERT INTO authors (name, token_hash, created) VALUES (?, ?, ?)",
                   (name, token_hash(token), time.time()))
    return find(store, name), token


def find(store: ContestStore, name: str) -> Author:
    row = store.db.execute("SELECT id, name, created, revoked FROM authors WHERE name = ?",
                           (name,)).fetchone()
    if row is None:
        raise ContestError(f"no author {name} in this contest (`meldref contest author list`)")
    return Author(*row)


def every(store: ContestStore) -> list[Author]:
    return [Author(*r) for r in store.db.execute(
        "SELECT id, name, created, revoked FROM authors ORDER BY id")]


def revoke(store: ContestStore, name: str) -> Author:
    """The author's token answers no request from now on; their versions stay in play (the
    organiser retires them with `contest retire`)."""
    author = find(store, name)
    if author.revoked is not None:
        raise ContestError(f"author {name}'s token was revoked already")
    with store.write() as db:
        db.execute("UPDATE authors SET revoked = ? WHERE id = ?", (time.time(), author.id))
    return find(store, name)


def authenticate(store: ContestStore, token: str | None) -> Author | str:
    """The author the token is theirs, or why it is none (to tell the client)."""
    if not token:
        return ("no token: send `Authorization: Bearer TOKEN` (the token `meldref contest "
                "author add` printed for you)")
    row = store.db.execute("SELECT id, name, created, revoked FROM authors WHERE "
                           "token_hash = ?", (token_hash(token),)).fetchone()
    if row is None:
        return "this token is no author's: check it, or ask the organiser for one"
    author = Author(*row)
    if author.revoked is not None:
        return "this token was revoked: ask the organiser for a new one"
    return author


def bots_of(store: ContestStore, author: Author) -> list[str]:
    return [r[0] for r in store.db.execute(
        "SELECT bot FROM owners WHERE author = ? ORDER BY bot", (author.id,))]


# -- the audit ---------------------------------------------------------------------------------


def begin_upload(store: ContestStore, author: Author | None, address: str | None,
                 bot: str | None, limit: int | None) -> tuple[int, bool]:
    """The audit row of an upload begun (pending); whether the author is within `limit`
    charged uploads in the last hour (None: no limit applies, nothing charged). Counted and
    written in one transaction: two uploads at once cannot both take the last place."""
    with store.write() as db:
        within = True
        if author is not None and limit is not None:
            used = db.execute("SELECT COUNT(*) FROM uploads WHERE author = ? AND charged = 1 "
                              "AND at > ?", (author.id, time.time() - HOUR)).fetchone()[0]
            within = int(used) < limit
        cur = db.execute("INSERT INTO uploads (at, author, address, bot, charged, outcome) "
                         "VALUES (?, ?, ?, ?, ?, 'pending')",
                         (time.time(), author.id if author else None, address, bot,
                          int(within and limit is not None)))
    assert cur.lastrowid is not None
    return cur.lastrowid, within


def next_slot(store: ContestStore, author: Author) -> float:
    """Seconds until the author's oldest charged upload of the last hour leaves it."""
    row = store.db.execute("SELECT MIN(at) FROM uploads WHERE author = ? AND charged = 1 AND "
                           "at > ?", (author.id, time.time() - HOUR)).fetchone()
    return max(1.0, (row[0] or time.time()) + HOUR - time.time())


def file_seen(store: ContestStore, upload: int, file: str, sha256: str, size: int) -> None:
    with store.write() as db:
        db.execute("UPDATE uploads SET file = ?, sha256 = ?, bytes = ? WHERE id = ?",
                   (file, sha256, size, upload))


def end_upload(store: ContestStore, upload: int, version: int | None, reason: str) -> None:
    """The upload's outcome: accepted as `version`, or refused (None) saying `reason`."""
    with store.write() as db:
        db.execute("UPDATE uploads SET outcome = ?, version = ?, reason = ? WHERE id = ?",
                   ("refused" if version is None else "accepted", version, reason, upload))


def uploads_of(store: ContestStore, author: Author | None, limit: int = 50
               ) -> list[UploadJSON]:
    """The last uploads (of `author`, or everyone's), newest first, as the audit keeps them."""
    where, args = ("WHERE u.author = ?", [author.id]) if author else ("", [])
    rows = store.db.execute(
        "SELECT u.at, a.name, u.address, u.bot, u.file, u.sha256, u.bytes, u.outcome, "
        "u.version, u.reason FROM uploads u LEFT JOIN authors a ON a.id = u.author "
        f"{where} ORDER BY u.id DESC LIMIT ?", [*args, limit]).fetchall()
    return [{"at": r[0], "author": r[1], "address": r[2], "bot": r[3], "file": r[4],
             "sha256": r[5], "bytes": r[6], "outcome": r[7], "version": r[8], "reason": r[9]}
            for r in rows]
