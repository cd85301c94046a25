"""Engine speed: full games between in-process bots, optionally against an older engine.

    python bench/bench_engine.py [--game phase10] [--games N] [--players P]
                                 [--bots random,greedy] [--against REV] [--rounds K] [--profile]

Prints games/s and decisions/s (every applied action is a decision: draw, lay, hit, discard,
place) per bot kind, by this process's CPU time and by the wall clock.

Absolute numbers say little on a shared machine. `--against REV` loads the engine and the bots
as they were at git revision REV (the engine imports nothing outside its folder and the bots
nothing but the engine, so copies of `engine/` and `bots/` are complete) and runs both in this
process, interleaved over `--rounds` rounds on the same seeds, then prints the ratio
current/baseline: the number to quote when a change claims speed.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import pstats
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import meldref

ROOT = Path(__file__).resolve().parent.parent


def load_engine(rev: str) -> ModuleType:
    """The package holding `engine/` and `bots/` as they were at git revision `rev`
    (imported under a name of its own, so both engines run in this process)."""
    package = load_revision(rev, ("engine", "bots"))
    if not (Path(package.__path__[0]) / "engine" / "play.py").exists():
        sys.exit(f"engine at {rev!r} has no play.py (play_inprocess): pick a later revision")
    return package


def load_revision(rev: str, folders: tuple[str, ...]) -> ModuleType:
    """`folders` (engine/, protocol/) as they were at git revision `rev`, as the subpackages of
    a package of their own (`baseline_<rev>`), so that both run in one process. Absolute
    imports of `meldref.engine` or `meldref.protocol` inside them are pointed at the copies.
    Folders the revision does not have (bots/ before it left the engine) are left out."""
    folders = tuple(f for f in folders if subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{rev}:{f}"], capture_output=True,
        check=False).returncode == 0) or folders
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, *folders],
        capture_output=True, check=False,
    )
    if archive.returncode != 0:
        sys.exit(f"cannot read {', '.join(folders)} at {rev!r}: {archive.stderr.decode().strip()}")
    name = "baseline_" + "".join(c if c.isalnum() else "_" for c in rev)
    folder = Path(tempfile.mkdtemp(prefix="meldref-bench-")) / name
    folder.mkdir()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(folder, filter="data")
    return _import_copy(folder, folders)


def load_pure(folders: tuple[str, ...]) -> ModuleType:
    """`folders` of this checkout as pure Python (their sources, never the compiled modules
    beside them), as the subpackages of a package of their own (`pure_meldref`), so that the
    compiled and the pure build run in one process."""
    folder = Path(tempfile.mkdtemp(prefix="meldref-bench-")) / "pure_meldref"
    for sub in folders:
        shutil.copytree(ROOT / sub, folder / sub,
                        ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return _import_copy(folder, folders)


def _import_copy(folder: Path, folders: tuple[str, ...]) -> ModuleType:
    """The copy in `folder` imported as a package named after the folder, its absolute imports
    of `meldref.<folder>` pointed at the copies."""
    name = folder.name
    (folder / "__init__.py").write_text("")
    for source in folder.rglob("*.py"):
        text = source.read_text()
        for sub in folders:
            text = text.replace(f"meldref.{sub}", f"{name}.{sub}")
        source.write_text(text)
    sys.path.insert(0, str(folder.parent))
    return importlib.import_module(name)


def make_bot(package: ModuleType, info: Any, kind: str, seed: int) -> Any:
    """A built-in bot of `package`: from its bots registry, or (engines before the bots left
    the engine) from the game's own table."""
    if hasattr(info, "bots"):
        return info.bots[kind](seed)
    return importlib.import_module(f"{package.__name__}.bots").builtin_bot(info.name, kind, seed)


def bench(package: ModuleType, game: str, kind: str, games: int, players: int) -> tuple[int, float,
                                                                                      float]:
    """(decisions, CPU seconds, wall seconds) of `games` games of `kind` bots, seeds 0..games-1."""
    info = importlib.import_module(f"{package.__name__}.engine.game").find_game(game)
    play = importlib.import_module(f"{package.__name__}.engine.play").play_inprocess
    rules = info.rules()
    decisions = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for seed in range(games):
        bots = [make_bot(package, info, kind, seed * 100 + i) for i in range(players)]
        _, actions = play(info, rules, bots, seed)
        decisions += len(actions)
    return decisions, time.process_time() - cpu, time.perf_counter() - wall


def line(label: str, games: int, decisions: int, cpu: float, wall: float) -> str:
    return (f"{label:>16}: {games} games, {decisions} decisions | CPU {games / cpu:7.2f} games/s "
            f"{decisions / cpu:8.0f} decisions/s | wall {decisions / wall:8.0f} decisions/s")


def compare(args: argparse.Namespace, kind: str, base: ModuleType) -> None:
    totals: dict[str, list[Any]] = {"current": [0, 0.0, 0.0], args.against: [0, 0.0, 0.0]}
    engines = {"current": meldref, args.against: base}
    for r in range(args.rounds):
        order = list(engines) if r % 2 == 0 else list(reversed(engines))
        for label in order:
            d, cpu, wall = bench(engines[label], args.game, kind, args.games, args.players)
            totals[label] = [totals[label][0] + d, totals[label][1] + cpu, totals[label][2] + wall]
    n = args.games * args.rounds
    for label, (d, cpu, wall) in totals.items():
        print(line(f"{kind} {label}"[:16], n, d, cpu, wall))
    (dc, cc, _), (db, cb, _) = totals["current"], totals[args.against]
    same = "" if dc == db else "  (the games differ: behaviour changed, compare per decision)"
    print(f"{kind:>16}: current/baseline decisions per CPU second = {(dc / cc) / (db / cb):.3f}"
          f"{same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="phase10")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--players", type=int, default=None, help="default: 4 (1 for solitaire)")
    parser.add_argument("--bots", default="random,greedy")
    parser.add_argument("--against", metavar="REV", help="git revision of a baseline engine")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds with --against")
    parser.add_argument("--profile", action="store_true", help="cProfile top 10 by own time")
    args = parser.parse_args()
    if args.players is None:
        args.players = 1 if args.game == "solitaire" else 4
    base = load_engine(args.against) if args.against else None
    for kind in args.bots.split(","):
        if base is not None:
            compare(args, kind, base)
            continue
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        decisions, cpu, wall = bench(meldref, args.game, kind, args.games, args.players)
        if profiler:
            profiler.disable()
        print(line(kind, args.games, decisions, cpu, wall))
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(10)
            print(out.getvalue())


if __name__ == "__main__":
    main()
