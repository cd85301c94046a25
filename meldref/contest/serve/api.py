"""The authors' side of the contest's server: the API under `/api/` and the authors' pages
under `/author`, as Starlette routes (`api_routes`) the contest's app includes.

Every route but the login form answers only an author: the token `meldref contest author
add` printed, sent as `Authorization: Bearer TOKEN` (the API, `meldref contest upload`,
curl), or kept in a cookie by the login form (the pages: HttpOnly, SameSite=Strict, so no
other site's page can send it). What an author reaches is theirs alone: their bots'
versions, builds and faults, every game of theirs with its replay, and their own stderr of
each (never another seat's: it can name that bot's cards). Another author's bot answers 403,
a game with no seat of theirs 404: the public board and what the organiser makes public are
the rest.

`POST /api/submissions` (multipart: `name`, `file`, and `cmd`, `build` if wanted) takes an
upload as `contest submit` takes a folder: unpacked (`archive.unpack`: no links, devices or
paths out of the folder, within the contest's entry and size limits), built, confined,
checked in the sandbox, then joined as the name's next version; each step's refusal answers
4xx with a JSON `error` saying what to fix, and adds nothing. The body is counted as it
arrives (a request larger than `upload-mb` stops there, whatever its Content-Length said);
an author's uploads are counted per hour; every try is in the audit (`authors`).
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypedDict, TypeVar
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Message, Receive

from ...engine.game import JSON
from ...protocol.sandbox import sandbox_problem
from ...replay.files import REPLAY_SUFFIXES
from ...tools.botcheck import Report
from .. import authors
from ..archive import ArchiveLimits, ArchiveRefused, unpack
from ..build import BuildFailed
from ..settings import ContestError
from ..store import ContestStore, NameTaken, Version
from ..submit import Submission, SubmissionRefused, submit
from .author_pages import GameRowJSON, author_page, game_row, login_page, stderr_end

COOKIE: Final = "meldref_author"
CHECKS_AT_ONCE: Final = 2  # uploads built and checked at once; the others wait their turn
FORM_SLACK: Final = 64 << 10  # the form's own bytes beside the file
GAMES_SHOWN: Final = 200
T = TypeVar("T")
NDJSON: Final = "application/x-ndjson"  # a replay's JSON lines
PRIVATE_REPLAY: Final = ("replays are shown to the authors of their bots while the contest "
                         "runs: sign in at /author")


Answer = dict[str, JSON]  # an upload's JSON answer: its keys depend on how it went


class BuildJSON(TypedDict):
    command: str
    seconds: float


class BuildLogJSON(BuildJSON):
    log: str


class VersionJSON(TypedDict):
    """A version of an author's bot, as `/api/me` and `/api/bots/NAME` give it."""

    version: int
    state: str
    reason: str | None
    submitted: float
    command: str
    games: int
    faults: int
    build: BuildJSON | None


class BotJSON(TypedDict):
    name: str
    versions: list[VersionJSON]


class MeJSON(TypedDict):
    """`/api/me`: the author, their bots with their versions, their uploads, the limits."""

    author: str
    bots: list[BotJSON]
    uploads: list[authors.UploadJSON]
    limits: dict[str, int | bool]


class GameJSON(GameRowJSON):
    version: int


@dataclass(frozen=True, slots=True)
class TheirSeat:
    """A seat of a game whose bot is the author's: the seat, bot, version and its log."""

    seat: int
    bot: str
    version: int
    log: str | None


class _TooLarge(Exception):
    """The request's body passed its limit while it arrived."""


def api_routes(folder: Path) -> list[BaseRoute]:
    """The authors' routes over the contest in `folder`."""
    api = AuthorsApi(folder)
    return [
        Route("/api/submissions", api.post_submission, methods=["POST"]),
        Route("/api/me", api.me, methods=["GET"]),
        Route("/api/bots/{name}", api.bot, methods=["GET"]),
        Route("/api/bots/{name}", api.withdraw, methods=["DELETE"]),
        Route("/api/bots/{name}/games", api.games, methods=["GET"]),
        Route("/api/bots/{name}/v{number:int}/build", api.build_log, methods=["GET"]),
        Route("/api/games/{game_id}/replay", api.replay, methods=["GET"]),
        Route("/api/games/{game_id}/stderr", api.stderr, methods=["GET"]),
        Route("/author", api.page, methods=["GET"]),
        Route("/author/login", api.login, methods=["POST"]),
        Route("/author/logout", api.logout, methods=["POST"]),
        Route("/author/upload", api.page_upload, methods=["POST"]),
    ]


def _error(status: int, message: str, **more: JSON) -> JSONResponse:
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse({"error": message, **more}, status_code=status, headers=headers)


class AuthorsApi:
    """The handlers: each opens the contest's database for itself (in a worker thread: the
    database and the checks block), so the server answers while `run` writes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.checks = threading.BoundedSemaphore(CHECKS_AT_ONCE)

    async def _with_store(self, work: Callable[[ContestStore], T]) -> T:
        def opened() -> T:
            store = ContestStore.open(self.folder)
            try:
                return work(store)
            finally:
                store.close()
        return await run_in_threadpool(opened)

    async def _author(self, request: Request) -> authors.Author | JSONResponse:
        token = _token(request)
        found = await self._with_store(lambda store: authors.authenticate(store, token))
        return found if isinstance(found, authors.Author) else _error(401, found)

    # -- uploads -------------------------------------------------------------------------------

    async def post_submission(self, request: Request) -> Response:
        status, answer = await self._upload(request)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
        if "retry_after" in answer:
            headers["Retry-After"] = str(answer["retry_after"])
        return JSONResponse(answer, status_code=status, headers=headers)

    async def _upload(self, request: Request) -> tuple[int, Answer]:
        """An upload taken, or refused: the status and the JSON answer (`_refused`)."""
        address = request.client.host if request.client else None
        token = _token(request)
        found = await self._with_store(lambda store: authors.authenticate(store, token))
        author = found if isinstance(found, authors.Author) else None
        service = await self._with_store(lambda store: store.service)
        upload, within = await self._with_store(lambda store: authors.begin_upload(
            store, author, address, None, service.uploads_per_hour if author else None))
        if author is None:
            return await self._refused(upload, 401, str(found))
        if not within:
            wait = await self._with_store(lambda store: authors.next_slot(store, author))
            return await self._refused(
                upload, 429, f"{service.uploads_per_hour} uploads an hour at most: the next "
                f"is taken in {wait / 60:.0f} minutes", retry_after=int(wait))
        cap = (service.upload_mb << 20) + FORM_SLACK
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            return await self._refused(upload, 413, _too_large(service.upload_mb))
        scratch = Path(tempfile.mkdtemp(prefix="meldref-upload-"))
        try:
            try:
                form = await Request(request.scope, _capped(request.receive, cap)).form(
                    max_files=1, max_fields=8)
            except _TooLarge:
                return await self._refused(upload, 413, _too_large(service.upload_mb))
            except Exception as exc:  # the multipart parser's own errors, whatever their class
                return await self._refused(upload, 400, f"not a multipart form: {exc}")
            try:
                return await self._take(upload, author, form, scratch)
            finally:
                await form.close()  # the spooled file, now
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    async def _take(self, upload: int, author: authors.Author, form: FormData,
                    scratch: Path) -> tuple[int, Answer]:
        given = {key: form.get(key) for key in ("name", "cmd", "build")}
        file = form.get("file")
        name = given["name"]
        if not isinstance(name, str) or not name:
            return await self._refused(upload, 400, "no `name`: the bot's name, a form field")
        if not isinstance(file, UploadFile) or not file.filename:
            return await self._refused(upload, 400, "no `file`: the program, a file field "
                                       "(a single file, or a .zip / .tar.gz of its folder)")
        fields = {k: v for k, v in given.items() if v is None or isinstance(v, str)}
        if len(fields) < len(given):
            return await self._refused(upload, 400, "`name`, `cmd` and `build` are text fields")
        saved, digest, size = await run_in_threadpool(_save, file, scratch)
        await self._with_store(lambda store: _note_file(store, upload, name, file.filename or "",
                                                        digest, size))
        limit_mb = await self._with_store(lambda store: store.service.upload_mb)
        if size > limit_mb << 20:  # the body's cap leaves room for the form around the file
            return await self._refused(upload, 413, _too_large(limit_mb))
        try:
            version, report = await run_in_threadpool(
                self._submit, author, saved, file.filename, scratch, name, fields)
        except NameTaken as exc:
            return await self._refused(upload, 403, str(exc))
        except BuildFailed as exc:
            return await self._refused(upload, 422, str(exc), build_log=exc.log)
        except SubmissionRefused as exc:
            return await self._refused(upload, 422, str(exc), check=exc.report.to_json())
        except ContestError as exc:
            return await self._refused(upload, 422, str(exc))
        build = await self._with_store(lambda store: _joined(store, upload, version))
        return 201, {"name": version.bot, "version": version.number, "accepted": True,
                     "check": report.to_json(), "sha256": digest, "build": build}

    def _submit(self, author: authors.Author, saved: Path, filename: str, scratch: Path,
                name: str, fields: dict[str, str | None]) -> tuple[Version, Report]:
        """Unpack, build, check and join (blocking: in a worker thread, `CHECKS_AT_ONCE` at
        a time)."""
        store = ContestStore.open(self.folder)
        try:
            taken = store.name_holder(name, author.id)
            if taken is not None:  # before the file is even unpacked
                raise NameTaken(f"{name}: refused, {taken}; nothing was added")
            service = store.service
            program = scratch / "program"
            program.mkdir()
            try:
                source = unpack(saved, filename, program, ArchiveLimits(
                    service.archive_entries, service.expanded_mb << 20))
            except ArchiveRefused as exc:
                raise ArchiveRefused(f"{name}: refused, {exc}; nothing was added") from None
            problem = sandbox_problem() if store.settings.sandbox else None
            if problem is not None:
                raise ContestError(f"the contest's sandbox cannot run on its server: {problem}")
            submission = Submission.of(source, name, fields["cmd"] or None,
                                       fields["build"] or None)
            with self.checks:
                return submit(store, submission, author.id)
        finally:
            store.close()

    async def _refused(self, upload: int, status: int, message: str,
                       **more: JSON) -> tuple[int, Answer]:
        await self._with_store(lambda store: authors.end_upload(store, upload, None, message))
        return status, {"error": message, "accepted": False, **more}

    async def withdraw(self, request: Request) -> Response:
        """The author's bot's version in play retired (it keeps its record)."""
        author = await self._author(request)
        if isinstance(author, JSONResponse):
            return author
        name = request.path_params["name"]

        def retire(store: ContestStore) -> Response:
            refused = _not_theirs(store, author, name)
            if refused is not None:
                return refused
            playing = [v for v in store.in_play() if v.bot == name]
            if not playing:
                return _error(409, f"{name}: no version of it is in play")
            store.set_state(playing[0].id, "retired", "withdrawn by its author")
            store.drop_deal_sets_of(playing[0].id)
            return JSONResponse({"name": name, "version": playing[0].number,
                                 "state": "retired"})
        return await self._with_store(retire)

    # -- what an author reads ------------------------------------------------------------------

    async def me(self, request: Request) -> Response:
        author = await self._author(request)
        if isinstance(author, JSONResponse):
            return author
        return JSONResponse(await self._with_store(lambda store: _me(store, author)))

    async def bot(self, request: Request) -> Response:
        return await self._owned(request, _bot)

    async def games(self, request: Request) -> Response:
        """A page of the bot's games (`?limit=`, at most `GAMES_SHOWN`), from the row
        `?before=` (the `next` address of the page before)."""
        before, limit = (request.query_params.get(k, "") for k in ("before", "limit"))
        start = int(before) if before.isdigit() else None
        size = min(int(limit), GAMES_SHOWN) if limit.isdigit() and int(limit) else GAMES_SHOWN
        return await self._owned(request, lambda store, name: _games(store, name, start, size))

    async def build_log(self, request: Request) -> Response:
        number = int(request.path_params["number"])

        def log(store: ContestStore, name: str) -> Response:
            found = [v for v in store.versions(name) if v.number == number]
            build = store.build_of(found[0].id) if found else None
            if build is None:
                return _error(404, f"{name} v{number} has no build step")
            return JSONResponse({"name": name, "version": number, "command": build.command,
                                 "seconds": build.seconds, "log": build.log})
        return await self._owned(request, log)

    async def _owned(self, request: Request,
                     answer: Callable[[ContestStore, str], Response]) -> Response:
        author = await self._author(request)
        if isinstance(author, JSONResponse):
            return author
        name = request.path_params["name"]

        def read(store: ContestStore) -> Response:
            return _not_theirs(store, author, name) or answer(store, name)
        return await self._with_store(read)

    async def replay(self, request: Request) -> Response:
        author = await self._author(request)
        if isinstance(author, JSONResponse):
            return author
        gid = request.path_params["game_id"]
        seats = await self._with_store(lambda store: _their_seats(store, author, gid))
        packed, plain = (self.folder / "replays" / f"{gid}{suffix}" for suffix in REPLAY_SUFFIXES)
        if not seats or not (_regular(packed) or _regular(plain)):
            return _error(404, f"{gid}: no game of yours with a replay")
        if _regular(packed):
            return await run_in_threadpool(_packed_replay, packed, request)
        return FileResponse(plain, media_type=NDJSON)

    async def stderr(self, request: Request) -> Response:
        author = await self._author(request)
        if isinstance(author, JSONResponse):
            return author
        gid = request.path_params["game_id"]
        seats = await self._with_store(lambda store: _their_seats(store, author, gid))
        if not seats:
            return _error(404, f"{gid}: no game of yours")
        return JSONResponse({"game_id": gid, "seats": [
            {"seat": s.seat, "bot": s.bot, "version": s.version,
             "stderr": stderr_end(self.folder, s.log)} for s in seats]})

    # -- pages ---------------------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        token = request.cookies.get(COOKIE)
        found = await self._with_store(lambda store: authors.authenticate(store, token))
        if not isinstance(found, authors.Author):
            return HTMLResponse(login_page(None if token is None else found),
                                status_code=200 if token is None else 401)
        author = found
        return HTMLResponse(await self._with_store(lambda store: author_page(store, author)))

    async def login(self, request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=2)
        token = form.get("token")
        token = token.strip() if isinstance(token, str) else None
        found = await self._with_store(lambda store: authors.authenticate(store, token))
        if not isinstance(found, authors.Author):
            return HTMLResponse(login_page(found), status_code=401)
        answer = RedirectResponse("/author", status_code=303)
        answer.set_cookie(COOKIE, token or "", httponly=True, samesite="strict",
                          secure=request.url.scheme == "https", path="/")
        return answer

    async def logout(self, request: Request) -> Response:
        answer = RedirectResponse("/author", status_code=303)
        answer.delete_cookie(COOKIE, path="/")
        return answer

    async def page_upload(self, request: Request) -> Response:
        """The page's upload form: as the API, its answer shown on the author's page."""
        if not _same_origin(request):
            return _error(403, "a form of another site: upload from the contest's own page")
        await self._upload(request)  # its outcome is the audit's last row: the page shows it
        return RedirectResponse("/author", status_code=303)


def replay_allowed(folder: Path, request: Request, game_id: str) -> bool:
    """Whether `request` may read game `game_id`'s replay (every hand) on the public pages:
    everyone when the contest's replays are public (`init --public-replays`) or its final was
    played, else the authors of the game's bots alone (their token, or the pages' cookie).
    The contest's viewer route answers the others 404 (`PRIVATE_REPLAY`)."""
    store = ContestStore.open(folder)
    try:
        return replay_rule(store, request)(game_id)
    finally:
        store.close()


def replay_rule(store: ContestStore, request: Request) -> Callable[[str], bool]:
    """`replay_allowed` for every game of an open `store` (a bot page's links): which game
    ids' replays `request` may read, asked of the store while it is open."""
    if store.service.public_replays or store.last_final() is not None:
        return lambda game_id: True
    found = authors.authenticate(store, _token(request))
    if not isinstance(found, authors.Author):
        return lambda game_id: False
    return lambda game_id: bool(_their_seats(store, found, game_id))


def _token(request: Request) -> str | None:
    """The request's token: `Authorization: Bearer TOKEN`, else the pages' cookie."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(COOKIE)


def _same_origin(request: Request) -> bool:
    """Whether a form was posted from the contest's own pages: the browser's Sec-Fetch-Site
    says so where it sends one, else the Origin names this host (or is absent: no browser).
    Not Origin alone: under the server's `Referrer-Policy: no-referrer` Chromium sends
    `Origin: null` with a form of the same site, and the upload form answered 403."""
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("origin")
    return origin is None or origin.split("://", 1)[-1] == request.headers.get("host", "")


def _capped(receive: Receive, cap: int) -> Receive:
    """`receive`, raising `_TooLarge` once the body passed `cap` bytes."""
    seen = 0

    async def capped() -> Message:
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > cap:
            raise _TooLarge
        return message
    return capped


def _too_large(limit_mb: int) -> str:
    return (f"the upload is larger than this contest's {limit_mb} MiB: leave out what the "
            "bot does not need (built files, data it can make)")


def _save(file: UploadFile, scratch: Path) -> tuple[Path, str, int]:
    """The uploaded file written to `scratch`; its path, SHA-256 and size."""
    digest, size = hashlib.sha256(), 0
    path = scratch / "upload"
    file.file.seek(0)
    with path.open("xb") as out:
        while chunk := file.file.read(1 << 16):
            digest.update(chunk)
            size += len(chunk)
            out.write(chunk)
    return path, digest.hexdigest(), size


def _note_file(store: ContestStore, upload: int, name: str, filename: str, digest: str,
               size: int) -> None:
    with store.write() as db:
        db.execute("UPDATE uploads SET bot = ? WHERE id = ?", (name, upload))
    authors.file_seen(store, upload, filename[:200], digest, size)


def _joined(store: ContestStore, upload: int, version: Version) -> BuildLogJSON | None:
    """The upload's audit row closed as accepted; the version's build (None: it had none)."""
    authors.end_upload(store, upload, version.number, "joined the ladder")
    build = store.build_of(version.id)
    return None if build is None else {"command": build.command,
                                       "seconds": round(build.seconds, 2), "log": build.log}


def _not_theirs(store: ContestStore, author: authors.Author, name: str) -> Response | None:
    """403 for another's bot, 404 for no bot of that name; None for the author's own."""
    owner = store.owner(name)
    if owner == author.id:
        return None
    if owner is None and not store.versions(name):
        return _error(404, f"{name}: no such bot in this contest")
    return _error(403, f"{name} is not yours: an author reads and withdraws only their own bots")


def _versions(store: ContestStore, name: str) -> list[VersionJSON]:
    out: list[VersionJSON] = []
    for v in store.versions(name):
        games, faults = store.version_record(v.id)
        build = store.build_of(v.id)
        out.append({"version": v.number, "state": v.state, "reason": v.reason,
                    "submitted": v.submitted, "command": v.command, "games": games,
                    "faults": faults,
                    "build": None if build is None else {"command": build.command,
                                                         "seconds": round(build.seconds, 2)}})
    return out


def _me(store: ContestStore, author: authors.Author) -> MeJSON:
    return {"author": author.name,
            "bots": [{"name": bot, "versions": _versions(store, bot)}
                     for bot in authors.bots_of(store, author)],
            "uploads": authors.uploads_of(store, author, 20),
            "limits": store.service.to_json()}


def _bot(store: ContestStore, name: str) -> Response:
    faults = [game_row(seat) for v in store.versions(name)
              for seat in store.recent_seats(v.id, GAMES_SHOWN) if seat.failed]
    return JSONResponse({"name": name, "versions": _versions(store, name), "faults": faults})


def _games(store: ContestStore, name: str, before: int | None, size: int) -> Response:
    """A page of the bot's games, newest first; `next`: the next page's address, if any."""
    seats = store.bot_seats(name, size, before)
    following = (f"/api/bots/{quote(name)}/games?limit={size}&before={seats[-1].row}"
                 if len(seats) == size else None)
    games: list[GameJSON] = [{**game_row(s), "version": s.version} for s in seats]
    return JSONResponse({"name": name, "games": games, "next": following})


def _their_seats(store: ContestStore, author: authors.Author, gid: str) -> list[TheirSeat]:
    """The seats of game `gid` whose bots are the author's."""
    rows = store.db.execute(
        "SELECT s.seat, v.bot, v.number, s.log FROM seats s JOIN games g ON g.id = s.game "
        "JOIN versions v ON v.id = s.version JOIN owners o ON o.bot = v.bot "
        "WHERE g.game_id = ? AND o.author = ? ORDER BY s.seat", (gid, author.id)).fetchall()
    return [TheirSeat(*r) for r in rows]


def _packed_replay(path: Path, request: Request) -> Response:
    """A replay kept compressed at rest, as JSON lines: the stored gzip as it is (marked
    `Content-Encoding: gzip`) to a client that takes gzip (browsers, httpx, `curl
    --compressed`), else inflated here (a game's replay is some 100 kB)."""
    vary = {"Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", "").lower():
        return FileResponse(path, media_type=NDJSON, headers={**vary, "Content-Encoding": "gzip"})
    return Response(gzip.decompress(path.read_bytes()), media_type=NDJSON, headers=vary)


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False
