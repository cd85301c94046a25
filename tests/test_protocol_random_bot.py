"""bots/random_bot.py as the reference a bot author starts from: it speaks the protocol by the
book (tested line by line here) and plays every game (tests/test_protocol_games.py)."""

from __future__ import annotations

import subprocess

from support import PYTHON, RANDOM_BOT_PATH

BOT = RANDOM_BOT_PATH


def talk(*lines: str, args: tuple[str, ...] = ()) -> tuple[list[str], int]:
    """Send `lines` to a fresh bot, close its input; what it wrote and its exit code."""
    done = subprocess.run([PYTHON, str(BOT), *args], input="".join(lines),
                          capture_output=True, text=True, timeout=20, check=False)
    return done.stdout.splitlines(), done.returncode


def test_it_is_standard_library_only() -> None:
    imports = [line.split()[1] for line in BOT.read_text().splitlines()
               if line.startswith(("import ", "from "))]
    assert set(imports) <= {"__future__", "random", "sys"}


def test_handshake_ping_request_and_quit() -> None:
    out, code = talk(
        "meldref 1 phase10\n",
        "ping 7\n",
        "game phase10 players 2 seat 0\r\n",  # \r\n is accepted
        "rule dealer random\n",
        "xyzzy a message of a later version\n",  # unknown message types are ignored
        "\n",
        "event draw   seat 1\tsource pile new_key new_value\n",  # runs of spaces and tabs
        "view seat 0 decision draw hand R1,W\n",
        "legal draw pile\n",
        "go 3 decision draw time 1000 bank 0 later_key 5\n",  # unknown keys are ignored
        "error 3 illegal: never answered\n",
        "quit\n",
        "ping 8\n",  # after quit: nothing more
    )
    assert code == 0
    assert out == ["id name random_bot", "id author meldref", "id version 1", "ready",
                   "pong 7", "action 3 draw pile"]


def test_every_decision_gets_a_legal_hint_or_a_fallback() -> None:
    out, _ = talk(
        "meldref 1 solitaire\n",
        "view seat 0 decision place draw_top QH\n",
        "item piles size 3 closed true cards 3H,3S,3D\n",
        "item piles size 4 closed false cards 5H,6C,7D,9S\n",
        "go 1 decision place time 1000 bank 0\n",  # no hints: a legal place by itself
        "view seat 0 decision play hand S victims 1\n",
        "go 2 decision play time 1000 bank 0\n",  # Phase 10: a Skip names its victim
        "view seat 0 decision discard hand 5H,6H,7H,9C\n",
        "legal discard 9C run:5H,6H,7H\n",
        "legal discard 9C\n",
        "go 3 decision discard time 1000 bank 0\n",  # Five Crowns: going out is preferred
    )
    assert out[4] in {f"action 1 place 4 {c}" for c in ("5H", "6C", "7D", "9S")}
    assert out[5:] == ["action 2 discard S 1", "action 3 discard 9C run:5H,6H,7H"]


def test_it_leaves_at_once_on_another_protocol_version() -> None:
    out, code = talk("meldref 2 phase10\n", "ping 1\n")
    assert out == [] and code == 0


def test_name_and_seed_options() -> None:
    out, _ = talk("meldref 1 phase10\n", args=("--seed", "3", "--name", "mine"))
    assert out[0] == "id name mine"
