"""Whole games of every real game through pipes with bots/random_bot.py (with and without the
legal hints, mixed with built-in bots), and the settled rules announced to them.
tests/test_protocol_spec.py checks spec/PROTOCOL.md against what these games send."""

from __future__ import annotations

import pytest
from support import RANDOM_BOT

from meldref.engine.game import GameInfo, find_game
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import InProcessSeat, Seat, seat_from_spec
from meldref.settings import parse_rules

POLICY = MatchPolicy(move_time=10.0, first_move_time=20.0, startup_time=20.0)
CASES = [("phase10", 2), ("phase10", 4), ("fivecrowns", 3), ("solitaire", 1)]


def play_piped(game: GameInfo, players: int, seed: int, hints: bool = True,
               specs: list[str] | None = None, rules: dict[str, str] | None = None,
               ) -> tuple[list[str], list[Seat], object]:
    lines: list[str] = []
    specs = specs or [f"{RANDOM_BOT} --seed {seed + i}" for i in range(players)]
    seats = [seat_from_spec(s, game, seed=seed + i,
                            on_line=(lambda way, text: lines.append(text) if way == ">" else None)
                            if i == 0 else None)
             for i, s in enumerate(specs)]
    policy = POLICY if hints else MatchPolicy(**{**POLICY.to_json(), "legal_hints": False})
    try:
        record = play_game(game, parse_rules(game.rules_type, rules or {}), seats, seed, policy)
    finally:
        close_all(seats)
    return lines, seats, record


@pytest.mark.parametrize(("name", "players"), CASES)
def test_random_bot_plays_whole_games_legally(name: str, players: int) -> None:
    game = find_game(name)
    lines, _, record = play_piped(game, players, seed=7)
    assert record.status == ["ok"] * players, record.faults  # type: ignore[attr-defined]
    assert all(f == [] for f in record.faults), record.faults  # type: ignore[attr-defined]
    assert record.outcome.termination == "normal"  # type: ignore[attr-defined]
    assert lines[-2].startswith("gameover ") and lines[-1] == "quit"


@pytest.mark.parametrize("name", ["phase10", "fivecrowns", "solitaire"])
def test_random_bot_without_hints_is_still_legal(name: str) -> None:
    game = find_game(name)
    players = max(game.min_players, 2) if name != "solitaire" else 1
    # Without hints the bot never lays a phase: caps end the Phase 10 game soon.
    rules = {"hand-cap": "2", "turn-cap": "60"} if name == "phase10" else {}
    _, _, record = play_piped(game, players, seed=3, hints=False, rules=rules)
    assert all(f == [] for f in record.faults), record.faults  # type: ignore[attr-defined]


def test_a_match_mixes_builtin_and_program_seats() -> None:
    game = find_game("phase10")
    _, seats, record = play_piped(game, 2, seed=5, specs=["builtin:greedy", RANDOM_BOT])
    assert isinstance(seats[0], InProcessSeat)
    assert record.status == ["ok", "ok"]  # type: ignore[attr-defined]


def test_the_settled_rules_are_announced_and_recorded() -> None:
    # party=auto is what the match asked for; 8 players settle it to on: bots and the replay
    # must learn what is really played.
    game = find_game("fivecrowns")
    lines: list[str] = []
    records: list[dict[str, object]] = []
    hook = lambda way, text: lines.append(text) if way == ">" else None  # noqa: E731
    seats = [seat_from_spec(RANDOM_BOT, game, on_line=hook),
             *(seat_from_spec("builtin:random", game, seed=i) for i in range(1, 8))]
    try:
        rules = parse_rules(game.rules_type, {"turn-cap": "1"})
        record = play_game(game, rules, seats, 3, POLICY, records.append)
    finally:
        close_all(seats)
    assert game.rules().party == "auto"
    assert "rule party on" in lines and "rule party auto" not in lines
    assert records[0]["rules"]["party"] == "on"  # type: ignore[index]
    assert record.rules["party"] == "on"
    assert record.outcome.detail["decks"] == 4
