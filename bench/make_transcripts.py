"""Regenerate spec/transcripts/*.txt and the excerpt in spec/PROTOCOL.md from real games.

    python bench/make_transcripts.py [--check]

Each transcript is seat 0's whole conversation (bots/random_bot.py in every seat, through real
pipes) up to the end of the first hand or round in which everything worth showing happened
(for Phase 10: a skip, a lay-down with wilds, a hit, a going out and the hand's results), then
the end of the game. Seeds are searched from 1 upwards, so the files are deterministic.
`--check` only tells whether the files are up to date (exit 1 if not).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from meldref.engine.game import GameInfo, find_game
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import seat_from_spec

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "spec" / "transcripts"
BOT = "bots/random_bot.py"
POLICY = MatchPolicy(move_time=10.0, first_move_time=20.0, startup_time=20.0)
EXCERPT_MARK = "TRANSCRIPT-EXCERPT"


@dataclass(frozen=True)
class Showcase:
    game: str
    players: int
    hand_end: str  # regex of the event line that ends a hand / round
    wanted: tuple[str, ...]  # regexes that must all match lines of that first hand
    max_lines: int = 5000  # a shorter first hand is wanted: try the next seed


SHOWCASES = (
    Showcase("phase10", 3, r"^> event hand_end ", (
        r"^> event skip ", r"^> event lay_down .*W=", r"^> event hit ",
        r"^> event hand_end .*went_out \d", r"^< action \d+ lay ")),
    Showcase("fivecrowns", 3, r"^> event round_end ", (
        r"^> event go_out .*=", r"^> event last_turn .*groups [^-]",
        r"^> event round_end .*went_out \d")),
    Showcase("solitaire", 1, r"^> event close ", (r"^> event place ",), max_lines=600),
)


def record_game(game: GameInfo, players: int, seed: int) -> list[str]:
    lines: list[str] = []
    seats = [
        seat_from_spec(f"{sys.executable} {BOT} --seed {seed * 10 + i}", game, cwd=str(ROOT),
                       on_line=(lambda way, text: lines.append(f"{way} {text}")) if i == 0
                       else None)
        for i in range(players)
    ]
    try:
        record = play_game(game, game.rules(), seats, seed, POLICY)
    finally:
        close_all(seats)
    if record.status != ["ok"] * players:
        raise RuntimeError(f"{game.name} seed {seed}: {record.faults}")
    return lines


def first_hand(lines: list[str], show: Showcase) -> int | None:
    """Index of the line ending the first hand, if that hand shows everything wanted."""
    end = next((i for i, ln in enumerate(lines) if re.search(show.hand_end, ln)), None)
    if end is None or end > show.max_lines:
        return None
    head = lines[: end + 1]
    if all(any(re.search(w, ln) for ln in head) for w in show.wanted):
        return end
    return None


def cut(lines: list[str], end: int) -> list[str]:
    """The first hand, the next request, a gap, and the last lines of the game."""
    nxt = next((i for i in range(end + 1, len(lines)) if lines[i].startswith("< action")),
               len(lines) - 1)
    tail_from = max(nxt + 1, len(lines) - 12)
    for i in range(len(lines) - 1, nxt, -1):  # back to the last hand's end, if near the end
        if "event hand_end" in lines[i] or "event round_end" in lines[i]:
            tail_from = min(tail_from, i)
            break
    out = lines[: nxt + 1]
    if tail_from > nxt + 1:
        out.append(f"... ({tail_from - nxt - 1} lines of the rest of the game left out) ...")
    return out + lines[tail_from:]


def make(show: Showcase, max_seed: int = 400) -> str | None:
    try:
        game = find_game(show.game)
    except (ImportError, AttributeError):
        return None
    for seed in range(1, max_seed + 1):
        lines = record_game(game, show.players, seed)
        end = first_hand(lines, show)
        if end is not None:
            head = (f"# meldref protocol 1: {show.game}, {show.players} player(s), seed {seed}; "
                    f"seat 0 is {BOT} (every seat is).\n# '>' referee to bot, '<' bot to "
                    "referee. Regenerate: python bench/make_transcripts.py\n")
            return head + "\n".join(cut(lines, end)) + "\n"
    raise RuntimeError(f"no seed up to {max_seed} shows {show.wanted} in the first hand")


def excerpt(text: str, size: int = 60) -> str:
    body = [ln for ln in text.splitlines() if not ln.startswith("#")][:size]
    return "```\n" + "\n".join(body) + "\n...\n```"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    texts = {}
    for show in SHOWCASES:
        text = make(show)
        if text is None:
            print(f"{show.game}: no engine yet, skipped")
            continue
        texts[show.game] = text
        path = OUT / f"{show.game}.txt"
        if not path.exists() or path.read_text() != text:
            stale.append(path)
            if not check:
                OUT.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        print(f"{show.game}: {len(text.splitlines())} lines -> {path.relative_to(ROOT)}")
    spec = ROOT / "spec" / "PROTOCOL.md"
    if "phase10" in texts:
        doc = spec.read_text()
        start = doc.find("<!-- transcript -->")
        block = f"<!-- transcript -->\n{excerpt(texts['phase10'])}\n<!-- /transcript -->"
        if EXCERPT_MARK in doc:
            new = doc.replace(EXCERPT_MARK, block)
        else:
            stop = doc.find("<!-- /transcript -->") + len("<!-- /transcript -->")
            new = doc[:start] + block + doc[stop:]
        if new != doc:
            stale.append(spec)
            if not check:
                spec.write_text(new)
    if check and stale:
        print("stale:", ", ".join(str(p.relative_to(ROOT)) for p in stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
