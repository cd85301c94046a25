"""The viewer's whole page fits the window (issue 47): every panel -- the header, the table, the
side panel with each of its tabs, the result box at the end, the bar -- at 4, 9 and 14 seats, in
windows 1280 and 1920 px wide and on a 390 px phone. The Phase 10 result table's `faults`
column ended 33-47 px past the window at every width from 1280 to 1920, and the layout test
looked only at `#main`, `#top` and the seats. And `#step=N` edited in the address bar of an open
page is followed (it did nothing until a reload).

Run in Debian's chromium by playwright, as tests/test_viewer_browser.py (its browser and tab)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import viewer_games as games
from support import PYTHON, ROOT
from test_viewer_browser import Tab, browser, tab  # noqa: F401 (fixtures)

from meldref.replay.html import replay_page

pytestmark = pytest.mark.browser

WINDOWS = [(1280, 800), (1920, 1080), (390, 844)]

# Every visible element of every panel, on the tab shown: inside the window across (a
# scrolling panel may hold more than it shows down, never across), and no panel that needs
# scrolling sideways. Returns what sticks out, with by how much.
PAST_THE_WINDOW = """() => {
  const W = innerWidth, problems = [];
  const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
    + (typeof e.className === "string" && e.className
      ? "." + e.className.split(" ").join(".") : "");
  if (document.documentElement.scrollWidth > W + 1)
    problems.push("the page is " + document.documentElement.scrollWidth + " px wide");
  for (const e of document.querySelectorAll("#top *, #main *, #bar *")) {
    if (e.closest("svg") && e.tagName !== "svg") continue;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    if (r.right > W + 1 || r.left < -1)
      problems.push(name(e) + " spans " + Math.round(r.left) + ".." + Math.round(r.right));
    const style = getComputedStyle(e);
    if (["auto", "scroll"].includes(style.overflowX) && e.scrollWidth > e.clientWidth + 1)
      problems.push(name(e) + " scrolls sideways by " + (e.scrollWidth - e.clientWidth) + " px");
  }
  return problems;
}"""

SHOW_TAB = """(which) => {
  const button = document.querySelector('#tabs button[data-tab="' + which + '"]');
  if (!button || button.hidden) return false;
  button.click();
  return true;
}"""


@pytest.fixture(scope="module")
def seated(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """The four-seat Phase 10 game; the long test plays the others it needs."""
    return {4: games.phase10_four(tmp_path_factory.mktemp("layout"))}


def page_of(seats: int, seated: dict[int, Path], folder: Path) -> Path:
    play = {4: lambda f: seated[4], 9: games.fivecrowns_nine, 14: games.fivecrowns_fourteen}
    source = play[seats](folder)
    page = folder / f"{seats}.html"
    page.write_text(replay_page(source)[0])
    return page


@pytest.mark.long  # seconds per window and step, in the browser
@pytest.mark.parametrize("seats", [4, 9, 14])
def test_every_panel_fits_the_window_at_every_step_shown(
        tab: Tab, seated: dict[int, Path], tmp_path: Path, seats: int) -> None:  # noqa: F811
    page = page_of(seats, seated, tmp_path)
    tab.open(page.as_uri())
    last = tab.page.evaluate("() => meldrefViewer.count() - 1")
    problems: list[Any] = []
    for width, height in WINDOWS:
        tab.page.set_viewport_size({"width": width, "height": height})  # the page lays out anew
        for step in (0, last // 2, last):  # the last shows the result box
            tab.page.evaluate("(i) => meldrefViewer.go(i)", step)
            for which in ("log", "chart", "logs"):
                if tab.page.evaluate(SHOW_TAB, which):
                    found = tab.page.evaluate(PAST_THE_WINDOW)
                    problems += [(width, step, which, p) for p in found]
    assert problems[:12] == [], f"{len(problems)} problems"


def test_the_phase10_result_table_fits_from_1280_to_1920(
        tab: Tab, seated: dict[int, Path], tmp_path: Path) -> None:  # noqa: F811
    """The issue's case on its own: the result box at the game's end."""
    page = tmp_path / "g.html"
    page.write_text(replay_page(seated[4])[0])
    for width in (1280, 1440, 1600, 1920, 390):
        tab.page.set_viewport_size({"width": width, "height": 900})
        tab.open(page.as_uri() + "#end")
        right = tab.page.evaluate(
            "() => document.querySelector('#result table').getBoundingClientRect().right")
        assert right <= width, (width, right)


def test_an_address_edited_while_the_page_is_open_is_followed(
        tab: Tab, seated: dict[int, Path], tmp_path: Path) -> None:  # noqa: F811
    page = tmp_path / "g.html"
    page.write_text(replay_page(seated[4])[0])
    tab.open(page.as_uri() + "#step=3")
    assert tab.page.evaluate("() => meldrefViewer.index()") == 3
    for where, wanted in (("#step=40", "40"), ("#end", "count() - 1"), ("#step=7", "7")):
        tab.page.evaluate(f"() => {{ location.hash = '{where}'; }}")
        tab.page.wait_for_function(f"() => meldrefViewer.index() === meldrefViewer.{wanted}"
                                   if "count" in wanted else
                                   f"() => meldrefViewer.index() === {wanted}", timeout=5000)


# ----------------------------------------------------------------------------------------------
# The served list of a folder's games (`replay serve`, `replay html FOLDER`'s index.html)


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from typer.testing import CliRunner

    from meldref.cli.app import app

    out = tmp_path_factory.mktemp("served") / "t"
    done = CliRunner().invoke(app, [
        "tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--bot",
        f"{PYTHON} {ROOT}/bots/random_bot.py --name a_long_bot_name_for_a_phone", "--games",
        "2", "--rules", "phases-to-win=1", "--seed", "3", "--out", str(out), "--no-progress"])
    assert done.exit_code == 0, done.output
    return out


def list_page_of(folder: Path, target: Path) -> Path:
    from meldref.replay.index import write_pages

    return write_pages(folder, target, None).index or target / "index.html"


def test_the_list_of_games_fits_a_phone(tab: Tab, tournament: Path,  # noqa: F811
                                        tmp_path: Path) -> None:
    """Issue 47: the served pages were 860-996 px wide on a 390 px phone."""
    page = list_page_of(tournament, tmp_path / "pages")
    for width in (390, 1280):
        tab.page.set_viewport_size({"width": width, "height": 844})
        tab.open(page.as_uri())
        wide = tab.page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= width, (width, wide)


def test_the_list_shows_the_rank_interval_and_the_chance_of_first(
        tab: Tab, tournament: Path, tmp_path: Path) -> None:  # noqa: F811
    folder = tmp_path / "t"
    shutil.copytree(tournament, folder)
    data = json.loads((folder / "standings.json").read_text())
    data["standings"][0].update(rank_ci95=[1, 2], p_first=0.734)
    data["standings"][1].update(rank_ci95=[2, 2], p_first=0.0)
    (folder / "standings.json").write_text(json.dumps(data))
    tab.open(list_page_of(folder, tmp_path / "pages").as_uri())
    heads = tab.page.locator("#standings th").all_text_contents()
    assert "ranks" in heads and "P first" in heads, heads
    rows = [dict(zip(heads, [td.text_content() for td in tr.locator("td").all()], strict=True))
            for tr in tab.page.locator("#standings tr:has(td)").all()]
    assert (rows[0]["ranks"], rows[0]["P first"]) == ("1-2", "73%")
    assert (rows[1]["ranks"], rows[1]["P first"]) == ("2", "<1%")  # the draws saw none


def test_every_served_page_uses_the_one_stylesheet(tournament: Path, tmp_path: Path) -> None:
    from meldref.replay.html import SITE_CSS, asset

    page = list_page_of(tournament, tmp_path / "pages").read_text()
    assert asset(SITE_CSS) in page  # the list's look is site.css's, its own rules after it
