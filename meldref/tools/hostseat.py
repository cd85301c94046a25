"""Play one seat of a game by hand: the referee speaks the protocol on its own stdin/stdout.

    python -m meldref.tools.hostseat phase10 --seat 0 --opponent builtin:random --seed 7

You (or a test harness, or a bot you start with a pipe) are the bot of `--seat`; the other
seats are `--opponent` specs (``builtin:NAME`` or a command line), one per `--opponent`. The
summary goes to stderr; stdout carries nothing but protocol lines. A game may be given as
``module:ATTR`` (a GameInfo) for games outside meldref, such as the tests' fake game.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..engine.game import JSON, GameInfo, find_game
from ..protocol.referee import MatchPolicy, close_all, play_game
from ..protocol.seats import Limits, Seat, StreamSeat, seat_from_spec
from ..settings import SettingsError, parse_rules
from ..tournament.config import parse_pairs


def load_game(name: str) -> GameInfo:
    if ":" in name:
        module, _, attr = name.partition(":")
        return getattr(importlib.import_module(module), attr)  # type: ignore[no-any-return]
    return find_game(name)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m meldref.tools.hostseat", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("game")
    p.add_argument("--seat", type=int, default=0, help="the seat played on stdin/stdout")
    p.add_argument("--opponent", action="append", default=[], help="another seat's spec")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rule", action="append", default=[], help="KEY=VALUE rule option")
    p.add_argument("--move-time", type=float, default=60.0)
    p.add_argument("--first-move-time", type=float, default=120.0)
    p.add_argument("--startup-time", type=float, default=60.0)
    p.add_argument("--time-bank", type=float, default=0.0)
    p.add_argument("--retries", type=int, default=2)
    p.add_argument("--on-failure", choices=("forfeit", "autoplay"), default="forfeit")
    p.add_argument("--no-hints", action="store_true", help="do not send `legal` lines")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    game = load_game(args.game)
    try:
        rules = parse_rules(game.rules_type, parse_pairs(args.rule, "--rule"))
    except SettingsError as exc:  # a rule without "=", or an unknown or wrong one
        raise SystemExit(f"hostseat: {exc}") from None
    policy = MatchPolicy(
        move_time=args.move_time, first_move_time=args.first_move_time,
        startup_time=args.startup_time, time_bank=args.time_bank,
        illegal_retries=args.retries, on_failure=args.on_failure, legal_hints=not args.no_hints,
    )
    others = [seat_from_spec(spec, game, seed=args.seed + i) for i, spec in
              enumerate(args.opponent or ["builtin:random"])]
    me = StreamSeat(sys.stdin.fileno(), sys.stdout.fileno(), game=game.name, limits=Limits())
    seats: list[Seat] = list(others)
    seats.insert(args.seat, me)
    try:
        record = play_game(game, rules, seats, args.seed, policy)
    finally:
        close_all(seats)
    summary: dict[str, JSON] = record.outcome.to_json()
    print(f"hostseat: {summary} status {record.status}", file=sys.stderr)
    for seat, faults in enumerate(record.faults):
        for fault in faults:
            print(f"hostseat: seat {seat} {fault.outcome}: {fault.detail}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
