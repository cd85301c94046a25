"""What every request passes before a page sees it, as one ASGI middleware (`Guard`):

- the Host header must be one this server answers (421 otherwise): its own address, the
  loopback names, and the configured public names. A web page elsewhere cannot reach a server
  on this machine through a name that points here (DNS rebinding); the pages hold every hand;
- the client's address is the connection's, or, from a trusted proxy only, the nearest
  untrusted address its forwarded header names (so logs, and the authors' audit, record who
  asked and no client can name itself), and the scheme its X-Forwarded-Proto names;
- a method no route of this server takes gets 501, one some route takes 405 (the router);
- a request line and headers over the limit get 431 (uvicorn's h11 limit stops only those
  that arrive in pieces: one read of 64 kB is parsed whole);
- a body over the limit gets 413, from its Content-Length before a byte is read, or as soon as
  the bytes read pass the limit (`BodyTooLarge`, answered by the app's error handler);
- every answer carries the security headers, and a line goes to stderr unless quiet.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from html import escape
from http import HTTPStatus

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .options import Network


class BodyTooLarge(HTTPException):
    """A request body read past the server's limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                         f"the request body is over this server's limit of {limit} bytes")


@dataclass(frozen=True, slots=True)
class GuardRules:
    """What `Guard` checks: Host values answered, methods taken, the body limit, the
    proxies believed and their header, the headers added, and the error page's maker."""

    hosts: frozenset[str]
    methods: frozenset[str]
    max_body: int
    max_header: int
    trusted: tuple[Network, ...]
    forwarded_header: bytes
    headers: Mapping[str, str]
    error_page: Callable[[int, str], bytes]
    quiet: bool


class Guard:
    """The checks above around `app`."""

    def __init__(self, app: ASGIApp, rules: GuardRules) -> None:
        self.app = app
        self.rules = rules
        self.extra = [(k.lower().encode("latin-1"), v.encode("latin-1"))
                      for k, v in rules.headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])  # later duplicates win; Host is sent once
        peer = scope.get("client")
        scope["client"] = self.client(peer, scope["headers"])
        if peer is not None and _within(peer[0], self.rules.trusted):
            # TLS ended at the proxy: the scheme the client used is the one its pages and
            # cookies (Secure) are for.
            proto = headers.get(b"x-forwarded-proto", b"").decode("latin-1").lower()
            scope["scheme"] = proto if proto in ("http", "https") else scope["scheme"]
        send = self.sending(scope, send)
        refused = self.refusal(scope, headers)
        if refused is not None:
            await self.answer(send, *refused)
            return
        await self.app(scope, self.counting(receive), send)

    def refusal(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        size = len(scope.get("raw_path", b"")) + len(scope["query_string"]) + sum(
            len(k) + len(v) + 4 for k, v in scope["headers"])
        if size > self.rules.max_header:
            return (HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                    f"the request's line and headers are over this server's limit of "
                    f"{self.rules.max_header} bytes")
        host = headers.get(b"host", b"").decode("latin-1").lower()
        if host not in self.rules.hosts:
            return (HTTPStatus.MISDIRECTED_REQUEST,
                    "this server answers its own address and its configured host names only")
        if scope["method"] not in self.rules.methods:
            return HTTPStatus.NOT_IMPLEMENTED, f"this server takes no {scope['method']} request"
        length = headers.get(b"content-length", b"0")
        if not length.isdigit():
            return HTTPStatus.BAD_REQUEST, "Content-Length: a number of bytes"
        if int(length) > self.rules.max_body:
            return (HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"the request body is over this server's limit of {self.rules.max_body} "
                    "bytes")
        return None

    def client(self, peer: tuple[str, int] | None,
               headers: Collection[tuple[bytes, bytes]]) -> tuple[str, int] | None:
        """`peer`, or the address a trusted proxy forwarded: the last in the header's list
        (proxies append) that is no trusted proxy itself."""
        if peer is None or not _within(peer[0], self.rules.trusted):
            return peer
        named = [a.strip() for k, v in headers if k == self.rules.forwarded_header
                 for a in v.decode("latin-1").split(",")]
        for address in reversed(named):
            if _ip(address) is None:
                return peer  # a header we cannot read names no one
            if not _within(address, self.rules.trusted):
                return address, 0
        return peer

    def counting(self, receive: Receive) -> Receive:
        read = 0

        async def counted() -> Message:
            nonlocal read
            message = await receive()
            read += len(message.get("body", b""))
            if read > self.rules.max_body:
                raise BodyTooLarge(self.rules.max_body)
            return message
        return counted

    def sending(self, scope: Scope, send: Send) -> Send:
        async def sent(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *self.extra]
                self.log(scope, message["status"])
            await send(message)
        return sent

    async def answer(self, send: Send, status: int, text: str) -> None:
        body = self.rules.error_page(status, text)
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"text/html; charset=utf-8"),
            (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    def log(self, scope: Scope, status: int) -> None:
        if self.rules.quiet:
            return
        client = scope["client"][0] if scope.get("client") else "-"
        query = f"?{scope['query_string'].decode('latin-1')}" if scope["query_string"] else ""
        sys.stderr.write(f"{client} \"{scope['method']} {scope['path']}{query} "
                         f"HTTP/{scope['http_version']}\" {status}\n")


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _within(address: str, networks: tuple[Network, ...]) -> bool:
    ip = _ip(address)
    return ip is not None and any(ip in net for net in networks)


def error_page(home: str) -> Callable[[int, str], bytes]:
    """An error page: the status, what was wrong, and a link to `home`'s start page."""
    def page(status: int, message: str) -> bytes:
        phrase = HTTPStatus(status).phrase
        return (f"<!doctype html><meta charset='utf-8'><title>{status}</title>"
                f"<p>{status} {escape(phrase)}: {escape(message)}</p>"
                f"<p><a href='/'>{escape(home)}</a></p>").encode()
    return page
