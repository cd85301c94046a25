#!/usr/bin/env python3
"""The culprit of tests/test_fault_matrix.py: plays the first `legal` hint, and commits one
fault of spec/PROTOCOL.md section 7 at a chosen point of every game (argv[1], the mode).
Standard library only, one file: a contest copies it alone.

Modes:
  good            plays correctly (the control)
  crash@KIND      exits with code 3 at its first request of decision KIND in each game
                  (Phase 10 `draw`, `play`; Five Crowns `draw`, `discard`)     -> crashed
  crash@between   kills itself with SIGSEGV at the referee's `ping` between two games (its
                  process was kept from the game before)           -> restarted, no fault
  exit@gameover   exits with code 0 on `gameover` (one game a process)  -> restarted, no fault
  silent          at its first request of each game stops answering (requests and pings;
                  it still leaves on `quit`)                                    -> stalled
  garbage         answers every request with a line that is not protocol       -> malformed
  flood           writes 5,000 unasked `action 0 draw pile` lines at its first request of
                  each game                               -> malformed (flooding), at once
  close_stdout    closes its stdout at its first request of each game, keeps running until
                  `quit` or the end of its input                                  -> closed
  slow            answers its first request of each game only after the referee's `ping`,
                  which comes only after the deadline                     -> timeout, late

At every request it writes STDERR_MARK to its stderr (the tests check that no replay holds
it). Words after the mode are ignored (tests add a token to find their processes).

In a folder whose path holds `.staging` (where `meldref contest submit` checks a copy) it
plays correctly whatever the mode, as a hostile author's bot would: so it joins a contest and
commits its fault in the ladder's games.
"""

from __future__ import annotations

import os
import signal
import sys

STDERR_MARK = "culprit-stderr-mark-5f1c"
MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
if ".staging" in os.getcwd():
    MODE = "good"
FLOOD = 5000


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class Culprit:
    def __init__(self) -> None:
        self.legal: list[str] = []
        self.first = True  # no request of this game seen yet
        self.gone_quiet = False
        self.owed = ""  # slow: the answer held back until the referee's ping
        self.between = False  # after a `gameover`, before the next `game`

    def on_line(self, words: list[str]) -> bool:
        """One line from the referee; False when the bot leaves."""
        kind = words[0]
        if kind == "meldref":
            send(f"id name culprit-{MODE}")
            send("ready")
        elif kind == "game":
            self.first, self.gone_quiet, self.between = True, False, False
        elif kind == "view":
            self.legal = []
        elif kind == "legal":
            self.legal.append(" ".join(words[1:]))
        elif kind == "go":
            self.request(words)
        elif kind == "ping" and len(words) > 1:
            self.ping(words[1])
        elif kind == "gameover":
            self.between = True
            if MODE == "exit@gameover":
                return False
        elif kind == "quit":
            return False
        return True

    def ping(self, token: str) -> None:
        if MODE == "crash@between" and self.between:
            os.kill(os.getpid(), signal.SIGSEGV)
        if self.gone_quiet:
            return
        if self.owed:  # past the deadline for sure: the referee pings only then
            send(self.owed)
            self.owed = ""
        send(f"pong {token}")

    def request(self, words: list[str]) -> None:
        rid = words[1]
        decision = words[words.index("decision") + 1] if "decision" in words else ""
        first, self.first = self.first, False
        sys.stderr.write(f"{STDERR_MARK} {MODE} {decision} {rid}\n")
        sys.stderr.flush()
        if self.gone_quiet:
            return
        answer = f"action {rid} {self.legal[0] if self.legal else 'draw pile'}"
        if MODE.removeprefix("crash@") == decision:
            sys.exit(3)
        if MODE == "garbage":
            answer = "hello referee, I would like to draw please"
        elif first and MODE == "silent":
            self.gone_quiet = True
            return
        elif first and MODE == "flood":
            send("\n".join(["action 0 draw pile"] * FLOOD))
        elif first and MODE == "close_stdout":
            sys.stdout.close()
            os.close(1)
            self.gone_quiet = True
            return
        elif first and MODE == "slow":
            self.owed = answer
            return
        send(answer)


def main() -> None:
    bot = Culprit()
    for raw in sys.stdin:
        words = raw.split()
        if words and not bot.on_line(words):
            return


if __name__ == "__main__":
    main()
