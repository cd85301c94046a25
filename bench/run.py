"""The referee's speed in one command: every figure of docs/performance.md, measured in one run.

    python bench/run.py [--quick] [--markdown docs/performance.md] [--only NAMES] [--json PATH]

Prints one JSON line per figure (`{"figure": ..., "value": ..., "unit": ...}`), then the
markdown table (also written to `--markdown`). Every ratio is between figures of this one run:

- `pipe_round_trip`: one line each way between two C processes (bench/c/pipe_pair.c): the
  physical limit of a request and its answer on this machine; measured once at the start, and
  per game in every round of its pipes (`game`), which that game's ratios use;
- `decision_in_process`, `decision_pipes` (per game): the referee's wall time per decision with
  in-process bots and with instant C bots on pipes (bench/c/instant_bot.c), both choosing among
  the legal actions with the same generator, so both play the very same games (checked); the
  bots of a round are started once (untimed) and play all its games, as in a match;
  `pipes_overhead` is their difference, also as a multiple of the round trip;
- `decision_loopback` (per game): the same games through the referee's whole protocol path
  (`TransportSeat`) to instant_bot.c's twin in memory (`Loopback`): no pipe, no system call;
  `pipes_overhead_text` (loopback less in-process: the referee's protocol work) and
  `pipes_overhead_system` (pipes less loopback: system calls, waking and waiting for the bot)
  split the overhead in two; `decision_loopback_trip` the loopback with one real round trip
  a request (a `ping` to instant_bot.c and its `pong`, blocking), and `round_trip_in_loop` its
  time over the loopback's: what one round trip costs inside the referee's loop, against the
  C pair's back to back; `decision_pipes_sleeping` the pipes with reads that sleep at once (no
  look for a quick answer first, as in a pool of as many workers as cores), `look_saves` the
  share of it the look saves;
- `engine_rate` (per game) and `openspiel_rate`: random decisions per CPU second, uniform over
  `legal_actions()`, ours and OpenSpiel's gin rummy (C++ core, the optional `bench` extra),
  interleaved in this process;
- `tournament_rate`: games/s of `run_tournament` with `-j 1` and `-j 2`;
- `rss`: the referee's peak RSS after 100 and after 5,000 games (in a fresh process);
- `solver_worst`: the Five Crowns solver's slowest question on the hardest hands known;
- `profile`: where the referee's time goes through pipes: py-spy's samples with native frames
  (the compiled functions show), each function's share with its callees, when py-spy is
  installed (the `bench` extra); else cProfile, top functions by own time.

The machine is usually shared: each timed figure is the median of several interleaved rounds.
`--quick` keeps the whole run under a minute (fewer games and rounds, RSS after 20 and 500).
The C programs are built with gcc into a temporary folder; without gcc the pipe figures are
skipped with a note.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from report import (
    GAMES,
    PURE,
    README_MARKS,
    Figures,
    markdown,
    readme_block,
    render,
    write_markdown,
    write_readme,
)

from meldref.build import compiled, describe
from meldref.protocol.referee import MatchPolicy
from meldref.protocol.seats import Seat

ROOT = Path(__file__).resolve().parent.parent
C_SOURCES = ROOT / "bench" / "c"
POLICY = MatchPolicy(move_time=10.0, first_move_time=20.0, startup_time=20.0)
LCG_MUL, LCG_ADD, MASK = 6364136223846793005, 1442695040888963407, (1 << 64) - 1


@dataclass(frozen=True)
class Sizes:
    """How much of each figure to measure (`--quick` or the full run)."""

    rounds: int  # interleaved rounds per timed comparison (the median is kept)
    seeds: dict[str, int]  # per game: games per round through the referee
    engine_seconds: float  # CPU seconds per engine and round for decisions/s
    trips: int  # pipe round trips per measurement
    tournament_games: int
    rss_games: tuple[int, int]
    profile_games: int
    solver_climb: int  # hill-climbed hard hands on top of the hand-made ones
    profile_seconds: float = 4.0  # per game, of pipe games sampled by py-spy (when installed)


FULL = Sizes(5, {"phase10": 2, "fivecrowns": 3, "solitaire": 40}, 1.0, 20000, 40, (100, 5000), 1,
             20)
QUICK = Sizes(3, {"phase10": 1, "fivecrowns": 1, "solitaire": 10}, 0.3, 5000, 6, (20, 500), 1,
              0, 1.0)


# ----------------------------------------------------------------------------------------------
# The machine and the C programs


def machine() -> dict[str, Any]:
    """CPU model, cores, Python, and how busy the machine was when the run began."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}", "load": load,
            "command": " ".join(["python bench/run.py", *sys.argv[1:]]), "build": describe()}


def build_c(folder: Path) -> dict[str, Path] | None:
    """bench/c/*.c built with gcc -O2 into `folder`; None if there is no gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    out = {}
    for source in sorted(C_SOURCES.glob("*.c")):
        target = folder / source.stem
        subprocess.run([gcc, "-O2", "-o", str(target), str(source)], check=True)
        out[source.stem] = target
    return out


def pipe_round_trip(program: Path, trips: int) -> float:
    """Microseconds of one line each way between two C processes."""
    run = subprocess.run([str(program), str(trips)], capture_output=True, text=True, check=True)
    return int(run.stdout) / 1000


# ----------------------------------------------------------------------------------------------
# The referee per decision: in-process bots against instant C bots on pipes, the same games


class LcgChoice:
    """The generator of bench/c/instant_bot.c: the same seed picks the same legal lines."""

    def __init__(self, seed: int) -> None:
        self.state = seed

    def index(self, count: int) -> int:
        self.state = (self.state * LCG_MUL + LCG_ADD) & MASK
        return (self.state >> 33) % count


class InstantBot:
    """instant_bot.c inside the referee's process: a legal action by the same generator."""

    name = "instant"

    def __init__(self, seed: int) -> None:
        self.choice = LcgChoice(seed)

    def act(self, view: Any) -> Any:
        actions = view.legal_actions()
        return actions[self.choice.index(len(actions))]


class Loopback:
    """instant_bot.c as a transport in the referee's process: the protocol's whole path (every
    request written as lines, every answer read and parsed as a line) without the pipes, the
    system calls and the other process. It answers a request with one of its `legal` lines by
    the same generator, so it plays the very same games. Its own work is a few interpreted lines
    a request: counted in the loopback's time, so what the pipes add beyond it is if anything
    understated."""

    eof = False
    write_error: str | None = None

    def __init__(self, seed: int, incoming: Callable[..., Any], trip: Path | None = None) -> None:
        self.choice = LcgChoice(seed)
        self.incoming = incoming  # the referee's `Incoming` (its revision's, or pure Python's)
        self.lines: list[Any] = []
        # With `trip` (instant_bot.c): one real round trip a request, a `ping` line to that
        # program and its `pong` read back, blocking, as the pipes wait for an answer.
        self.echo = None if trip is None else subprocess.Popen(
            [str(trip), "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)

    def _round_trip(self) -> None:
        """A `ping` to the C bot and its `pong` read back, blocking (an ended bot: no wait)."""
        assert self.echo is not None and self.echo.stdin and self.echo.stdout
        os.write(self.echo.stdin.fileno(), b"ping 1\n")
        while (got := os.read(self.echo.stdout.fileno(), 64)) and not got.endswith(b"\n"):
            pass

    def send(self, *lines: str, now: bool = True) -> None:
        last = lines[-1]
        if self.echo is not None and last.startswith("go "):
            self._round_trip()
        elif self.echo is not None and last == "quit":
            self.echo.communicate(b"quit\n")
        if last.startswith("go "):  # a request: view, items, legal lines, then `go`
            first = 0
            while not lines[first].startswith("legal "):
                first += 1
            legal = lines[first + self.choice.index(len(lines) - 1 - first)][6:]
            request_id = last[3:last.index(" ", 3)]
            self.lines.append(self.incoming(f"action {request_id} {legal}".encode(), 0.0))
        elif last.startswith("meldref "):
            self.lines.append(self.incoming(b"ready", 0.0))

    def read(self, deadline: float) -> Any:
        return self.lines.pop(0) if self.lines else None

    def pending(self) -> list[Any]:
        lines, self.lines = self.lines, []
        return lines

    def flush(self) -> None:
        pass

    def poll(self) -> None:
        pass

    def drain(self, timeout: float) -> bool:
        return True

    def exit_code(self, wait: float = 0.0) -> int | None:
        return None

    def cpu_time(self) -> float | None:
        return None


def seat_seed(seed: int, seat: int) -> int:
    return seed * 10 + seat


@dataclass(frozen=True)
class Referee:
    """The engine and protocol to measure: this checkout's, or a git revision's (`--against`)."""

    label: str
    package: str  # the package its engine and protocol are imported from
    find_game: Callable[[str], Any]
    play_game: Callable[..., Any]
    close_all: Callable[[Sequence[Any]], None]
    in_process_seat: Callable[[Any], Any]
    process_seat: Callable[[Any], Any]
    bot_command: Callable[..., Any]
    incoming: Callable[..., Any]
    transport_seat: Callable[..., Any] | None  # None: a revision from before `TransportSeat`
    look_before_sleeping: Callable[[bool], None] | None  # None: a revision from before it

    @staticmethod
    def of(label: str, package: str = "meldref") -> Referee:
        import importlib

        referee = importlib.import_module(f"{package}.protocol.referee")
        seats = importlib.import_module(f"{package}.protocol.seats")
        game = importlib.import_module(f"{package}.engine.game")
        channel = importlib.import_module(f"{package}.protocol.channel")
        return Referee(label, package, game.find_game, referee.play_game, referee.close_all,
                       seats.InProcessSeat, seats.ProcessSeat, seats.BotCommand,
                       channel.Incoming, getattr(seats, "TransportSeat", None),
                       getattr(channel, "look_before_sleeping", None))

    def policy(self) -> Any:
        module = sys.modules[self.play_game.__module__]
        return module.MatchPolicy(**POLICY.to_json())


CURRENT = Referee.of("current")


def play_seeds(game_name: str, seats_for: Callable[[int], list[Seat]], seeds: Sequence[int],
               referee: Referee = CURRENT, profiler: cProfile.Profile | None = None,
               keep: bool = False) -> tuple[int, float, float, list[str]]:
    """(decisions, wall and CPU seconds of the referee in `play_game`, every action) over
    `seeds` (the bots' start-up and shutdown excluded, from the profile too). Seats are made
    for each game, or with `keep` once, from the first seed, for every game (as a match keeps
    its bots: a bot program's first moves after it started, its loader's and its pages' work,
    are then paid once, not in every game; a Solitaire game has only 28 decisions)."""
    decisions, spent, cpu, actions = 0, 0.0, 0.0, []
    game, policy = referee.find_game(game_name), referee.policy()
    games = [list(seeds)] if keep else [[seed] for seed in seeds]
    for batch in games:
        seats = seats_for(batch[0])
        try:
            for seat in seats:
                seat.connect(POLICY.startup_time)
            for seed in batch:
                record, wall, used = play_one(game, seats, seed, referee, policy, profiler)
                if record.status != ["ok"] * len(seats):
                    raise RuntimeError(f"{game_name} seed {seed}: {record.faults}")
                spent, cpu = spent + wall, cpu + used
                decisions += record.decisions
                actions += record.actions
        finally:
            referee.close_all(seats)
    return decisions, spent, cpu, actions


def play_one(game: Any, seats: list[Seat], seed: int, referee: Referee, policy: Any,
             profiler: cProfile.Profile | None) -> tuple[Any, float, float]:
    """One game: its record, and the referee's wall and CPU seconds in `play_game`."""
    began, cpu_began = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    record = referee.play_game(game, game.rules(), seats, seed, policy)
    if profiler is not None:
        profiler.disable()
    return record, time.perf_counter() - began, time.process_time() - cpu_began


def in_process_seats(players: int, referee: Referee = CURRENT) -> Callable[[int], list[Seat]]:
    return lambda seed: [referee.in_process_seat(InstantBot(seat_seed(seed, i)))
                         for i in range(players)]


def loopback_seats(players: int, referee: Referee = CURRENT,
                   trip: Path | None = None) -> Callable[[int], list[Seat]]:
    make = referee.transport_seat
    assert make is not None
    return lambda seed: [make(Loopback(seat_seed(seed, i), referee.incoming, trip),
                              f"loopback{i}") for i in range(players)]


def pipe_seats(bot: Path, players: int, referee: Referee = CURRENT) -> Callable[[int], list[Seat]]:
    def make(seed: int) -> list[Seat]:
        return [referee.process_seat(referee.bot_command((str(bot), str(seat_seed(seed, i)))))
                for i in range(players)]

    return make


def per_decision(figures: Figures, sizes: Sizes, bot: Path | None,
                 round_trip: Callable[[], float] | None, games: Sequence[str],
                 referees: Sequence[Referee] = (CURRENT,)) -> None:
    """Per decision, in-process and on pipes, of every referee (interleaved, same games), and
    the raw round trip measured in every round beside them: the machine's speed moves from
    hour to hour, so each game's ratio takes the round trips of its own minutes."""
    for name in games:
        players = GAMES[name]
        seeds = range(1, sizes.seeds[name] + 1)
        ways: dict[tuple[str, str], Callable[[int], list[Seat]]] = {}
        for referee in referees:
            ways[referee.label, "in_process"] = in_process_seats(players, referee)
            if bot is not None:
                ways[referee.label, "pipes"] = pipe_seats(bot, players, referee)
                if referee.look_before_sleeping is not None:
                    ways[referee.label, "pipes_sleeping"] = ways[referee.label, "pipes"]
                if referee.transport_seat is not None:
                    ways[referee.label, "loopback"] = loopback_seats(players, referee)
                    ways[referee.label, "loopback_trip"] = loopback_seats(players, referee,
                                                                          bot)
        by_label = {r.label: r for r in referees}
        costs: dict[tuple[str, str], list[float]] = {way: [] for way in ways}
        cpus: dict[tuple[str, str], list[float]] = {way: [] for way in ways}
        played: dict[tuple[str, str], list[str]] = {}
        trips: list[float] = []
        for r in range(sizes.rounds):
            if round_trip is not None and bot is not None:
                trips.append(round_trip())
            for way in (list(ways) if r % 2 == 0 else list(reversed(ways))):
                look = by_label[way[0]].look_before_sleeping
                if way[1] == "pipes_sleeping" and look is not None:
                    look(False)  # as in a pool of as many workers as cores
                try:
                    decisions, spent, cpu, actions = play_seeds(name, ways[way], seeds,
                                                                by_label[way[0]], keep=True)
                finally:
                    if look is not None:
                        look(True)
                costs[way].append(spent / decisions * 1e6)
                cpus[way].append(cpu / decisions * 1e6)
                played[way] = actions
        if len(set(map(tuple, played.values()))) != 1:
            raise RuntimeError(f"{name}: the referees or seats played different games")
        trip = round(statistics.median(trips), 1) if trips else None
        if trip is not None:
            figures.add("pipe_round_trip", trip, "us", game=name, rounds=len(trips))
        us = {way: statistics.median(c) for way, c in costs.items()}
        cpu_us = {way: statistics.median(c) for way, c in cpus.items()}
        for referee in referees:
            tag = {} if referee is CURRENT else {"referee": referee.label}
            inproc = us[referee.label, "in_process"]
            figures.add("decision_in_process", round(inproc, 1), "us", game=name,
                        players=players, decisions=decisions, **tag)
            piped = us.get((referee.label, "pipes"))
            if piped is not None:
                overhead = piped - inproc
                figures.add("decision_pipes", round(piped, 1), "us", game=name, **tag)
                figures.add("pipes_overhead", round(overhead, 1), "us", game=name,
                            round_trips=round(overhead / trip, 1) if trip else None,
                            **tag)
                # The referee's own CPU: what the machine's other work does not blur.
                cpu_overhead = cpu_us[referee.label, "pipes"] - cpu_us[referee.label,
                                                                       "in_process"]
                figures.add("pipes_overhead_cpu", round(cpu_overhead, 1), "us", game=name,
                            **tag)
                sleeping = us.get((referee.label, "pipes_sleeping"))
                if sleeping is not None:
                    figures.add("decision_pipes_sleeping", round(sleeping, 1), "us", game=name,
                                look_saves=round(1 - piped / sleeping, 3), **tag)
                looped = us.get((referee.label, "loopback"))
                if looped is not None:
                    split_overhead(figures, name, inproc, looped, piped, trip, tag)
                    tripped = us[referee.label, "loopback_trip"]
                    figures.add("decision_loopback_trip", round(tripped, 1), "us", game=name,
                                **tag)
                    figures.add("round_trip_in_loop", round(tripped - looped, 1), "us",
                                game=name, round_trips=round((tripped - looped) / trip, 1)
                                if trip else None, **tag)
        for referee in referees[1:]:
            for way in ("in_process", "pipes"):
                if (referee.label, way) in us:
                    figures.add("speedup", round(us[referee.label, way] / us["current", way], 2),
                                "x", game=name, way=way, against=referee.label)
                    figures.add("speedup", round(cpu_us[referee.label, way]
                                                 / cpu_us["current", way], 2),
                                "x", game=name, way=f"{way} CPU", against=referee.label)


def split_overhead(figures: Figures, name: str, inproc: float, looped: float, piped: float,
                   trip: float | None, tag: dict[str, str]) -> None:
    """The pipes' overhead in two: the referee's protocol work (the loopback's time over the
    in-process one: every request written as lines, every answer read as a line, no system
    call) and what the pipes add beyond it (system calls, waking the bot and waiting for it,
    the bot reading its request): the share no change to the referee's text can remove."""
    figures.add("decision_loopback", round(looped, 1), "us", game=name, **tag)
    for figure, value in (("pipes_overhead_text", looped - inproc),
                          ("pipes_overhead_system", piped - looped)):
        figures.add(figure, round(value, 1), "us", game=name,
                    round_trips=round(value / trip, 1) if trip else None, **tag)


# ----------------------------------------------------------------------------------------------
# The referee's work per decision, piece by piece, on a recorded game


@dataclass
class Recorded:
    """One game's decisions as the referee meets them: per decision the seat's view, the answer
    line an instant bot sends, and the events of the action played (as the referee sends them:
    the public form, and the owner's where it has a private part)."""

    seed: int
    views: list[Any] = field(default_factory=list)
    hints: list[Callable[[], list[str]]] = field(default_factory=list)
    answers: list[bytes] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    events: list[list[Any]] = field(default_factory=list)


def record_game(name: str, seed: int, referee: Referee) -> Recorded:
    game = referee.find_game(name)
    state = game.new_game(game.rules(), GAMES[name], seed)
    bots = [InstantBot(seat_seed(seed, i)) for i in range(GAMES[name])]
    recorded = Recorded(seed)
    while (seat := state.to_move) is not None:
        view = state.observation(seat)
        legal = [str(a) for a in state.legal_actions()]
        action = str(bots[seat].act(view))
        recorded.views.append(view)
        recorded.hints.append(lambda legal=legal: legal)  # type: ignore[misc]
        recorded.answers.append(f"action {len(recorded.actions) + 1} {action}".encode())
        recorded.actions.append(action)
        recorded.events.append(state.apply(state.parse_action(action)))
    return recorded


def timed(work: Callable[[], object], decisions: int, rounds: int) -> float:
    """Microseconds of CPU per decision of `work` (one pass over a recorded game), best of
    `rounds` (the least disturbed by the machine's other work)."""
    best = math.inf
    for _ in range(rounds):
        began = time.process_time()
        work()
        best = min(best, time.process_time() - began)
    return best / decisions * 1e6


def piece_work(name: str, game: Recorded, referee: Referee) -> dict[str, Callable[[], object]]:
    """Each piece of the referee's work per decision, as a pass over the recorded game."""
    import importlib

    viewtext = importlib.import_module(f"{referee.package}.protocol.viewtext")
    wire = importlib.import_module(f"{referee.package}.protocol.wire")
    nobody = importlib.import_module(f"{referee.package}.protocol.referee").NOBODY
    info = referee.find_game(name)
    players = GAMES[name]

    def view() -> None:
        for observation in game.views:
            viewtext.observation_lines(observation)

    def legal() -> None:
        for observation, hints in zip(game.views, game.hints, strict=True):
            viewtext.legal_lines(observation, hints)

    def events() -> None:
        for turn in game.events:
            for e in turn:  # as `Match.tell`: one public line, and the owner's if private
                wire.event_line(wire.EventFields(e.for_seat(nobody)))
                if e.private:
                    wire.event_line(wire.EventFields(e.for_seat(e.seat)))

    def answer() -> None:
        for line in game.answers:
            wire.parse_bot_line(line)

    def rules() -> None:  # the engine's share: parse the answer's action, judge it, play it
        state = info.new_game(info.rules(), players, game.seed)
        for text in game.actions:
            state.apply(state.judge(state.parse_action(text)))

    def clock() -> None:  # one reading of the clock per decision
        for _ in game.actions:
            time.monotonic()

    return {"view": view, "legal": legal, "events": events, "answer": answer,
            "rules": rules, "clock": clock}


def pieces(figures: Figures, sizes: Sizes, games: Sequence[str],
           referees: Sequence[Referee] = (CURRENT,)) -> None:
    """CPU microseconds per decision of each piece of the referee's work (the view's lines, the
    `legal` lines, the events' lines, parsing the answer, the engine judging and playing it,
    a clock reading), for every referee on the same recorded game."""
    for name in games:
        for referee in referees:
            game = record_game(name, 1, referee)
            tag = {} if referee is CURRENT else {"referee": referee.label}
            for piece, work in piece_work(name, game, referee).items():
                figures.add("piece", round(timed(work, len(game.actions), sizes.rounds), 2),
                            "us", game=name, piece=piece, decisions=len(game.actions), **tag)


# ----------------------------------------------------------------------------------------------
# Engines: uniform random decisions per CPU second, ours and OpenSpiel's gin rummy


def random_games(step: Callable[[random.Random], int], seconds: float) -> float:
    """Decisions per CPU second of `step` (one whole game, returning its decisions)."""
    rng = random.Random(1)
    decisions, began = 0, time.process_time()
    while (spent := time.process_time() - began) < seconds:
        decisions += step(rng)
    return decisions / spent


def engine_game(name: str, referee: Referee = CURRENT) -> Callable[[random.Random], int]:
    game, players = referee.find_game(name), GAMES[name]
    rules = game.rules()

    def play(rng: random.Random) -> int:
        state = game.new_game(rules, players, rng.randrange(1 << 30))
        decisions = 0
        while state.to_move is not None:
            state.apply(rng.choice(state.legal_actions()))
            decisions += 1
        return decisions

    return play


def openspiel_game() -> Callable[[random.Random], int] | None:
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")

    def play(rng: random.Random) -> int:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, chances = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, chances)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        return decisions

    return play


def engine_rates(figures: Figures, sizes: Sizes, games: Sequence[str],
                 referees: Sequence[Referee] = (CURRENT,)) -> None:
    steps: dict[str, Callable[[random.Random], int]] = {g: engine_game(g) for g in games}
    for referee in referees[1:]:
        steps.update({f"{g} {referee.label}": engine_game(g, referee) for g in games})
    spiel = openspiel_game()
    if spiel is not None:
        steps["openspiel gin_rummy"] = spiel
    else:
        figures.add("openspiel_rate", None, "decisions/s",
                    note="open_spiel not installed: pip install -e '.[bench]'")
    rates: dict[str, list[float]] = {k: [] for k in steps}
    for r in range(sizes.rounds):
        for key in (list(steps) if r % 2 == 0 else list(reversed(steps))):
            rates[key].append(random_games(steps[key], sizes.engine_seconds))
    base = statistics.median(rates[k]) if (k := "openspiel gin_rummy") in rates else None
    if base is not None:
        figures.add("openspiel_rate", round(base), "decisions/s", game="gin_rummy")
    for name in games:
        rate = statistics.median(rates[name])
        figures.add("engine_rate", round(rate), "decisions/s", game=name,
                    vs_openspiel=round(rate / base, 2) if base else None)
        for referee in referees[1:]:
            old = statistics.median(rates[f"{name} {referee.label}"])
            figures.add("engine_rate", round(old), "decisions/s", game=name,
                        referee=referee.label)
            figures.add("speedup", round(rate / old, 2), "x", game=name, way="engine",
                        against=referee.label)


# ----------------------------------------------------------------------------------------------
# Tournaments: -j 1 against -j 2


def cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (workers, bots)."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def tournament_seconds(specs: Sequence[str], jobs: int, games: int) -> tuple[float, float]:
    """(wall, CPU) seconds of a tournament of `games` Phase 10 games with `jobs` workers."""
    from meldref.engine.game import find_game
    from meldref.protocol.seats import BotSpec
    from meldref.tournament.config import TournamentConfig
    from meldref.tournament.run import open_tournament, run_tournament
    from meldref.tournament.schedule import Plan, bot_entries

    plan = Plan("phase10", tuple(bot_entries([BotSpec.parse(s) for s in specs])),
                players=len(specs), games=games, duplicate=False, seed=7,
                rules=find_game("phase10").rules())
    with tempfile.TemporaryDirectory() as tmp:
        config = TournamentConfig(plan, jobs=jobs, out=Path(tmp) / "t")
        began, cpu = time.perf_counter(), cpu_seconds()
        run = run_tournament(open_tournament(config))
        seconds, cpu = time.perf_counter() - began, cpu_seconds() - cpu
    if run.played != games:
        raise RuntimeError(f"tournament played {run.played} of {games} games")
    return seconds, cpu


def tournament_rates(figures: Figures, sizes: Sizes, bot: Path | None) -> None:
    # README's example: four seats of Phase 10, two of them bot programs (here instant ones).
    cases = {"built-in bots": ["builtin:greedy", "builtin:random"] * 2}
    if bot is not None:
        cases["bot programs"] = ["builtin:greedy", "builtin:random", f"{bot} 1", f"{bot} 2"]
    games = sizes.tournament_games
    for case, specs in cases.items():
        seconds: dict[int, list[float]] = {1: [], 2: []}
        cpus: dict[int, list[float]] = {1: [], 2: []}
        for r in range(max(1, sizes.rounds // 2)):
            for jobs in ((1, 2) if r % 2 == 0 else (2, 1)):
                wall, cpu = tournament_seconds(specs, jobs, games)
                seconds[jobs].append(wall)
                cpus[jobs].append(cpu)
        rate = {j: games / statistics.median(s) for j, s in seconds.items()}
        cpu_ms = {j: statistics.median(c) / games * 1000 for j, c in cpus.items()}
        # The CPU a game costs, all processes together: what running in parallel adds, whatever
        # else the machine is doing (the wall-clock speedup needs two idle cores).
        for jobs in (1, 2):
            figures.add("tournament_rate", round(rate[jobs], 2), "games/s", bots=case, jobs=jobs,
                        cpu_ms_per_game=round(cpu_ms[jobs], 1),
                        **({"speedup": round(rate[2] / rate[1], 2),
                            "cpu_ratio": round(cpu_ms[2] / cpu_ms[1], 2)} if jobs == 2 else {}))


# ----------------------------------------------------------------------------------------------
# Memory: the referee's peak RSS as games go by (in a fresh process)

# The peak is VmHWM, this process image's own: ru_maxrss starts a child at its parent's peak.
RSS_SCRIPT = """
import resource, sys, tempfile
from pathlib import Path
from meldref.engine.solitaire import SolitaireRules
from meldref.protocol.seats import BotSpec
from meldref.tournament.runner import run_job
from meldref.tournament.schedule import BotEntry, GameJob

def peak_kib():
    try:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

bots = (BotEntry("bot", BotSpec.parse(sys.argv[1])),)
checkpoints = [int(x) for x in sys.argv[2:]]
with tempfile.TemporaryDirectory() as tmp:
    for n in range(1, checkpoints[-1] + 1):
        job = GameJob(n, f"g{n}", "solitaire", SolitaireRules(), n, n, bots)
        line = run_job(job, Path(tmp))
        assert line.ok, line
        Path(tmp, str(line.replay)).unlink()
        if n in checkpoints:
            print(n, peak_kib(), flush=True)
"""


def rss(figures: Figures, sizes: Sizes, bot: Path | None) -> None:
    """Peak RSS of a fresh process playing Solitaire games through `run_job` (a replay written
    per game), with a bot program (started and stopped every game) or without gcc the
    built-in random bot."""
    spec = f"{bot} 1" if bot is not None else "builtin:random"
    run = subprocess.run([sys.executable, "-c", RSS_SCRIPT, spec, *map(str, sizes.rss_games)],
                         capture_output=True, text=True, check=True)
    peaks = dict(tuple(map(int, line.split())) for line in run.stdout.split("\n") if line)
    first, last = sizes.rss_games
    seat = "bot program" if bot is not None else "builtin:random"
    figures.add("rss", round(peaks[first] / 1024, 1), "MiB", games=first, seat=seat)
    figures.add("rss", round(peaks[last] / 1024, 1), "MiB", games=last, seat=seat,
                growth=round(peaks[last] / peaks[first] - 1, 3))


# ----------------------------------------------------------------------------------------------
# The solver's worst case and the profile


def solver_worst(figures: Figures, sizes: Sizes) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_solver

    for question, ms, hand, wild in bench_solver.worst_cases(climb=sizes.solver_climb):
        figures.add("solver_worst", round(ms, 2), "ms", question=question, hand=hand, wild=wild)


def profile(figures: Figures, sizes: Sizes, bot: Path | None, games: Sequence[str],
            top: int = 6) -> None:
    """Where the referee's time goes through pipes: py-spy's samples of the compiled build's
    own functions when py-spy is installed (the `bench` extra), else cProfile's own time by
    function (which sees a compiled module's function as one built-in)."""
    for name in games:
        sampled = sampled_profile(name, bot, sizes.profile_seconds) if bot is not None else None
        if sampled is not None:
            samples, shares = sampled
            for where, share in shares[:top + 4]:
                figures.add("profile", share, "%", game=name, function=where, pipes=True,
                            sampler="py-spy", samples=samples)
            continue
        players = GAMES[name]
        seats_for = (pipe_seats(bot, players) if bot is not None
                     else in_process_seats(players))
        profiler = cProfile.Profile(time.process_time)  # the referee's CPU, not its waits
        play_seeds(name, seats_for, range(1, sizes.profile_games + 1), profiler=profiler)
        stats = pstats.Stats(profiler, stream=io.StringIO())
        total = stats.total_tt  # type: ignore[attr-defined]
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
        for (path, line, func), (_, _, own, _, _) in rows[:top]:
            where = f"{Path(path).name}:{line} {func}" if line else func
            figures.add("profile", round(own / total * 100, 1), "%", game=name, function=where,
                        pipes=bot is not None)


# A child that plays pipe games for about `seconds` while py-spy samples it.
_SAMPLED_CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {bench!r})
import run
seats, began, seed = run.pipe_seats(Path({bot!r}), {players}), time.monotonic(), 1
while time.monotonic() - began < {seconds}:
    run.play_seeds({game!r}, seats, [seed])
    seed += 1
"""
SYSTEM_CALLS = ("poll", "write", "readv", "read")
ALWAYS = {"referee.play_game", "referee._Referee.play", "referee._Referee.loop"}


def sampled_profile(game: str, bot: Path, seconds: float
                    ) -> tuple[int, list[tuple[str, float]]] | None:
    """The samples inside `play_game` and their shares (a function's with its callees, in %),
    largest first, of a child playing `game` through pipes for `seconds`, sampled by py-spy with
    native frames (mypyc's functions are C functions, named `CPyDef_module___Class___name`);
    None without py-spy or when it cannot sample (no permission to trace)."""
    spy = shutil.which("py-spy")
    if spy is None:
        return None
    code = _SAMPLED_CHILD.format(bench=str(ROOT / "bench"), bot=str(bot), game=game,
                                 players=GAMES[game], seconds=seconds)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "stacks.txt"
        done = subprocess.run([spy, "record", "--native", "--rate", "200", "--format", "raw",
                               "--output", str(out), "--", sys.executable, "-c", code],
                              capture_output=True, text=True)
        if done.returncode != 0 or not out.exists():
            return None
        return stack_shares(out.read_text())


def stack_shares(raw: str) -> tuple[int, list[tuple[str, float]]]:
    """py-spy's raw output (`frame;frame;... count` a line, outermost first) as the number of
    samples inside `play_game` and the share of them that each of meldref's functions, or a
    system call at the top of the stack, was on, largest first (the loop that every sample
    is in left out)."""
    counts: dict[str, int] = {}
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        names = [_frame_name(f) for f in stack.split(";")]
        if "referee.play_game" not in names or not count.isdigit():
            continue
        total += int(count)
        leaf = stack.split(";")[-1].split(" (")[0].lstrip("_")
        seen = {n for n in names if n is not None and n not in ALWAYS}
        if leaf in SYSTEM_CALLS:
            seen.add(f"system call {leaf}")
        for name in seen:
            counts[name] = counts.get(name, 0) + int(count)
    if not total:
        return 0, []
    shares = [(name, round(100 * n / total, 1)) for name, n in counts.items()]
    return total, sorted(shares, key=lambda s: (-s[1], s[0]))


def _frame_name(frame: str) -> str | None:
    """`module.Class.function` of a meldref frame: a compiled one (`CPyDef_...`) or a Python
    one (`function (meldref/.../module.py:line)`); None for any other frame."""
    function, _, where = frame.partition(" (")
    if function.startswith("CPyDef_"):
        return ".".join(function[len("CPyDef_"):].split(".")[0].split("___"))
    if "meldref/" in where and ".py:" in where:
        module = where.rsplit("/", 1)[-1].split(".py:")[0]
        return f"{module}.{function}"
    return None


# ----------------------------------------------------------------------------------------------

PARTS = ("pipes", "pieces", "engines", "tournament", "rss", "solver", "profile")


def run(sizes: Sizes, parts: Sequence[str], games: Sequence[str], figures: Figures,
        folder: Path, referees: Sequence[Referee] = (CURRENT,)) -> None:
    """Every figure of `parts`, C programs built in `folder`."""
    programs = build_c(folder)
    bot = programs["instant_bot"] if programs else None
    if programs is None:
        figures.add("pipe_round_trip", None, "us", note="no gcc: pipe figures skipped")
    if "pipes" in parts:
        trip: Callable[[], float] | None = None
        if programs is not None:
            pair = programs["pipe_pair"]
            trips = [pipe_round_trip(pair, sizes.trips) for _ in range(2 * sizes.rounds + 1)]
            figures.add("pipe_round_trip", round(statistics.median(trips), 1), "us")

            def trip() -> float:
                return pipe_round_trip(pair, sizes.trips)
        per_decision(figures, sizes, bot, trip, games, referees)
    steps: dict[str, Callable[[], None]] = {
        "pieces": lambda: pieces(figures, sizes, games, referees),
        "engines": lambda: engine_rates(figures, sizes, games, referees),
        "tournament": lambda: tournament_rates(figures, sizes, bot),
        "rss": lambda: rss(figures, sizes, bot),
        "solver": lambda: solver_worst(figures, sizes),
        "profile": lambda: profile(figures, sizes, bot, games),
    }
    for part, step in steps.items():
        if part in parts:
            step()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a run under a minute")
    parser.add_argument("--markdown", type=Path, help="write the table to this file")
    parser.add_argument("--json", type=Path, help="also write the JSON lines to this file")
    parser.add_argument("--readme", type=Path, help="also write the short table into this "
                        f"file (README.md) between {README_MARKS[0]} and {README_MARKS[1]}")
    parser.add_argument("--only", default=",".join(PARTS), help=f"parts: {','.join(PARTS)}")
    parser.add_argument("--games", default=",".join(GAMES), help="games to measure")
    parser.add_argument("--rounds", type=int, help="interleaved rounds of each timed "
                        "comparison (default 5, 3 with --quick): more on a busy machine")
    parser.add_argument("--against", metavar="REV", help="also measure the engine and protocol "
                        "of git revision REV, interleaved (pipes and engines): the speedups")
    parser.add_argument("--no-pure", action="store_true", help="measure the compiled build "
                        "alone (by default its sources also run as pure Python beside it)")
    parser.add_argument("--from-json", type=Path, metavar="PATH", help="measure nothing: write "
                        "the table of an earlier run's JSON lines (--json PATH)")
    args = parser.parse_args(argv)
    parts = args.only.split(",")
    games = args.games.split(",")
    unknown = (set(parts) - set(PARTS)) | (set(games) - set(GAMES))
    if unknown:
        parser.error(f"unknown parts or games: {', '.join(sorted(unknown))}")
    if args.from_json:
        return render(args.from_json, args.markdown, args.readme)
    sizes = QUICK if args.quick else FULL
    if args.rounds is not None:
        if args.rounds < 1:
            parser.error("--rounds must be at least 1")
        sizes = replace(sizes, rounds=args.rounds)
    figures = Figures()
    info = machine()
    figures.add("machine", info, "")
    began = time.perf_counter()
    referees = [CURRENT]
    if compiled() and not args.no_pure:
        from bench_engine import load_pure

        package = load_pure(("engine", "protocol", "bots"))
        referees.append(Referee.of(PURE, package.__name__))
    if args.against:
        from bench_engine import load_revision

        package = load_revision(args.against, ("engine", "protocol", "bots"))
        referees.append(Referee.of(args.against, package.__name__))
    with tempfile.TemporaryDirectory(prefix="meldref-bench-") as tmp:
        run(sizes, parts, games, figures, Path(tmp), referees)
    figures.add("run_time", round(time.perf_counter() - began, 1), "s")
    table = markdown(figures, info)
    print(table)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        write_markdown(args.markdown, table)
    if args.json:
        args.json.write_text("".join(json.dumps(r) + "\n" for r in figures.rows))
    if args.readme:
        write_readme(args.readme, readme_block(figures, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
