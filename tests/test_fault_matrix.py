"""The fault matrix (issue 43): every fault class of spec/PROTOCOL.md section 7, committed by
a bot program beside innocent bot programs, with and without the sandbox, at 2, 3 and 4
seats, through each command that seats bot programs: `meldref match --replay`, `meldref
tournament -j 2 --out` and `meldref contest run`.

The culprit is tests/bots/culprit_bot.py (one fault per mode, at a chosen point of each game);
the innocents are bots/random_bot.py, tests/bots/bad_bot.py `good` and, at 4 seats, a second
random_bot under another name. Every run is checked the same way (`check`): the culprit alone
is charged, only with its own fault, and forfeits (last place) for a final one; every
innocent has no fault and is never suspended; every game asked is recorded (none ends as the
referee's error); every replay passes `meldref replay verify` and holds nothing of the
culprit's stderr; no bot process is left once the command returned.

Where it runs: `DEFAULT` is a covering subset, in the default run (every fault class in every
command, and with and without the sandbox; every seat count in every command:
`test_the_default_run_covers_the_matrix` proves it). `LONG` is the whole product, each class
x sandbox x seats x command, under `-m slow` (`pytest -m slow tests/test_fault_matrix.py`).
Runs put several culprits in one field where each is still checked on its own: a tournament
at 2 seats is a gauntlet of random_bot against every other bot, so each culprit sits with
random_bot alone; at 4 seats two culprits sit with two innocents; a contest takes all the
culprits of a game at once, and places each against the ladder's top (an innocent: they are
named to sort first, and win)."""

from __future__ import annotations

import gzip
import json
import math
import re
import sqlite3
import subprocess
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import BAD_BOT_PATH, PYTHON, RANDOM_BOT_PATH, ROOT, TESTS, command, pids_with, wait_for
from typer.testing import CliRunner

from meldref.cli import app
from meldref.contest.settings import SUSPEND_AFTER
from meldref.protocol.sandbox import sandbox_problem
from meldref.verdicts.seatings import seatings

CULPRIT_PATH = TESTS / "bots" / "culprit_bot.py"
STDERR_MARK = "culprit-stderr-mark-5f1c"  # what tests/bots/culprit_bot.py writes to stderr
NO_SANDBOX = sandbox_problem()
# Answering bots get patience they meet under any load (a decision's time and the bank);
# a culprit that times out or stalls costs that much wall time, and no CPU.
CLOCK = ["--move-time", "0.3", "--first-move-time", "0.3", "--time-bank", "1.2"]
# Tiny games, each seat certain of a turn: one hand of Phase 10 (one phase wins, at most 12
# turns), every round of Five Crowns one turn a seat.
RULES = {"phase10": ["phases-to-win=1", "hand-cap=1", "turn-cap=12"],
         "fivecrowns": ["turn-cap=1"]}
MATCH_GAMES = 2  # the seats rotate; a kept process meets a second game
runner = CliRunner()


@dataclass(frozen=True, slots=True)
class Charge:
    """What a culprit is charged with in a game: `final`, the outcome of its final fault (then
    it forfeits), with `notes`, the non-final outcomes it may get on the way; `final` None:
    nothing at all (a process that ends between games is restarted, never charged).
    `certain`: charged in some game of every run it plays (else it may get away)."""

    final: str | None
    notes: frozenset[str] = frozenset()
    certain: bool = True


CHARGES = {
    "crash@draw": Charge("crashed"),
    "crash@play": Charge("crashed"),
    "crash@discard": Charge("crashed"),
    "crash@between": Charge(None),
    "exit@gameover": Charge(None),
    "silent": Charge("stalled"),
    "garbage": Charge("malformed", frozenset({"malformed"})),
    "flood": Charge("malformed", frozenset({"late"})),
    "close_stdout": Charge("closed"),
    "slow": Charge("timeout", frozenset({"late"})),
}
LEAVERS = {"crash@between", "exit@gameover"}  # end their process between two games
# The fault classes: a crash at each decision kind of each game, the rest in Phase 10.
# (In this order, the two that wait out deadlines sit at one table of 4 seats.)
CLASSES = {"phase10": ("crash@draw", "crash@play", "crash@between", "exit@gameover", "silent",
                       "slow", "garbage", "flood", "close_stdout"),
           "fivecrowns": ("crash@draw", "crash@discard")}
COMMANDS = ("match", "tournament", "contest")
SEATS = (2, 3, 4)


@dataclass(frozen=True, slots=True)
class Run:
    """One command run: which command, game, table size, sandbox, and its culprits."""

    command: str
    game: str
    seats: int
    sandbox: bool
    culprits: tuple[str, ...]

    @property
    def id(self) -> str:
        return (f"{self.command}-{self.game}-{self.seats}p-"
                f"{'sandbox' if self.sandbox else 'plain'}-{'+'.join(self.culprits)}")

    def param(self, *marks: pytest.MarkDecorator) -> object:
        skip = [pytest.mark.skipif(NO_SANDBOX is not None,
                                   reason=f"no sandbox here: {NO_SANDBOX}")] if self.sandbox else []
        return pytest.param(self, id=self.id, marks=[*skip, *marks])


def groups(command: str, seats: int, classes: Sequence[str]) -> list[tuple[str, ...]]:
    """The culprits of each run of one command, table size and game: alone at a match's 2
    or 3 seats and a tournament's 3, two with two innocents at 4 seats, all at once at a
    tournament's 2 seats (a gauntlet: each meets random_bot alone) and in a contest."""
    if command == "contest" or (command == "tournament" and seats == 2):
        return [tuple(classes)]
    if seats == 4:
        return [tuple(classes[k:k + 2]) for k in range(0, len(classes), 2)]
    return [(c,) for c in classes]


LONG = [Run(command, game, seats, sandbox, culprits)
        for sandbox in (False, True) for command in COMMANDS for seats in SEATS
        for game, classes in CLASSES.items() for culprits in groups(command, seats, classes)]
DEFAULT = [
    # The issue's own finding first: a sandboxed crash beside a program, with a replay.
    Run("match", "phase10", 2, True, ("crash@draw",)),
    Run("match", "phase10", 3, True, ("close_stdout",)),
    *[Run("match", "phase10", 4, True, pair) for pair in groups("match", 4, CLASSES["phase10"])],
    Run("match", "fivecrowns", 4, True, CLASSES["fivecrowns"]),
    Run("match", "phase10", 2, False, ("crash@play",)),
    Run("match", "phase10", 3, False, ("garbage",)),
    Run("tournament", "phase10", 2, True, CLASSES["phase10"]),
    Run("tournament", "phase10", 2, False, CLASSES["phase10"]),
    Run("tournament", "phase10", 3, True, ("crash@draw",)),
    Run("tournament", "fivecrowns", 4, True, CLASSES["fivecrowns"]),
    Run("contest", "phase10", 2, True, CLASSES["phase10"]),
    Run("contest", "fivecrowns", 3, False, CLASSES["fivecrowns"]),
    Run("contest", "phase10", 4, True, ("crash@play",)),
]


# ----------------------------------------------------------------------------------------------
# What a run left, read the same way for every command


@dataclass(frozen=True, slots=True)
class SeatSeen:
    name: str
    status: str  # the seat's status in the game: ok, forfeit, autoplayed
    place: int
    faults: tuple[tuple[str, bool], ...]  # (outcome, fatal)


@dataclass(frozen=True, slots=True)
class GameSeen:
    id: str
    status: str  # ok, or the referee's own error
    seats: tuple[SeatSeen, ...]
    replay: Path


@dataclass(frozen=True, slots=True)
class Seen:
    games: list[GameSeen]
    asked: int  # the games the command was asked for (a contest: those it gave out)
    culprits: dict[str, Charge]  # a culprit's name in the results -> what it may be charged
    innocents: set[str]
    replays: list[Path]  # every replay file the run left
    suspended: set[str] | None = None  # a contest's versions suspended (by name)


def replay_text(path: Path) -> str:
    """A replay's text, read through gzip where it is stored so (a contest's)."""
    data = path.read_bytes()
    return (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")


def seen_game(line: dict[str, Any], replay: Path) -> GameSeen:
    """A game from its result line (a match's `--json` game, a tournament's or contest's
    results line; a game the referee could not finish has no seats' results)."""
    names = line["bots"] if "bots" in line else line["seats"]  # a match's game: "seats"
    faults = line.get("faults") or [[] for _ in names]
    status = line.get("seat_status") or ["?" for _ in names]
    places = line.get("places") or [0 for _ in names]
    seats = tuple(SeatSeen(n, s, p, tuple((f["outcome"], f["fatal"]) for f in fs))
                  for n, s, p, fs in zip(names, status, places, faults, strict=True))
    return GameSeen(line["game_id"], line["status"], seats, replay)


# ----------------------------------------------------------------------------------------------
# The commands


def meldref(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([PYTHON, "-m", "meldref", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, f"meldref {' '.join(args)}\n{done.stdout}\n{done.stderr}"
    return done


def cli(*args: str) -> str:
    """`meldref ARGS` in this process, for the commands that only check a bot (a contest's
    `submit`): no interpreter to start."""
    done = runner.invoke(app, list(args))
    assert done.exit_code == 0, f"meldref {' '.join(args)}\n{done.output}"
    return done.stdout


def culprit_name(mode: str) -> str:
    return f"culprit-{mode}"


def charged(run: Run) -> dict[str, Charge]:
    return {culprit_name(m): CHARGES[m] for m in run.culprits}


def innocents(token: str, count: int) -> list[tuple[str, str]]:
    """(name, command) of `count` innocent bot programs, each naming the token."""
    out = [("random_bot", command(RANDOM_BOT_PATH, token)),
           ("bad-good", command(BAD_BOT_PATH, "good", token))]
    out += [(f"random-{k}", command(RANDOM_BOT_PATH, "--name", f"random-{k}", token))
            for k in range(2, count)]
    return out[:count]


def rules(run: Run) -> list[str]:
    return [w for rule in RULES[run.game] for w in ("--rules", rule)]


def play_match(run: Run, token: str, folder: Path) -> Seen:
    good = innocents(token, run.seats - len(run.culprits))
    bots = [*(command(CULPRIT_PATH, m, token) for m in run.culprits), *(c for _, c in good)]
    out = folder / "replays"
    done = meldref("match", run.game, *[w for b in bots for w in ("--bot", b)], *rules(run),
                   "--seed", "11", "--games", str(MATCH_GAMES), "--replay", str(out), "--json",
                   *CLOCK, *(["--sandbox"] if run.sandbox else []))
    games = [seen_game(g, Path(g["replay"])) for g in json.loads(done.stdout)["games"]]
    for mode in set(run.culprits) & LEAVERS:  # exercised: a new process (session) every game
        logs = sorted(out.glob(f"logs/*/*-{culprit_name(mode).replace('@', '_')}.stderr"))
        firsts = [log.read_text().splitlines()[0].split()[-1] for log in logs]
        assert firsts == ["1"] * MATCH_GAMES, (mode, firsts)  # its first request id
    return Seen(games, MATCH_GAMES, charged(run), {n for n, _ in good},
                sorted(out.glob("*.jsonl")))


def play_tournament(run: Run, token: str, folder: Path) -> Seen:
    # At 2 seats a gauntlet of random_bot against the rest: each culprit meets it alone.
    good = innocents(token, max(2, run.seats - len(run.culprits)))
    bots = [good[0][1], *(command(CULPRIT_PATH, m, token) for m in run.culprits),
            *(c for _, c in good[1:])]
    gauntlet = run.seats == 2
    tables = len(bots) - 1 if gauntlet else math.comb(len(bots), run.seats)
    out = folder / "t"
    done = meldref("tournament", "--game", run.game, "-n", str(run.seats),
                   *[w for b in bots for w in ("--bot", b)], *rules(run), "--games", "1",
                   "-j", "2", "--seed", "11", "--out", str(out), "--no-progress", "--json",
                   *(["--format", "gauntlet"] if gauntlet else []), *CLOCK,
                   *(["--sandbox"] if run.sandbox else []))
    summary = json.loads(done.stdout)
    assert summary["missing"] == 0, summary
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return Seen([seen_game(x, out / x["replay"]) for x in lines],
                tables * len(seatings(run.seats)), charged(run), {n for n, _ in good},
                sorted((out / "replays").glob("*.jsonl")))


def play_contest(run: Run, token: str, folder: Path) -> Seen:
    """Culprits submitted first (the newcomer with the lowest id is placed first: each gets
    a placement deal set), then the innocents, named to sort first (the ladder's top before
    anything is rated, then by winning)."""
    contest = folder / "c"
    cli("contest", "init", str(contest), run.game, "-n", str(run.seats), *rules(run),
        "--placement", "1", *CLOCK, *([] if run.sandbox else ["--no-sandbox"]))
    culprits = {}
    for mode in run.culprits:
        name = culprit_name(mode).replace("@", "-")
        cli("contest", "submit", str(contest), str(CULPRIT_PATH), "--name", name, "--cmd",
            f"python3 {CULPRIT_PATH.name} {mode} {token}")
        culprits[f"{name} v1"] = CHARGES[mode]
    good = submit_innocents(contest, max(2, run.seats - 1), token)
    played = run_contest(contest, len(run.culprits) * len(seatings(run.seats)))
    return contest_seen(contest, played, culprits, good)


def submit_innocents(contest: Path, count: int, token: str) -> set[str]:
    """Innocent versions, named to sort first (`a0-random`, `a1-good`, ...); their labels."""
    good = [(f"a{k}-random", RANDOM_BOT_PATH, f"python3 random_bot.py {token}")
            if k % 2 == 0 else (f"a{k}-good", BAD_BOT_PATH, f"python3 bad_bot.py good {token}")
            for k in range(count)]
    for name, path, cmd in good:
        cli("contest", "submit", str(contest), str(path), "--name", name, "--cmd", cmd)
    return {f"{name} v1" for name, _, _ in good}


def run_contest(contest: Path, games: int) -> int:
    """`contest run --games N` in a process of its own; the games it says it played."""
    done = meldref("contest", "run", str(contest), "--games", str(games), "--no-wait", "-j", "2")
    played = re.search(r"(\d+) games played", done.stdout)
    assert played, done.stdout
    return int(played[1])


def contest_seen(contest: Path, played: int, culprits: dict[str, Charge],
                 innocents: set[str]) -> Seen:
    """A contest's games as its database holds them: the games asked are those the run says
    it played (a suspended culprit's deal set drops its games not yet played)."""
    db = sqlite3.connect(contest / "contest.db", timeout=30)
    try:
        states = {f"{bot} v{n}": state for bot, n, state in
                  db.execute("SELECT bot, number, state FROM versions")}
        rows = db.execute("SELECT game_id, state, result FROM games").fetchall()
    finally:
        db.close()
    assert {state for _, state, _ in rows} <= {"done", "dropped"}, rows  # no error, none left
    # A contest keeps its replays gzipped (issue 46), each read as the .jsonl it holds.
    return Seen([seen_game(json.loads(result), contest / "replays" / f"{gid}.jsonl.gz")
                 for gid, state, result in rows if state == "done"], played, culprits,
                innocents, sorted((contest / "replays").glob("*.jsonl*")),
                {label for label, state in states.items() if state == "suspended"})


PLAY = {"match": play_match, "tournament": play_tournament, "contest": play_contest}


# ----------------------------------------------------------------------------------------------
# The checks


def check_game(game: GameSeen, seen: Seen) -> None:
    assert game.status == "ok", f"{game.id}: {game.status}"
    last = max(s.place for s in game.seats)
    for seat in game.seats:
        where = f"{game.id} {seat.name}"
        if seat.name in seen.innocents:
            assert seat.faults == () and seat.status == "ok", (where, seat)
            continue
        charge = seen.culprits[seat.name]
        final = [o for o, fatal in seat.faults if fatal]
        notes = {o for o, fatal in seat.faults if not fatal}
        assert final in ([], [charge.final] if charge.final else []), (where, seat.faults)
        assert notes <= charge.notes, (where, seat.faults)
        if final:  # its forfeit: out, and last
            assert seat.status == "forfeit" and seat.place == last, (where, seat)


def check(seen: Seen, token: str, marks: Sequence[str] = (STDERR_MARK,)) -> None:
    """Every check of a run: see the module's docstring. `marks`: what the culprits write to
    their stderr (never in a replay)."""
    assert len(seen.games) == seen.asked, (len(seen.games), seen.asked)
    seated = {s.name for g in seen.games for s in g.seats}
    assert seated >= set(seen.culprits), seated  # each culprit played
    assert sorted(g.replay for g in seen.games) == seen.replays  # one replay a game
    for game in seen.games:
        check_game(game, seen)
    charged = {s.name for g in seen.games for s in g.seats if any(f for _, f in s.faults)}
    may = {n for n, c in seen.culprits.items() if c.final}
    assert {n for n in may if seen.culprits[n].certain} <= charged <= may, charged
    if seen.suspended is not None:  # a contest's: the culprits with enough failing games
        failing = Counter(s.name for g in seen.games for s in g.seats if s.faults)
        assert seen.suspended == {n for n, k in failing.items() if k >= SUSPEND_AFTER}, failing
    verified = runner.invoke(app, ["replay", "verify", *map(str, seen.replays)])
    assert verified.exit_code == 0, verified.output
    for replay in seen.replays:
        text = replay_text(replay)
        assert not [m for m in marks if m in text], f"a culprit's stderr in {replay}"
    assert wait_for(lambda: not pids_with(token), 30), f"left running: {pids_with(token)}"


def play_and_check(run: Run, token: str, folder: Path) -> None:
    check(PLAY[run.command](run, token, folder), token)


@pytest.mark.parametrize("run", [r.param() for r in DEFAULT])
def test_the_culprit_alone_is_charged(run: Run, bot_token: str, tmp_path: Path) -> None:
    play_and_check(run, bot_token, tmp_path)


# The whole product is 90 more runs, about 295 CPU-seconds and 5 minutes of waiting at -n 2:
# with -m slow (as the soak), so that CI's runs stay near 10 minutes; the default subset above
# covers every class in every command.
@pytest.mark.parametrize("run", [r.param(pytest.mark.slow) for r in LONG if r not in DEFAULT])
def test_the_culprit_alone_is_charged_in_the_whole_matrix(run: Run, bot_token: str,
                                                          tmp_path: Path) -> None:
    play_and_check(run, bot_token, tmp_path)


def covered(runs: Sequence[Run]) -> Iterator[tuple[str, ...]]:
    for r in runs:
        for mode in r.culprits:
            yield ("class", r.command, r.game, mode)
            yield ("sandbox", str(r.sandbox), r.game, mode)
        yield ("seats", r.command, str(r.seats))


def test_the_default_run_covers_the_matrix() -> None:
    """Every fault class in every command and both with and without the sandbox, every seat
    count in every command: in the default run; and the whole product under -m slow."""
    every = {(g, m) for g, modes in CLASSES.items() for m in modes}
    wanted = ({("class", c, g, m) for c in COMMANDS for g, m in every}
              | {("sandbox", str(s), g, m) for s in (False, True) for g, m in every}
              | {("seats", c, str(n)) for c in COMMANDS for n in SEATS})
    assert set(covered(DEFAULT)) == wanted
    product = [(r.command, r.game, r.seats, r.sandbox, m) for r in LONG for m in r.culprits]
    assert sorted(product) == sorted((c, g, n, s, m) for c in COMMANDS for n in SEATS
                                     for s in (False, True) for g, m in every)
