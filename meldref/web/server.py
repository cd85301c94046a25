"""A server bound to its port: the app (`routes` with the `Guard` in front and the error page
for every refusal) on uvicorn's h11 protocol, with the request header limit, TLS if asked, and
no access log but the guard's. Bound when made, so a port in use is an `OSError` before
anything is printed; `serve_forever` runs it (in the command's thread: Ctrl-C ends it as a
`KeyboardInterrupt` after a graceful stop; in a test's thread: `shutdown` ends it)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable
from typing import Final

import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .guard import Guard, GuardRules, error_page
from .options import LOCAL_NAMES, ServeError, ServeOptions

HEADERS: Final = {
    # The pages need nothing from anywhere else: no network for their scripts but this server,
    # even if one were tricked; never cached, never sent as a referrer (they hold private cards).
    "Content-Security-Policy": "default-src 'none'; script-src 'self' 'unsafe-inline'; "
                               "style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                               "connect-src 'self'; form-action 'self'; base-uri 'none'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
# Served over TLS directly: browsers keep to HTTPS for this host a day (not longer: the
# certificate may be a test's, and a wrong HSTS cannot be taken back).
TLS_HEADERS: Final = {"Strict-Transport-Security": "max-age=86400"}
STATIC_METHODS: Final = frozenset({"GET", "HEAD"})
BACKLOG: Final = 128
GRACE_SECONDS: Final = 5  # open connections are given this long to finish at a stop
MAX_CONNECTIONS: Final = 200  # beyond this many at once, 503


class Server:
    """An HTTP(S) server of `routes()`; subclasses give the routes and the error pages'
    link home (`home`)."""

    home = "the start page"

    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        self.socket = _listen(options.host, options.port)
        try:
            self.app = self.make_app(self.routes())
            self.config = uvicorn.Config(
                self.app, http="h11", ws="none", lifespan="off", interface="asgi3",
                proxy_headers=False, server_header=False, access_log=False, log_config=None,
                log_level="warning", h11_max_incomplete_event_size=options.max_header,
                limit_concurrency=MAX_CONNECTIONS, timeout_graceful_shutdown=GRACE_SECONDS,
                ssl_certfile=options.certfile, ssl_keyfile=options.keyfile)
            self.config.load()
        except OSError as exc:  # ssl.SSLError is one: the certificate or key unreadable
            self.socket.close()
            raise ServeError(f"TLS: cannot load {options.certfile} / {options.keyfile}: "
                             f"{exc.strerror or exc}") from None
        except BaseException:
            self.socket.close()
            raise
        self._uvicorn = uvicorn.Server(self.config)
        self._running = threading.Event()
        self._stopped = threading.Event()

    def routes(self) -> list[BaseRoute]:
        raise NotImplementedError

    def make_app(self, routes: list[BaseRoute]) -> Starlette:
        rules = GuardRules(frozenset(self.allowed_hosts()), frozenset(methods(routes)),
                           self.options.max_body, self.options.max_header,
                           self.options.trusted_proxies,
                           self.options.forwarded_header.encode("latin-1"),
                           {**HEADERS, **(TLS_HEADERS if self.options.tls else {})},
                           error_page(self.home), self.options.quiet)
        return Starlette(routes=routes, middleware=[Middleware(Guard, rules=rules)],
                         exception_handlers={HTTPException: self._failed})

    async def _failed(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        # The router's own 404 says only "Not Found".
        unrouted = exc.status_code == 404 and exc.detail == "Not Found"
        return self.fail(exc.status_code, "no such page" if unrouted else exc.detail)

    def fail(self, status: int, message: str) -> HTMLResponse:
        """The error page a refusal answers with."""
        return HTMLResponse(error_page(self.home)(status, message), status)

    @property
    def server_address(self) -> tuple[str, int]:
        host, port = self.socket.getsockname()[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.server_address
        shown = f"[{host}]" if ":" in host else host
        return f"{'https' if self.options.tls else 'http'}://{shown}:{port}/"

    def allowed_hosts(self) -> set[str]:
        """The Host headers this server answers: its own address and the loopback names with
        its port, and the public names it was given."""
        host, port = self.server_address
        names = {*LOCAL_NAMES, host, f"[{host}]"}
        return {f"{n}:{port}".lower() for n in names} | set(self.options.public_hosts)

    def serve_forever(self) -> None:
        self._running.set()
        try:
            self._uvicorn.run(sockets=[self.socket])
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop serving (from another thread) and wait until the server has stopped."""
        self._uvicorn.should_exit = True
        if self._running.is_set():
            self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()


def methods(routes: Iterable[BaseRoute]) -> set[str]:
    """Every method some route (or mounted static folder) takes."""
    found: set[str] = set()
    for route in routes:
        if isinstance(route, Route) and route.methods:
            found |= route.methods
        elif isinstance(route, Mount):
            found |= methods(route.routes) if route.routes else set(STATIC_METHODS)
    return found


def static(path: str, folder: str) -> Mount:
    """The files of `folder` at `path` (links out of it are not followed)."""
    return Mount(path, StaticFiles(directory=folder, follow_symlink=False))


def _listen(host: str, port: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock
