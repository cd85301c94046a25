"""Fixed seeds play the same games forever: every action, event, outcome and protocol line.

The digests below were recorded before the speed work of issue 13 (commit 7f033e5's engine,
referee and wire format); any change that makes a game or a line differ shows up here. A
change meant to alter behaviour updates them in the same commit and says why. Phase 10's were
updated once, for issue 15's three new rule options: their `rule` lines and the settled rules
in the records are new; with them left out, the digests are the ones recorded before. Issue 19
changed two things on purpose: Phase 10's greedy bot breaks ties between discards by a draw
named by its seed and the turn (it drew from one generator through the game, so a game begun
from a position went on otherwise), and Solitaire views carry the cards put out of play
(`discarded`), so every Solitaire game's view lines differ (its actions do not). Issue 44
made Five Crowns' greedy break ties between equal discards (another suit of the rank, as few
points left) by a draw of its seed, not by the solver's order (`bots.tiebreak`): its three
games here differ.
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
    ('phase10', 3, 'greedy', 1, ''): '10160bbea07c9fd2',
    ('phase10', 3, 'greedy', 2, ''): '234246e1400aa541',
    ('phase10', 3, 'greedy', 3, 'any-order=yes skip-victim=next'): '5fdd782ce4edc470',
    ('fivecrowns', 3, 'random', 1, ''): '70c7e44188557c62',
    ('fivecrowns', 3, 'random', 2, ''): '21cfc67870e2b71e',
    ('fivecrowns', 3, 'random', 3, 'natural=group'): '96dcb46e38c98606',
    ('fivecrowns', 3, 'greedy', 1, ''): '13d4458a1d210597',
    ('fivecrowns', 3, 'greedy', 2, ''): '5e8623dc23bc66b2',
    ('fivecrowns', 3, 'greedy', 3, 'natural=group'): '552fc03679fa1a32',
    ('solitaire', 1, 'random', 1, ''): '52f57784bd4955ac',
    ('solitaire', 1, 'random', 2, ''): 'bfb17f07d1e195de',
    ('solitaire', 1, 'random', 3, 'natural=group'): '4401dcb8ce8a2f6b',
    ('solitaire', 1, 'greedy', 1, ''): 'fbaed896d1c6f786',
    ('solitaire', 1, 'greedy', 2, ''): '26f37810391bc436',
    ('solitaire', 1, 'greedy', 3, 'natural=group'): '172954365288c0b0',
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
