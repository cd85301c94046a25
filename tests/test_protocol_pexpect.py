"""A real referee process (python -m meldref.tools.hostseat) with one seat played by hand
through pexpect: handshake, set-up, requests, an illegal action answered with a reason and a
retry, a late answer ignored, the game played out to `gameover` and `quit`."""

from __future__ import annotations

import os
import re

import pexpect
import pytest
from support import PYTHON, TESTS


def spawn(*args: str) -> pexpect.spawn:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH",
                                                                                       "")])}
    child = pexpect.spawn(PYTHON, ["-m", "meldref.tools.hostseat", *args],
                          env=env, encoding="utf-8", timeout=20, echo=False)
    child.delaybeforesend = None
    return child


def next_go(child: pexpect.spawn) -> tuple[int, str, list[str]]:
    """Read up to the next `go`: its id, the decision and the legal hints before it."""
    child.expect(r"go (\d+) decision (\w+) time (\d+) bank (\d+)\r\n")
    before = child.before
    legal = re.findall(r"legal ([^\r\n]+)", before)
    return int(child.match.group(1)), child.match.group(2), legal


def test_a_hand_played_seat_through_a_real_referee_process() -> None:
    child = spawn("fakegame:GAME", "--seat", "0", "--opponent", "builtin:random", "--seed", "4",
                  "--rule", "turns=6", "--move-time", "10")
    try:
        child.expect_exact("meldref 1 fake\r\n")
        child.sendline("id name by hand")
        child.sendline("id author pexpect")
        child.sendline("ready")
        child.expect_exact("game fake players 2 seat 0\r\n")
        child.expect_exact("rule turns 6\r\n")
        child.expect_exact("player 0 by hand\r\n")
        child.expect_exact("player 1 random\r\n")

        rid, decision, legal = next_go(child)
        assert decision == "draw" and legal == ["draw pile", "draw discard"]
        child.sendline(f"action {rid} discard R1")  # wrong decision: an error with the reason
        child.expect(rf"error {rid} illegal: discard R1: it is time to draw, not to discard")
        retry, decision, _ = next_go(child)
        assert retry == rid + 1 and decision == "draw"
        child.sendline(f"action {rid} draw pile")  # the old id: late, ignored, no error
        child.sendline("info still here")
        child.sendline(f"action {retry} draw pile")
        child.expect(r"event draw seat 0 from pile card (\S+)\r\n")
        drawn = child.match.group(1)

        turns = 0
        while True:
            index = child.expect([r"go (\d+) decision (\w+)", r"gameover ([^\r\n]*)\r\n"])
            if index == 1:
                result = child.match.group(1)
                break
            rid, decision = int(child.match.group(1)), child.match.group(2)
            if decision == "discard":
                child.sendline(f"action {rid} discard {drawn}")
                turns += 1
            else:
                child.sendline(f"action {rid} draw pile")
                child.expect(r"event draw seat 0 from pile card (\S+)\r\n")
                drawn = child.match.group(1)
        assert turns == 3
        assert "termination normal" in result and "places" in result
        child.expect_exact("quit\r\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, child.before


def test_ping_is_answered_by_a_hand_seat_and_silence_is_stalled() -> None:
    child = spawn("fakegame:GAME", "--seat", "1", "--opponent", "builtin:random",
                  "--move-time", "0.3", "--first-move-time", "0.3")
    try:
        child.expect_exact("meldref 1 fake\r\n")
        child.sendline("ready")
        next_go(child)
        child.expect(r"ping (\S+)\r\n")  # we stay silent: the referee checks we are alive
        child.expect(r"error \d+ stalled: no answer within 300 ms and no pong within")
        child.expect_exact("quit\r\n")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_a_rule_without_a_value_is_named_not_a_traceback() -> None:
    # Was: ValueError "dictionary update sequence element #0 has length 1" from dict().
    from meldref.tools.hostseat import main

    with pytest.raises(SystemExit, match="--rule 'phases-to-win': expected KEY=VALUE"):
        main(["phase10", "--rule", "phases-to-win"])
