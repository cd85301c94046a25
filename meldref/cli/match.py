"""`meldref match`: a few games between seats, results as a table or JSON."""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer

from ..engine.registry import DEFAULT_GAME, GAMES
from ..tournament.config import ConfigError, parse_pairs
from ..tournament.keeper import BotKeeper
from ..tournament.match import (
    build_match,
    failed_bots,
    match_json,
    preflight,
    run_match,
    totals,
    with_announced_names,
)
from .common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    BotOpt,
    RulesOpt,
    err,
    fail,
    out,
    refuse_overwriting_inputs,
    stop_on_signals,
)
from .limits import LIMIT_FLAGS, LimitFlags, limits_or_fail, with_limit_flags
from .report import match_tables, print_fitted


@with_limit_flags(*LIMIT_FLAGS)
def match(
    game: Annotated[str | None, typer.Argument(
        help=f"The game: {', '.join(GAMES)} (default {DEFAULT_GAME}, or the --position's).")
    ] = None,
    bot: BotOpt = None,
    players: Annotated[int | None, typer.Option(
        "--players", "-n", help="Seats of built-in greedy bots when no --bot is given "
        "(or copies of a single --bot).")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the first game (game k: seed + k); "
                                                  "random when left out. For research and "
                                                  "debugging: other processes can read it "
                                                  "via /proc.")] = None,
    games: Annotated[int, typer.Option("--games", "-g", help="Games to play; the seats rotate "
                                       "one place each game.")] = 1,
    rules: RulesOpt = None,
    replay: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write the replay to PATH (one game) or PATH/game-0001.jsonl... "
        "(several).")] = None,
    *,
    limits: LimitFlags,
    logs: Annotated[Path | None, typer.Option(
        help="Keep the bot programs' stderr in DIR/<game id>/seat<k>-<bot>.stderr (default: "
        "logs/ beside the replays; without --out a temporary folder, kept and named only "
        "when a bot failed).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON "
                                          "(deterministic: no times).")] = False,
    debug_log: Annotated[Path | None, typer.Option(
        help="Write every line each bot read and wrote, timestamped, in DIR/<game id>/.")
    ] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Overwrite replays of other games at --out.")] = False,
    position: Annotated[Path | None, typer.Option(
        help="Start every game from this position file (spec/POSITION.md): its game, seats, "
        "rules (--rules go over them) and seed (--seed goes over it); the seats rotate from "
        "game to game.")] = None,
) -> None:
    """Play one or more games between bots and print who won."""
    refuse_overwriting_inputs({"--position": position}, {"--out": replay})
    if seed is None and position is None:
        seed = random.SystemRandom().randrange(1_000_000)
    settings = limits_or_fail(limits)
    stop_on_signals()  # from here on bots may run: a signal must close them
    # The bot programs started by the check before the first game play it, and stay running
    # from game to game (with --fresh-bots, the first game only); stopped when the match
    # ends, however it ends.
    keeper = BotKeeper()
    try:
        try:
            spec = build_match(game, bot or [], players, seed, games,
                               parse_pairs(rules or []), settings, replay, position, logs,
                               force)
            if debug_log is not None:
                spec = dataclasses.replace(spec, debug_log=debug_log)
            announced = preflight(spec.game, spec.bots, settings.policy().startup_time,
                                  limits=settings.process_limits(), keeper=keeper)
            spec = with_announced_names(spec, announced)  # results show each bot's `id name`
            began = time.perf_counter()
            scratch = None if spec.logs_folder() else Path(tempfile.mkdtemp(prefix="meldref-logs-"))
            lines = run_match(spec, keeper, scratch)
        finally:
            keeper.close()  # however the match ended (a second signal meanwhile kills them)
    except ConfigError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted", EXIT_INTERRUPTED)
    for failure in failed_bots(lines):
        err.print(failure, markup=False)
    if scratch is not None and not any(any(line.logs) for line in lines):
        shutil.rmtree(scratch, ignore_errors=True)
    if as_json:
        sys.stdout.write(json.dumps(match_json(spec, lines), indent=2) + "\n")
    else:
        title = f"{spec.game} seed {spec.seed}: {len(lines)} game(s)"
        console = out.console()
        print_fitted(console, *match_tables(lines, title, totals(lines, spec.bots), console))
        out.print(f"wall time {time.perf_counter() - began:.2f} s")
    if not all(line.ok for line in lines):
        raise typer.Exit(EXIT_FAILED)

