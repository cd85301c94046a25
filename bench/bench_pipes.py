"""What a decision through pipes costs meldref, against the floor of the same work.

    python bench/bench_pipes.py [--quick] [--rounds N] [--games phase10,...] [--json PATH]

Three ways per game, interleaved round by round, every process pinned to one core (the
referee's, which its bots inherit: a wake-up of the bot then costs a switch on that core, not
an idle core's wake-up, so scheduling hides no CPU cost):

- `floor`: bench/c/floor_referee.c writes the very bytes meldref writes to its bots in the
  same games (recorded once through the referee's whole protocol path, `Loopback`), one write
  where meldref makes one, and reads each answer back, to bench/c/instant_bot.c processes: the
  work of the pipes themselves, in C;
- `pipes`: meldref's referee with instant_bot.c programs on pipes;
- `in_process`: meldref's referee with instant_bot.c's twin in memory (`InstantBot`).

Both meldref ways play the very same games (checked). Printed per game, per decision, wall
and the referee's CPU: each way, meldref's overhead (`pipes` less `in_process`) and that over
the floor (the target: at most 3). Each figure is the median over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from report import GAMES
from run import (
    CURRENT,
    FULL,
    QUICK,
    Loopback,
    build_c,
    in_process_seats,
    machine,
    pipe_seats,
    play_one,
    play_seeds,
    seat_seed,
)

TARGET = 3.0  # the overhead at most this many times the floor


@dataclass
class Recording:
    """The referee's pipe traffic in order: ('W', seat, bytes) one write to a seat's bot,
    ('R', seat, count) lines taken from it."""

    entries: list[tuple[str, int, bytes | int]] = field(default_factory=list)
    decisions: int = 0

    def write(self, seat: int, data: bytes) -> None:
        if data:
            self.entries.append(("W", seat, data))

    def read(self, seat: int, count: int) -> None:
        if count:
            self.entries.append(("R", seat, count))

    def encode(self, game: str, seats: int) -> bytes:
        out = [f"meldref-floor 1 {game} {seats} {self.decisions}\n".encode()]
        for kind, seat, value in self.entries:
            size = len(value) if isinstance(value, bytes) else value
            out.append(kind.encode() + bytes([seat]) + size.to_bytes(4, "little"))
            if isinstance(value, bytes):
                out.append(value)
        return b"".join(out)

    def request_bytes(self) -> float:
        """Mean bytes of a write that carries a request (its view, legal lines, `go`, and the
        events queued before it)."""
        sizes = [len(v) for kind, _, v in self.entries
                 if isinstance(v, bytes) and (v.startswith(b"go ") or b"\ngo " in v)]
        return statistics.mean(sizes) if sizes else 0.0

    def total_bytes(self) -> int:
        return sum(len(v) for _, _, v in self.entries if isinstance(v, bytes))


class Recorder(Loopback):
    """`Loopback` that notes each write the referee's pipes would make (the lines of a send
    with `now`, after what waited for it; a flush) and each line the referee takes."""

    def __init__(self, seed: int, incoming: Callable[..., Any], seat: int,
                 recording: Recording) -> None:
        super().__init__(seed, incoming)
        self.seat, self.recording, self.queued = seat, recording, b""
        self.games = 0

    def send(self, *lines: str, now: bool = True) -> None:
        if lines and lines[0].startswith("game "):
            self.games += 1
            if self.games > 1:  # a bot program is asked whether it plays on (`ProcessSeat`)
                self.recording.write(self.seat, b"ping 1\n")
                self.recording.read(self.seat, 1)
        data = ("\n".join(lines) + "\n").encode() if lines else b""
        self.queued += data
        if now:
            self.flush()
        if lines and lines[-1].startswith("go "):
            self.recording.decisions += 1
        super().send(*lines, now=now)

    def flush(self) -> None:
        self.recording.write(self.seat, self.queued)
        self.queued = b""

    def read(self, deadline: float) -> Any:
        got = super().read(deadline)
        if got is not None:
            self.recording.read(self.seat, 1)
        return got

    def pending(self) -> list[Any]:
        lines = super().pending()
        self.recording.read(self.seat, len(lines))
        return lines


def record(game: str, seeds: Sequence[int]) -> tuple[Recording, list[str]]:
    """The referee's pipe traffic over `seeds` (bots kept from game to game, as `pipes`), from
    its handshake's end to before its goodbye, and the actions played."""
    recording = Recording()
    players = GAMES[game]
    make = CURRENT.transport_seat
    assert make is not None

    def seats(seed: int) -> list[Any]:
        return [make(Recorder(seat_seed(seed, i), CURRENT.incoming, i, recording),
                     "instant_bot") for i in range(players)]  # as the C bot names itself

    # The handshake is the floor's own (untimed): only what follows it is replayed.
    def connected(seed: int) -> list[Any]:
        made = seats(seed)
        for seat in made:
            seat.connect(10.0)
        recording.entries.clear()
        return made

    _, _, _, actions = play_seeds(game, connected, seeds, keep=True)
    while recording.entries and recording.entries[-1][0] == "W" \
            and recording.entries[-1][2] == b"quit\n":
        recording.entries.pop()  # the goodbyes: the floor says its own
    return recording, actions


Timing = tuple[float, float, float]  # per decision, microseconds: wall, referee CPU, bots' CPU


def floor(program: Path, bot: Path, recording_path: Path, passes: int) -> Timing:
    """The C floor replaying a recording, per decision."""
    run = subprocess.run([str(program), str(recording_path), str(bot), str(passes)],
                         capture_output=True, text=True, check=True)
    words = run.stdout.split()
    got = dict(zip(words[::2], map(int, words[1::2]), strict=True))
    per = got["decisions"] * 1000
    return got["wall_ns"] / per, got["cpu_ns"] / per, got["bots_cpu_ns"] / per


def ran_ns(pid: int) -> int:
    """Nanoseconds process `pid` and its descendants have run on a CPU (Linux's schedstat;
    0 elsewhere): a bot program runs as the child of meldref's launcher."""
    try:
        ran = int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (OSError, ValueError, IndexError):
        return 0
    return ran + sum(ran_ns(int(child)) for child in children)


def bots_ns(seats: Sequence[Any]) -> int:
    return sum(ran_ns(seat.process.pid) for seat in seats
               if getattr(seat, "process", None) is not None)


def play(game_name: str, make: Callable[[int], list[Any]], seeds: Sequence[int]
         ) -> tuple[Timing, list[str]]:
    """`run.play_seeds` with the bots kept, and the bot programs' CPU counted too."""
    game, policy = CURRENT.find_game(game_name), CURRENT.policy()
    seats = make(seeds[0])
    decisions, wall, cpu, bots, actions = 0, 0.0, 0.0, 0, []
    try:
        for seat in seats:
            seat.connect(10.0)
        for seed in seeds:
            before = bots_ns(seats)
            record, spent, used = play_one(game, seats, seed, CURRENT, policy, None)
            bots += bots_ns(seats) - before
            if record.status != ["ok"] * len(seats):
                raise RuntimeError(f"{game_name} seed {seed}: {record.faults}")
            decisions, wall, cpu = decisions + record.decisions, wall + spent, cpu + used
            actions += record.actions
    finally:
        CURRENT.close_all(seats)
    return (wall / decisions * 1e6, cpu / decisions * 1e6, bots / decisions / 1000), actions


def measure(game: str, seeds: Sequence[int], rounds: int, programs: dict[str, Path],
            folder: Path) -> dict[str, Any]:
    """One game's figures: every way per round, interleaved, medians kept."""
    recording, recorded_actions = record(game, seeds)
    path = folder / f"{game}.floor"
    path.write_bytes(recording.encode(game, GAMES[game]))
    bot = programs["instant_bot"]
    ways: dict[str, Callable[[], Timing]] = {}
    played: dict[str, list[str]] = {"recorded": recorded_actions}

    def meldref(name: str, make: Callable[[int], list[Any]]) -> Callable[[], Timing]:
        def run() -> Timing:
            timing, played[name] = play(game, make, seeds)
            return timing
        return run

    ways["floor"] = lambda: floor(programs["floor_referee"], bot, path, 1)
    ways["pipes"] = meldref("pipes", pipe_seats(bot, GAMES[game]))
    ways["in_process"] = meldref("in_process", in_process_seats(GAMES[game]))
    runs: dict[str, list[Timing]] = {way: [] for way in ways}
    for r in range(rounds):
        for way in list(ways) if r % 2 == 0 else list(reversed(ways)):
            runs[way].append(ways[way]())
    if len({tuple(actions) for actions in played.values()}) != 1:
        raise RuntimeError(f"{game}: the ways played different games")
    wall, cpu, tree = ({way: statistics.median(t[i] for t in v) for way, v in runs.items()}
                       for i in range(3))
    for way in tree:
        tree[way] = statistics.median(t[1] + t[2] for t in runs[way])
    over_wall = wall["pipes"] - wall["in_process"]
    over_cpu = cpu["pipes"] - cpu["in_process"]
    over_tree = tree["pipes"] - tree["in_process"]
    return {
        "game": game, "decisions": recording.decisions, "rounds": rounds,
        "request_bytes": round(recording.request_bytes()),
        "bytes_per_decision": round(recording.total_bytes() / recording.decisions),
        "writes_per_decision": round(sum(e[0] == "W" for e in recording.entries)
                                     / recording.decisions, 2),
        **{f"{way}_us": round(v, 2) for way, v in wall.items()},
        **{f"{way}_cpu_us": round(v, 2) for way, v in cpu.items()},
        **{f"{way}_all_cpu_us": round(v, 2) for way, v in tree.items()},
        "overhead_us": round(over_wall, 2), "overhead_cpu_us": round(over_cpu, 2),
        "overhead_all_cpu_us": round(over_tree, 2),
        "ratio": round(over_wall / wall["floor"], 2),
        "ratio_all_cpu": round(over_tree / tree["floor"], 2),
    }


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Per game: wall time per decision of each way, meldref's overhead over the floor's; the
    same in CPU time of the referee and its bots together (what other work on the core does
    not add to)."""
    head = ("| game | bytes a request | floor (C) | meldref in-process | meldref pipes | "
            "overhead | over the floor | CPU: floor, overhead | over the floor, CPU |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    return head + "".join(
        f"| {r['game']} | {r['request_bytes']:,} | {r['floor_us']:.1f} us | "
        f"{r['in_process_us']:.1f} us | {r['pipes_us']:.1f} us | {r['overhead_us']:.1f} us | "
        f"{r['ratio']:.1f}x | {r['floor_all_cpu_us']:.1f} us, {r['overhead_all_cpu_us']:.1f} us"
        f" | {r['ratio_all_cpu']:.1f}x |\n" for r in rows)


def pin() -> int | None:
    """Pin this process (and so the bots it starts) to its first allowed core."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return core


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer games and rounds")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (medians kept)")
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated games")
    parser.add_argument("--seeds", type=int, help="games a round, per game")
    parser.add_argument("--no-pin", action="store_true", help="leave the cores to the system")
    parser.add_argument("--json", type=Path, help="append the figures here as JSON lines")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    rounds = args.rounds or sizes.rounds
    core = None if args.no_pin else pin()
    with tempfile.TemporaryDirectory() as tmp:
        programs = build_c(Path(tmp))
        if programs is None:
            print("no gcc: nothing to measure", file=sys.stderr)
            return 1
        about = {**machine(), "pinned_to": core,
                 "command": " ".join(["python bench/bench_pipes.py", *sys.argv[1:]])}
        print(json.dumps(about))
        rows = []
        for game in args.games.split(","):
            seeds = range(1, (args.seeds or sizes.seeds[game]) + 1)
            rows.append(measure(game, seeds, rounds, programs, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
    if args.json is not None:
        with args.json.open("a", encoding="utf-8") as out:
            for row in [about, *rows]:
                out.write(json.dumps(row) + "\n")
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
