"""`meldref play`: a person plays a seat in the terminal against bots."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Annotated, Any

import typer

from ..tournament.config import ConfigError, parse_pairs
from .common import (
    BotOpt,
    GameArg,
    RulesOpt,
    err,
    fail,
    out,
)


def play(
    game: GameArg = "phase10",
    bot: BotOpt = None,
    seat: Annotated[int, typer.Option(help="Your seat (0 plays first after the dealer's "
                                      "left... as the deal falls).")] = 0,
    players: Annotated[int | None, typer.Option(
        "--players", "-n", help="Seats in all, when no --bot is given (the others are "
        "built-in greedy bots).")] = None,
    seed: Annotated[int | None, typer.Option(help="The deal's seed (random if left out).")] = None,
    rules: RulesOpt = None,
    replay: Annotated[Path | None, typer.Option(help="Write the game's replay here.")] = None,
) -> None:
    """Play a seat yourself in the terminal against bots."""
    from ..protocol.referee import MatchPolicy
    from ..tools.human import HumanSeat, QuitGame
    from ..tournament.match import DEFAULT_SEATS, preflight
    from ..tournament.runner import close_seats, make_seats, play_recorded
    from ..tournament.schedule import BotEntry, bot_entries

    if seed is None:
        seed = random.SystemRandom().randrange(1_000_000)
    try:
        from ..engine.game import find_game

        info = find_game(game)
        specs = list(bot or [])
        if not specs:
            specs = ["builtin:greedy"] * ((players or DEFAULT_SEATS[info.name]) - 1)
        if not 0 <= seat <= len(specs):
            raise ConfigError(f"--seat {seat}: seats are 0..{len(specs)}")
        rule_set = info.rules(parse_pairs(rules or []))
        info.check_setup(rule_set, len(specs) + 1)
        bots = bot_entries(specs, None, preflight(info.name, bot_entries(specs), 10.0))
    except (ConfigError, KeyError, ValueError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    entries = [*bots[:seat], BotEntry("you", "human"), *bots[seat:]]
    console = out.console()
    human = HumanSeat(info, rule_set, len(entries), seed, seat, console,
                      read=lambda prompt: console.input(prompt))
    day = 24 * 3600.0
    policy = MatchPolicy(move_time=day, first_move_time=day, startup_time=30.0,
                         illegal_retries=5)
    seats: list[Any] = []
    try:
        others = make_seats(info, [b for b in entries if b.spec != "human"], seed,
                            [None] * (len(entries) - 1))
        seats = [*others[:seat], human, *others[seat:]]
        play_recorded(info, rule_set, entries, seats, seed, policy, replay, also=human.on_record)
    except (QuitGame, KeyboardInterrupt):
        err.print("you left the game")
    finally:
        close_seats([s for s in seats if s is not human])
    if replay is not None:
        out.print(f"replay: {replay}", markup=False)
