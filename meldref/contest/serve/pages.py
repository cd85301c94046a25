"""The contest's pages, made from the database on every request: the leaderboard with the
chances of each rank and the last final beside it, and a page per bot with its versions, its
rating history as an inline SVG plot, its recent games (each a link into the viewer) and its
faults (what the referee recorded; the bot's stderr is its author's, on the authors' pages).
The leaderboard updates itself while the contest runs: a few lines of script poll
`/board.json` (`board_json`: the board's data and its HTML, made by the same function as the
page's) and put the new board in place, no reload; without script, the page reloads itself.
No library: the pages need nothing from anywhere but this server (the server's
Content-Security-Policy forbids it); the viewer's shared style sheet is linked when the viewer
folder has one."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from html import escape
from typing import Final
from urllib.parse import quote

from ...engine.game import JSON
from ...replay.serve import VIEWER_FILES
from ..board import Board, BoardJSON, BoardRow, chance_columns, leaderboard
from ..store import ContestStore, SavedFinal, SeatRow

REFRESH_SECONDS: Final = 10  # a reload, where the page has no script
LIVE_SECONDS: Final = 5  # the script's poll
SITE_CSS: Final = "site.css"  # the viewer's style sheet shared by both servers' pages
RECENT: Final = 20
# The look where the viewer folder has no shared style sheet (its class names: `num` figures,
# `wide` a table's scrolling box, `panel` a box).
STYLE: Final = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{padding:.25em .7em;border-bottom:1px solid #ddd;text-align:left}
td.num,th.num{text-align:right} .wide{overflow-x:auto}
.panel{background:#f6f6f6;padding:.5em} pre{white-space:pre-wrap}
.out{color:#777} h1,h2{font-weight:600}
"""


LIVE_SCRIPT: Final = """
(function () {
  var board = document.getElementById('board'), stamp = board.dataset.stamp;
  function tick() {
    if (document.hidden) { setTimeout(tick, PERIOD); return; }  // no poll for a hidden tab
    fetch('/board.json', {cache: 'no-store', headers: {'If-None-Match': '"' + stamp + '"'}})
      .then(function (r) { return r.status === 200 ? r.json() : null; })  // 304: unchanged
      .then(function (d) {
        if (d) {
          stamp = d.stamp; board.innerHTML = d.html;
          board.dataset.updates = String(Number(board.dataset.updates || 0) + 1);
        }
      })
      .catch(function () {})
      .then(function () { setTimeout(tick, PERIOD); });
  }
  setTimeout(tick, PERIOD);
})();
"""


def _page(title: str, body: str, refresh: bool = False, nav: str = "") -> str:
    meta = (f"<noscript><meta http-equiv='refresh' content='{REFRESH_SECONDS}'></noscript>"
            if refresh else "")
    # The look both servers' pages share (`replay serve`'s list too), where there is one.
    look = ("<link rel='stylesheet' href='/static/site.css'>"
            if (VIEWER_FILES / SITE_CSS).is_file() else f"<style>{STYLE}</style>")
    script = (f"<script>{LIVE_SCRIPT.replace('PERIOD', str(LIVE_SECONDS * 1000))}</script>"
              if refresh else "")
    # No icon: else the browser asks for /favicon.ico on every page, and logs a 404.
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>{meta}"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<link rel='icon' href='data:,'><title>{escape(title)}</title>{look}</head><body>"
            f"<header><h1>{escape(title)}</h1>{nav}</header><main>{body}</main>{script}"
            "</body></html>")


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], left: Sequence[int] = (1,),
           cls: str = "") -> str:
    """A table in its scrolling box; the columns not in `left` are figures (`num`)."""
    th = "".join(f"<th class='{'' if i in left else 'num'}'>{escape(h)}</th>"
                 for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(f"<td class='{'' if i in left else 'num'}'>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<div class='wide'><table class='{cls}'><tr>{th}</tr>{body}</table></div>"


def _rating(row: BoardRow) -> tuple[str, str]:
    if row.rating is None:
        return "-", "-"
    return f"{row.rating:+.0f}", escape(row.interval_text(" .. "))


def bot_link(bot: str) -> str:
    return f"<a href='/bot/{quote(bot)}'>{escape(bot)}</a>"


def leaderboard_page(store: ContestStore) -> str:
    """The leaderboard page: the board (`board_section`), updating itself."""
    board = board_json(store)
    return _page(_title(store, board["game"]),
                 f"<div id='board' data-stamp='{board['stamp']}'>{board['html']}</div>",
                 refresh=True)


class BoardPage(BoardJSON):
    """What the leaderboard page polls (`board_json`)."""

    html: str
    stamp: str


def board_json(store: ContestStore) -> BoardPage:
    """What the leaderboard page polls: the board's data, its HTML to put in place, and the
    HTML's stamp (its ETag: a page that sends it back is told 304, nothing new)."""
    board = leaderboard(store)
    html = board_section(board)
    return {**board.to_json(), "html": html, "stamp": board_stamp(html)}


def board_stamp(html: str) -> str:
    return hashlib.sha256(html.encode()).hexdigest()[:16]


def _title(store: ContestStore, game: str) -> str:
    return f"{store.folder.resolve().name}: {game} ladder"


def board_section(board: Board) -> str:
    """The leaderboard with each version's chances, what runs and waits, the versions out of
    play, the last final."""
    rows = [[str(rank), bot_link(r.version.bot), f"v{r.version.number}", *_rating(r),
             *_chances(r), str(r.games), str(r.faults)] for rank, r in board.ranked()]
    body = _table(["#", "bot", "version", "rating", "95% interval", *chance_columns(board.top_k),
                   "games", "faults"], rows, cls="board")
    running = ", ".join(escape(gid) for gid, _ in board.running) or "none"
    body += (f"<p id='state'>run: {'playing' if board.run else 'stopped'} &middot; "
             f"played: {board.played} &middot; running: {running} &middot; queued: "
             f"{board.queued}</p>")
    if board.out_of_play:
        body += "<h2>Out of play</h2>" + _table(
            ["bot", "version", "state", "why", "games", "faults"],
            [[bot_link(r.version.bot), f"v{r.version.number}", escape(r.version.state),
              escape(r.version.reason or ""), str(r.games), str(r.faults)]
             for r in board.out_of_play], left=(0, 2, 3), cls="out")
    if board.final:
        body += final_section(board.final)
    return body


def _chances(row: BoardRow | None) -> list[str]:
    return ["-", "-", "-"] if row is None else [escape(c) for c in row.chance_cells()]


def final_section(final: SavedFinal) -> str:
    """The final's standings beside the ladder's ranks of the same versions."""
    ladder = {r["bot"]: r["ladder_rank"] for r in final["ladder"]}
    rows = []
    for row in final["final"]["standings"]:
        rows.append([str(row["rank"]), escape(row["bot"]),
                     "-" if row["rating"] is None else f"{row['rating']:+.0f}",
                     _final_interval(row), str(row["games"]),
                     str(ladder.get(row["bot"], "-"))])
    return "<h2>Final</h2>" + _table(["#", "bot", "rating", "95% interval", "games",
                                      "ladder #"], rows, cls="final")


def _final_interval(row: Mapping[str, JSON]) -> str:
    """A finalist's interval as the tournament's standings give it: a one-sided bound read as
    one, and the reason (`no_interval`) beside it, or in place of an interval there is none."""
    low, high = row["rating_ci95"]
    why = row.get("no_interval")
    if low is not None and high is not None:
        return f"{low:+.0f} .. {high:+.0f}"
    if low is None and high is None:
        return f"none: {escape(why)}" if why and row["rating"] is not None else "-"
    bound = f"&ge; {low:+.0f}" if low is not None else f"&le; {high:+.0f}"
    return f"{bound} ({escape(why)})" if why else bound


def bot_page(store: ContestStore, bot: str,
             shown: Callable[[str], bool] = lambda game_id: True) -> str | None:
    """A bot's page, its games linked to their replays where `shown(game id)`; None for a
    bot the contest does not know."""
    versions = store.versions(bot)
    if not versions:
        return None
    board = leaderboard(store)
    rows = []
    for v in versions:
        row, rank = board.row_of(v.label), board.rank_of(v.label)
        games, faults = (0, 0) if row is None else (row.games, row.faults)
        rows.append([f"v{v.number}", escape(v.state), "-" if rank is None else str(rank),
                     *_chances(row), str(games), str(faults), escape(v.reason or ""),
                     f"<code>{escape(v.command)}</code>"])
    body = "<h2>Versions</h2>" + _table(["version", "state", "rank",
                                         *chance_columns(board.top_k), "games", "faults",
                                         "note", "command"], rows, left=(0, 1, 8, 9),
                                        cls="versions")
    body += "<h2>Rating history</h2>" + history_svg(
        {f"v{v.number}": store.rating_history(v.id) for v in versions})
    recent = [s for v in versions for s in store.recent_seats(v.id, RECENT)]
    recent.sort(key=lambda s: s.game_id, reverse=True)
    body += "<h2>Recent games</h2>" + _table(
        ["game", "seats", "place", "score", "faults"],
        [[_game_link(s, shown), escape(" / ".join(s.result.bots)),
          str(s.place if s.place is not None else "-"),
          "-" if s.score is None else f"{s.score:g}", escape(", ".join(s.outcomes))]
         for s in recent[:RECENT]], left=(0, 1, 4))
    failed = [s for s in recent if s.failed]
    body += "<h2>Faults</h2>" + ("".join(_fault(s, shown) for s in failed[:10])
                                 or "<p>none</p>")
    return _page(f"{bot}", body, nav="<nav><a href='/'>leaderboard</a></nav>")


def _game_link(seat: SeatRow, shown: Callable[[str], bool]) -> str:
    replay = seat.result.replay
    if not replay or not shown(seat.game_id):
        return escape(seat.game_id)
    return f"<a href='/view/{quote(replay)}'>{escape(seat.game_id)}</a>"


def _fault(seat: SeatRow, shown: Callable[[str], bool]) -> str:
    """A failed game as every visitor sees it: the referee's record of the fault. The bot's
    stderr is not shown here: it may hold what its author would not show the other authors
    (issue 46), who read their own at /author."""
    figures = seat.result.figures
    detail = "; ".join(f"{f.outcome.value}: {f.detail}"
                       for fs in (figures.faults if figures else ()) for f in fs)
    return (f"<h3>{_game_link(seat, shown)}: {escape(', '.join(seat.outcomes))}</h3>"
            f"<p>{escape(detail or seat.result.error or '')}</p>"
            "<p>Its stderr is its author's: <a href='/author'>/author</a>.</p>")


def history_svg(series: dict[str, list[tuple[int, float, float, float]]],
                width: int = 640, height: int = 220) -> str:
    """Each version's rating (line) and 95% interval (band) against the ladder's deal sets
    done, as an inline SVG."""
    points = [p for s in series.values() for p in s]
    if not points:
        return "<p>not rated yet</p>"
    x0, x1 = min(p[0] for p in points), max(p[0] for p in points)
    y0 = min(p[2] if p[2] is not None else p[1] for p in points)
    y1 = max(p[3] if p[3] is not None else p[1] for p in points)
    x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
    pad = 36

    def sx(x: float) -> float:
        return pad + (x - x0) / (x1 - x0) * (width - 2 * pad)

    def sy(y: float) -> float:
        return height - pad - (y - y0) / (y1 - y0) * (height - 2 * pad)

    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
             f"role='img' class='history' fill='currentColor'>",
             f"<text x='4' y='{sy(y1):.0f}' font-size='11'>{y1:+.0f}</text>",
             f"<text x='4' y='{sy(y0):.0f}' font-size='11'>{y0:+.0f}</text>",
             f"<text x='{width - pad}' y='{height - 8}' font-size='11' text-anchor='end'>"
             f"deal sets {x1}</text>"]
    for k, (label, rows) in enumerate(series.items()):
        if not rows:
            continue
        colour = colours[k % len(colours)]
        band = [(r[0], r[2]) for r in rows if r[2] is not None]
        top = [(r[0], r[3]) for r in rows if r[3] is not None]
        if band and top:
            outline = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in [*band, *reversed(top)])
            parts.append(f"<polygon points='{outline}' fill='{colour}' fill-opacity='0.15'/>")
        line = " ".join(f"{sx(r[0]):.1f},{sy(r[1]):.1f}" for r in rows)
        parts.append(f"<polyline points='{line}' fill='none' stroke='{colour}' "
                     f"stroke-width='2'><title>{escape(label)}</title></polyline>")
        last = rows[-1]
        parts.append(f"<text x='{sx(last[0]) + 3:.1f}' y='{sy(last[1]):.1f}' font-size='11' "
                     f"fill='{colour}'>{escape(label)}</text>")
    return "".join(parts) + "</svg>"
