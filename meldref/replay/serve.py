"""`meldref replay serve FOLDER`: a local web server for a folder of replays (a tournament's).

`/` lists the games (results, faults, standings; filtered and sorted in the page) and
`/view/<replay path>[?seat=K]` shows one in the viewer (`replay_html`), made when first asked
and kept while the file is unchanged; `/static/` the viewer folder's files (its style sheets).
Nothing else is served: only GET and HEAD, only replay files under the folder (the path is
resolved with every link followed, and must stay inside the folder), no file listing but the
one rendered. It binds to 127.0.0.1 by default and answers only requests addressed to the host
it was started on or to a configured public name (`meldref.web.guard`), so a web page
elsewhere cannot reach it through a name that points at this machine (DNS rebinding): the
replays hold every hand. The server itself is `meldref.web`'s (Starlette on uvicorn).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Final
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Route

from ..web.options import DEFAULT_HOST, ServeError, ServeOptions, is_loopback, serve_options
from ..web.server import Server, static
from .files import REPLAY_SUFFIXES, ReplayError
from .html import ViewerError, replay_page
from .index import folder_replays, game_rows, list_page, standings

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "ReplayServer", "ServeError", "is_loopback",
           "serve_options"]

DEFAULT_PORT: Final = 8765
CACHED_PAGES: Final = 32
VIEWER_FILES: Final = Path(__file__).parent / "viewer"


class ViewerPages:
    """Viewer pages made once and kept while their replay is unchanged (the last few)."""

    def __init__(self) -> None:
        # (path, its mtime_ns and size, the seat): a page of a replay as it is now
        self._pages: OrderedDict[tuple[str, int, int, int | None], bytes] = OrderedDict()
        self._lock = threading.Lock()

    def page(self, path: Path, seat: int | None) -> bytes:
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


class ReplayServer(Server):
    """Serves the list of `folder`'s games and each game's viewer page."""

    home = "the list of games"

    def __init__(self, folder: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 quiet: bool = False, options: ServeOptions | None = None) -> None:
        if not folder.is_dir():
            raise ServeError(f"{folder}: not a folder")
        if not folder_replays(folder):
            raise ServeError(f"{folder}: no replay files found")
        self.folder = folder
        self.root = os.path.realpath(folder)
        self.pages = ViewerPages()
        super().__init__(options or serve_options(host, port, quiet))

    def routes(self) -> list[BaseRoute]:
        return [Route("/", self._listing), Route("/index.html", self._listing),
                *self.viewer_routes()]

    def viewer_routes(self) -> list[BaseRoute]:
        """Each game in the viewer, and the viewer folder's files (its style sheets)."""
        return [Route("/view/{path:path}", self._view), static("/static", str(VIEWER_FILES))]

    def replay_path(self, relative: str) -> Path | None:
        """The replay file `relative` names inside the folder, or None: anything outside it
        (after following every link), anything that is not a file, or not a `.jsonl` or
        `.jsonl.gz`."""
        if "\0" in relative:
            return None
        candidate = os.path.realpath(os.path.join(self.root, relative))
        if os.path.commonpath([candidate, self.root]) != self.root or candidate == self.root:
            return None
        if not candidate.endswith(REPLAY_SUFFIXES) or not os.path.isfile(candidate):
            return None
        return Path(candidate)

    def listing(self) -> bytes:
        rows = game_rows(self.folder)
        title = f"{Path(self.root).name}: {len(rows)} games"
        html = list_page(title, rows, standings(self.folder),
                         lambda row: "/view/" + quote(str(row["path"])) if row.get("path")
                         else None, seat_links=True)
        return html.encode("utf-8")

    def _listing(self, request: Request) -> Response:
        return HTMLResponse(self.listing())

    def _view(self, request: Request) -> Response:
        relative = str(request.path_params["path"])
        target = self.replay_path(relative)
        if target is None:
            return self.fail(404, "no such replay in this folder")
        seat = None
        seats = request.query_params.getlist("seat")
        if seats:
            try:
                seat = int(seats[-1])
            except ValueError:
                return self.fail(400, f"seat {seats[-1]!r}: a seat number")
        try:
            return HTMLResponse(self.pages.page(target, seat))
        except ViewerError as exc:
            return self.fail(400, str(exc))
        except (ReplayError, OSError) as exc:
            return self.fail(422, f"{relative}: {exc}")
