"""`replay serve` and `contest serve` on the web stack (issue 46), each started as the real
`meldref` command and asked with a real HTTP client: the pages and HEAD, the Host check and a
configured public name, the forwarded address believed from a trusted proxy only, body and
header limits, TLS, the leaderboard's live data (`/board.json`) and, in Chromium, the page
updating itself without a reload; and the rank figures on the board."""

from __future__ import annotations

import os
import re
import signal
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
import test_contest_e2e
import viewer_games as games
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from test_contest import settings, staged_version

from meldref.contest.board import (
    BoardRow,
    chance_text,
    leaderboard,
    rank_chances,
    with_rank_chances,
)
from meldref.contest.serve.pages import board_json
from meldref.contest.serve.server import authors_routes, contest_options
from meldref.contest.store import ContestStore, Version
from meldref.contest.uploads import DEFAULTS
from meldref.protocol.records import ResultLine
from meldref.verdicts.seatings import seatings
from meldref.web.options import ServeError, ServeOptions, serve_options
from meldref.web.server import Server

PYTHON = sys.executable
TIMEOUT = 60
browser = test_contest_e2e.browser  # the fixture: Debian's Chromium, one per module


@dataclass
class Served:
    url: str
    child: subprocess.Popen[str]
    log: str = ""
    code: int | None = None
    lines: list[str] = field(default_factory=list)


@contextmanager
def serving(*args: str, **environment: str) -> Iterator[Served]:
    """`meldref ARGS --port 0` running, with `environment` added; its log when it has ended
    (stopped by SIGINT, as Ctrl-C stops it)."""
    child = subprocess.Popen([PYTHON, "-m", "meldref", *args, "--port", "0"],
                             env={**os.environ, "MELDREF_PURE": "1", **environment},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    found = re.search(r" at (https?://\S+/) ", child.stdout.readline())
    if found is None:
        child.kill()
        raise AssertionError(f"it did not serve: {child.communicate(timeout=TIMEOUT)}")
    served = Served(found[1], child)
    try:
        yield served
    finally:
        child.send_signal(signal.SIGINT)
        _, served.log = child.communicate(timeout=TIMEOUT)
        served.code = child.returncode


def client(served: Served, **options: Any) -> httpx.Client:
    return httpx.Client(base_url=served.url, timeout=TIMEOUT, **options)


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("served") / "c"
    # Its replays public: anyone's viewer shows them (private ones: test_contest_uploads.py).
    store = ContestStore.create(folder, settings(), replace(DEFAULTS, public_replays=True))
    try:
        a, b, c = (staged_version(store, name) for name in ("alpha", "beta", "gamma"))
        store.save_ratings([(a, 150.0, 90.0, 210.0, 30, None), (b, 0.0, -60.0, 60.0, 30, None),
                            (c, 0.0, -60.0, 60.0, 30, None)])
        # One game done, its replay in `replays/` (a replay of no done game is swept away).
        store.add_deal_set("ladder", (a, b), seatings(2))
        game = store.queued_games()[0]
        store.mark_running(game.id)
        games.play(folder / "replays", game.game_id, "phase10",
                   ["builtin:greedy", "builtin:random"], {"phases-to-win": "1"}, 3)
        store.record(ResultLine.from_json({
            "status": "ok", "index": game.id, "game_id": game.game_id, "deal": 1,
            "bots": ["alpha v1", "beta v1"], "places": [1, 2], "scores": [0, 50],
            "faults": [[], []], "replay": f"replays/{game.game_id}.jsonl"}))
    finally:
        store.close()
    return folder


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("replays")
    games.phase10_four(folder)
    return folder


# ----------------------------------------------------------------------------------------------
# Pages, HEAD, methods


def test_the_contest_pages_answer_get_and_head(contest: Path) -> None:
    # Was: HEAD answered 501 by http.server's handler (only do_GET was written).
    with serving("contest", "serve", str(contest)) as served, client(served) as http:
        page = http.get("/")
        assert page.status_code == 200 and "table class='board'" in page.text
        assert "<th class='num'>P first</th>" in page.text and "P top 3" in page.text
        assert "default-src 'none'" in page.headers["content-security-policy"]
        head = http.head("/")
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-type"] == page.headers["content-type"]
        assert http.head("/bot/alpha").status_code == 200
        assert http.get("/bot/alpha").text.count("&gt;99%") >= 1  # alpha: first, surely
        assert http.get("/bot/nobody").status_code == 404
        viewer = http.get("/view/replays/ds000001-s00.jsonl")
        assert viewer.status_code == 200 and "meldref-replay" in viewer.text
        assert http.get("/bot/alpha").text.count("/view/replays/ds000001-s00.jsonl") == 1
        assert http.put("/").status_code == 501  # no route here takes a PUT
        if authors_routes(contest):  # the authors' routes, where api.py is: they take POSTs
            assert http.post("/").status_code == 405
            assert http.get("/api/me").status_code == 401
        else:
            assert http.post("/").status_code == 501
    assert served.code == 0


def test_replay_serve_answers_head_and_serves_the_viewer_files(replays: Path) -> None:
    with serving("replay", "serve", str(replays)) as served, client(served) as http:
        assert http.head("/").status_code == 200
        assert http.get("/view/phase10-4.jsonl?seat=1").status_code == 200
        sheet = http.get("/static/viewer.css")
        assert sheet.status_code == 200 and sheet.headers["content-type"].startswith("text/css")
        assert http.get("/static/../serve.py").status_code == 404
        missing = http.get("/nothing")
        assert missing.status_code == 404 and "no such page" in missing.text
        assert "<a href='/'>the list of games</a>" in missing.text
        assert http.put("/").status_code == 501
        assert http.get("/", headers={"Host": "evil.example"}).status_code == 421
    assert served.code == 0


# ----------------------------------------------------------------------------------------------
# Behind a reverse proxy


def test_a_public_host_name_is_answered_only_when_configured(contest: Path) -> None:
    # Was: 421 for every Host but the server's own address: behind a proxy that keeps the
    # Host header, no page answered.
    public = {"Host": "contest.example.org"}
    with serving("contest", "serve", str(contest)) as served, client(served) as http:
        assert http.get("/", headers=public).status_code == 421
    with serving("contest", "serve", str(contest),
                 MELDREF_SERVE_PUBLIC_HOSTS="contest.example.org") as served, \
            client(served) as http:
        assert http.get("/", headers=public).status_code == 200
        assert http.get("/", headers={"Host": "evil.example"}).status_code == 421
        assert http.get("/").status_code == 200  # its own address still answers


def test_the_forwarded_address_is_believed_from_a_trusted_proxy_only(replays: Path) -> None:
    forwarded = {"X-Forwarded-For": "198.51.100.9, 203.0.113.7"}
    with serving("replay", "serve", str(replays)) as untrusted, client(untrusted) as http:
        assert http.get("/", headers=forwarded).status_code == 200
    assert re.search(r'^127\.0\.0\.1 "GET / HTTP/1\.1" 200$', untrusted.log, re.M), \
        untrusted.log
    assert "203.0.113.7" not in untrusted.log
    with serving("replay", "serve", str(replays),
                 MELDREF_SERVE_TRUSTED_PROXIES="127.0.0.0/8") as trusted, \
            client(trusted) as http:
        assert http.get("/", headers=forwarded).status_code == 200
        assert http.get("/", headers={"X-Forwarded-For": "not an address"}).status_code == 200
    # The nearest address the trusted proxy did not add itself: a client's own claim
    # (198.51.100.9, sent by the client before the proxy appended 203.0.113.7) is not taken.
    assert re.search(r'^203\.0\.113\.7 "GET / HTTP/1\.1" 200$', trusted.log, re.M), trusted.log
    assert "198.51.100.9" not in trusted.log
    assert re.search(r'^127\.0\.0\.1 "GET / HTTP/1\.1" 200$', trusted.log, re.M)


def test_contest_serve_takes_the_proxy_settings_as_flags(contest: Path) -> None:
    shown = subprocess.run([PYTHON, "-m", "meldref", "contest", "serve", "--help"],
                           capture_output=True, text=True, timeout=TIMEOUT,
                           env={**os.environ, "COLUMNS": "200"}).stdout
    if "--public-host" not in shown:
        pytest.skip("contest serve has no --public-host flag yet (cli/contest.py)")
    with serving("contest", "serve", str(contest), "--public-host", "contest.example.org",
                 "--trust-proxy", "127.0.0.1") as served, client(served) as http:
        proxied = {"Host": "contest.example.org", "X-Forwarded-For": "203.0.113.7"}
        assert http.get("/", headers=proxied).status_code == 200
    assert '203.0.113.7 "GET / HTTP/1.1" 200' in served.log
    refused = subprocess.run([PYTHON, "-m", "meldref", "contest", "serve", str(contest),
                              "--port", "0", "--trust-proxy", "the proxy"],
                             capture_output=True, text=True, timeout=TIMEOUT)
    assert refused.returncode == 2
    assert "--trust-proxy = 'the proxy': an IP address" in refused.stdout + refused.stderr


def test_a_bad_serve_setting_stops_with_exit_2_naming_it(replays: Path) -> None:
    done = subprocess.run([PYTHON, "-m", "meldref", "replay", "serve", str(replays), "--port",
                           "0"], env={**os.environ, "MELDREF_PURE": "1",
                                      "MELDREF_SERVE_TRUSTED_PROXIES": "the proxy"},
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 2
    assert "MELDREF_SERVE_TRUSTED_PROXIES = 'the proxy': an IP address" in done.stdout + \
        done.stderr


def test_flags_win_over_the_environment_and_a_bad_one_is_named() -> None:
    environ = {"MELDREF_SERVE_PUBLIC_HOSTS": "a.example", "MELDREF_SERVE_MAX_BODY": "99"}
    options = serve_options("127.0.0.1", 0, public_hosts=["B.example:8443"],
                            trusted_proxies=["10.0.0.0/8"], environ=environ)
    assert options.public_hosts == ("b.example:8443",) and options.max_body == 99
    assert [str(n) for n in options.trusted_proxies] == ["10.0.0.0/8"]
    for flags, message in [({"trusted_proxies": ["proxy"]}, "--trust-proxy = 'proxy'"),
                           ({"public_hosts": ["https://x.org/"]}, "--public-host = "),
                           ({"forwarded_header": "X Real"}, "--forwarded-header = "),
                           ({"key": Path("k.pem")}, "--key without --cert")]:
        with pytest.raises(ServeError, match=re.escape(message)):
            serve_options(environ={}, **flags)  # type: ignore[arg-type]


def test_the_contest_reads_bodies_as_large_as_its_uploads(contest: Path) -> None:
    # The uploads' own check refuses a larger upload, in JSON and in the audit: the guard's
    # ceiling stands above it (16 MiB uploads by default, 17 MiB bodies).
    assert contest_options(contest, "127.0.0.1", 0).max_body == 17 << 20


# ----------------------------------------------------------------------------------------------
# Limits


def test_an_oversized_body_or_header_is_refused(contest: Path) -> None:
    with serving("contest", "serve", str(contest), MELDREF_SERVE_MAX_BODY="1000") as served, \
            client(served) as http:
        refused = http.request("GET", "/", content=b"x" * 5000)
        assert refused.status_code == 413 and "limit of 1000 bytes" in refused.text
        assert http.request("GET", "/", content=b"x" * 500).status_code == 200
        large = http.get("/", headers={"X-Big": "y" * 40_000})
        assert large.status_code == 431 and "limit of 16384 bytes" in large.text
        assert http.get("/").status_code == 200  # and it still serves


class Echo(Server):
    """A server with routes as the authors' uploads and audit read a request: the body, the
    client's address and scheme."""

    def routes(self) -> list[BaseRoute]:
        return [Route("/echo", self.echo, methods=["POST"]), Route("/who", self.who)]

    async def echo(self, request: Request) -> Response:
        return PlainTextResponse(str(len(await request.body())))

    async def who(self, request: Request) -> Response:
        return PlainTextResponse(f"{request.client.host if request.client else '-'} "
                                 f"{request.url.scheme}")


@contextmanager
def echoing(options: ServeOptions) -> Iterator[httpx.Client]:
    server = Echo(options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with httpx.Client(base_url=server.url, timeout=TIMEOUT) as http:
            yield http
    finally:
        server.shutdown()
        server.server_close()
    assert not thread.is_alive()


def test_a_body_sent_in_chunks_is_refused_once_past_the_limit() -> None:
    # No Content-Length to refuse on: the bytes are counted as the route reads them.
    with echoing(ServeOptions(quiet=True, max_body=1000)) as http:
        small = http.post("/echo", content=iter([b"a" * 400, b"b" * 400]))
        assert small.status_code == 200 and small.text == "800"
        big = http.post("/echo", content=iter([b"a" * 600, b"b" * 600, b"c" * 600]))
        assert big.status_code == 413 and "limit of 1000 bytes" in big.text


def test_a_route_sees_the_address_and_scheme_a_trusted_proxy_forwarded() -> None:
    proxy = {"X-Forwarded-For": "198.51.100.9, 203.0.113.7", "X-Forwarded-Proto": "https"}
    with echoing(ServeOptions(quiet=True)) as http:
        assert http.get("/who", headers=proxy).text == "127.0.0.1 http"
    trusted = serve_options(trusted_proxies=["127.0.0.1"], environ={})
    with echoing(replace(trusted, quiet=True)) as http:
        assert http.get("/who", headers=proxy).text == "203.0.113.7 https"
        assert http.get("/who", headers={"X-Forwarded-Proto": "gopher"}).text == \
            "127.0.0.1 http"
    header = serve_options(trusted_proxies=["127.0.0.1"], forwarded_header="X-Real-IP",
                           environ={})
    with echoing(replace(header, quiet=True)) as http:
        assert http.get("/who", headers={"X-Real-IP": "192.0.2.4", **proxy}).text == \
            "192.0.2.4 https"


# ----------------------------------------------------------------------------------------------
# TLS


def test_tls_when_served_directly(replays: Path, tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    with serving("replay", "serve", str(replays), MELDREF_SERVE_CERT=str(cert),
                 MELDREF_SERVE_KEY=str(key)) as served:
        assert served.url.startswith("https://127.0.0.1:")
        trust = ssl.create_default_context(cafile=str(cert))
        with client(served, verify=trust) as http:
            page = http.get("/")
            assert page.status_code == 200
            assert page.headers["strict-transport-security"] == "max-age=86400"
        with httpx.Client(timeout=TIMEOUT) as plain, pytest.raises(httpx.HTTPError):
            plain.get(served.url.replace("https://", "http://"))


# ----------------------------------------------------------------------------------------------
# Live updates and rank figures


def test_the_board_data_follows_the_database(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    store = ContestStore.create(folder, settings())
    a, b = staged_version(store, "alpha"), staged_version(store, "beta")
    store.save_ratings([(a, 50.0, -10.0, 110.0, 10, None), (b, -50.0, -110.0, 10.0, 10, None)])
    try:
        with serving("contest", "serve", str(folder)) as served, client(served) as http:
            page = http.get("/").text
            assert "<div id='board' data-stamp=" in page and "fetch('/board.json" in page
            first = http.get("/board.json").json()
            assert [r["bot"] for r in first["leaderboard"]] == ["alpha", "beta"]
            assert first["leaderboard"][0]["p_first"] > 0.5 and "delta" not in first["html"]
            assert f"data-stamp='{first['stamp']}'" in page
            tag = {"If-None-Match": f'"{first["stamp"]}"'}
            unchanged = http.get("/board.json", headers=tag)
            assert unchanged.status_code == 304 and unchanged.content == b""
            delta = staged_version(store, "delta")
            store.save_ratings([(a, 50.0, -10.0, 110.0, 20, None),
                                (b, -50.0, -110.0, 10.0, 20, None),
                                (delta, 300.0, 240.0, 360.0, 20, None)])
            after = http.get("/board.json", headers=tag).json()
            assert [r["bot"] for r in after["leaderboard"]] == ["delta", "alpha", "beta"]
            assert "/bot/delta" in after["html"] and after["leaderboard"][0]["p_first"] > 0.99
    finally:
        store.close()


def row(bot: str, rating: float | None, low: float | None, high: float | None,
        games: int = 0) -> BoardRow:
    version = Version(0, bot, 1, "true", f"bots/{bot}/v1", 0.0, "active")
    return BoardRow(version, rating, low, high, None, games, 0)


def renamed(board_row: BoardRow, bot: str) -> BoardRow:
    return replace(board_row, version=replace(board_row.version, bot=bot))


def test_rank_figures_are_name_free_and_leave_out_versions_without_an_interval() -> None:
    rows = [row("a", 100.0, 40.0, 160.0), row("b", 0.0, -60.0, 60.0),
            row("c", 0.0, -60.0, 60.0), row("d", 20.0, None, None)]
    out = [r.chances for r in with_rank_chances(rows, 2)]
    other = [r.chances for r in with_rank_chances(
        [rows[0], renamed(rows[2], "z"), renamed(rows[1], "y"), rows[3]], 2)]
    assert out[1] == out[2] == other[1] == other[2]
    first, last = out[0], out[3]
    assert first is not None and first.first > 0.9 and first.ranks[0] == 1
    assert last is None
    drawn = [c for c in out[:3] if c is not None]
    assert sum(c.first for c in drawn) == pytest.approx(1.0, abs=1e-3)
    assert sum(c.top for c in drawn) == pytest.approx(2.0, abs=1e-3)


def test_the_top_k_is_the_finals_cut(tmp_path: Path) -> None:
    store = ContestStore.create(tmp_path / "c", settings())
    try:
        a, b = staged_version(store, "alpha"), staged_version(store, "beta")
        staged_version(store, "gamma")
        assert leaderboard(store).top_k == 3  # no final yet: the verdicts' k
        final = store.add_final(2, 1, [a, b])
        store.save_final(final, {"final": {"standings": [
            {"rank": k, "bot": bot, "rating": None, "rating_ci95": [None, None], "games": 2}
            for k, bot in enumerate(("alpha v1", "beta v1"), start=1)]}, "ladder": []})
        assert leaderboard(store).top_k == 2
        assert "P top 2" in board_json(store)["html"]
    finally:
        store.close()


# ----------------------------------------------------------------------------------------------
# In Chromium


@pytest.mark.browser
@pytest.mark.long  # a contest served and watched in Chromium: ~12 s
def test_the_leaderboard_updates_itself_without_a_reload(tmp_path: Path, browser: Any) -> None:
    # Was: a <meta refresh> reloaded the whole page every 10 seconds (scroll and all).
    folder = tmp_path / "c"
    store = ContestStore.create(folder, settings())
    a, b = staged_version(store, "alpha"), staged_version(store, "beta")
    store.save_ratings([(a, 50.0, -10.0, 110.0, 10, None), (b, -50.0, -110.0, 10.0, 10, None)])
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        with serving("contest", "serve", str(folder)) as served:
            page.goto(served.url)
            page.evaluate("window.loadedOnce = 'yes'")
            assert page.locator("table.board tr").count() == 3
            # Nothing new yet: the poll is told so in a 304, no body.
            with page.expect_response(lambda r: r.url.endswith("/board.json"),
                                      timeout=TIMEOUT * 1000) as polled:
                pass
            assert polled.value.status == 304
            delta = staged_version(store, "delta")
            store.save_ratings([(a, 50.0, -10.0, 110.0, 20, None),
                                (b, -50.0, -110.0, 10.0, 20, None),
                                (delta, 300.0, 240.0, 360.0, 20, None)])
            page.wait_for_selector("table.board a:text('delta')", timeout=TIMEOUT * 1000)
            assert page.locator("table.board tr").count() == 4
            assert page.evaluate("window.loadedOnce") == "yes"  # the same page: no reload
            assert page.locator("table.board tr >> nth=1").inner_text().startswith("1\tdelta")
        assert errors == []  # the poll breaks no rule of the page's Content-Security-Policy
    finally:
        page.close()
        store.close()


def test_chances_read_as_the_status_and_the_pages_print_them() -> None:
    assert chance_text({"p_first": 0.0, "p_top": 0.9999, "rank_ci95": [2, 4]}) == \
        ["2-4", "<1%", ">99%"]
    assert chance_text({"p_first": 0.42, "p_top": 0.5, "rank_ci95": [1, 1]}) == \
        ["1", "42%", "50%"]
    assert chance_text({"p_first": None}) == ["-", "-", "-"]
    # Was "0%" and "100%": 0.5% and 99.5% rounded away.
    assert chance_text({"p_first": 0.005, "p_top": 0.995, "rank_ci95": [1, 2]})[1:] == \
        ["<1%", ">99%"]


def test_the_chances_are_drawn_once_for_each_set_of_ratings() -> None:
    # Every viewer's page polls the board every few seconds, and at 200 versions a draw of
    # the chances costs a quarter of a CPU second; the ratings change only at a refit.
    rows = [row("a", 100.0, 40.0, 160.0), row("b", 0.0, -60.0, 60.0)]
    rank_chances.cache_clear()
    first = with_rank_chances(rows, 3)
    again = with_rank_chances([replace(r, games=99) for r in rows], 3)
    assert [r.chances for r in first] == [r.chances for r in again]
    assert (rank_chances.cache_info().misses, rank_chances.cache_info().hits) == (1, 1)
    with_rank_chances([row("a", 90.0, 40.0, 160.0), rows[1]], 3)
    assert rank_chances.cache_info().misses == 2


def test_the_pages_take_the_shared_style_sheet_where_there_is_one(
        contest: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import meldref.contest.serve.pages as pages

    store = ContestStore.open(contest)
    try:
        monkeypatch.setattr(pages, "VIEWER_FILES", tmp_path)
        alone = pages.leaderboard_page(store)
        (tmp_path / "site.css").write_text("body{}")
        shared = pages.leaderboard_page(store), pages.bot_page(store, "alpha") or ""
    finally:
        store.close()
    assert "<style>" in alone and "/static/site.css" not in alone
    for page in shared:
        assert "<link rel='stylesheet' href='/static/site.css'>" in page and "<style>" not in page
        assert "<header><h1>" in page and "<main>" in page and "<div class='wide'>" in page
