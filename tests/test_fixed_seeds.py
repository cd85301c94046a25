"""Fixed seeds play the same games forever: every action, event, outcome and protocol line.

The digests below were recorded before the speed work of issue 13 (commit 7f033e5's engine,
referee and wire format); any change that makes a game or a line differ shows up here. A
change meant to alter behaviour updates them in the same commit and says why. Phase 10's were
updated once, for issue 15's three new rule options: their `rule` lines and the settled rules
in the records are new; with them left out, the digests are the ones recorded before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from meldref.bots import builtin_bot
from meldref.engine.game import find_game
from meldref.protocol.conversation import request_text
from meldref.protocol.referee import MatchPolicy, play_game
from meldref.protocol.seats import InProcessSeat, Reply, Request, Setup
from meldref.protocol.wire import event_line, gameover_line, setup_lines
from meldref.settings import parse_rules

# (game, players, bot, seed, rule options) -> the first 16 hex digits of the game's digest.
Case = tuple[str, int, str, int, str]
EXPECTED: dict[Case, str] = {
    ('phase10', 3, 'random', 1, ''): 'ff212b48ba2fe53c',
    ('phase10', 3, 'random', 2, ''): '069809fbc659f98b',
    ('phase10', 3, 'random', 3, 'any-order=yes skip-victim=next'): 'c7c3714bc4c7d0a5',
    ('phase10', 3, 'greedy', 1, ''): 'feacb2506ccc2d51',
    ('phase10', 3, 'greedy', 2, ''): '07486609cd36e330',
    ('phase10', 3, 'greedy', 3, 'any-order=yes skip-victim=next'): '7ed74f9f7370a007',
    ('fivecrowns', 3, 'random', 1, ''): '70c7e44188557c62',
    ('fivecrowns', 3, 'random', 2, ''): '21cfc67870e2b71e',
    ('fivecrowns', 3, 'random', 3, 'natural=group'): '96dcb46e38c98606',
    ('fivecrowns', 3, 'greedy', 1, ''): '764fa6f0b26c2794',
    ('fivecrowns', 3, 'greedy', 2, ''): '930d85a40db27953',
    ('fivecrowns', 3, 'greedy', 3, 'natural=group'): '61842a2e53c29798',
    ('solitaire', 1, 'random', 1, ''): '1413045da4acf67d',
    ('solitaire', 1, 'random', 2, ''): 'cc81d4b6ba4522f2',
    ('solitaire', 1, 'random', 3, 'natural=group'): '3cdb5ba37d9bccfe',
    ('solitaire', 1, 'greedy', 1, ''): '92698533b4ff72c6',
    ('solitaire', 1, 'greedy', 2, ''): 'b9ecc3025ca1f5c5',
    ('solitaire', 1, 'greedy', 3, 'natural=group'): '33598c80adedd8e8',
}
TIMES = ("elapsed", "wall_time")  # the only things in a record that depend on the clock


class WireSeat(InProcessSeat):
    """An in-process bot that also writes down every line a bot program would be sent."""

    def __init__(self, bot: Any, lines: list[str]) -> None:
        super().__init__(bot)
        self.lines = lines
        self.request_id = 0

    def start(self, setup: Setup) -> None:
        super().start(setup)
        self.lines += setup_lines(setup.game, setup.seat, setup.rules, setup.names)

    def decide(self, request: Request) -> Reply:
        self.request_id += 1
        self.lines += request_text(self.request_id, request)
        return super().decide(request)

    def notify(self, events: Sequence[Mapping[str, Any]]) -> None:
        self.lines += [event_line(e) for e in events]

    def finish(self, result: Mapping[str, Any]) -> None:
        self.lines.append(gameover_line(result))


def digest(game_name: str, players: int, bot: str, seed: int, options: str = "") -> str:
    game = find_game(game_name)
    rules = parse_rules(game.rules_type, dict(pair.split("=") for pair in options.split()))
    lines: list[list[str]] = [[] for _ in range(players)]
    seats = [WireSeat(builtin_bot(game.name, bot, seed * 10 + i), lines[i]) for i in range(players)]
    records: list[dict[str, Any]] = []
    play_game(game, rules, seats, seed, MatchPolicy(), records.append)
    sha = hashlib.sha256()
    for record in records:
        kept = {k: v for k, v in record.items() if k not in TIMES}
        sha.update(json.dumps(kept, sort_keys=True).encode())
    for seat_lines in lines:
        sha.update("\n".join(seat_lines).encode())
    return sha.hexdigest()[:16]


@pytest.mark.parametrize("case", sorted(EXPECTED), ids=lambda c: "-".join(map(str, c)))
def test_fixed_seeds_play_the_recorded_games(case: Case) -> None:
    assert digest(*case) == EXPECTED[case]


if __name__ == "__main__":  # print the table of digests (to record them, once, on purpose)
    variants = {"phase10": "any-order=yes skip-victim=next", "fivecrowns": "natural=group",
                "solitaire": "natural=group"}
    for key in [(g, p, b, s, o) for g, p in (("phase10", 3), ("fivecrowns", 3), ("solitaire", 1))
                for b in ("random", "greedy") for s, o in ((1, ""), (2, ""), (3, variants[g]))]:
        print(f"    {key!r}: {digest(*key)!r},")
