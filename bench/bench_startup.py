"""How long the `meldref` command takes to start, as ratios against the floor of any typer
command: a python that imports typer and rich and does nothing else.

    python bench/bench_startup.py [--runs 10]

Times, in one run and interleaved (so a load on the machine falls on all alike), the median
wall time of each of:
- baseline: `python -c "import typer, rich"`;
- floor: a typer app of two commands printing its --help (what typer's help itself costs);
- `meldref --help` (the target: at most 1.5x the baseline);
- `meldref match --help` (a command's help: its options and the games' rule keys);
- `meldref match solitaire --seed 1` (a whole short game: the referee and the engine too).
Prints a markdown table of the medians and their ratios to the baseline, and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The least any typer command's --help costs: typer's help machinery (typer.rich_utils, which
# imports rich's markdown) and the rendering, for an app of two commands with one option.
TYPER_HELP = """import typer
app = typer.Typer()
app.command("a")(lambda x: None)
app.command("b")(lambda x: None)
app()"""
CASES = {
    "baseline: import typer, rich": [sys.executable, "-c", "import typer, rich"],
    "floor: a two-command typer app's --help": [sys.executable, "-c", TYPER_HELP, "--help"],
    "meldref --help": [sys.executable, "-m", "meldref", "--help"],
    "meldref match --help": [sys.executable, "-m", "meldref", "match", "--help"],
    "meldref match solitaire": [sys.executable, "-m", "meldref", "match", "solitaire",
                                "--seed", "1"],
}


def once(argv: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this tree, not an installed copy
    began = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each (default 10)")
    args = parser.parse_args()
    for argv in CASES.values():  # warm the file cache and the .pyc files first
        once(argv)
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(args.runs):
        for name, argv in CASES.items():
            times[name].append(once(argv))
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    base = medians["baseline: import typer, rich"]
    print("| command | median (ms) | ratio to baseline |")
    print("|---|---:|---:|")
    for name, value in medians.items():
        print(f"| {name} | {1000 * value:.0f} | {value / base:.2f}x |")
    print(json.dumps({"runs": args.runs, "baseline_ms": round(1000 * base, 1),
                      **{name: round(value / base, 3) for name, value in medians.items()
                         if not name.startswith("baseline")}}))


if __name__ == "__main__":
    main()
