"""`meldref replay export`'s memory against the number of games: flat, as it streams.

    python bench/bench_export.py [--games 1000 10000] [--format parquet]

One Solitaire replay is copied N times into a folder (a copy is a whole, valid replay), then a
fresh process exports the folder and reports its peak resident memory (ru_maxrss) and its
rate. The figures are the peaks at each N and their ratio to the smallest N's.
`--measure FOLDER OUT` is the probe run in that fresh process (JSON on stdout).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(folder: Path, out: Path, fmt: str) -> dict[str, float]:
    from meldref.replay.export import export

    start = time.perf_counter()
    done = export([folder], out, fmt, "vector")  # type: ignore[arg-type]
    seconds = time.perf_counter() - start
    peak = _peak_mb()
    return {"games": done.files, "rows": done.rows, "max_rss_mb": round(peak, 1),
            "rows_per_s": round(done.rows / seconds)}


def _peak_mb() -> float:
    """This process's peak resident memory since its exec, in MiB: /proc's VmHWM where there
    is one (getrusage's ru_maxrss keeps the high-water mark of the process before the exec,
    the launcher's own), else ru_maxrss."""
    with contextlib.suppress(OSError, StopIteration):
        with open("/proc/self/status") as status:
            line = next(x for x in status if x.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def probe(folder: Path, out: Path, fmt: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--measure", str(folder), str(out),
                           "--format", fmt], capture_output=True, text=True, check=True)
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--format", default="parquet", choices=("parquet", "csv", "jsonl"))
    parser.add_argument("--measure", nargs=2, type=Path, metavar=("FOLDER", "OUT"))
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(*args.measure, args.format)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        one = work / "one.jsonl"
        subprocess.run([sys.executable, "-m", "meldref", "match", "solitaire", "--seed", "5",
                        "--replay", str(one)], cwd=ROOT, check=True, capture_output=True)
        rows = []
        exports = work / "exports"  # apart from the replays: a .jsonl export beside them is refused
        exports.mkdir()
        for count in sorted(args.games):
            folder = work / f"n{count}"
            folder.mkdir()
            for i in range(count):
                shutil.copy(one, folder / f"g{i:06d}.jsonl")
            rows.append(probe(folder, exports / f"n{count}.{args.format}", args.format))
            shutil.rmtree(folder)
    base = rows[0]["max_rss_mb"]
    print("| games | rows | peak RSS (MB) | x smallest | rows/s |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['games']:,} | {r['rows']:,} | {r['max_rss_mb']} | "
              f"{r['max_rss_mb'] / base:.2f} | {r['rows_per_s']:,} |")


if __name__ == "__main__":
    main()
