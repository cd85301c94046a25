"""The example bots of bots/examples (C, Node.js, C++, Java, Rust and Go), written from
spec/PROTOCOL.md alone: they pass `meldref bot check`, play each game to a normal end without a
fault, and answer the protocol's own hand-written lines (with and without `legal` hints) as the
spec says. Each is built into a temporary folder, never into the tree, by the one-line command
its source and bots/examples/README.md give; a kit whose toolchain is missing is skipped with
the reason (CI installs them from Debian: g++, default-jdk-headless, rustc, golang-go)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pytest
from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app

EXAMPLES = ROOT / "bots" / "examples"
runner = CliRunner()


@dataclass(frozen=True)
class Kit:
    """A compiled kit: the compiler, its source, the one-line build (bots/examples/README.md;
    `{src}` the source, `{out}` the output folder) and the command that runs it, seed 7."""

    tool: str
    source: str
    build: tuple[str, ...]
    run: tuple[str, ...] = ("{out}/meldbot", "7")
    env: tuple[tuple[str, str], ...] = ()


WARNINGS = ("-O2", "-Wall", "-Wextra", "-pedantic", "-Werror")
KITS: Final = {
    "c": Kit("gcc", "c/meldbot.c", ("-std=c99", *WARNINGS, "-o", "{out}/meldbot", "{src}")),
    "cpp": Kit("g++", "cpp/meldbot.cpp",
               ("-std=c++17", *WARNINGS, "-o", "{out}/meldbot", "{src}")),
    "java": Kit("javac", "java/MeldBot.java", ("-Xlint:all", "-Werror", "-d", "{out}", "{src}"),
                run=("java", "-cp", "{out}", "MeldBot", "7")),
    "rust": Kit("rustc", "rust/meldbot.rs",
                ("--edition", "2021", "-O", "-D", "warnings", "-o", "{out}/meldbot", "{src}")),
    # No module: GO111MODULE off builds the one file; its cache in the temporary folder.
    "go": Kit("go", "go/meldbot.go", ("build", "-o", "{out}/meldbot", "{src}"),
              env=(("GO111MODULE", "off"), ("GOCACHE", "{out}/cache"))),
}


def built(kit: str, folder: Path) -> str:
    """`kit` built into `folder` (skipped, saying why, when its compiler is not installed);
    its command line."""
    spec = KITS[kit]
    tool = shutil.which(spec.tool)
    if tool is None:
        pytest.skip(f"{spec.tool} not found: cannot build bots/examples/{spec.source}")

    def fill(word: str) -> str:
        return word.format(out=folder, src=EXAMPLES / spec.source)

    env = {**os.environ, **{k: fill(v) for k, v in spec.env}}
    done = subprocess.run([tool, *map(fill, spec.build)], capture_output=True, text=True,
                          check=False, cwd=folder, env=env)
    assert done.returncode == 0, done.stderr
    return shlex.join(map(fill, spec.run))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    """Each compiled kit's command line, built once into a temporary folder."""
    made: dict[str, str] = {}

    def get(kit: str) -> str:
        if kit not in made:
            made[kit] = built(kit, tmp_path_factory.mktemp(f"{kit}_bot"))
        return made[kit]

    return get


@pytest.fixture(scope="module")
def js_bot() -> str:
    """bots/examples/js/meldbot.js under node (18 or newer); its command line."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node not found: cannot run bots/examples/js/meldbot.js")
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=False)
    major = version.stdout.strip().lstrip("v").split(".")[0]
    if not major.isdigit() or int(major) < 18:
        pytest.skip(f"node 18+ needed for bots/examples/js/meldbot.js, found {version.stdout!r}")
    return shlex.join([node, str(EXAMPLES / "js" / "meldbot.js")])


# The C and JavaScript kits in the default run; the other four build with slower compilers
# (seconds each), so in the long run (.ci/run runs it).
EVERY_KIT = ["c", "js", *(pytest.param(k, marks=pytest.mark.long) for k in
                          ("cpp", "java", "rust", "go"))]


@pytest.fixture(params=EVERY_KIT)
def bot(request: pytest.FixtureRequest, compiled: Callable[[str], str]) -> str:
    if request.param == "js":
        return typing.cast(str, request.getfixturevalue("js_bot"))
    return compiled(request.param)


# ---- meldref bot check ---------------------------------------------------------------------


def test_bot_check_passes_every_check_of_every_game(bot: str) -> None:
    # Every check passes, the timing check too: it warns at half the move time, which a
    # scheduling hiccup on a loaded machine must not reach (the bots answer in milliseconds).
    result = runner.invoke(app, ["bot", "check", bot, "--json", "--move-time", "10"])
    report = json.loads(result.stdout)
    failed = [c for c in report["checks"] if c["status"] != "pass"]
    assert result.exit_code == 0 and report["passed"], failed
    assert report["ids"]["name"].startswith("meldbot-")
    checks = {c["check"] for c in report["checks"]}
    for game in ("phase10", "fivecrowns", "solitaire"):
        assert f"{game}: every decision type" in checks


# ---- short matches against the built-in random bot -----------------------------------------

MATCHES = {
    "phase10": ["--bot", "builtin:random", "--rules", "phases-to-win=1", "--games", "2"],
    "fivecrowns": ["--bot", "builtin:random", "--games", "2"],  # 2 games: both seats
    "solitaire": ["--games", "2"],  # one seat
}


@pytest.mark.parametrize("game", list(MATCHES))
def test_a_short_match_ends_without_faults(bot: str, game: str) -> None:
    result = runner.invoke(
        app, ["match", game, "--bot", bot, *MATCHES[game], "--seed", "11", "--json"]
    )
    assert result.exit_code == 0, result.output
    games = json.loads(result.stdout)["games"]
    assert len(games) == 2
    for played in games:
        # A round can end at the turn cap when no seat goes out: that is a rule, not a fault.
        assert played["termination"] in ("normal", "turn-cap")
        assert played["faults"] == [[] for _ in played["seats"]]
        assert set(played["seat_status"]) == {"ok"}


# ---- the protocol's lines, written by hand from spec/PROTOCOL.md ----------------------------


def talk(bot: str, lines: list[str]) -> tuple[int, list[str]]:
    """Send every line at once (the bots never wait), then close stdin; the bot's answer."""
    done = subprocess.run(
        shlex.split(bot), input="".join(lines), capture_output=True, text=True, timeout=20,
        check=False,
    )
    return done.returncode, done.stdout.splitlines()


SESSION_WITHOUT_HINTS = [
    "meldref 1 phase10\n",
    "ping abc\n",
    "\n",  # blank lines are ignored (section 1)
    "game phase10 players 3 seat 0\r\n",  # \r\n is accepted from the referee side too
    "rule skip-victim choose\n",
    "player 0 Ada Lovelace\n",
    "shout a message type from a newer protocol\n",
    "event deal seat 0 hand_number 1 dealer 2 phase 1 hand_size 2 hand R1,S\n",
    "view seat 0 decision draw hand R1,S discard_top R5 victims 1,2 table -\n",
    "item seats seat 0 playing true phase 1 laid false score 0 hand_size 2 skip_pending 0\n",
    "go 5 decision draw time 1000 bank 5000\n",
    "view seat 0  decision\tplay hand S,R1 discard_top R5 victims 2,1 table -\n",
    "go 6 decision play time 1000 bank 5000\n",
    "error 6 illegal: a test refusal, never answered\n",
    "view seat 0 decision play hand R1,S discard_top R5 victims -\n",
    "go 7 decision play time 1000 bank 5000\n",
    "gameover termination normal winners 1 places 2,1,3 scores 5,0,5\n",
    "game fivecrowns players 2 seat 1\n",
    "view seat 1 round 1 decision discard wild_rank 3 hand 10H,X,QS last_turn false\n",
    "go 8 decision discard time 1000 bank 5000\n",
    "game solitaire players 1 seat 0\n",
    "view seat 0 to_move 0 decision place natural none draw_top 8D draw_pile_size 28\n",
    "item piles size 3 wild_rank 3 closed true cards 3H,JH,QD\n",
    "item piles size 4 wild_rank 4 closed false cards 4D,8H,9C,9S\n",
    "go 9 decision place time 1000 bank 5000\n",
    "ping last\n",
    "quit\n",
    "go 10 decision place time 1000 bank 5000\n",  # after quit: never answered
]


def test_without_hints_it_builds_safe_actions_from_the_view(bot: str) -> None:
    code, out = talk(bot, SESSION_WITHOUT_HINTS)
    assert code == 0
    assert out[-8:] == [
        "ready",
        "pong abc",
        "action 5 draw pile",
        "action 6 discard S 2",  # a Skip names the first seat of `victims`
        "action 7 discard R1",
        "action 8 discard 10H",
        "action 9 place 4 8D",  # the first open pile; the drawn card goes in and out again
        "pong last",
    ]
    assert all(line.startswith("id ") for line in out[:-8])


SESSION_WITH_HINTS = [
    "meldref 1 phase10\n",
    "game phase10 players 2 seat 0\n",
    "view seat 0 decision draw hand R1,R1,B2,B2,W,W discard_top W victims 1\n",
    "legal draw pile\n",
    "legal draw discard\n",
    "go 1 decision draw time 1000 bank 5000\n",
    "view seat 0 decision play hand R1,R1,B2,B2,W,W,G9 discard_top R5 victims 1\n",
    "legal discard W\n",
    "legal lay set:R1,R1,W=1 set:B2,B2,W=2\n",
    "legal discard G9\n",
    "go 2 decision play time 1000 bank 5000\n",
    "view seat 0 decision play hand W,G9 discard_top R5 victims 1\n",
    "legal discard W\n",
    "legal discard G9\n",
    "go 3 decision play time 1000 bank 5000\n",
    "game fivecrowns players 2 seat 0\n",
    "view seat 0 decision discard wild_rank 3 hand 4H,5H,6H,8C,8D,8S,KC last_turn true\n",
    "legal discard KC\n",
    "legal discard KC run:4H,5H,6H\n",
    "legal discard KC book:8C,8D,8S run:4H,5H,6H\n",
    "legal discard 4H\n",
    "go 4 decision discard time 1000 bank 5000\n",
]


def test_with_hints_it_lays_down_goes_out_and_keeps_wilds(bot: str) -> None:
    code, out = talk(bot, SESSION_WITH_HINTS)  # ends with end of input, not quit
    assert code == 0
    assert [line for line in out if line.startswith("action ")] == [
        "action 1 draw discard",  # a Wild on the discard pile
        "action 2 lay set:R1,R1,W=1 set:B2,B2,W=2",
        "action 3 discard G9",  # not the Wild
        "action 4 discard KC book:8C,8D,8S run:4H,5H,6H",  # the most cards laid
    ]


def test_an_unknown_protocol_version_makes_it_leave_at_once(bot: str) -> None:
    code, out = talk(bot, ["meldref 2 phase10\n", "ping 1\n"])
    assert code != 0 and "ready" not in out
