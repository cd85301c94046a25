"""Remote authors upload over HTTP (issue 46), tried with a real client (httpx) against a real
server process, `meldref contest serve`, over a contest folder made by `meldref contest init`
with its defaults (the sandbox on where it can run here), its authors added by `meldref
contest author add`.

An upload with a valid token joins the ladder (`contest status` shows its version); every
refusal answers its status and a message saying what to fix, and adds nothing (no file, no
version row) but its audit row: no token, a revoked token, another author's name, an
oversized body (declared, or streamed without a length), a zip-slip path in a zip and a tar,
a symbolic link in a zip and a tar, a hard link and a device in a tar, too many entries, too
many uploads in an hour. A build step builds in the sandbox, and a failing build answers its
log's tail. What an author reads (their versions, games, replays, stderr) is theirs alone."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
import subprocess
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support import PYTHON, RANDOM_BOT_PATH, ROOT
from test_contest_e2e import TINY, browser, env, meldref  # noqa: F401 (a fixture)

PER_HOUR = 4
LIMITS = ["--upload-mb", "1", "--archive-entries", "20", "--uploads-per-hour", str(PER_HOUR)]
BOT = RANDOM_BOT_PATH.read_bytes()


class Contest:
    """A contest folder served by a real server process, with its authors' tokens."""

    def __init__(self, folder: Path, url: str) -> None:
        self.folder, self.url = folder, url
        self.tokens: dict[str, str] = {}

    def author(self, name: str) -> str:
        if name not in self.tokens:
            done = meldref("contest", "author", "add", str(self.folder), name)
            self.tokens[name] = done.stdout.strip()
        return self.tokens[name]

    def post(self, token: str | None, name: str, filename: str, data: bytes,
             **fields: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.post(f"{self.url}/api/submissions", headers=headers, timeout=300,
                          data={"name": name, **fields}, files={"file": (filename, data)})

    def get(self, token: str, path: str) -> httpx.Response:
        return httpx.get(f"{self.url}{path}", headers={"Authorization": f"Bearer {token}"},
                         timeout=60)

    def state(self) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Every program file of the contest and every version row."""
        files = sorted(str(p.relative_to(self.folder)) for p in (self.folder / "bots").rglob("*")
                       if ".staging" not in p.parts)
        return files, self.rows("SELECT * FROM versions")

    def rows(self, query: str, *args: Any) -> list[tuple[Any, ...]]:
        db = sqlite3.connect(self.folder / "contest.db", timeout=30)
        try:
            return [tuple(r) for r in db.execute(query, args)]
        finally:
            db.close()


@contextlib.contextmanager
def serving(folder: Path, *flags: str) -> Iterator[str]:
    """`meldref contest serve FOLDER --port 0 FLAGS...` running; its URL."""
    server = subprocess.Popen([PYTHON, "-m", "meldref", "contest", "serve", str(folder),
                               "--port", "0", *flags], env=env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # "serving FOLDER at URL (Ctrl-C to stop)"
        assert " at http://" in line, line + server.stderr.read() if server.stderr else line
        yield line.split(" at ", 1)[1].split()[0].rstrip("/")
    finally:
        server.terminate()
        errors = server.communicate(timeout=60)[1]
        assert "Traceback" not in errors, errors


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Contest]:
    folder = tmp_path_factory.mktemp("served") / "c"
    meldref("contest", "init", str(folder), *TINY, *LIMITS)
    with serving(folder) as url:
        yield Contest(folder, url)


def refused(contest: Contest, answer: httpx.Response, status: int, words: str,
            before: tuple[list[str], list[tuple[Any, ...]]]) -> dict[str, Any]:
    """The answer is `status` with a JSON error holding `words`, and nothing was added."""
    body = answer.json()
    assert answer.status_code == status, body
    assert words in body["error"], body["error"]
    assert body["accepted"] is False
    assert contest.state() == before
    return dict(body)


def zipped(entries: list[tuple[str, bytes, int]]) -> bytes:
    """A zip of (name, data, mode) entries, the mode as a Unix mode (S_IFLNK for a link)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            archive.writestr(info, data)
    return out.getvalue()


def tarred(members: list[tarfile.TarInfo], data: bytes = b"") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for member in members:
            archive.addfile(member, io.BytesIO(data) if member.isreg() else None)
    return out.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "",
           size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, size
    return info


# ----------------------------------------------------------------------------------------------
# Accepted


def test_an_upload_with_a_valid_token_joins_the_ladder(contest: Contest) -> None:
    token = contest.author("alice")
    answer = contest.post(token, "randy", "randy.py", BOT)
    body = answer.json()
    assert answer.status_code == 201, body
    assert (body["name"], body["version"], body["check"]["passed"]) == ("randy", 1, True)
    status = json.loads(meldref("contest", "status", str(contest.folder), "--json").stdout)
    assert [(r["bot"], r["version"]) for r in status["leaderboard"]] == [("randy", 1)]
    assert status["service"]["uploads_per_hour"] == PER_HOUR
    # The same name again is the next version, the first superseded.
    again = contest.post(token, "randy", "randy.py", BOT)
    assert (again.status_code, again.json()["version"]) == (201, 2), again.json()
    audit = contest.rows("SELECT a.name, u.bot, u.sha256, u.address, u.outcome, u.version "
                         "FROM uploads u JOIN authors a ON a.id = u.author ORDER BY u.id")
    sha = body["sha256"]
    assert audit == [("alice", "randy", sha, "127.0.0.1", "accepted", 1),
                     ("alice", "randy", sha, "127.0.0.1", "accepted", 2)]


def test_the_upload_command_takes_the_token_from_the_environment(
        contest: Contest, tmp_path: Path) -> None:
    program = tmp_path / "cmdbot.py"
    program.write_bytes(BOT)
    done = subprocess.run([PYTHON, "-m", "meldref", "contest", "upload", contest.url,
                           str(program), "--name", "cmdbot"], capture_output=True, text=True,
                          env={**env(), "MELDREF_TOKEN": contest.author("carol")}, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "cmdbot v1 joins the ladder"
    stolen = subprocess.run([PYTHON, "-m", "meldref", "contest", "upload", contest.url,
                             str(program), "--name", "cmdbot"], capture_output=True, text=True,
                            env={**env(), "MELDREF_TOKEN": contest.author("dave")}, timeout=300)
    assert stolen.returncode == 1
    assert "refused (HTTP 403)" in stolen.stderr and "belongs to another author" in stolen.stderr


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler to make a program")
def test_a_compiled_program_uploaded_alone_starts(contest: Contest, tmp_path: Path) -> None:
    # A single file with no known suffix starts as ./NAME: it was written 0644 (only a file
    # beginning with #! got 0755), so a compiled bot was refused by its check, unable to
    # start ("Permission denied").
    program = tmp_path / "meldbot"
    subprocess.run(["cc", "-std=c99", "-O2", "-o", str(program),
                    str(ROOT / "bots" / "examples" / "c" / "meldbot.c")], check=True)
    answer = contest.post(contest.author("carol"), "compiled", "meldbot", program.read_bytes())
    assert answer.status_code == 201, answer.json()["error"]
    assert (contest.folder / "bots" / "compiled" / "v1" / "meldbot").stat().st_mode & 0o111


def test_an_archive_of_a_folder_with_a_build_step_is_built_in_the_sandbox(
        contest: Contest) -> None:
    token = contest.author("erin")
    data = tarred([member("src/bot.txt", size=len(BOT))], BOT)
    answer = contest.post(token, "builder", "builder.tar.gz", data, cmd="python3 bot.py",
                          build="cp bot.txt bot.py && echo compiled")
    assert answer.status_code == 201, answer.json()
    assert answer.json()["build"]["log"].strip() == "compiled"
    log = contest.get(token, "/api/bots/builder/v1/build").json()
    assert log["log"].strip() == "compiled" and log["command"].startswith("cp bot.txt")
    assert (contest.folder / "bots" / "builder" / "v1" / "bot.py").stat().st_uid == 0
    before = contest.state()
    failing = contest.post(token, "builder", "builder.tar.gz", data, cmd="python3 bot.py",
                           build="echo 'bot.c:3: error: expected ;' >&2; exit 2")
    body = refused(contest, failing, 422, "the build failed (exit code 2); its log ends: "
                   "bot.c:3: error: expected ;", before)
    assert "expected ;" in body["build_log"]


# ----------------------------------------------------------------------------------------------
# Refused, each with its status and message, nothing added


def test_no_token_is_refused(contest: Contest) -> None:
    before = contest.state()
    answer = contest.post(None, "anon", "anon.py", BOT)
    refused(contest, answer, 401, "no token: send `Authorization: Bearer TOKEN`", before)
    assert answer.headers["www-authenticate"] == "Bearer"
    wrong = contest.post("mr_not-a-token", "anon", "anon.py", BOT)
    refused(contest, wrong, 401, "this token is no author's", before)


def test_a_revoked_token_is_refused(contest: Contest) -> None:
    token = contest.author("mallory")
    meldref("contest", "author", "revoke", str(contest.folder), "mallory")
    listed = meldref("contest", "author", "list", str(contest.folder)).stdout
    assert "mallory: revoked" in listed
    before = contest.state()
    refused(contest, contest.post(token, "mal", "mal.py", BOT), 401,
            "this token was revoked", before)
    assert contest.get(token, "/api/me").status_code == 401


def test_another_authors_name_is_refused(contest: Contest) -> None:
    contest.post(contest.author("alice"), "randy", "randy.py", BOT)  # alice's, if not yet
    before = contest.state()
    answer = contest.post(contest.author("bob"), "randy", "randy.py", BOT)
    refused(contest, answer, 403, "the name randy belongs to another author", before)
    withdraw = httpx.delete(f"{contest.url}/api/bots/randy", timeout=30,
                            headers={"Authorization": f"Bearer {contest.author('bob')}"})
    assert withdraw.status_code == 403 and contest.state() == before


def test_an_organisers_name_is_refused(contest: Contest) -> None:
    meldref("contest", "submit", str(contest.folder), str(RANDOM_BOT_PATH), "--name", "house")
    before = contest.state()
    answer = contest.post(contest.author("bob"), "house", "house.py", BOT)
    refused(contest, answer, 403, "the name house belongs to the organiser's entry", before)


def test_an_oversized_upload_is_refused_declared_or_streamed(contest: Contest) -> None:
    token = contest.author("frank")
    before = contest.state()
    for extra in (1 << 10, 1 << 19):  # the file past 1 MiB; the body past it with its form
        big = b"#" * ((1 << 20) + extra)
        refused(contest, contest.post(token, "big", "big.py", big), 413,
                "larger than this contest's 1 MiB", before)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the count stops it as it arrives
        yield b"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.py\"\r\n\r\n"
        for _ in range(40):
            yield b"#" * 65536
    answer = httpx.post(f"{contest.url}/api/submissions", content=chunks(), timeout=60,
                        headers={"Authorization": f"Bearer {token}",
                                 "Content-Type": "multipart/form-data; boundary=x"})
    refused(contest, answer, 413, "larger than this contest's 1 MiB", before)


@pytest.mark.parametrize(("filename", "data", "words"), [
    ("slip.zip", zipped([("bot.py", BOT, 0o100644), ("../../escaped.py", b"x", 0o100644)]),
     "../../escaped.py: a path out of the archive's folder"),
    ("slip.tar.gz", tarred([member("../escaped.py", size=1)], b"x"),
     "../escaped.py: a path out of the archive's folder"),
    ("abs.tar.gz", tarred([member("/tmp/escaped.py", size=1)], b"x"),
     "/tmp/escaped.py: a path out of the archive's folder"),
    ("link.zip", zipped([("bot.py", b"/etc/passwd", 0o120777)]),
     "bot.py: a symbolic link; an archive may hold only files and folders"),
    ("link.tar.gz", tarred([member("bot.py", tarfile.SYMTYPE, "/etc/passwd")]),
     "bot.py: a symbolic link; an archive may hold only files and folders"),
    ("hard.tar.gz", tarred([member("bot.py", tarfile.LNKTYPE, "/etc/passwd")]),
     "bot.py: a hard link"),
    ("dev.tar.gz", tarred([member("null", tarfile.CHRTYPE)]), "null: a device"),
    ("many.zip", zipped([(f"f{k}", b"", 0o100644) for k in range(21)]),
     "the archive holds more than 20 entries"),
    ("twice.zip", zipped([("bot.py", BOT, 0o100644), ("./bot.py", BOT, 0o100644)]),
     "bot.py: an entry given twice"),
], ids=["zip-slip", "tar-slip", "tar-absolute", "zip-symlink", "tar-symlink", "tar-hardlink",
        "tar-device", "too-many-entries", "entry-twice"])
def test_a_hostile_archive_is_refused(contest: Contest, filename: str, data: bytes,
                                      words: str) -> None:
    before = contest.state()
    token = contest.author(f"h{abs(hash(filename)) % 10**6}")
    answer = contest.post(token, "hostile", filename, data, cmd="python3 bot.py")
    refused(contest, answer, 422, words, before)
    assert not (contest.folder / "escaped.py").exists()
    assert not (contest.folder.parent / "escaped.py").exists()
    audit = contest.rows("SELECT outcome, reason, sha256 FROM uploads ORDER BY id DESC LIMIT 1")
    assert audit[0][0] == "refused" and words in audit[0][1] and len(audit[0][2]) == 64


def test_too_many_uploads_in_an_hour_are_refused(contest: Contest) -> None:
    token = contest.author("hasty")
    bad = zipped([("../x", b"", 0o100644)])
    for _ in range(PER_HOUR):  # refused ones count: each costs the server its work
        assert contest.post(token, "hasty", "h.zip", bad).status_code == 422
    before = contest.state()
    answer = contest.post(token, "hasty", "hasty.py", BOT)
    refused(contest, answer, 429, f"{PER_HOUR} uploads an hour at most", before)
    assert int(answer.headers["retry-after"]) > 3000
    # Another author is not held by it.
    assert contest.post(contest.author("patient"), "patient", "p.py", BOT).status_code == 201


# ----------------------------------------------------------------------------------------------
# What an author reads is theirs


def test_an_author_reads_their_own_bots_and_no_one_elses(contest: Contest) -> None:
    alice, bob = contest.author("alice"), contest.author("bob")
    contest.post(alice, "randy", "randy.py", BOT)
    mine = contest.get(alice, "/api/me").json()
    assert "randy" in [b["name"] for b in mine["bots"]]
    assert contest.get(alice, "/api/bots/randy").status_code == 200
    theirs = contest.get(bob, "/api/bots/randy")
    assert theirs.status_code == 403 and "not yours" in theirs.json()["error"]
    assert contest.get(bob, "/api/bots/randy/games").status_code == 403
    assert contest.get(bob, "/api/bots/nobody").status_code == 404
    assert "randy" not in [b["name"] for b in contest.get(bob, "/api/me").json()["bots"]]


def test_an_author_withdraws_their_bot(contest: Contest) -> None:
    token = contest.author("wendy")
    assert contest.post(token, "leaving", "leaving.py", BOT).status_code == 201
    answer = httpx.delete(f"{contest.url}/api/bots/leaving", timeout=30,
                          headers={"Authorization": f"Bearer {token}"})
    assert answer.json() == {"name": "leaving", "version": 1, "state": "retired"}
    status = json.loads(meldref("contest", "status", str(contest.folder), "--json").stdout)
    out = {r["label"]: r["reason"] for r in status["out_of_play"]}
    assert out["leaving v1"] == "withdrawn by its author"


CRASHER = (Path(__file__).parent / "hostile" / "crasher.py").read_text().replace(
    "crasher: losing", "gina-secret: losing")
# bob's bot plays as the random bot does and writes a line on stderr at every game's start:
# games it plays cleanly, its stderr kept for bob all the same.
NOTING = RANDOM_BOT_PATH.read_text().replace(
    '        if kind == "meldref":',
    '        if kind == "game":\n            log("bob-note: a game begins")\n'
    '        if kind == "meldref":', 1)


@pytest.fixture(scope="module")
def gina(contest: Contest) -> str:
    """gina's token, her bot having played bob's on the ladder: ginabot leaves a line on
    stderr and crashes in its ladder games; the two play each other alone."""
    gina, bob = contest.author("gina"), contest.author("bob")
    assert contest.post(gina, "ginabot", "gina.py", CRASHER.encode()).status_code == 201
    assert contest.post(bob, "bobbot", "bob.py", NOTING.encode()).status_code == 201
    play_alone(contest, ("ginabot", "bobbot"), 4)
    return gina


def play_alone(contest: Contest, bots: tuple[str, ...], games: int) -> None:
    """Every bot but `bots` retired, `games` ladder games played."""
    status = json.loads(meldref("contest", "status", str(contest.folder), "--json").stdout)
    for row in status["leaderboard"]:
        if row["bot"] not in bots:
            meldref("contest", "retire", str(contest.folder), row["bot"])
    meldref("contest", "run", str(contest.folder), "--games", str(games))


def test_an_author_reads_every_game_of_theirs_with_their_own_stderr_alone(
        contest: Contest, gina: str) -> None:
    # Each game ginabot played is gina's to read with its replay and her stderr, never her
    # opponents'.
    games = contest.get(gina, "/api/bots/ginabot/games").json()["games"]
    assert len(games) == 4, games
    first = contest.get(gina, "/api/bots/ginabot/games?limit=3").json()
    second = contest.get(gina, first["next"]).json()  # every game, page by page
    assert [g["game_id"] for g in first["games"] + second["games"]] == [
        g["game_id"] for g in games]
    for game in games:
        replay = contest.get(gina, game["replay"])
        assert replay.status_code == 200 and replay.text.startswith("{")
        stranger = contest.get(contest.author("hank"), game["replay"])  # hank plays none
        assert stranger.status_code == 404 and "no game of yours" in stranger.json()["error"]
    crashed = [g for g in games if "crashed" in g["faults"]]
    assert crashed and all(g["stderr"] for g in crashed), games
    seats = contest.get(gina, crashed[0]["stderr"]).json()["seats"]
    assert [s["bot"] for s in seats] == ["ginabot"]
    assert "gina-secret: losing" in seats[0]["stderr"]
    # The opponent's author (if an author's) reads their own seat of it, never gina's line.
    opponents = {b.split(" v")[0] for b in crashed[0]["bots"]} - {"ginabot"}
    owners = {name: contest.rows("SELECT a.name FROM owners o JOIN authors a ON a.id = "
                                 "o.author WHERE o.bot = ?", name) for name in opponents}
    for rows in owners.values():
        if rows:
            theirs = contest.get(contest.tokens[rows[0][0]], crashed[0]["stderr"]).json()
            assert "gina-secret" not in json.dumps(theirs)


def test_the_authors_page_shows_their_games_and_stderr_to_them_alone(
        contest: Contest, gina: str) -> None:
    pages = {}
    for name in ("gina", "bob"):
        with httpx.Client(base_url=contest.url, timeout=60) as client:
            signed = client.post("/author/login", data={"token": contest.author(name)})
            assert signed.status_code == 303 and "httponly" in signed.headers["set-cookie"].lower()
            assert "samesite=strict" in signed.headers["set-cookie"].lower()
            pages[name] = client.get("/author").text
    assert "ginabot" in pages["gina"] and "gina-secret: losing" in pages["gina"]
    # bob played ginabot: his page names it as his opponent, and shows his own stderr alone.
    assert "bobbot" in pages["bob"] and "gina-secret" not in pages["bob"]
    anonymous = httpx.get(f"{contest.url}/author", timeout=30)
    assert "name='token'" in anonymous.text and "gina-secret" not in anonymous.text
    wrong = httpx.post(f"{contest.url}/author/login", data={"token": "mr_wrong"}, timeout=30)
    assert wrong.status_code == 401 and "this token is no author" in wrong.text


@pytest.mark.browser
def test_an_author_uploads_through_the_page_and_reads_their_games_in_chromium(
        contest: Contest, gina: str, browser: Any, tmp_path: Path) -> None:  # noqa: F811
    program = tmp_path / "webbot.py"
    program.write_bytes(BOT)
    page = browser.new_page()
    try:
        page.goto(f"{contest.url}/author")
        page.fill("input[name=token]", contest.author("ivy"))
        page.click("button:text('Sign in')")
        page.fill("input[name=name]", "webbot")
        page.set_input_files("input[name=file]", str(program))
        page.click("button:text('Upload')")
        page.wait_for_selector("h2.bot", timeout=300_000)
        assert page.text_content("#said") == "webbot.py as webbot: v1 joins the ladder"
        assert page.locator("h2.bot").all_text_contents() == ["webbot"]
        assert "gina-secret" not in page.content()
        page.context.clear_cookies()  # gina, on the same browser
        page.goto(f"{contest.url}/author")
        page.fill("input[name=token]", gina)
        page.click("button:text('Sign in')")
        page.click("table.games summary:text('stderr') >> nth=0")
        assert "gina-secret: losing" in page.content()
        replay = page.locator("table.games a").first.get_attribute("href")
        assert replay is not None and replay.startswith("/api/games/")
    finally:
        page.close()


def test_behind_a_proxy_the_audit_names_the_client_the_proxy_forwarded(
        contest: Contest) -> None:
    token = contest.author("olga")
    forwarded = {"Authorization": f"Bearer {token}", "X-Forwarded-For": "203.0.113.7"}
    with serving(contest.folder, "--public-host", "contest.example.org", "--trust-proxy",
                 "127.0.0.1") as url:
        answer = httpx.post(f"{url}/api/submissions", timeout=300,
                            headers={**forwarded, "Host": "contest.example.org"},
                            data={"name": "proxied"},
                            files={"file": ("proxied.py", BOT)})
        assert answer.status_code == 201, answer.text
    # The server without --trust-proxy ignores the header: no client can name itself.
    direct = httpx.post(f"{contest.url}/api/submissions", timeout=300, headers=forwarded,
                        data={"name": "proxied"}, files={"file": ("proxied.py", BOT)})
    assert direct.status_code == 201, direct.text
    assert contest.rows("SELECT address FROM uploads WHERE bot = 'proxied' ORDER BY id") == [
        ("203.0.113.7",), ("127.0.0.1",)]


def test_a_form_posted_from_another_site_uploads_nothing(contest: Contest) -> None:
    with httpx.Client(base_url=contest.url, timeout=60) as client:
        client.post("/author/login", data={"token": contest.author("alice")})
        before = contest.state()
        answer = client.post("/author/upload", data={"name": "csrf"},
                             files={"file": ("csrf.py", BOT)},
                             headers={"Sec-Fetch-Site": "cross-site"})
        assert answer.status_code == 403 and "another site" in answer.json()["error"]
        assert contest.state() == before


def test_a_replay_is_allowed_to_the_authors_of_its_bots_while_replays_are_private(
        contest: Contest, gina: str) -> None:
    from starlette.requests import Request

    from meldref.contest.serve.api import replay_allowed

    def asking(token: str | None) -> Request:
        headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
        return Request({"type": "http", "method": "GET", "path": "/", "headers": headers})
    game = contest.get(gina, "/api/bots/ginabot/games").json()["games"][0]["game_id"]
    assert replay_allowed(contest.folder, asking(gina), game)
    assert not replay_allowed(contest.folder, asking(contest.author("hank")), game)
    assert not replay_allowed(contest.folder, asking(None), game)


@pytest.fixture(scope="module")
def quiet(contest: Contest, gina: str) -> str:
    """bob's token, bobbot having played two clean games against carl's random bot alone
    (after the tests above: every other bot retired)."""
    bob, carl = contest.author("bob"), contest.author("carl")
    assert contest.post(carl, "carlbot", "carl.py", BOT).status_code == 201
    play_alone(contest, ("bobbot", "carlbot"), 2)
    return bob


def test_an_author_reads_their_bots_stderr_of_the_games_no_bot_failed_in(
        contest: Contest, quiet: str) -> None:
    # Before: a game no bot failed kept no stderr (its `stderr` link None).
    games = contest.get(quiet, "/api/bots/bobbot/games").json()["games"]
    clean = [g for g in games if any(b.startswith("carlbot ") for b in g["bots"])]
    assert len(clean) == 2 and not any(g["faults"] or any(g["detail"]) for g in clean), clean
    for game in clean:
        assert game["stderr"], game
        seats = contest.get(quiet, game["stderr"]).json()["seats"]
        assert [s["bot"] for s in seats] == ["bobbot"], seats
        assert "bob-note: a game begins" in seats[0]["stderr"], seats


def test_with_private_replays_the_pages_show_a_replay_to_its_authors_alone(
        contest: Contest, quiet: str) -> None:
    # Before: the viewer and the bot page's links showed every game to whoever asked.
    game, replay = game_and_replay(contest.folder, "bobbot")
    anonymous = httpx.get(f"{contest.url}/view/{replay}", timeout=60)
    assert anonymous.status_code == 404, anonymous.text
    assert "replays are shown to the authors of their bots while the contest runs: sign in at " \
           "/author" in anonymous.text
    assert contest.get(contest.author("hank"), f"/view/{replay}").status_code == 404
    assert contest.get(quiet, f"/view/{replay}").status_code == 200
    with httpx.Client(base_url=contest.url, timeout=60) as signed:  # the pages' cookie
        signed.post("/author/login", data={"token": quiet})
        assert signed.get(f"/view/{replay}").status_code == 200
        assert f"/view/{replay}" in signed.get("/bot/bobbot").text
    page = httpx.get(f"{contest.url}/bot/bobbot", timeout=60).text
    assert game in page and "/view/replays/" not in page


def test_an_authors_replay_kept_compressed_reads_as_json_lines(
        contest: Contest, quiet: str) -> None:
    # The replay is x.jsonl.gz on disk: sent as it is to a client taking gzip, else inflated.
    game, replay = game_and_replay(contest.folder, "bobbot")
    assert replay.endswith(".jsonl.gz") and (contest.folder / replay).is_file()
    taking = contest.get(quiet, f"/api/games/{game}/replay")
    assert taking.headers["content-encoding"] == "gzip"
    plain = httpx.get(f"{contest.url}/api/games/{game}/replay", timeout=60, headers={
        "Authorization": f"Bearer {quiet}", "Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.text == taking.text and plain.text.startswith('{"type":"header"'), plain.text


def game_and_replay(folder: Path, bot: str) -> tuple[str, str]:
    """A ladder game of `bot`'s, and its replay's path in the folder, as the result has it."""
    db = sqlite3.connect(folder / "contest.db", timeout=30)
    try:
        gid, result = db.execute(
            "SELECT g.game_id, g.result FROM games g JOIN seats s ON s.game = g.id JOIN versions "
            "v ON v.id = s.version WHERE v.bot = ? AND g.result IS NOT NULL ORDER BY g.id DESC",
            (bot,)).fetchone()
    finally:
        db.close()
    return str(gid), str(json.loads(result)["replay"])
