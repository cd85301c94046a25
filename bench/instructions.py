"""Instructions the referee runs per decision, in-process and through pipes: the deterministic
twin of bench/run.py's timed pipes figures, for a machine whose speed moves from hour to hour.

    python bench/instructions.py [--games phase10,fivecrowns,solitaire] [--seeds N]

The same games as bench/run.py's pipes part (its instant bots, in-process and as the C program
bench/c/instant_bot.c, pick alike): each way is played in a child Python under valgrind's
callgrind, which counts the user-space instructions inside `play_game` only (the bots' start-up
and shutdown left out). Printed per game: decisions, instructions a decision in-process and
through pipes, and the difference, the referee's own work for the pipes (text written and read,
system calls' wrappers). The count is the same from run to run on any load; it leaves out what
time adds (the kernel's share, waking the bot, caches gone cold), which bench/run.py times.

Needs valgrind, gcc and the compiled build (callgrind starts counting at the compiled
`play_game`). Under valgrind, Linux's `pidfd_open` is refused, so the referee learns of a bot's
exit by asking between waits: about 5k instructions a decision of the pipes' count that a run
outside valgrind does not spend.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import GAMES, build_c, in_process_seats, pipe_seats, play_seeds

from meldref.build import compiled

COUNTED = "CPyDef_referee___play_game"  # the compiled `play_game`: counting starts and stops here
WAYS = ("in_process", "pipes")


# Games played first and not counted: a process's first games fill the text caches and the
# solver's tables, a cost paid once a run, not a decision (a first Solitaire game runs half as
# many instructions again as the next ones).
WARM_UP = 2
WARM_SEEDS = 1000  # the warm-up games' seeds: 1001, 1002 (the counted games are 1 to N)


def child(game: str, way: str, seeds: int, bot: str) -> None:
    """Play the warm-up games, then `seeds` games of `game` one way, each `play_game` alone
    (callgrind writes a count after each); print the counted games' decisions."""
    players = GAMES[game]
    seats = in_process_seats(players) if way == "in_process" else pipe_seats(Path(bot), players)
    for seed in range(WARM_SEEDS + 1, WARM_SEEDS + WARM_UP + 1):
        play_seeds(game, seats, [seed])
    decisions = sum(play_seeds(game, seats, [seed])[0] for seed in range(1, seeds + 1))
    print(json.dumps({"decisions": decisions}))


def counted(out_file: Path) -> int:
    """The instructions of one of callgrind's counts, from its file's `totals:` line."""
    for line in reversed(out_file.read_text().splitlines()):
        if line.startswith(("totals:", "summary:")):
            return int(line.split()[1])
    raise SystemExit(f"{out_file}: no totals line (did valgrind run?)")


def measure(game: str, way: str, seeds: int, bot: Path, folder: Path) -> tuple[int, int]:
    """(decisions, instructions inside `play_game`) of one way of playing `game`, the warm-up
    games left out: callgrind writes a file of counts after each `play_game` (`out.1`,
    `out.2`, ...), and the first `WARM_UP` are the warm-up's."""
    out_file = folder / f"callgrind.{game}.{way}"
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
         f"--toggle-collect={COUNTED}", f"--dump-after={COUNTED}", sys.executable, __file__,
         "--child", game, way, str(seeds), str(bot)],
        # One hash seed: the dicts' probing, and so the count, the same from run to run.
        env={**os.environ, "PYTHONHASHSEED": "0"}, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{game} {way} under valgrind failed:\n{done.stderr[-2000:]}")
    decisions = json.loads(done.stdout.strip().splitlines()[-1])["decisions"]
    games = [folder / f"{out_file.name}.{n}" for n in range(WARM_UP + 1, WARM_UP + seeds + 1)]
    return decisions, sum(counted(path) for path in games)


def table(rows: list[dict[str, int | str]]) -> str:
    lines = ["| game | seeds | decisions | in-process, a decision | through pipes, a decision | "
             "pipes' own |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['game']} | {r['seeds']} | {r['decisions']:,} | "
                     f"{r['in_process']:,} | {r['pipes']:,} | {r['overhead']:,} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", default=",".join(GAMES),
                        help="games to count, by comma (default: all three)")
    parser.add_argument("--seeds", type=int, default=0,
                        help="games played each way (default: 3 Phase 10, 10 Five Crowns, "
                        "60 Solitaire)")
    parser.add_argument("--child", nargs=4, metavar=("GAME", "WAY", "SEEDS", "BOT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        game, way, seeds, bot = args.child
        child(game, way, int(seeds), bot)
        return 0
    games = [g for g in args.games.split(",") if g]
    unknown = [g for g in games if g not in GAMES]
    if unknown or args.seeds < 0:
        parser.error(f"unknown game {unknown[0]!r} (known: {', '.join(GAMES)})" if unknown
                     else "--seeds must be 0 (the defaults) or more")
    missing = [tool for tool in ("valgrind", "gcc") if shutil.which(tool) is None]
    if missing:
        print(f"cannot count: {' and '.join(missing)} not found", file=sys.stderr)
        return 2
    if not compiled():
        print("cannot count: this is the pure Python build (callgrind counts from the compiled "
              "play_game; pip install -e . compiles it)", file=sys.stderr)
        return 2
    defaults = {"phase10": 3, "fivecrowns": 10, "solitaire": 60}
    rows: list[dict[str, int | str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        programs = build_c(folder)
        assert programs is not None  # gcc was found above
        for game in games:
            seeds = args.seeds or defaults[game]
            got = {way: measure(game, way, seeds, programs["instant_bot"], folder)
                   for way in WAYS}
            if got["in_process"][0] != got["pipes"][0]:
                raise SystemExit(f"{game}: the two ways played different games")
            decisions = got["pipes"][0]
            per = {way: round(got[way][1] / decisions) for way in WAYS}
            row: dict[str, int | str] = {"game": game, "seeds": seeds, "decisions": decisions,
                                         **per, "overhead": per["pipes"] - per["in_process"]}
            print(json.dumps(row), flush=True)
            rows.append(row)
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
