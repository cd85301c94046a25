"""Regenerate the viewer's screenshots in docs/ from real games.

    pip install -e '.[docs]' && python docs/make_screenshots.py [--chromium /usr/bin/chromium]

Plays games between built-in bots with fixed seeds (Phase 10 at 4 seats, Five Crowns at 8 and
at 14 seats in party mode, Solitaire), writes each one's page with `meldref replay html`'s own
code, opens it in headless chromium at a step worth showing (the fullest table in the first half
of the game) and saves docs/viewer-<name>.png; then the list of a small tournament's games (a
bot that crashes among them), as `meldref replay serve` shows it, as docs/viewer-list.png.
Deterministic: the same pictures every run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from PIL import Image
from playwright.sync_api import sync_playwright

from meldref.replay.files import load_replay
from meldref.replay.html import game_data, replay_page
from meldref.replay.serve import ReplayServer
from meldref.tournament.runner import play_one

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--hide-scrollbars"]
VIEWPORT = {"width": 1400, "height": 900}

# name: (game, bots, rules, seed)
GAMES: dict[str, tuple[str, list[str], dict[str, str], int]] = {
    "phase10": ("phase10", ["builtin:greedy", "builtin:random", "builtin:greedy",
                            "builtin:greedy"], {}, 3),
    "fivecrowns-8": ("fivecrowns", ["builtin:greedy"] * 5 + ["builtin:random"] * 3,
                     {"party": "on"}, 11),
    "fivecrowns-14": ("fivecrowns", ["builtin:greedy"] * 14, {"party": "on"}, 9),
    "solitaire": ("solitaire", ["builtin:greedy"], {}, 5),
}


def play(folder: Path, name: str) -> Path:
    game, specs, rules, seed = GAMES[name]
    names = [f"{spec.split(':')[1]}-{k}" for k, spec in enumerate(specs)]
    path = folder / f"{name}.jsonl"
    line = play_one(game, specs, seed, rules=rules, names=names, replay=path, game_id=name)
    if line["status"] != "ok":
        raise SystemExit(f"{name}: {line}")
    return path


def tournament(folder: Path) -> Path:
    """A small round robin with a bot that crashes (the list of games with standings)."""
    out = folder / "tournament"
    crashing = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'bad_bot.py'} crash"
    config = folder / "tournament.toml"
    config.write_text(f"""game = "phase10"
players = 3
games = 6
seed = 1
out = {json.dumps(str(out))}
[rules]
phases-to-win = 3
[[bot]]
cmd = "builtin:greedy"
[[bot]]
cmd = "builtin:random"
[[bot]]
name = "crasher"
cmd = {json.dumps(crashing)}
""", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "meldref", "tournament", str(config)], check=True,
                   capture_output=True)
    return out


def showcase_step(data: dict[str, Any]) -> int:
    """The step to show: in the first half of the game, the fullest table (most laid groups,
    or most closed piles), not a hand's end (where the next deal has not come yet)."""
    frames, flat = [], {}
    for delta in data["frames"]:
        flat = {**flat, **delta}
        frames.append(flat)
    half = len(frames) // 2
    best, best_size = 0, -1
    for i in range(1, half):
        frame, step = frames[i], data["steps"][i]
        if step["k"] != "a" or frame.get("end"):
            continue
        size = len(frame.get("tb") or []) * 10 + sum(
            1 for k, v in frame.items() if k.startswith("pz.") and v)
        if size > best_size:
            best, best_size = i, size
    return best


def shoot(page: Any, url: str, target: Path) -> None:
    """A screenshot of `url` as a 256-colour PNG (dithered: the felt's gradient stays smooth)."""
    page.goto(url)
    page.wait_for_selector("html[data-ready='1']")
    page.screenshot(path=str(target))
    with Image.open(target) as shot:
        picture = shot.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE,
                                               dither=Image.Dither.FLOYDSTEINBERG)
    picture.save(target, optimize=True)
    print(f"{target.relative_to(DOCS.parent)}: {target.stat().st_size // 1024} KB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp, sync_playwright() as driver:
        folder = Path(temp) / "games"
        folder.mkdir()
        replays = {name: play(folder, name) for name in GAMES}
        context = driver.chromium.launch_persistent_context(
            str(Path(temp) / "profile"), executable_path=args.chromium, headless=True,
            args=ARGS, viewport=VIEWPORT)
        page = context.new_page()
        for name, path in replays.items():
            html = Path(temp) / f"{name}.html"
            html.write_text(replay_page(path)[0], encoding="utf-8")
            step = showcase_step(game_data(load_replay(path)))
            shoot(page, f"{html.as_uri()}#step={step}", DOCS / f"viewer-{name}.png")
        seat_page = Path(temp) / "seat.html"
        seat_page.write_text(replay_page(replays["phase10"], 1)[0], encoding="utf-8")
        step = showcase_step(game_data(load_replay(replays["phase10"])))
        shoot(page, f"{seat_page.as_uri()}#step={step}", DOCS / "viewer-phase10-seat.png")
        server = ReplayServer(tournament(Path(temp)), "127.0.0.1", 0, quiet=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            shoot(page, server.url, DOCS / "viewer-list.png")
        finally:
            server.shutdown()
            server.server_close()
        context.close()


if __name__ == "__main__":
    main()
