"""The contest's web server: `replay serve`'s server (`replay.serve.ReplayServer`: its
viewer pages, its checks of paths and Host headers, its headers) with the contest's pages in
place of the list of games: `/` the leaderboard, `/bot/<name>` a bot's page, and every game at
`/view/replays/<game id>.jsonl`. Each request reads the database afresh (its own connection:
the server answers from several threads while `run` writes)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ...replay.serve import DEFAULT_HOST, ReplayServer, _Handler
from ..store import ContestStore
from .pages import bot_page, leaderboard_page


class ContestServer(ReplayServer):
    """Serves a contest folder's pages and its games in the viewer."""

    def __init__(self, folder: Path, host: str = DEFAULT_HOST, port: int = 8766,
                 quiet: bool = False) -> None:
        ContestStore.open(folder).close()  # ContestError if there is no contest
        # Not ReplayServer.__init__: a contest just begun has no replay yet, and is served.
        self.folder = folder
        self.root = str(folder.resolve())
        self.quiet = quiet
        self._pages = OrderedDict()
        self._lock = threading.Lock()
        ThreadingHTTPServer.__init__(self, (host, port), _ContestHandler)

    def replay_path(self, relative: str) -> Path | None:
        """A game's replay, in `replays/`, or None: the folder also holds every author's
        program (`bots/`), which is no one else's to read whatever its files' names end in."""
        found = ReplayServer.replay_path(self, relative)
        replays = os.path.join(self.root, "replays")
        return found if found is not None and os.path.dirname(found) == replays else None

    def listing(self) -> bytes:
        store = ContestStore.open(self.folder)
        try:
            return leaderboard_page(store).encode("utf-8")
        finally:
            store.close()

    def bot(self, name: str) -> bytes | None:
        store = ContestStore.open(self.folder)
        try:
            page = bot_page(store, name)
        finally:
            store.close()
        return None if page is None else page.encode("utf-8")


class _ContestHandler(_Handler):
    server: ContestServer

    def do_GET(self) -> None:
        path = unquote(urlsplit(self.path).path)
        allowed = str(self.headers.get("Host", "")).lower() in self.server.allowed_hosts()
        if allowed and path.startswith("/bot/"):
            page = self.server.bot(path.removeprefix("/bot/"))
            if page is None:
                self.fail(HTTPStatus.NOT_FOUND, "no such bot in this contest")
            else:
                self.send(HTTPStatus.OK, page)
            return
        super().do_GET()
