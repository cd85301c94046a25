"""`meldref play` in a real terminal (pexpect): a person's seat against a bot."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pexpect
import pytest
from support import PYTHON, ROOT

from meldref.engine.game import find_game
from meldref.engine.registry import GAMES
from meldref.replay.audit import verify
from meldref.replay.games import presentation
from meldref.tools.human import help_text

ANSI = r"(?:\x1b\[[0-9;]*m)*"  # styles the terminal is sent, if any


def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    return pexpect.spawn(PYTHON, ["-m", "meldref.cli.app", "play", *args], cwd=str(ROOT),
                         timeout=30, encoding="utf-8", dimensions=(50, 160),
                         env={**os.environ, "TERM": "xterm-256color", **(env or {})})


def test_a_person_plays_a_whole_game(tmp_path: Path) -> None:
    replay = tmp_path / "me.jsonl"
    child = spawn("phase10", "--seed", "5", "--bot", "builtin:random", "--rules",
                  "phases-to-win=1", "--replay", str(replay))
    child.expect("you are seat 0 of 2")
    child.expect("your hand: ")
    child.expect(r"draw> ")
    child.sendline("discard R99")  # wrong words: the engine's reason, and asked again
    child.expect("not an action")
    child.expect(r"draw> ")
    child.sendline("discard R1")  # a real action, but not now
    child.expect("not allowed")
    child.expect(r"draw> ")
    child.sendline("help")
    child.expect("shortcuts")
    child.sendline("hint")
    child.expect(rf"draw{ANSI}: {ANSI}1\){ANSI} pile")  # grouped: `draw: 1) pile  2) discard`
    child.expect(r"draw> ")
    child.sendline("p")
    child.expect("seat 0 \\(you\\) draws \\w+ from the draw pile")
    moves = 0
    while True:  # then always the first legal action: lay, hit, or discard
        found = child.expect([r"(draw|play)> ", "game over"])
        if found == 1:
            break
        child.sendline("1")
        moves += 1
        assert moves < 400
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert verify(replay).actions > moves


def test_quit_leaves_the_game() -> None:
    child = spawn("phase10", "--seed", "2", "--players", "3")
    child.expect(r"draw> ")
    child.sendline("quit")
    child.expect("you left the game")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_wrong_seat_is_refused() -> None:
    child = spawn("phase10", "--seat", "5", "--bot", "builtin:random")
    child.expect("--seat 5")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2


COLOUR = re.compile(r"\x1b\[[0-9;]*3[1-6]m")  # a foreground colour of the terminal's eight


def test_the_hand_is_coloured_in_a_terminal_and_plain_with_no_color() -> None:
    for env, coloured in (({}, True), ({"NO_COLOR": "1"}, False)):
        child = spawn("phase10", "--seed", "5", "--bot", "builtin:random", env=env)
        child.expect("your hand: ")
        child.expect("\n")
        hand = child.before
        child.sendline("quit")
        child.expect(pexpect.EOF)
        assert bool(COLOUR.search(hand)) is coloured, (env, repr(hand))
        assert "R1" in hand  # the cards themselves, coloured or not


def test_the_tables_are_not_reprinted_after_every_move() -> None:
    child = spawn("phase10", "--seed", "5", "--bot", "builtin:random")
    decisions, seen = 0, ""
    while True:
        child.expect(r"(draw|play)> ")
        seen += child.before
        if decisions == 24:
            break
        child.sendline("1")
        decisions += 1
    child.sendline("table")  # in full on demand
    child.expect(r"(draw|play)> ")
    shown = child.before
    child.sendline("quit")
    child.expect(pexpect.EOF)
    hands = len(set(re.findall(r"hand number: (\d+)", seen)))
    assert decisions >= 10
    assert seen.count("playing") <= hands < decisions  # the seats table's head: once a hand
    assert "seats: seat" in seen  # what changed, in a line
    assert "playing" in shown


def test_solitaire_hints_are_grouped_by_pile_on_one_screen() -> None:
    child = spawn("solitaire", "--seed", "3")
    child.expect(r"place> ")
    child.sendline("hint")
    child.expect("type a number to play that action")
    listing = re.sub(r"\x1b\[[0-9;]*m", "", child.before)
    groups = re.findall(r"(?m)^  place (\d+): (.*)$", listing)
    numbers = [int(n) for _, items in groups for n in re.findall(r"(\d+)\) ", items)]
    assert len(numbers) > 60 and numbers == list(range(1, len(numbers) + 1))
    assert len(groups) <= 13 and len(listing.strip().splitlines()) <= 15
    pile, items = groups[3]
    number, card = re.findall(r"(\d+)\) (\S+)", items)[0]
    child.sendline(number)  # the number picks the action it stands for
    child.expect(rf"seat 0 \(you\) places {re.escape(card)}|pile {pile}")
    child.sendline("quit")
    child.expect(pexpect.EOF)


def test_help_shows_the_games_own_actions() -> None:
    """`help` listed every game's actions, in every game (a Solitaire player read how to lay a
    Phase 10 phase); each game's examples now come from its presentation."""
    child = spawn("solitaire", "--seed", "3")
    child.expect(r"place> ")
    child.sendline("help")
    child.expect("Other commands")
    shown = re.sub(r"\x1b\[[0-9;]*m", "", child.before)
    assert "place 7 QH" in shown and "lay set" not in shown and "run:" not in shown, shown
    child.sendline("quit")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize("game", GAMES)
def test_each_games_help_lists_its_examples_and_no_others(game: str) -> None:
    shown = help_text(find_game(game))
    own = presentation(game).examples
    assert own and all(action in shown and f"({what})" in shown for action, what in own)
    others = {action for g in GAMES if g != game for action, _ in presentation(g).examples
              if action not in {a for a, _ in own}}
    assert not any(action in shown for action in others), shown
