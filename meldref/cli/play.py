"""`meldref play`: a person plays a seat in the terminal against bots."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Annotated

import typer

from ..engine.game import RuleOptionError, UnknownGameError, find_game
from ..engine.registry import DEFAULT_GAME
from ..protocol.seats import BotSpec
from ..settings import parse_rules
from ..tools.human import QuitGame, play_person
from ..tournament.config import ConfigError, parse_pairs
from ..tournament.match import DEFAULT_BOT, check_output_file, preflight
from ..tournament.schedule import bot_entries
from .common import (
    EXIT_INTERRUPTED,
    BotOpt,
    GameArg,
    RulesOpt,
    err,
    fail,
    out,
    stop_on_signals,
)


def play(
    game: GameArg = DEFAULT_GAME,
    bot: BotOpt = None,
    seat: Annotated[int, typer.Option(help="Your seat: 0 to players - 1 (who plays first "
                                      "follows the dealer, as the rules say).")] = 0,
    players: Annotated[int | None, typer.Option(
        "--players", "-n", help="Seats in all, when no --bot is given (the others are "
        "built-in greedy bots).")] = None,
    seed: Annotated[int | None, typer.Option(help="The deal's seed (random if left out).")] = None,
    rules: RulesOpt = None,
    replay: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write the game's replay here.")] = None,
) -> None:
    """Play a seat yourself in the terminal against bots."""
    if seed is None:
        seed = random.SystemRandom().randrange(1_000_000)
    try:
        info = find_game(game)
        specs = [BotSpec.parse(s) for s in bot or []]
        if players is not None and not info.min_players <= players <= info.max_players:
            raise ConfigError(f"--players {players}: {info.name} is for {info.min_players}.."
                              f"{info.max_players} players")
        if not specs:
            specs = [DEFAULT_BOT] * ((players or info.default_players) - 1)
        if not 0 <= seat <= len(specs):
            raise ConfigError(f"--seat {seat}: seats are 0..{len(specs)}")
        if replay is not None:
            check_output_file(replay, "--out")
        rule_set = parse_rules(info.rules_type, parse_pairs(rules or []))
        info.check_setup(rule_set, len(specs) + 1)
        stop_on_signals()  # from here on bots may run: a signal must close them
        bots = bot_entries(specs, None, preflight(info.name, bot_entries(specs), 10.0))
    except (ConfigError, UnknownGameError, RuleOptionError, ValueError) as exc:
        fail(str(exc))
    console = out.console()
    try:
        play_person(info, rule_set, bots, seat, seed, replay, console,
                    read=lambda prompt: console.input(prompt))
    except QuitGame:
        err.print("you left the game")
    except KeyboardInterrupt:
        err.print("interrupted: you left the game")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if replay is not None:
        out.print(f"replay: {replay}", markup=False)
