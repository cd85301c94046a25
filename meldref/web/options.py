"""How a server is run: where it listens, which names it answers, whom it believes about a
client's address, TLS, and how big a request may be. Read once, at the edge, from the command's
flags or from `MELDREF_SERVE_*` environment variables (what a service manager sets for a server
that runs for weeks behind a proxy); every value is checked there, with the name that set it."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

DEFAULT_HOST: Final = "127.0.0.1"
MAX_BODY: Final = 16 * 1024 * 1024  # bytes of a request's body (an upload is the largest)
MAX_HEADER: Final = 16 * 1024  # bytes of a request line and its headers
FORWARDED_HEADER: Final = "x-forwarded-for"
LOCAL_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")
ENVIRONMENT: Final = {
    "public_hosts": "MELDREF_SERVE_PUBLIC_HOSTS",
    "trusted_proxies": "MELDREF_SERVE_TRUSTED_PROXIES",
    "forwarded_header": "MELDREF_SERVE_FORWARDED_HEADER",
    "certfile": "MELDREF_SERVE_CERT",
    "keyfile": "MELDREF_SERVE_KEY",
    "max_body": "MELDREF_SERVE_MAX_BODY",
    "max_header": "MELDREF_SERVE_MAX_HEADER",
}

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ServeError(ValueError):
    """A server that cannot be started as asked (a folder it cannot serve, a bad setting)."""


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """A server's settings. `public_hosts`: Host header values answered besides this
    machine's own address (the name a reverse proxy that keeps the Host header passes on,
    `contest.example.org`, with `:PORT` when it is not the scheme's default).
    `trusted_proxies`: the addresses (or networks) whose `forwarded_header` names the client;
    from anyone else the header is ignored. `certfile`/`keyfile`: serve HTTPS directly."""

    host: str = DEFAULT_HOST
    port: int = 0
    quiet: bool = False
    public_hosts: tuple[str, ...] = ()
    trusted_proxies: tuple[Network, ...] = ()
    forwarded_header: str = FORWARDED_HEADER
    certfile: Path | None = None
    keyfile: Path | None = None
    max_body: int = MAX_BODY
    max_header: int = MAX_HEADER

    @property
    def tls(self) -> bool:
        return self.certfile is not None

    def with_environment(self, environ: Mapping[str, str]) -> ServeOptions:
        """These options with the settings `environ` gives (`MELDREF_SERVE_*`, see
        `ENVIRONMENT`); `ServeError` naming the variable for a value that cannot be one."""
        def given(key: str) -> tuple[str, str] | None:
            text = environ.get(ENVIRONMENT[key], "").strip()
            return (ENVIRONMENT[key], text) if text else None

        out = self
        if found := given("public_hosts"):
            out = replace(out, public_hosts=tuple(host_names(found[0], found[1].split(","))))
        if found := given("trusted_proxies"):
            out = replace(out, trusted_proxies=tuple(proxy_networks(found[0],
                                                                    found[1].split(","))))
        if found := given("forwarded_header"):
            out = replace(out, forwarded_header=header_name(*found))
        if found := given("certfile"):
            out = replace(out, certfile=Path(found[1]))
        if found := given("keyfile"):
            out = replace(out, keyfile=Path(found[1]))
        if found := given("max_body"):
            out = replace(out, max_body=byte_count(*found))
        if found := given("max_header"):
            out = replace(out, max_header=byte_count(*found))
        if out.keyfile is not None and out.certfile is None:
            raise ServeError(f"{ENVIRONMENT['keyfile']} is set without "
                             f"{ENVIRONMENT['certfile']}: TLS needs the certificate too")
        return out


def serve_options(host: str = DEFAULT_HOST, port: int = 0, quiet: bool = False,
                  max_body: int = MAX_BODY, *, public_hosts: Sequence[str] = (),
                  trusted_proxies: Sequence[str] = (), forwarded_header: str | None = None,
                  cert: Path | None = None, key: Path | None = None,
                  environ: Mapping[str, str] = os.environ) -> ServeOptions:
    """A `serve` command's options: its flags (`--public-host`, `--trust-proxy`,
    `--forwarded-header`, `--cert`, `--key`) over the `MELDREF_SERVE_*` settings over the
    defaults (`max_body`: the server's own); `ServeError` naming the flag or variable of a
    value that cannot be one."""
    out = ServeOptions(host=host, port=port, quiet=quiet, max_body=max_body
                       ).with_environment(environ)
    if public_hosts:
        out = replace(out, public_hosts=tuple(host_names("--public-host", list(public_hosts))))
    if trusted_proxies:
        out = replace(out, trusted_proxies=tuple(proxy_networks("--trust-proxy",
                                                                list(trusted_proxies))))
    if forwarded_header:
        out = replace(out, forwarded_header=header_name("--forwarded-header",
                                                        forwarded_header))
    if cert is not None or key is not None:
        if cert is None:
            raise ServeError("--key without --cert: TLS needs the certificate too")
        out = replace(out, certfile=cert, keyfile=key)
    return out


def host_names(source: str, values: list[str]) -> list[str]:
    """Host header values as the server compares them (lower case, no scheme, no path)."""
    names = [v.strip().lower() for v in values if v.strip()]
    for name in names:
        if "/" in name or " " in name:
            raise ServeError(f"{source} = {name!r}: a host name, with :PORT if the proxy "
                             "adds one (contest.example.org), not a URL")
    return names


def proxy_networks(source: str, values: list[str]) -> list[Network]:
    """Addresses or networks (`127.0.0.1`, `10.0.0.0/8`, `::1`) of trusted proxies."""
    out = []
    for value in (v.strip() for v in values if v.strip()):
        try:
            out.append(ipaddress.ip_network(value, strict=False))
        except ValueError:
            raise ServeError(f"{source} = {value!r}: an IP address or network "
                             "(127.0.0.1, 10.0.0.0/8)") from None
    return out


def header_name(source: str, value: str) -> str:
    if not value or not all(c.isalnum() or c == "-" for c in value):
        raise ServeError(f"{source} = {value!r}: a header name (X-Forwarded-For, X-Real-IP)")
    return value.lower()


def byte_count(source: str, value: str) -> int:
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ServeError(f"{source} = {value!r}: a whole number of bytes, at least 1")
    return count


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only."""
    return host in ("localhost", "::1") or host.startswith("127.")
