#!/usr/bin/env python3
"""Hostile: in the ladder's games it crashes (exit code 3) whenever it is losing (another seat
has fewer points, or laid its phase while it has not), and else at a decision drawn at random
among its first three of each game; it plays the first legal action otherwise. It passes
`contest submit`'s check: it plays fairly in the folder a submission is checked in
(`bots/.staging/...`).
Expected: `crashed`, charged to it alone; suspended after its failing games."""

from __future__ import annotations

import os
import random
import sys

from meldref.bots.sdk import Bot, Game, Request, run

LADDER = ".staging" not in os.getcwd()


def losing(request: Request) -> bool:
    view = request.view
    mine = next(s for s in view.seats if s.seat == view.seat)
    return any(s.score < mine.score or (s.data.get("laid") and not mine.data.get("laid"))
               for s in view.seats if s.seat != view.seat and s.playing)


class Crasher(Bot):
    name = "crasher"
    left = 0  # decisions before the one it crashes at, in this game

    def new_game(self, game: Game) -> None:
        self.left = random.randrange(3)

    def choose(self, request: Request) -> str:
        self.left -= 1
        if LADDER and (losing(request) or self.left < 0):
            print("crasher: losing, so I leave", file=sys.stderr, flush=True)
            os._exit(3)  # a decision runs on the SDK's worker thread: sys.exit would end it alone
        return self.fallback(request)


if __name__ == "__main__":
    run(Crasher())
