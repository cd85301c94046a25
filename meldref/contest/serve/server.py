"""The contest's web server: `replay serve`'s viewer (its checks of paths and Host headers,
its headers: `meldref.web`) with the contest's pages in place of the list of games: `/` the
leaderboard, `/board.json` what the leaderboard page polls to update itself, `/bot/<name>` a
bot's page, every game at `/view/replays/<game id>.jsonl.gz` (to those `api.replay_rule`
shows it), `/static/` the viewer folder's files, and the authors' routes (`api.api_routes`).
Each request
reads the database afresh (its own connection: the server answers from several threads while
`run` writes)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ...replay.files import replay_stem
from ...replay.serve import DEFAULT_HOST, ReplayServer, ViewerPages
from ...web.options import MAX_BODY, ServeOptions, serve_options
from ...web.server import Server
from ..store import ContestStore
from .api import PRIVATE_REPLAY, api_routes, replay_rule
from .pages import board_json, bot_page, leaderboard_page

DEFAULT_PORT = 8766
T = TypeVar("T")


class ContestServer(ReplayServer):
    """Serves a contest folder's pages and its games in the viewer."""

    home = "the leaderboard"

    def __init__(self, folder: Path, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
                 quiet: bool = False, options: ServeOptions | None = None) -> None:
        """Over `options` when given (`contest_options` makes them: the contest's upload
        limit in them), else over `host`, `port`, `quiet` and the environment's settings."""
        body = body_limit(folder)  # ContestError if there is no contest
        # Not ReplayServer.__init__: a contest just begun has no replay yet, and is served.
        self.folder = folder
        self.root = str(folder.resolve())
        self.pages = ViewerPages()
        Server.__init__(self, options or serve_options(host, port, quiet, body))

    def routes(self) -> list[BaseRoute]:
        return [Route("/", self._leaderboard), Route("/board.json", self._board),
                Route("/bot/{name:path}", self._bot), *self.viewer_routes(),
                *authors_routes(self.folder)]

    def replay_path(self, relative: str) -> Path | None:
        """A game's replay, in `replays/`, or None: the folder also holds every author's
        program (`bots/`), which is no one else's to read whatever its files' names end in."""
        found = ReplayServer.replay_path(self, relative)
        replays = os.path.join(self.root, "replays")
        return found if found is not None and os.path.dirname(found) == replays else None

    def read(self, page: Callable[[ContestStore], T]) -> T:
        store = ContestStore.open(self.folder)
        try:
            return page(store)
        finally:
            store.close()

    def listing(self) -> bytes:
        return self.read(leaderboard_page).encode("utf-8")

    def bot(self, name: str, request: Request) -> bytes | None:
        """A bot's page, linking the replays `request` may read (`api.replay_rule`)."""
        page = self.read(lambda store: bot_page(store, name, replay_rule(store, request)))
        return None if page is None else page.encode("utf-8")

    def _view(self, request: Request) -> Response:
        """A game in the viewer, for those its replay is shown to (`api.replay_rule`): the
        others are answered as if it were not there."""
        relative = str(request.path_params["path"])
        target = self.replay_path(relative)
        if target is not None and not self.read(
                lambda store: replay_rule(store, request)(replay_stem(target))):
            return self.fail(404, PRIVATE_REPLAY)
        return ReplayServer._view(self, request)

    def _leaderboard(self, request: Request) -> Response:
        return HTMLResponse(self.listing())

    def _board(self, request: Request) -> Response:
        board = self.read(board_json)
        tag = f'"{board["stamp"]}"'
        if tag in request.headers.get("if-none-match", ""):
            return Response(status_code=304, headers={"ETag": tag})  # the page has it
        return JSONResponse(board, headers={"ETag": tag})

    def _bot(self, request: Request) -> Response:
        page = self.bot(str(request.path_params["name"]), request)
        return self.fail(404, "no such bot in this contest") if page is None else \
            HTMLResponse(page)


def body_limit(folder: Path) -> int:
    """The largest request body the contest's server reads: room for the largest upload the
    contest takes, so that the uploads' own check (which answers in JSON, and is audited)
    refuses the larger ones, not the server's guard."""
    store = ContestStore.open(folder)
    try:
        return max(MAX_BODY, (store.service.upload_mb + 1) << 20)
    finally:
        store.close()


def contest_options(folder: Path, host: str, port: int, *, public_hosts: Sequence[str] = (),
                    trusted_proxies: Sequence[str] = (), forwarded_header: str | None = None,
                    cert: Path | None = None, key: Path | None = None) -> ServeOptions:
    """`contest serve`'s options: its flags (as `web.options.serve_options` takes them) over
    the environment's settings over the contest's own body limit."""
    return serve_options(host, port, False, body_limit(folder), public_hosts=public_hosts,
                         trusted_proxies=trusted_proxies, forwarded_header=forwarded_header,
                         cert=cert, key=key)


def authors_routes(folder: Path) -> list[BaseRoute]:
    """The authors' pages and API (`api.api_routes`)."""
    return api_routes(folder)
