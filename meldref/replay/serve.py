"""`meldref replay serve FOLDER`: a local web server for a folder of replays (a tournament's).

`/` lists the games (results, faults, standings; filtered and sorted in the page) and
`/view/<replay path>[?seat=K]` shows one in the viewer (`replay_html`), made when first asked
and kept while the file is unchanged. Nothing else is served: only GET, only replay files under
the folder (the path is resolved with every link followed, and must stay inside the folder),
no file listing but the one rendered. It binds to 127.0.0.1 by default and answers only
requests addressed to the host it was started on, so a web page elsewhere cannot reach it
through a name that points at this machine (DNS rebinding): the replays hold every hand.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, quote, unquote, urlsplit

from .files import ReplayError
from .html import ViewerError, replay_page
from .index import folder_replays, game_rows, list_page, standings

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8765
CACHED_PAGES: Final = 32
LOCAL_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
HEADERS: Final = {
    # The pages need nothing from anywhere: no network for their scripts, even if one were
    # tricked; never cached, never sent as a referrer (they hold private cards).
    "Content-Security-Policy": "default-src 'none'; script-src 'unsafe-inline'; "
                               "style-src 'unsafe-inline'; img-src data:",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class ServeError(ValueError):
    """A folder that cannot be served (missing, not a folder, no replays in it)."""


class ReplayServer(ThreadingHTTPServer):
    """Serves the list of `folder`'s games and each game's viewer page."""

    daemon_threads = True

    def __init__(self, folder: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 quiet: bool = False) -> None:
        if not folder.is_dir():
            raise ServeError(f"{folder}: not a folder")
        if not folder_replays(folder):
            raise ServeError(f"{folder}: no replay files found")
        self.folder = folder
        self.root = os.path.realpath(folder)
        self.quiet = quiet
        self._pages: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self._lock = threading.Lock()
        super().__init__((host, port), _Handler)

    def _address(self) -> tuple[str, int]:
        host, port = self.server_address[:2]
        return (host.decode() if isinstance(host, bytes) else str(host)), int(port)

    @property
    def url(self) -> str:
        host, port = self._address()
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def allowed_hosts(self) -> set[str]:
        """The Host headers this server answers: its own address and the loopback names."""
        host, port = self._address()
        names = {*LOCAL_NAMES, host, f"[{host}]"}
        return {f"{n}:{port}".lower() for n in names}

    def replay_path(self, relative: str) -> Path | None:
        """The replay file `relative` names inside the folder, or None: anything outside it
        (after following every link), anything that is not a file, or not a `.jsonl`."""
        if "\0" in relative:
            return None
        candidate = os.path.realpath(os.path.join(self.root, relative))
        if os.path.commonpath([candidate, self.root]) != self.root or candidate == self.root:
            return None
        if not candidate.endswith(".jsonl") or not os.path.isfile(candidate):
            return None
        return Path(candidate)

    def listing(self) -> bytes:
        rows = game_rows(self.folder)
        title = f"{Path(self.root).name}: {len(rows)} games"
        html = list_page(title, rows, standings(self.folder),
                         lambda row: "/view/" + quote(str(row["path"])) if row.get("path")
                         else None, seat_links=True)
        return html.encode("utf-8")

    def viewer(self, path: Path, seat: int | None) -> bytes:
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size, seat)
        with self._lock:
            if key in self._pages:
                self._pages.move_to_end(key)
                return self._pages[key]
        html, _ = replay_page(path, seat, back="/")
        page = html.encode("utf-8")
        with self._lock:
            self._pages[key] = page
            while len(self._pages) > CACHED_PAGES:
                self._pages.popitem(last=False)
        return page


class _Handler(BaseHTTPRequestHandler):
    server: ReplayServer
    server_version = "meldref"
    sys_version = ""

    def do_GET(self) -> None:
        if str(self.headers.get("Host", "")).lower() not in self.server.allowed_hosts():
            self.fail(HTTPStatus.MISDIRECTED_REQUEST, "this server answers its own address only")
            return
        url = urlsplit(self.path)
        path = unquote(url.path)
        if path in ("/", "/index.html"):
            self.send(HTTPStatus.OK, self.server.listing())
        elif path.startswith("/view/"):
            self.view(path.removeprefix("/view/"), parse_qs(url.query).get("seat"))
        else:
            self.fail(HTTPStatus.NOT_FOUND, "no such page")

    def view(self, relative: str, seat_values: list[str] | None) -> None:
        target = self.server.replay_path(relative)
        if target is None:
            self.fail(HTTPStatus.NOT_FOUND, "no such replay in this folder")
            return
        seat = None
        if seat_values:
            try:
                seat = int(seat_values[-1])
            except ValueError:
                self.fail(HTTPStatus.BAD_REQUEST, f"seat {seat_values[-1]!r}: a seat number")
                return
        try:
            page = self.server.viewer(target, seat)
        except ViewerError as exc:
            self.fail(HTTPStatus.BAD_REQUEST, str(exc))
        except (ReplayError, OSError) as exc:
            self.fail(HTTPStatus.UNPROCESSABLE_ENTITY, f"{relative}: {exc}")
        else:
            self.send(HTTPStatus.OK, page)

    def fail(self, status: HTTPStatus, message: str) -> None:
        body = (f"<!doctype html><meta charset='utf-8'><title>{status.value}</title>"
                f"<p>{status.value} {escape(status.phrase)}: {escape(message)}</p>"
                "<p><a href='/'>the list of games</a></p>")
        self.send(status, body.encode("utf-8"))

    def send(self, status: HTTPStatus, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        if not self.server.quiet:
            sys.stderr.write(f"{self.address_string()} {format % args}\n")


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only."""
    return host in ("localhost", "::1") or host.startswith("127.")
