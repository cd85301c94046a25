"""The replay viewer in a real browser: Debian's chromium, headless, driven by playwright (never
a downloaded browser). Each game's page is stepped through from the first step to the last,
and what it shows (scores, hand sizes, hands, laid groups) is checked against the engine after
every action; a seat's page shows no other hand; keys step; faults are marked; the server's
list opens a game.

Skipped, with the reason printed, where chromium or playwright is missing (`.ci/run` installs
both when it runs as root). Deselect with `-m "not browser"`.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import viewer_games as games

from meldref.replay.files import write_first_actions
from meldref.replay.html import replay_page
from meldref.replay.serve import ReplayServer

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
HANG_GUARD_MS = 10_000  # a page that takes this long is stuck, not slow

# Every step's table as the page shows it, read from the DOM after `go(i)`.
READ_ALL_STEPS = """() => {
  const v = window.meldrefViewer, out = [];
  for (let i = 0; i < v.count(); i++) {
    v.go(i);
    const seats = [...document.querySelectorAll('#seats .seat')].map((p) => ({
      score: +p.querySelector('.score').dataset.score,
      size: +p.querySelector('.hand').dataset.size,
      faces: [...p.querySelectorAll('.hand .card[data-card]')].map((c) => c.dataset.card),
      backs: p.querySelectorAll('.hand .card.back').length,
      groups: [...p.querySelectorAll('.group')].map((g) => g.dataset.group),
      badges: [...p.querySelectorAll('.badge')].map((b) => b.textContent),
    }));
    const piles = [...document.querySelectorAll('#piles .pile')].map((p) => ({
      closed: p.dataset.closed === '1',
      cards: [...p.querySelectorAll('.hand .card')].map((c) => c.dataset.card),
      groups: [...p.querySelectorAll('.group')].map((g) => g.dataset.group),
    }));
    const closed = document.getElementById('closed-count');
    out.push({step: v.step(i), label: document.getElementById('step-label').textContent,
              seats, piles, closed: closed ? +closed.dataset.score : null,
              draw: +document.getElementById('draw-count').textContent});
  }
  return out;
}"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium at /usr/bin/chromium (apt-get install chromium; .ci/run does "
                    "as root): the viewer's browser tests need it")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install -e '.[test]')")
    with sync_api.sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=ARGS, viewport={"width": 1400, "height": 900})
        yield context
        context.close()


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("browser-replays")
    return {"phase10": games.phase10_four(folder), "fivecrowns": games.fivecrowns_nine(folder),
            "solitaire": games.solitaire(folder), "faults": games.with_faults(folder),
            "phase10-short": games.phase10_short(folder)}


@pytest.fixture(scope="module")
def pages(replays: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
          ) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for name, path in replays.items():
        out[name] = folder / f"{name}.html"
        out[name].write_text(replay_page(path)[0])
    out["phase10-seat1"] = folder / "phase10-seat1.html"
    out["phase10-seat1"].write_text(replay_page(replays["phase10-short"], 1)[0])
    return out


class Tab:
    """A browser tab that fails the test on any script error and any network request."""

    def __init__(self, context: Any) -> None:
        self.page = context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error"
                     else None)
        self.page.on("request", lambda r: self.requests.append(r.url))

    def open(self, url: str) -> float:
        """Load `url` and wait for the viewer; the seconds it took."""
        start = time.perf_counter()
        self.page.goto(url)
        self.page.wait_for_selector("html[data-ready='1']", timeout=HANG_GUARD_MS)
        return time.perf_counter() - start

    def close(self) -> None:
        self.page.close()
        assert self.errors == []


@pytest.fixture()
def tab(browser: Any) -> Iterator[Tab]:
    opened = Tab(browser)
    yield opened
    opened.close()


def read_all(tab: Tab, page: Path) -> list[dict[str, Any]]:
    tab.open(page.as_uri())
    steps = tab.page.evaluate(READ_ALL_STEPS)
    assert all(url.startswith("file://") for url in tab.requests), tab.requests
    return steps


# ----------------------------------------------------------------------------------------------
# Each game from its first step to its last, against the engine


@pytest.mark.long  # every step of two whole games in the browser
@pytest.mark.parametrize("game", ["phase10", "fivecrowns"])
def test_every_step_shows_the_engines_table(tab: Tab, pages: dict[str, Path],
                                            replays: dict[str, Path], game: str) -> None:
    facts = games.expected(replays[game])
    shown = read_all(tab, pages[game])
    actions = [s for s in shown if s["step"]["k"] == "a"]
    assert len(actions) == len(facts.kinds)
    for reading in actions:
        n = reading["step"]["n"]
        seats = reading["seats"]
        assert [s["score"] for s in seats] == facts.scores(n), n
        assert [s["size"] for s in seats] == facts.hand_sizes(n), n
        assert [s["faces"] for s in seats] == facts.hands(n), n  # every hand, face up
        if n not in facts.hand_end:
            groups = facts.groups(n)
            assert [s["groups"] for s in seats] == [
                [t for owner, t in groups if owner == k] for k in range(len(seats))], n
            assert reading["draw"] == facts.after[n][0]["draw_pile_size"]
    lay = next(r for r in actions if "lay_down" in facts.kinds[r["step"]["n"]]
               or "go_out" in facts.kinds[r["step"]["n"]])
    assert "lays phase" in lay["label"] or "goes out with" in lay["label"]
    assert any(word in lay["label"] for word in ("set of", "book of", "run "))


def test_solitaire_every_step_shows_the_engines_piles(tab: Tab, pages: dict[str, Path],
                                                     replays: dict[str, Path]) -> None:
    facts = games.expected(replays["solitaire"])
    shown = read_all(tab, pages["solitaire"])
    assert len(shown) == len(facts.kinds) + 1  # the deal, then one step per move
    for reading in shown[1:]:
        view = facts.after[reading["step"]["n"]][0]
        assert reading["closed"] == view["piles_closed"]
        assert reading["draw"] == view["draw_pile_size"]
        for pile, expected in zip(reading["piles"], view["piles"], strict=True):
            assert pile["closed"] == expected["closed"]
            if expected["closed"]:
                assert pile["groups"] and not pile["cards"]
            else:
                assert pile["cards"] == expected["cards"]


def test_a_seats_page_shows_no_other_hand(tab: Tab, pages: dict[str, Path],
                                          replays: dict[str, Path]) -> None:
    facts = games.expected(replays["phase10-short"])
    shown = read_all(tab, pages["phase10-seat1"])
    for reading in shown:
        step = reading["step"]
        ended = step["k"] == "a" and step["n"] in facts.hand_end
        for k, seat in enumerate(reading["seats"]):
            if k == 1 or ended:  # at a hand's end every hand is shown to every seat
                assert seat["backs"] == 0 and len(seat["faces"]) == seat["size"]
            else:
                assert seat["faces"] == [] and seat["backs"] == seat["size"]
    # Nor anywhere else in the page: its data has no other hand (but at hands' ends).
    hidden = tab.page.evaluate("""() => {
      const v = window.meldrefViewer, found = [];
      for (let i = 0; i < v.count(); i++) {
        const f = v.frame(i);
        f.hd.forEach((hand, k) => { if (k !== 1 && hand !== null && !f.end) found.push(i); });
      }
      return found;
    }""")
    assert hidden == []


def test_the_full_pages_switch_shows_one_seats_view(tab: Tab, pages: dict[str, Path]) -> None:
    tab.open(pages["phase10"].as_uri() + "#action=40")
    before = tab.page.locator("#seats .seat[data-seat='2'] .hand .card[data-card]").count()
    assert before > 0
    tab.page.select_option("#perspective", "0")
    assert tab.page.locator("#seats .seat[data-seat='2'] .hand .card[data-card]").count() == 0
    assert tab.page.locator("#seats .seat[data-seat='0'] .hand .card[data-card]").count() > 0
    tab.page.select_option("#perspective", "")
    assert tab.page.locator("#seats .seat[data-seat='2'] .hand .card[data-card]").count() == before


# ----------------------------------------------------------------------------------------------
# Moving through a game


def test_keys_and_buttons_step_through_the_game(tab: Tab, pages: dict[str, Path]) -> None:
    tab.open(pages["phase10"].as_uri())
    index = lambda: tab.page.evaluate("window.meldrefViewer.index()")  # noqa: E731
    count = tab.page.evaluate("window.meldrefViewer.count()")
    assert index() == 0
    for _ in range(5):
        tab.page.keyboard.press("ArrowRight")
    assert index() == 5
    first = tab.page.locator("#step-label").text_content()
    tab.page.keyboard.press("ArrowLeft")
    assert index() == 4 and tab.page.locator("#step-label").text_content() != first
    tab.page.keyboard.press("End")
    assert index() == count - 1 and tab.page.locator("#result").is_visible()
    tab.page.keyboard.press("Home")
    assert index() == 0
    tab.page.keyboard.press("PageDown")
    second_hand = index()
    assert tab.page.evaluate(f"window.meldrefViewer.step({second_hand})")["k"] == "d"
    tab.page.keyboard.press("PageUp")
    assert index() == 0
    tab.page.click("#b-next")
    tab.page.click("#b-next")
    assert index() == 2
    tab.page.fill("#jump-action", "100")
    tab.page.press("#jump-action", "Enter")
    assert tab.page.evaluate(f"window.meldrefViewer.step({index()})")["n"] == 100
    tab.page.fill("#jump-hand", "3")
    tab.page.press("#jump-hand", "Enter")
    assert tab.page.evaluate(f"window.meldrefViewer.step({index()})")["h"] == 3
    tab.page.select_option("#speed", "40")
    at = index()
    tab.page.keyboard.press(" ")
    deadline = time.monotonic() + HANG_GUARD_MS / 1000
    while index() <= at + 3 and time.monotonic() < deadline:
        tab.page.wait_for_timeout(50)
    assert index() > at + 3  # playing at 40 steps a second
    tab.page.keyboard.press(" ")
    stopped = index()
    tab.page.wait_for_timeout(150)
    assert index() == stopped


def test_a_timeout_and_an_illegal_action_are_marked(tab: Tab, pages: dict[str, Path]) -> None:
    tab.open(pages["faults"].as_uri())
    assert tab.page.locator("#marks i.f").count() >= 2
    assert tab.page.locator("#log li.fault").count() >= 2
    labels: dict[str, list[str]] = {"timeout": [], "illegal": []}
    for _ in range(tab.page.locator("#marks i.f").count()):
        tab.page.keyboard.press("f")
        label = tab.page.locator("#step-label").text_content()
        for mark in tab.page.locator(".seat .fault-mark").all_text_contents():
            labels.setdefault(mark, []).append(label)
        if "timeout" in label:
            assert tab.page.locator(".seat[data-seat='2'] .badge", has_text="forfeit").count()
    assert any("seat 2" in text and "no answer within" in text for text in labels["timeout"])
    # The illegal action, with the engine's reason.
    assert any("seat 1" in text and "draw takes one word" in text for text in labels["illegal"])
    tab.page.keyboard.press("End")
    assert "forfeit" in tab.page.locator("#result").text_content()


def test_bot_names_are_shown_as_text(tab: Tab, replays: dict[str, Path], tmp_path: Path) -> None:
    name = '<img src=x onerror="window.pwned=1">'
    path = games.renamed(replays["solitaire"], tmp_path / "named.jsonl", {0: name})
    page = tmp_path / "named.html"
    page.write_text(replay_page(path)[0])
    tab.open(page.as_uri() + "#end")
    assert tab.page.evaluate("window.pwned") is None
    assert f"seat 0 ({name}) puts" in tab.page.locator("#log").text_content()
    assert name in tab.page.locator("#now").text_content()
    assert tab.page.locator("img").count() == 0


# ----------------------------------------------------------------------------------------------
# The server and the size and speed of a page


def test_the_servers_list_opens_a_game(tab: Tab, replays: dict[str, Path]) -> None:
    server = ReplayServer(replays["phase10"].parent, "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        tab.open(server.url)
        assert tab.page.locator("#rows tr").count() == len(replays)
        tab.page.select_option("#bot", "retry_once#1")
        assert tab.page.locator("#rows tr").count() == 1
        tab.page.select_option("#bot", "")
        tab.page.check("#failures")
        assert tab.page.locator("#rows tr").count() == 1
        tab.page.click("#rows tr[data-game='faults'] a:text('first fault')")
        tab.page.wait_for_selector("html[data-ready='1']", timeout=HANG_GUARD_MS)
        assert "faults" in tab.page.locator("#title").text_content()
        assert tab.page.locator(".seat .fault-mark").count() >= 1  # opened at the first fault
        tab.page.click("#back")
        tab.page.wait_for_selector("#rows tr", timeout=HANG_GUARD_MS)
        tab.page.uncheck("#failures")
        tab.page.click("th[data-sort='score']")
        tab.page.click("#rows tr[data-game='phase10-4'] a")
        tab.page.wait_for_selector("#seats", timeout=HANG_GUARD_MS)
        assert tab.page.locator("#seats .seat").count() == 4
    finally:
        server.shutdown()
        server.server_close()


def test_a_tournaments_standings_show_its_ratings(tab: Tab, tmp_path: Path) -> None:
    # Was: the list read `ordinal`, gone from standings.json: a blank column, no ratings.
    from typer.testing import CliRunner

    from meldref.cli.app import app

    out = tmp_path / "t"
    done = CliRunner().invoke(app, ["tournament", "--bot", "builtin:greedy", "--bot",
                                    "builtin:greedy", "--bot", "builtin:random", "--games", "2",
                                    "--rules", "phases-to-win=1", "--seed", "3", "--out",
                                    str(out), "--no-progress"])
    assert done.exit_code == 0, done.output
    server = ReplayServer(out, "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        tab.open(server.url)
        tab.page.wait_for_selector("#standings tr td", timeout=HANG_GUARD_MS)
        heads = tab.page.locator("#standings th").all_text_contents()
        assert {"rating", "95% interval", "rank held"} <= set(heads)
        assert "ordinal" not in heads
        rows = [[td.text_content() for td in tr.locator("td").all()]
                for tr in tab.page.locator("#standings tr:has(td)").all()]
        data = json.loads((out / "standings.json").read_text())["standings"]
        assert len(rows) == len(data) == 3
        for row, bot in zip(rows, data, strict=True):
            cells = dict(zip(heads, row, strict=True))
            assert cells["#"] == str(bot["rank"]) and cells["bot"] == bot["bot"]
            assert cells["rating"] == f"{bot['rating']:.1f}"
            # Three deals support no interval: the page says why instead of a point (was
            # "12.3 to 12.3"). (The greedy copies no longer tie: each draws its own choices.)
            assert bot["rating_ci95"] == [None, None] and bot["no_interval"]
            assert cells["95% interval"] == f"none: {bot['no_interval']}"
            assert cells["rank held"] == ""
    finally:
        server.shutdown()
        server.server_close()


def test_a_300_action_page_at_14_seats_is_small_and_opens_quickly(
        tab: Tab, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        record_property: Any) -> None:
    whole = games.fivecrowns_fourteen(tmp_path)
    cut = write_first_actions(whole, tmp_path / "fc14-300.jsonl", 300)
    page = tmp_path / "fc14-300.html"
    page.write_text(replay_page(cut)[0])
    size = page.stat().st_size
    assert size < 1_000_000
    seconds = tab.open(page.as_uri())
    ready = tab.page.evaluate("window.meldrefViewer.readyMs")
    assert tab.page.locator("#seats .seat").count() == 14
    record_property("viewer_300_actions_14_seats_bytes", size)
    record_property("viewer_300_actions_14_seats_open_s", round(seconds, 3))
    with capsys.disabled():
        print(f"\n[viewer] 300 actions at 14 seats: {size} bytes, opened in {seconds:.3f} s "
              f"(table drawn {ready:.0f} ms after the navigation started; "
              "python bench/bench_viewer.py measures it properly)")


# ----------------------------------------------------------------------------------------------
# Nothing cut or pushed off screen, at 4, 9 and 14 seats

# At sampled steps (the first, every hand's first and last, evenly spaced ones, the last): every
# seat's panel inside the viewport, and no text cut (an element that clips its content while
# its content is wider or taller than it) or sticking out of its seat's panel.
LAYOUT_PROBLEMS = """(samples) => {
  const v = window.meldrefViewer, count = v.count(), problems = [];
  const steps = new Set([0, count - 1]);
  for (let k = 1; k < samples; k++) steps.add(Math.floor(k * (count - 1) / samples));
  for (let i = 0; i < count; i++) {
    if (v.step(i).k !== "a") { steps.add(i); if (i) steps.add(i - 1); }
  }
  const W = window.innerWidth, H = window.innerHeight;
  const inside = (r, b) => r.left >= b.left - 1 && r.right <= b.right + 1
    && r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
  const name = (e) => e.tagName.toLowerCase()
    + (e.className ? "." + String(e.className).split(" ").join(".") : "")
    + (e.id ? "#" + e.id : "");
  for (const i of [...steps].sort((a, b) => a - b)) {
    v.go(i);
    for (const p of document.querySelectorAll("#seats .seat, #piles .pile")) {
      const r = p.getBoundingClientRect();
      if (!inside(r, {left: 0, top: 0, right: W, bottom: H}))
        problems.push([i, "off screen", name(p) + "[" + (p.dataset.seat ?? p.dataset.pile) + "]",
                       [r.left, r.top, r.right, r.bottom].map(Math.round).join(",")]);
      for (const e of p.querySelectorAll("*")) {
        if (e.closest("svg") && e.tagName !== "svg") continue;
        const er = e.getBoundingClientRect();
        if (er.width && !inside(er, r))
          problems.push([i, "out of its seat", name(e), e.textContent]);
      }
    }
    for (const e of document.querySelectorAll("#main *, #top *")) {
      const style = getComputedStyle(e);
      if (style.display === "none" || ["auto", "scroll"].includes(style.overflowX)
          || ["auto", "scroll"].includes(style.overflowY)) continue;
      const clips = style.overflowX !== "visible" || style.overflowY !== "visible"
        || style.textOverflow !== "clip";
      if (clips && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)
          && e.textContent.trim())
        problems.push([i, "cut", name(e), e.textContent]);
    }
  }
  return problems;
}"""


@pytest.fixture(scope="module")
def fourteen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return games.fivecrowns_fourteen(tmp_path_factory.mktemp("fourteen"))


@pytest.mark.parametrize("game", ["phase10", "fivecrowns", pytest.param(
    "fourteen", marks=pytest.mark.long), "solitaire"])
def test_no_seat_is_off_screen_and_no_text_is_cut(
        tab: Tab, replays: dict[str, Path], tmp_path: Path, game: str,
        request: pytest.FixtureRequest) -> None:
    # The fourteen-seat game (seconds to play) only for its own case, which runs with -m long.
    source = request.getfixturevalue("fourteen") if game == "fourteen" else replays[game]
    page = tmp_path / f"{game}.html"
    page.write_text(replay_page(source)[0])
    tab.open(page.as_uri())
    problems = tab.page.evaluate(LAYOUT_PROBLEMS, 40)
    assert problems[:12] == [], f"{len(problems)} problems"


def test_the_result_says_why_the_game_ended_in_words(tab: Tab, pages: dict[str, Path],
                                                     tmp_path: Path) -> None:
    tab.open(pages["phase10"].as_uri() + "#end")
    result = tab.page.locator("#result").text_content() or ""
    assert result.startswith("Winner: seat ") and "normal" not in result  # no bare code
    assert tab.page.locator("#step-label .result-line").text_content() == \
        tab.page.locator("#result h2").text_content()
    places = tab.page.locator("#seats .badge.place").all_text_contents()
    assert len(places) == 4 and "1st" in places
    page = tmp_path / "forfeit.html"
    page.write_text(replay_page(games.forfeited(tmp_path))[0])
    tab.open(page.as_uri() + "#end")
    why = tab.page.locator("#result .why").text_content() or ""
    assert why.startswith("Ended by forfeit: every other seat was out")
    assert "(forfeit)" not in (tab.page.locator("#result").text_content() or "")


# ----------------------------------------------------------------------------------------------
# The score chart, the bots' stderr, downloading the page and opening another one from disk


def test_the_score_chart_draws_each_seats_total_and_goes_to_a_step(
        tab: Tab, pages: dict[str, Path], replays: dict[str, Path]) -> None:
    facts = games.expected(replays["phase10"])
    tab.open(pages["phase10"].as_uri())
    tab.page.click("#tabs [data-tab=chart]")
    assert tab.page.locator("#chart").is_visible() and not tab.page.locator("#log").is_visible()
    totals = tab.page.locator("#chart svg[data-key=sc] polyline")
    last = max(facts.kinds)
    assert [int(totals.nth(k).get_attribute("data-last") or -1)
            for k in range(totals.count())] == facts.scores(last)
    phases = tab.page.locator("#chart svg[data-key=ph] polyline")
    assert phases.count() == 4
    box = tab.page.locator("#chart svg[data-key=sc]").bounding_box()
    assert box is not None
    tab.page.mouse.click(box["x"] + box["width"] * 0.6, box["y"] + box["height"] / 2)
    index = tab.page.evaluate("window.meldrefViewer.index()")
    count = tab.page.evaluate("window.meldrefViewer.count()")
    assert 0.4 * count < index < 0.75 * count  # about where the click was
    marker = float(tab.page.locator("#chart svg[data-key=sc] line.now").get_attribute("x1") or 0)
    tab.page.keyboard.press("Home")
    assert float(tab.page.locator("#chart svg[data-key=sc] line.now").get_attribute("x1")
                 or 0) < marker


def tournament_layout(source: Path, folder: Path) -> tuple[Path, str]:
    """`source` as a tournament keeps it (replays/<id>.jsonl) with stderr logs for seats 0
    and 1 under logs/<id>/ and, for seat 2, a link to a file outside that must not be read."""
    game_id = str(json.loads(source.read_text().splitlines()[0])["game_id"])
    (folder / "replays").mkdir(parents=True)
    replay = folder / "replays" / f"{game_id}.jsonl"
    replay.write_bytes(source.read_bytes())
    logs = folder / "logs" / game_id
    logs.mkdir(parents=True)
    (logs / "seat0-greedy_0.stderr").write_text("seat 0 starts\nthinking \x1b[31mhard\n")
    (logs / "seat1-random_1.stderr").write_text("seat 1 holds R7 R8\n")
    secret = folder / "secret.txt"
    secret.write_text("not a log")
    (logs / "seat2-greedy_2.stderr").symlink_to(secret)
    return replay, game_id


def test_each_bots_stderr_is_shown_beside_the_game(tab: Tab, replays: dict[str, Path],
                                                   tmp_path: Path) -> None:
    replay, game_id = tournament_layout(replays["phase10-short"], tmp_path / "run")
    page = tmp_path / "full.html"
    page.write_text(replay_page(replay)[0])
    tab.open(page.as_uri())
    assert not tab.page.locator("#logs").is_visible()
    tab.page.click("#tabs [data-tab=logs]")
    shown = {int(pre.get_attribute("data-seat") or -1): pre.text_content()
             for pre in tab.page.locator("#logs pre").all()}
    assert shown == {0: "seat 0 starts\nthinking [31mhard\n", 1: "seat 1 holds R7 R8\n"}
    assert f"logs/{game_id}/seat0-greedy_0.stderr" in (tab.page.locator("#logs").text_content()
                                                       or "")
    assert "not the lines of one step" in (tab.page.locator("#logs .note").text_content() or "")
    assert "not a log" not in page.read_text()
    # A seat's page carries its own bot's stderr only (another bot's can name its cards).
    seat = tmp_path / "seat0.html"
    seat.write_text(replay_page(replay, 0)[0])
    assert "seat 1 holds" not in seat.read_text() and "seat 0 starts" in seat.read_text()
    # A game without logs has no stderr tab.
    tab.open((tmp_path / "full.html").as_uri())
    page.write_text(replay_page(replays["phase10-short"])[0])
    tab.page.reload()
    tab.page.wait_for_selector("html[data-ready='1']", timeout=HANG_GUARD_MS)
    assert tab.page.locator("#tabs [data-tab=logs]").is_hidden()


def test_the_download_link_saves_a_page_that_opens_the_same_game(
        tab: Tab, pages: dict[str, Path], tmp_path: Path) -> None:
    tab.open(pages["fivecrowns"].as_uri() + "#step=30")
    with tab.page.expect_download() as info:
        tab.page.click("#download")
    assert info.value.suggested_filename == "fivecrowns-9.html"
    saved = tmp_path / "saved.html"
    info.value.save_as(saved)
    count = tab.page.evaluate("window.meldrefViewer.count()")
    data = tab.page.evaluate("window.meldrefViewer.data")
    other = Tab(tab.page.context)
    try:
        other.open(saved.as_uri())
        assert other.page.evaluate("window.meldrefViewer.count()") == count
        assert other.page.evaluate("window.meldrefViewer.data") == data
        assert other.page.locator("#seats .seat").count() == 9
        assert all(url.startswith("file://") for url in other.requests)
    finally:
        other.close()


def test_a_page_opened_from_disk_replaces_the_game_shown(tab: Tab, pages: dict[str, Path],
                                                          replays: dict[str, Path]) -> None:
    tab.open(pages["phase10"].as_uri() + "#step=20")
    tab.page.set_input_files("#open-file", str(pages["fivecrowns"]))
    tab.page.wait_for_selector("html[data-game='fivecrowns']", timeout=HANG_GUARD_MS)
    assert tab.page.evaluate("window.meldrefViewer.data.id") == "fivecrowns-9"
    assert tab.page.locator("#seats .seat").count() == 9
    assert tab.page.evaluate("window.meldrefViewer.index()") == 0
    assert "Five Crowns" in tab.page.title()
    tab.page.keyboard.press("ArrowRight")  # one step: the first game's keys are gone
    assert tab.page.evaluate("window.meldrefViewer.index()") == 1
    tab.page.click("#tabs [data-tab=chart]")
    assert tab.page.locator("#chart svg[data-key=sc] polyline").count() == 9
    with tab.page.expect_download() as info:  # the download saves the page now shown
        tab.page.click("#download")
    assert info.value.suggested_filename == "fivecrowns-9.html"
    # A replay file is not a page: the page says how to make one, and keeps its game.
    tab.page.set_input_files("#open-file", str(replays["solitaire"]))
    tab.page.wait_for_selector("#opened:not([hidden])", timeout=HANG_GUARD_MS)
    assert "meldref replay html" in (tab.page.locator("#opened").text_content() or "")
    assert tab.page.evaluate("window.meldrefViewer.data.id") == "fivecrowns-9"
