"""What a contest's games cost on disk, raw and compressed at rest, and how fast the served
pages answer.

    python bench/bench_serve.py [--games 20] [--requests 200]
    python bench/bench_serve.py --load [--run-games 40] [--rounds 2] [--views 10] [--uploads 2]

Disk: --games games of each shape a contest plays (built-in greedy bots, the referee's own
replays) are written as replays; for each shape, the mean bytes a game costs raw, gzipped
(levels 1, 6 and 9), the ratio, the CPU to compress one (level 6), and the CPU to gunzip one
as a share of what the replay reader (`read_lines`: JSON, the hash chain, the schema) spends
on it anyway (medians of 5).

Pages: a contest of the same games is served by `meldref contest serve` (a real process on a
free port) and asked --requests times for each page over one HTTP/1.1 connection (httpx);
answers a second per page, and the same for HEAD of the leaderboard. Only ratios mean much on
a shared machine: every figure of one run is measured side by side.

Load (--load): `meldref contest run -j 2 --games N` on a contest of three copies of the
instant bot (bench_jobs.py's), timed unwatched and watched in turn (--rounds of each): watched,
`contest serve` runs beside it and a client asks for the leaderboard, its poll and a bot page
--views times a second (ten is fifty viewers polling every 5 s), and an author uploads a new
version of a bot --uploads times a minute (`POST /api/submissions`, each checked in the
contest's sandbox before it joins); games a second each way, the page views and uploads a
second served, and an upload's mean time to its answer.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import itertools
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from meldref.contest.settings import ContestSettings
from meldref.contest.store import ContestStore
from meldref.contest.uploads import DEFAULTS
from meldref.protocol.records import ResultLine
from meldref.replay.files import read_lines
from meldref.tournament.runner import play_one
from meldref.verdicts.seatings import seatings

ROOT = Path(__file__).resolve().parent.parent
SHAPES = {  # name: (game, seats, rules)
    "phase10 2 seats": ("phase10", 2, {}),
    "phase10 4 seats": ("phase10", 4, {}),
    "fivecrowns 4 seats": ("fivecrowns", 4, {}),
}


def play(folder: Path, shape: str, games: int) -> list[Path]:
    game, seats, rules = SHAPES[shape]
    out = []
    for seed in range(1, games + 1):
        path = folder / f"{shape.replace(' ', '-')}-{seed}.jsonl"
        play_one(game, ["builtin:greedy"] * seats, seed, rules=rules,
                 names=[f"greedy-{k}" for k in range(seats)], replay=path, game_id=path.stem)
        out.append(path)
    return out


def seconds(work: Any, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times)


def disk_row(shape: str, paths: list[Path]) -> str:
    raw = [p.read_bytes() for p in paths]
    sizes = {level: statistics.mean(len(gzip.compress(r, level)) for r in raw)
             for level in (1, 6, 9)}
    mean_raw = statistics.mean(len(r) for r in raw)
    packed = gzip.compress(raw[0], 6)
    squeeze = seconds(lambda: gzip.compress(raw[0], 6))
    read = seconds(lambda: list(read_lines(paths[0])))
    gunzip = seconds(lambda: zlib.decompress(packed, 31))
    return (f"| {shape} | {len(paths)} | {mean_raw / 1000:.1f} | {sizes[1] / 1000:.1f} | "
            f"{sizes[6] / 1000:.1f} | {sizes[9] / 1000:.1f} | {mean_raw / sizes[6]:.1f}x | "
            f"{squeeze * 1000:.2f} | {gunzip / max(read, 1e-9):.1%} |")


def contest(folder: Path, replays: list[Path]) -> Path:
    """A contest of two versions whose games are the replays given (recorded as done)."""
    settings = ContestSettings.checked(game="phase10", players=2, rules={}, limits={},
                                       sandbox=False, placement=2, suspend_after=3, seed=7)
    # Public replays: the viewer's page is one of the pages timed (private, it is a 404).
    store = ContestStore.create(folder / "c", settings, replace(DEFAULTS, public_replays=True))
    try:
        ids = []
        for name in ("alpha", "beta"):
            staged = store.folder / "bots" / ".staging" / name
            staged.mkdir(parents=True)
            (staged / "bot.py").write_text("")
            ids.append(store.join(name, "python3 bot.py", staged).id)
        store.save_ratings([(ids[0], 40.0, -20.0, 100.0, 10, None),
                            (ids[1], -40.0, -100.0, 20.0, 10, None)])
        for source in replays:
            store.add_deal_set("ladder", tuple(ids), seatings(2))
            for game in store.queued_games():
                store.mark_running(game.id)
                target = store.folder / "replays" / f"{game.game_id}.jsonl"
                target.write_bytes(source.read_bytes())
                store.record(ResultLine.from_json({
                    "status": "ok", "index": game.id, "game_id": game.game_id, "deal": 1,
                    "bots": ["alpha v1", "beta v1"], "places": [1, 2], "scores": [0, 50],
                    "faults": [[], []], "replay": f"replays/{game.game_id}.jsonl"}))
        return store.folder
    finally:
        store.close()


def page_rows(folder: Path, requests: int) -> list[str]:
    child = subprocess.Popen([sys.executable, "-m", "meldref", "contest", "serve", str(folder),
                              "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
    try:
        assert child.stdout is not None
        url = re.search(r" at (\S+/) ", child.stdout.readline())
        assert url, "contest serve did not start"
        game = sorted((folder / "replays").glob("*.jsonl"))[0].name
        rows = []
        with httpx.Client(base_url=url[1], timeout=120) as http:
            for method, path in [("GET", "/"), ("HEAD", "/"), ("GET", "/board.json"),
                                 ("GET", "/bot/alpha"), ("GET", f"/view/replays/{game}")]:
                http.request(method, path).raise_for_status()  # warm: the viewer's cache
                start = time.perf_counter()
                for _ in range(requests):
                    http.request(method, path).raise_for_status()
                rate = requests / (time.perf_counter() - start)
                rows.append(f"| {method} {path} | {requests} | {rate:.0f} |")
        return rows
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(60)


@contextlib.contextmanager
def watching(folder: Path, views: float, uploads: float = 0.0,
             token: str = "") -> Iterator[tuple[list[float], list[float]]]:
    """`contest serve` on `folder`, asked for a page `views` times a second and sent a new
    version of a bot `uploads` times a minute (with the author's `token`) until the block
    ends; yields the lists the page answers are counted into (a 1 each; the server's CPU
    seconds since it was ready are appended last) and each accepted upload's seconds."""
    child = subprocess.Popen([sys.executable, "-m", "meldref", "contest", "serve", str(folder),
                              "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True)
    answered: list[float] = []
    uploaded: list[float] = []
    stop = threading.Event()

    def upload(url: str) -> None:
        program = (ROOT / "bots" / "random_bot.py").read_bytes()
        with httpx.Client(base_url=url, timeout=600) as http:
            while True:  # the first at once, then every 60 / uploads seconds
                start = time.perf_counter()
                answer = http.post("/api/submissions", headers={"Authorization":
                                                                f"Bearer {token}"},
                                   data={"name": "uploader"},
                                   files={"file": ("random_bot.py", program)})
                assert answer.status_code == 201, answer.text  # refused: the figure is void
                uploaded.append(time.perf_counter() - start)
                if stop.wait(60 / uploads):
                    return

    def ask(url: str) -> None:
        pages = itertools.cycle(["/", "/board.json", "/bot/a"])
        with httpx.Client(base_url=url, timeout=120) as http:
            while not stop.wait(1 / views):
                http.get(next(pages)).raise_for_status()
                answered.append(1)
    try:
        assert child.stdout is not None
        url = re.search(r" at (\S+/) ", child.stdout.readline())
        assert url, "contest serve did not start"
        ready = cpu_seconds(child.pid)
        threads = [threading.Thread(target=ask, args=(url[1],), daemon=True)]
        if uploads > 0:
            threads.append(threading.Thread(target=upload, args=(url[1],), daemon=True))
        for thread in threads:
            thread.start()
        yield answered, uploaded
        stop.set()
        for thread in threads:
            thread.join(600)
        answered.append(cpu_seconds(child.pid) - ready)
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(60)


def cpu_seconds(pid: int) -> float:
    """A process's user and system CPU seconds (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load_rows(games: int, rounds: int, views: float, uploads: float) -> list[str]:
    from bench_jobs import contest_bot, make_contest

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "c"
        bot, command = contest_bot(Path(tmp))
        make_contest(folder, bot, command, "--uploads-per-hour", "100000")
        token = subprocess.run([sys.executable, "-m", "meldref", "contest", "author", "add",
                                str(folder), "uploader"], check=True, capture_output=True,
                               text=True).stdout.strip()
        rates: dict[str, list[float]] = {"unwatched": [], "watched": []}
        served: list[float] = []
        cpu: list[float] = []  # the server's CPU seconds a page view
        took: list[float] = []  # an accepted upload's seconds to its answer
        upload_rates: list[float] = []
        for _ in range(rounds):
            for mode in rates:
                with contextlib.ExitStack() as stack:
                    answered, accepted = (
                        stack.enter_context(watching(folder, views, uploads, token))
                        if mode == "watched" else (None, None))
                    start = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "meldref", "contest", "run",
                                    str(folder), "-j", "2", "--games", str(games)], check=True,
                                   capture_output=True, timeout=3600)
                    wall = time.perf_counter() - start
                    rates[mode].append(games / wall)
                if answered is not None and accepted is not None:
                    served.append((len(answered) - 1) / wall)
                    cpu.append(answered[-1] / max(len(answered) - 1, 1))
                    upload_rates.append(len(accepted) / wall)
                    took.extend(accepted)
        for mode, found in rates.items():
            mean_took = f"{statistics.mean(took):.1f}" if took else "-"
            rows.append(f"| {mode} | {rounds} x {games} | {statistics.mean(found):.2f} | "
                        f"{statistics.mean(served):.1f} | {1000 * statistics.mean(cpu):.1f} | "
                        f"{statistics.mean(upload_rates):.3f} | {mean_took} |"
                        if mode == "watched" else
                        f"| {mode} | {rounds} x {games} | {statistics.mean(found):.2f} | - | - "
                        "| - | - |")
        ratio = statistics.mean(rates["watched"]) / statistics.mean(rates["unwatched"])
        rows.append(f"watched/unwatched games a second: {ratio:.2f}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--load", action="store_true", help="the contest run, watched or not")
    parser.add_argument("--run-games", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--views", type=float, default=10.0)
    parser.add_argument("--uploads", type=float, default=2.0, help="uploads a minute (watched)")
    args = parser.parse_args()
    os.environ.setdefault("MELDREF_PURE", "1")
    if args.load:
        print("| contest run -j 2 | rounds x games | games/s | page views/s | "
              "server CPU ms a view | uploads/s | s an upload |")
        print("|---|---|---|---|---|---|---|")
        for row in load_rows(args.run_games, args.rounds, args.views, args.uploads):
            print(row)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        played = {shape: play(folder, shape, args.games) for shape in SHAPES}
        print("| shape | games | raw kB | gzip -1 kB | gzip -6 kB | gzip -9 kB | raw/gzip -6 | "
              "compress ms (CPU) | gunzip / reading the replay (CPU) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for shape, paths in played.items():
            print(disk_row(shape, paths))
        print()
        print("| page | requests | answers/s |")
        print("|---|---|---|")
        for row in page_rows(contest(folder, played["phase10 2 seats"][:3]), args.requests):
            print(row)


if __name__ == "__main__":
    main()
