"""How big the replay viewer's pages are and how fast they open, in Debian's chromium.

    python bench/bench_viewer.py [--actions 300] [--repeats 5] [--chromium /usr/bin/chromium]

Games between built-in bots (Five Crowns at 14 seats in party mode, Phase 10 at 4 seats) are
cut after --actions actions and written as pages (`meldref replay html`'s own code). For each:
the page's size, the time to build it (re-simulating the replay), the time from navigation to a
drawn table (median of --repeats loads in one browser), and the time to draw one step (stepping
through every step once). Opening is also given as a ratio to opening an empty page in the same
browser, the baseline of what any page costs there, so a loaded machine moves both alike.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from meldref.replay.files import write_first_actions
from meldref.replay.html import replay_page
from meldref.tournament.runner import play_one

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
GAMES = {  # name: (game, seats, rules, seed)
    "fivecrowns-14": ("fivecrowns", 14, {"party": "on"}, 9),
    "phase10-4": ("phase10", 4, {}, 3),
}
STEP_ALL = """() => { const v = window.meldrefViewer, t = performance.now();
  for (let i = 0; i < v.count(); i++) { v.go(i); document.body.offsetHeight; }
  return (performance.now() - t) / v.count(); }"""


def cut_game(folder: Path, name: str, actions: int) -> Path:
    game, seats, rules, seed = GAMES[name]
    whole = folder / f"{name}-whole.jsonl"
    play_one(game, ["builtin:greedy"] * seats, seed, rules=rules,
             names=[f"greedy-{k}" for k in range(seats)], replay=whole, game_id=name)
    return write_first_actions(whole, folder / f"{name}.jsonl", actions)


def open_time(page: Any, url: str, repeats: int) -> tuple[float, float | None]:
    """The median seconds from asking for `url` to a drawn page, and the page's own count of
    milliseconds from the start of its navigation to its table drawn (None: not a viewer)."""
    times, inside = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector("html[data-ready='1']")
        times.append(time.perf_counter() - start)
        inside.append(page.evaluate("window.meldrefViewer ? window.meldrefViewer.readyMs : null"))
    return statistics.median(times), (statistics.median(inside) if None not in inside else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--actions", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp, sync_playwright() as driver:
        folder = Path(temp)
        blank = folder / "blank.html"
        blank.write_text("<!doctype html><html data-ready='1'><title>-</title></html>")
        context = driver.chromium.launch_persistent_context(
            str(folder / "profile"), executable_path=args.chromium, headless=True, args=ARGS,
            viewport={"width": 1400, "height": 900})
        page = context.new_page()
        baseline, _ = open_time(page, blank.as_uri(), args.repeats)
        print(f"empty page: opens in {baseline * 1000:.0f} ms (the baseline)")
        for name in GAMES:
            replay = cut_game(folder, name, args.actions)
            start = time.perf_counter()
            html, _ = replay_page(replay)
            built = time.perf_counter() - start
            target = folder / f"{name}.html"
            target.write_text(html, encoding="utf-8")
            opened, ready = open_time(page, target.as_uri(), args.repeats)
            per_step = page.evaluate(STEP_ALL)
            print(f"{name}, {args.actions} actions: {target.stat().st_size / 1e6:.3f} MB, "
                  f"built in {built:.2f} s, opens in {opened * 1000:.0f} ms "
                  f"({opened / baseline:.1f}x the empty page; table drawn {ready:.0f} ms after "
                  f"the navigation started), {per_step:.1f} ms a step")
        context.close()


if __name__ == "__main__":
    main()
