"""`meldref play` in a real terminal (pexpect): a person's seat against a bot."""

from __future__ import annotations

from pathlib import Path

import pexpect
from support import PYTHON, ROOT

from meldref.replay.files import verify


def spawn(*args: str) -> pexpect.spawn:
    return pexpect.spawn(PYTHON, ["-m", "meldref.cli.app", "play", *args], cwd=str(ROOT),
                         timeout=30, encoding="utf-8", dimensions=(50, 160))


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
    child.expect("1  draw pile")
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
