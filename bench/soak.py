"""Soak: thousands of games at -j 2 mixing normal and hostile bots, watching for leaks.

    python bench/soak.py [--games 2000] [--jobs 2] [--out DIR] [--json]

A gauntlet: `bots/random_bot.py` against built-in bots and against tests/bots/bad_bot.py in
each mode that fails fast (crash, segv, garbage, illegal, flood, close_stdout, orphan and
escaped children, stray lines, double answers), two seats, Phase 10 with short games. While it
runs, every `--sample` games, it records the tournament process's resident memory and open
file descriptors and the live bot processes; at the end it checks that:

- no bot process is left (no process of this machine carries a `MELDREF_BOT` environment
  cookie, which every bot program and its descendants inherit);
- the tournament's open file descriptors did not grow (at most a handful more than after the
  first sample);
- its resident memory after the run is within 10% of the first sample's (plus 8 MiB).

Prints one JSON line per sample and a summary; exits 1 if a check fails. Not part of the test
suite's default run (tests/test_soak.py runs it, marked slow: `pytest -m slow`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from meldref.engine.game import find_game
from meldref.protocol.records import ResultLine
from meldref.protocol.seats import BotSpec
from meldref.protocol.sweep import COOKIE
from meldref.settings import limit_settings, parse_rules
from meldref.tournament.config import TournamentConfig
from meldref.tournament.run import open_tournament, run_tournament
from meldref.tournament.schedule import Plan, bot_entries

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
HOSTILE = ["crash", "segv", "garbage", "illegal", "flood", "close_stdout", "orphan_child",
           "escape", "escape_orphan", "stray", "twice", "long_illegal"]


def bots() -> list[str]:
    bad = ROOT / "tests" / "bots" / "bad_bot.py"
    return ([f"{PY} {ROOT / 'bots' / 'random_bot.py'} --name soak", "builtin:greedy",
             "builtin:random"] + [f"{PY} {bad} {mode}" for mode in HOSTILE])


def status(pid: int | str = "self") -> dict[str, int]:
    """Resident memory (KiB) and open file descriptors of a process."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    return {"rss_kb": rss, "fds": len(os.listdir(f"/proc/{pid}/fd"))}


# Inherited by the workers and by every bot they start: tells this soak's bots from others'.
TOKEN = f"MELDREF_SOAK={uuid.uuid4().hex}"


def live_bots() -> list[int]:
    """This soak's bot processes still running: they carry the bot cookie and the soak's
    token (only those this user may read)."""
    out = []
    mark = f"{COOKIE}=".encode()
    token = TOKEN.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        parts = env.split(b"\0")
        if state != "Z" and token in parts and any(p.startswith(mark) for p in parts):
            out.append(int(entry))
    return out


def soak(games: int, jobs: int, out: Path, sample: int, quiet: bool) -> dict[str, Any]:
    name, _, value = TOKEN.partition("=")
    os.environ[name] = value
    specs = bots()
    info = find_game("phase10")
    tables = len(specs) - 1
    per_table = max(2, -(-games // tables))
    limits = limit_settings({"move-time": 2.0, "startup-time": 10.0})
    plan = Plan("phase10", tuple(bot_entries([BotSpec.parse(s) for s in specs])), players=2,
                games=per_table, format="gauntlet", duplicate=True, seed=1,
                rules=parse_rules(info.rules_type, {"phases-to-win": "2"}))
    config = TournamentConfig(plan, jobs, out, limits)
    samples: list[dict[str, Any]] = []
    began = time.monotonic()

    def on_result(result: ResultLine, done: int, total: int) -> None:
        if done % sample == 0 or done == total:
            row = {"games": done, "of": total, "seconds": round(time.monotonic() - began, 1),
                   **status(), "live_bots": len(live_bots())}
            samples.append(row)
            if not quiet:
                print(json.dumps(row), flush=True)

    run = run_tournament(open_tournament(config), on_result=on_result)
    time.sleep(1.0)  # the last games' bots are being shut down
    left = live_bots()
    first, last = samples[0], {**status(), "games": len(run.results)}
    summary = {
        "games": len(run.results), "errors": sum(not r.ok for r in run.results),
        "faulty_games": sum(r.ok and r.failed for r in run.results),
        "seconds": round(time.monotonic() - began, 1),
        "bots_left": left, "fds_first": first["fds"], "fds_last": last["fds"],
        "rss_first_kb": first["rss_kb"], "rss_last_kb": last["rss_kb"],
    }
    summary["ok"] = (not left and summary["errors"] == 0
                     and last["fds"] <= first["fds"] + 4
                     and last["rss_kb"] <= first["rss_kb"] * 1.10 + 8192)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=100, help="games between samples")
    parser.add_argument("--out", type=Path, help="tournament folder (default: a temporary one)")
    parser.add_argument("--json", action="store_true", help="only the summary, as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="meldref-soak-") as tmp:
        out = args.out or Path(tmp) / "t"
        summary = soak(args.games, args.jobs, out, args.sample, args.json)
    print(json.dumps(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
