"""The authors' pages (`/author`, `api.api_routes`): a sign-in form for the token, and each
author's own page: their last upload's outcome and an upload form, their bots' versions with
their build logs, every recent game with its replay and their own stderr, their uploads as the
audit has them. No script: forms and links only (the server's Content-Security-Policy allows
forms to the server itself)."""

from __future__ import annotations

import os
import stat
from html import escape
from pathlib import Path
from typing import Final, TypedDict
from urllib.parse import quote

from .. import authors
from ..store import ContestStore, SeatRow

STDERR_SHOWN: Final = 32 << 10  # bytes of a log's end in an answer
GAMES_ON_PAGE: Final = 50  # the newest; the API pages through them all


class GameRowJSON(TypedDict):
    """A game of an author's bot, as the API gives it (`game_row`)."""

    game_id: str
    bots: list[str]
    place: int | None
    score: float | None
    faults: list[str]
    detail: list[str]
    replay: str | None
    stderr: str | None


def game_row(seat: SeatRow) -> GameRowJSON:
    """A game of a bot's seat (`store.recent_seats`) as the author's API and page give it:
    its seats, place, score, faults, and the links to its replay and the author's stderr."""
    gid, result = seat.game_id, seat.result
    faults = result.figures.faults if result.figures else ()
    return {"game_id": gid, "bots": list(result.bots), "place": seat.place,
            "score": seat.score, "faults": list(seat.outcomes),
            "detail": [f.detail for fs in faults for f in fs],
            "replay": f"/api/games/{quote(gid)}/replay" if result.replay else None,
            "stderr": f"/api/games/{quote(gid)}/stderr" if seat.log else None}


def stderr_end(folder: Path, log: str | None) -> str | None:
    """The end of a kept stderr log (a regular file of the contest's `logs/`, through no
    link), or None: none was kept, or it was pruned."""
    if not log or not log.startswith("logs/") or ".." in Path(log).parts:
        return None
    try:
        fd = os.open(folder / log, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with open(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        f.seek(max(0, info.st_size - STDERR_SHOWN))
        return f.read().decode("utf-8", "replace")


STYLE: Final = ("body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
                "table{border-collapse:collapse;margin:.5em 0 1.5em}"
                "td,th{padding:.25em .7em;border-bottom:1px solid #ddd;text-align:left}"
                "pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;max-height:20em;"
                "overflow:auto}")


def _html(title: str, body: str) -> str:
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>"
            f"{escape(title)}</title><style>{STYLE}</style></head><body><h1>{escape(title)}"
            f"</h1><p><a href='/'>leaderboard</a></p>{body}</body></html>")


def _outcome(upload: authors.UploadJSON) -> str:
    what = f"{upload['file'] or 'your last upload'} as {upload['bot'] or '?'}"
    if upload["outcome"] == "accepted":
        return f"{what}: v{upload['version']} joins the ladder"
    return f"{what}: {upload['outcome']}, {upload['reason'] or ''}"


def login_page(why: str | None) -> str:
    said = f"<p class='error'>{escape(why)}</p>" if why else ""
    return _html("Authors", said + "<form method='post' action='/author/login'>"
                 "<label>Your token <input type='password' name='token' "
                 "autocomplete='off' required></label> <button>Sign in</button></form>")


def author_page(store: ContestStore, author: authors.Author) -> str:
    """An author's page: their last upload's outcome, the upload form, each of their bots
    (versions with their builds, games with replays and their stderr), their uploads."""
    uploads = authors.uploads_of(store, author, 20)
    body = "" if not uploads else f"<p id='said'>{escape(_outcome(uploads[0]))}</p>"
    body += ("<h2>Upload a version</h2><form method='post' action='/author/upload' "
             "enctype='multipart/form-data'><p><label>Bot name <input name='name' required>"
             "</label></p><p><label>Program (a file, .zip or .tar.gz) <input type='file' "
             "name='file' required></label></p><p><label>Command (optional) <input "
             "name='cmd'></label> <label>Build (optional) <input name='build'></label></p>"
             "<button>Upload</button></form>")
    for bot in authors.bots_of(store, author):
        body += _bot_section(store, bot)
    body += "<h2>Your uploads</h2><table class='uploads'><tr><th>bot</th><th>file</th>" + (
        "<th>outcome</th><th>why</th></tr>")
    body += "".join(f"<tr><td>{escape(str(u['bot'] or ''))}</td><td>{escape(str(u['file'] or ''))}"
                    f"</td><td>{escape(u['outcome'])}</td><td>{escape(str(u['reason'] or ''))}"
                    "</td></tr>" for u in uploads) + "</table>"
    body += "<form method='post' action='/author/logout'><button>Sign out</button></form>"
    return _html(f"{author.name}'s bots", body)


def _bot_section(store: ContestStore, bot: str) -> str:
    out = f"<h2 class='bot'>{escape(bot)}</h2><table><tr><th>version</th><th>state</th>" + (
        "<th>games</th><th>faults</th><th>build</th></tr>")
    for v in store.versions(bot):
        games, faults = store.version_record(v.id)
        build = store.build_of(v.id)
        log = ("" if build is None else f"<details><summary>{escape(build.command)}</summary>"
               f"<pre>{escape(build.log[-4000:])}</pre></details>")
        out += (f"<tr><td>v{v.number}</td><td>{escape(v.state)}</td><td>{games}</td>"
                f"<td>{faults}</td><td>{log}</td></tr>")
    out += "</table><table class='games'><tr><th>game</th><th>seats</th><th>place</th>" + (
        "<th>faults</th><th>your stderr</th></tr>")
    for seat in store.bot_seats(bot, GAMES_ON_PAGE):
        row = game_row(seat)
        link = (f"<a href='{row['replay']}'>{escape(row['game_id'])}</a>" if row["replay"]
                else escape(row["game_id"]))
        text = stderr_end(store.folder, seat.log)
        stderr = "" if text is None else "<details><summary>stderr</summary><pre " + (
            f"class='stderr'>{escape(text[-4000:])}</pre></details>")
        out += (f"<tr><td>{link}</td><td>{escape(' / '.join(row['bots']))}</td>"
                f"<td>{row['place'] if row['place'] is not None else '-'}</td>"
                f"<td>{escape(', '.join(row['faults']))}</td><td>{stderr}</td></tr>")
    return out + "</table>"

