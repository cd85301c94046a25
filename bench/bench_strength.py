"""How strong the built-in bots are: duplicate deals, head to head, with a deal-pair interval.

    python bench/bench_strength.py [--game phase10|fivecrowns|solitaire|all] [--games 1000]
                                   [--pair expert:greedy] [--quick] [--jobs 1] [--seed bench]
    python bench/bench_strength.py --every-pair [--table 4] [--games 40] [--example js] ...

`--every-pair` plays every built-in bot against every other (the names from the bot registry,
`meldref.bots.BUILTIN_BOTS`), and `--table N` adds, per game of several seats, one table of N
seats filled with the strongest N bots (the registry's last ones; N at most their number), each
deal played in the balanced seatings of meldref's tournaments (`meldref.verdicts.seatings`: a
deal set of N(N-1) games, 12 at 4 seats, in which every bot holds every seat, and sits right
after every other bot, equally often; rotations alone would seat each bot after the same
neighbour every game, and who feeds whom is worth several places in a hundred): a bot's figure
is its share of first places, with its interval from the spread between deal sets. The
markdown table gives the number of deal sets behind each row.

The example bots (bots/examples/) play too, as the programs they are, through the referee:
`example-python` (the SDK's `sdk_bot.py`), `example-js` (Node.js) and `example-c` (compiled
with `cc` into a temporary folder). `--every-pair` and `--table` take one of them with the
built-in bots, just above `random` (`--example python|js|c|none`; default `python`, which
needs nothing but meldref); `--pair` and `--bots` take any of them by name.

Phase 10 and Five Crowns are played two seats at a time. Each deal (one game seed) is played
twice with the seats swapped, so both bots meet the same cards from the same seat: luck of the
deal cancels within a pair. A game counts 1 for the bot placed first alone, 1/2 when both share
first place, 0 otherwise. The interval is computed on deal pairs (pentanomial): each pair's
result is the mean of its two games, the score is the mean over pairs, and its standard error
comes from the variance between pairs (95%: 1.96 standard errors).

Solitaire has one seat: every bot plays the same deals, and the figures are the share of deals
won (with its 95% interval) and the mean number of piles closed; each bot but the last is
also compared with the next one in the list on the same deals (`piles_vs`: the mean difference
of piles closed per deal, with its 95% interval from the spread of the differences).

`--games` counts games per pairing (so 1000 games are 500 deal pairs); `--quick` plays 40. Every
figure is printed as one JSON line, then a markdown table; `--docs FILE` also writes the table
into FILE between its `<!-- strength-table -->` and `<!-- /strength-table -->` lines
(docs/bots.md holds the last one). The time per decision is the bot's own time in `act`, in
ms of CPU time, as the mean and the worst decision (a program's time is not measured: 0).
`--progress` prints each deal set's result and the running score with its interval on
standard error as the run goes (a long run can be judged, or stopped, early). `--move-time S`
gives a bot that plans by the clock (`search`, `tree`) an allowance of S seconds a decision, as
a match would; without it such a bot takes its fixed number of guesses, so a run is repeatable.

`--set BOT.OPTION=VALUE` (repeatable) changes one option of every built-in bot named BOT that
this run seats, for example `--set search.clear=1` (the standard errors the search's edge must
clear) or `--set expert.feed_weight=3`: the options are the bots' attributes of a number or a
yes/no (an unknown one is an error that lists them), and the rows name the bot with its
settings (`search clear=1`). docs/bots.md's tries are such runs.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meldref.bots import BUILTIN_BOTS, builtin_bot
from meldref.engine.game import GameInfo, Outcome, find_game
from meldref.engine.play import play_inprocess
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import InProcessSeat, Seat, seat_from_spec
from meldref.verdicts.seatings import seatings

HEAD_TO_HEAD = ("phase10", "fivecrowns")
DEFAULT_PAIRS = ("expert:greedy", "greedy:random")
SOLITAIRE_BOTS = ("expert", "greedy", "random")
Z95 = 1.96
EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "bots" / "examples"
EXAMPLES = ("example-python", "example-js", "example-c")
MOVE_TIME: list[float | None] = [None]  # --move-time, set in each process by `_setup`
PROGRESS = [False]  # --progress
# Research bots, not built in yet, seated by name for the games they play (issue 49's tree
# search: docs/bots.md, "A search that searches").
RESEARCH: dict[str, dict[str, str]] = {
    "tree": {"fivecrowns": "meldref.bots.fivecrowns.tree_search:FiveCrownsTreeBot",
             "phase10": "meldref.bots.phase10.tree_search:Phase10TreeBot"},
}


def make_bot(game: str, name: str, seed: int | str) -> Any:
    """The built-in bot `name`, or the research bot of that name for `game`."""
    if name in RESEARCH:
        if game not in RESEARCH[name]:
            raise SystemExit(f"{name} plays only {', '.join(RESEARCH[name])}, not {game}")
        module, _, attr = RESEARCH[name][game].partition(":")
        return getattr(importlib.import_module(module), attr)(seed)
    return builtin_bot(game, name, seed)  # type: ignore[arg-type]
SETTINGS: dict[str, dict[str, str]] = {}  # --set: bot name -> option -> value, as `_setup` sets


class TimedBot:
    """A bot whose `act` calls are timed in CPU seconds of this process (a worker plays one
    game at a time, single-threaded), so other work on the machine disturbs them less."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.name = bot.name
        self.times: list[float] = []

    def act(self, view: Any) -> Any:
        allowance = MOVE_TIME[0]
        think_within = getattr(self.bot, "think_within", None)
        if allowance is not None and callable(think_within):
            think_within(allowance, 0.0)
        start = time.process_time()
        action = self.bot.act(view)
        self.times.append(time.process_time() - start)
        return action


@dataclass
class Tally:
    """What one bot scored over the games it played, and how long it thought."""

    pair_results: list[float] = field(default_factory=list)  # per deal pair (or deal): 0..1
    points: list[int] = field(default_factory=list)  # per game: the game's own score
    rival_points: list[int] = field(default_factory=list)  # per game: the other seat's
    times: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.pair_results += other.pair_results
        self.points += other.points
        self.rival_points += other.rival_points
        self.times += other.times


def game_result(places: Sequence[int], seat: int) -> float:
    """1 for first place alone, 1/2 for a shared first place, 0 otherwise."""
    if places[seat] != 1:
        return 0.0
    return 1.0 / sum(1 for p in places if p == 1)


def example_command(name: str) -> str:
    """The command line of an example bot (`EXAMPLES`); the C one is compiled once a process."""
    if name == "example-python":
        return f"{sys.executable} {EXAMPLES_DIR / 'python' / 'sdk_bot.py'}"
    if name == "example-js":
        return f"node {EXAMPLES_DIR / 'js' / 'meldbot.js'}"
    if name == "example-c":
        return str(_compiled_c())
    raise ValueError(f"no example bot {name!r}: {', '.join(EXAMPLES)}")


_C_BINARY: list[Path] = []


def _compiled_c() -> Path:
    if not _C_BINARY:
        folder = Path(tempfile.mkdtemp(prefix="meldref-bench-c-"))
        binary = folder / "meldbot"
        subprocess.run(["cc", "-std=c99", "-O2", "-o", str(binary),
                        str(EXAMPLES_DIR / "c" / "meldbot.c")], check=True)
        _C_BINARY.append(binary)
    return _C_BINARY[0]


def seat_bots(info: GameInfo, names: Sequence[str], deal: str) -> list[TimedBot | str]:
    """Seat k's bot: a timed built-in bot seeded by the deal and seat (with its `--set`
    options), or an example's command."""
    return [example_command(n) if n in EXAMPLES else TimedBot(configured(info.name, n,
                                                                         f"{deal}:{k}"))
            for k, n in enumerate(names)]


def configured(game: str, name: str, seed: str) -> Any:
    """The built-in bot `name` with the options `--set` gives it."""
    bot = make_bot(game, name, seed)
    for option, text in SETTINGS.get(name, {}).items():
        setattr(bot, option, option_value(bot, option, text))
    return bot


def options(bot: Any) -> list[str]:
    """The options `--set` can change on `bot`: its public attributes of a number or yes/no
    (not its seed, which the run gives each seat)."""
    return sorted(n for n in dir(bot) if not n.startswith("_") and n != "seed"
                  and type(getattr(bot, n, None)) in (bool, int, float))


def option_value(bot: Any, option: str, text: str) -> bool | int | float:
    """`text` read as the type `option` has on `bot`; ValueError saying why it cannot be."""
    if option not in options(bot):
        raise ValueError(f"{bot.name} has no option {option!r}; its options: "
                         f"{', '.join(options(bot))}")
    kind = type(getattr(bot, option))
    if kind is bool:
        words = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
        if text.lower() not in words:
            raise ValueError(f"{bot.name}.{option} is yes or no, not {text!r}")
        return words[text.lower()]
    try:
        return kind(text)  # type: ignore[no-any-return]
    except ValueError:
        raise ValueError(f"{bot.name}.{option} is {'a whole number' if kind is int else 'a number'}"
                         f", not {text!r}") from None


def label(name: str) -> str:
    """A bot's name in the rows, with its `--set` options."""
    settings = SETTINGS.get(name)
    return name if not settings else name + " " + ",".join(f"{k}={v}" for k, v in settings.items())


def play_deal(info: GameInfo, bots: Sequence[TimedBot | str], deal: str,
              seats: dict[str, Seat]) -> Outcome:
    """One game of `deal`: in-process when every bot is built in (fast, no referee); through
    the referee when a program plays (its seat kept in `seats` by command, to play again; the
    deal's seed is then a number made from `deal`, the referee's seeds being numbers)."""
    timed = [b for b in bots if isinstance(b, TimedBot)]
    if len(timed) == len(bots):
        outcome, _ = play_inprocess(info, info.rules(), timed, deal)
        return outcome
    seated: list[Seat] = []
    for k, bot in enumerate(bots):
        if isinstance(bot, str):
            seated.append(seats.get(bot) or seats.setdefault(bot, seat_from_spec(bot, info, k)))
        else:
            seated.append(InProcessSeat(bot, name=bot.name))
    record = play_game(info, info.rules(), seated, zlib.crc32(deal.encode()), MatchPolicy())
    return record.outcome


def play_pair(game: str, bots: tuple[str, str], deal: str) -> Tally:
    """One deal played twice, seats swapped; the tally of bots[0]."""
    info = find_game(game)
    tally = Tally()
    results = []
    programs: dict[str, Seat] = {}
    try:
        for first in (0, 1):
            names = (bots[0], bots[1]) if first == 0 else (bots[1], bots[0])
            seated = seat_bots(info, names, deal)
            outcome = play_deal(info, seated, deal, programs)
            mine = 0 if first == 0 else 1
            results.append(game_result(outcome.places, mine))
            tally.points.append(outcome.scores[mine])
            tally.rival_points.append(outcome.scores[1 - mine])
            timed = seated[mine]
            if isinstance(timed, TimedBot):
                tally.times += timed.times
    finally:
        close_all(list(programs.values()))
    tally.pair_results.append(sum(results) / 2)
    return tally


def play_solitaire(bot: str, deal: str) -> Tally:
    info: GameInfo = find_game("solitaire")
    programs: dict[str, Seat] = {}
    seated = seat_bots(info, [bot], deal)
    try:
        outcome = play_deal(info, seated, deal, programs)
    finally:
        close_all(list(programs.values()))
    timed = seated[0]
    times = timed.times if isinstance(timed, TimedBot) else []
    return Tally([game_result(outcome.places, 0)], [outcome.scores[0]], times=times)


def table_seatings(n: int, deal: str) -> list[list[int]]:
    """The seatings `deal` is played in at a table of `n` bots: `meldref.verdicts.seatings`,
    its roles given to the bots in an order drawn from the deal, as tournaments do: the design
    is not symmetric in its roles, and the draw gives every bot every role alike. (Two bots
    playing the same moves still part by about 4 points in 40 deal sets: the table's noise,
    which `--table-paired` pairs away.)"""
    roles = list(range(n))
    random.Random(f"{deal}:seating").shuffle(roles)
    return [[roles[r] for r in row] for row in seatings(n)]


def play_table(game: str, bots: tuple[str, ...], deal: str) -> list[Tally]:
    """One deal played in every balanced seating of the table; a tally per bot (in `bots`
    order)."""
    info = find_game(game)
    n = len(bots)
    tallies = [Tally() for _ in bots]
    results = [0.0] * n
    games = table_seatings(n, deal)
    programs: dict[str, Seat] = {}
    try:
        for order in games:  # seat k plays bots[order[k]]
            seated = seat_bots(info, [bots[b] for b in order], deal)
            outcome = play_deal(info, seated, deal, programs)
            for k, b in enumerate(order):
                results[b] += game_result(outcome.places, k)
                tallies[b].points.append(outcome.scores[k])
                timed = seated[k]
                if isinstance(timed, TimedBot):
                    tallies[b].times += timed.times
    finally:
        close_all(list(programs.values()))
    for b in range(n):
        tallies[b].pair_results.append(results[b] / len(games))
    return tallies


def _run(job: tuple[str, tuple[str, ...], str]) -> Tally:
    game, bots, deal = job
    if game == "solitaire":
        return play_solitaire(bots[0], deal)
    return play_pair(game, (bots[0], bots[1]), deal)


def _run_table(job: tuple[str, tuple[str, ...], str]) -> list[Tally]:
    return play_table(*job)


def _setup(move_time: float | None, settings: dict[str, dict[str, str]] | None = None) -> None:
    """A worker's settings (and the main process's, for `--jobs 1`)."""
    MOVE_TIME[0] = move_time
    given = {name: dict(options) for name, options in (settings or {}).items()}  # may be SETTINGS
    SETTINGS.clear()
    SETTINGS.update(given)


def _pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes with this process's settings (`_setup`)."""
    return ProcessPoolExecutor(workers, initializer=_setup, initargs=(MOVE_TIME[0], SETTINGS))


def run_tables(jobs: list[tuple[str, tuple[str, ...], str]], workers: int) -> list[Tally]:
    totals = [Tally() for _ in jobs[0][1]]
    if workers <= 1:
        done = map(_run_table, jobs)
        for tallies in done:
            for total, tally in zip(totals, tallies, strict=True):
                total.add(tally)
        return totals
    with _pool(workers) as pool:
        for tallies in pool.map(_run_table, jobs, chunksize=1):
            for total, tally in zip(totals, tallies, strict=True):
                total.add(tally)
    return totals


def run_jobs(jobs: list[tuple[str, tuple[str, ...], str]], workers: int) -> Tally:
    total = Tally()
    if workers <= 1:
        for job in jobs:
            total.add(_run(job))
            _progress(job, total)
        return total
    with _pool(workers) as pool:
        for job, tally in zip(jobs, pool.map(_run, jobs, chunksize=4), strict=True):
            total.add(tally)
            _progress(job, total)
    return total


def _progress(job: tuple[str, tuple[str, ...], str], total: Tally) -> None:
    """`--progress`: the deal set just played and the running score, on standard error."""
    if PROGRESS[0]:
        mean, low, high = interval(total.pair_results)
        ms = 1000 * statistics.fmean(total.times) if total.times else 0.0
        print(f"{job[2]} {':'.join(job[1])}: {total.pair_results[-1]:.2f}, running "
              f"{mean:.3f} ({low:.3f}-{high:.3f}) over {len(total.pair_results)}, "
              f"{ms:.1f} ms a decision", file=sys.stderr, flush=True)


def interval(results: Sequence[float]) -> tuple[float, float, float]:
    """The mean and its 95% interval, from the spread between the results (deal pairs)."""
    mean = statistics.fmean(results)
    if len(results) < 2:
        return mean, mean, mean
    se = statistics.stdev(results) / math.sqrt(len(results))
    return mean, mean - Z95 * se, mean + Z95 * se


def figure(game: str, bots: Sequence[str], tally: Tally, games: int) -> dict[str, Any]:
    mean, low, high = interval(tally.pair_results)
    ms = [t * 1000 for t in tally.times]
    out: dict[str, Any] = {
        "game": game,
        "bot": label(bots[0]),
        "against": label(bots[1]) if len(bots) > 1 else "deck",
        "games": games,
        "score": round(mean, 4),
        "ci95": [round(low, 4), round(high, 4)],
        "mean_points": round(statistics.fmean(tally.points), 2),
        "ms_mean": round(statistics.fmean(ms), 3) if ms else 0.0,
        "ms_max": round(max(ms), 1) if ms else 0.0,
        "decisions": len(ms),
        "deal_sets": len(tally.pair_results),
    }
    if tally.rival_points:
        out["rival_mean_points"] = round(statistics.fmean(tally.rival_points), 2)
    if game == "solitaire":
        out["won"] = out.pop("score")
        out["mean_piles_closed"] = out.pop("mean_points")
    return out


def figures(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    games = [args.game] if args.game != "all" else [*HEAD_TO_HEAD, "solitaire"]
    for game in games:
        if game == "solitaire":
            yield from solitaire_figures(args)
            continue
        for pair in args.pair:
            bots = tuple(pair.split(":"))
            deals = max(1, args.games // 2)
            jobs = [(game, bots, f"{args.seed}:{i}") for i in range(deals)]
            yield figure(game, bots, run_jobs(jobs, args.jobs), 2 * deals)
        if args.table:
            yield from table_figures(game, args)


def solitaire_figures(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """Every Solitaire bot on the same deals; each compared with the next one on them
    (`piles_vs`), so a row is printed once the next bot has played."""
    held: tuple[str, Tally] | None = None
    for bot in args.solitaire_bots:
        jobs = [("solitaire", (bot,), f"{args.seed}:{i}") for i in range(args.games)]
        tally = run_jobs(jobs, args.jobs)
        if held is not None:
            yield solitaire_row(held[0], held[1], (bot, tally), args.games)
        held = (bot, tally)
    if held is not None:
        yield solitaire_row(held[0], held[1], None, args.games)


def solitaire_row(bot: str, tally: Tally, next_one: tuple[str, Tally] | None,
                  games: int) -> dict[str, Any]:
    row = figure("solitaire", [bot], tally, games)
    if next_one is not None:
        other, theirs = next_one
        diffs = [float(a - b) for a, b in zip(tally.points, theirs.points, strict=True)]
        mean, low, high = interval(diffs)
        row["piles_vs"] = {"bot": label(other), "diff": round(mean, 3),
                           "ci95": [round(low, 3), round(high, 3)], "deals": len(diffs)}
    return row


def table_figures(game: str, args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """The strongest `args.table` bots at one table, every deal in every balanced seating."""
    bots = tuple(args.bots[-args.table:])
    per_deal = len(seatings(len(bots)))
    deals = max(1, (args.table_games or args.games) // per_deal)
    jobs = [(game, bots, f"{args.seed}:table:{i}") for i in range(deals)]
    totals = run_tables(jobs, args.jobs)
    shipped = shipped_tables(jobs, args.jobs) if args.table_paired else [None] * len(bots)
    for name, tally, base in zip(bots, totals, shipped, strict=True):
        row = figure(game, [name, f"{len(bots)}-seat table"], tally, deals * per_deal)
        row["table"] = list(bots)
        if base is not None:  # the same deals and seatings, deal set by deal set
            diffs = [a - b for a, b in zip(tally.pair_results, base.pair_results, strict=True)]
            mean, low, high = interval(diffs)
            row["vs_shipped"] = {"diff": round(mean, 4), "ci95": [round(low, 4), round(high, 4)]}
        yield row


def shipped_tables(jobs: list[tuple[str, tuple[str, ...], str]], workers: int) -> list[Tally]:
    """The same tables played again by the bots as they ship, without `--set`'s options."""
    given = {name: dict(options) for name, options in SETTINGS.items()}
    _setup(MOVE_TIME[0], {})
    try:
        return run_tables(jobs, workers)
    finally:
        _setup(MOVE_TIME[0], given)


def default_bots(example: str) -> list[str]:
    """The built-in bots, weakest first, with the example bot just above the first (random)."""
    names = list(BUILTIN_BOTS)
    if example != "none":
        names.insert(1, f"example-{example}")
    return names


def every_pair(names: Sequence[str]) -> list[str]:
    """Every bot of `names` against every weaker one (the registry lists them weakest first)."""
    return [f"{a}:{b}" for i, a in enumerate(names) for b in names[:i]][::-1]


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| game | bot | against | games | deal sets | wins (95% interval) | mean score | "
        "rival's | ms/decision mean | ms max |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        score = r.get("score", r.get("won"))
        low, high = r["ci95"]
        points = r.get("mean_points", r.get("mean_piles_closed"))
        rival = r.get("rival_mean_points", "-")
        if "piles_vs" in r:  # Solitaire: the paired difference with the next bot, same deals
            vs = r["piles_vs"]
            low_d, high_d = vs["ci95"]
            rival = f"{vs['diff']:+.2f} piles vs {vs['bot']} ({low_d:+.2f} to {high_d:+.2f})"
        if "vs_shipped" in r:  # a table with --set: the paired difference with the shipped bots
            vs = r["vs_shipped"]
            low_d, high_d = vs["ci95"]
            rival = (f"{100 * vs['diff']:+.1f} vs as shipped ({100 * low_d:+.1f} to "
                     f"{100 * high_d:+.1f})")
        lines.append(
            f"| {r['game']} | {r['bot']} | {r['against']} | {r['games']} | {r['deal_sets']} | "
            f"{100 * score:.1f}% ({100 * low:.1f}-{100 * high:.1f}) | {points} | {rival} | "
            f"{r['ms_mean']:.2f} | {r['ms_max']:.0f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="all", choices=[*HEAD_TO_HEAD, "solitaire", "all"])
    parser.add_argument("--games", type=int, default=1000, help="games per pairing")
    parser.add_argument("--pair", action="append", help="A:B, bot A against bot B (repeatable)")
    parser.add_argument("--solitaire-bot", dest="solitaire_bots", action="append")
    parser.add_argument("--quick", action="store_true", help="40 games per pairing")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--seed", default="bench", help="deal seeds are SEED:0, SEED:1, ...")
    parser.add_argument("--every-pair", action="store_true",
                        help="every built-in bot against every other, all of them at Solitaire")
    parser.add_argument("--table", type=int, default=0,
                        help="also a table of this many seats of the strongest bots")
    parser.add_argument("--table-games", type=int, default=None,
                        help="games at the table (default: --games), in whole deal sets of "
                        "N(N-1) seatings, 12 at 4 seats")
    parser.add_argument("--table-paired", action="store_true",
                        help="play the table's deals again with the bots as they ship (no "
                        "--set) and give each bot's change in first places, deal set by deal "
                        "set, with its 95%% interval")
    parser.add_argument("--bots", default=None,
                        help="the bots --every-pair and --table take, weakest first "
                        "(default: every built-in bot and the --example)")
    parser.add_argument("--example", default="python", choices=["python", "js", "c", "none"],
                        help="the example bot the default --bots take, above random "
                        "(default: python)")
    parser.add_argument("--docs", type=Path, default=None,
                        help="also write the table into this file, between its "
                        "strength-table markers (docs/bots.md)")
    parser.add_argument("--move-time", type=float, default=None,
                        help="seconds a decision for the bots that plan by the clock "
                        "(default: none, they take a fixed number of guesses)")
    parser.add_argument("--progress", action="store_true",
                        help="print each deal set's result and the running score on standard "
                        "error as it comes")
    parser.add_argument("--set", dest="settings", action="append", default=[],
                        metavar="BOT.OPTION=VALUE",
                        help="change an option of a built-in bot, e.g. search.clear=1 "
                        "(repeatable; an unknown option's error lists them)")
    args = parser.parse_args(argv)
    args.bots = default_bots(args.example) if args.bots is None else [
        b.strip() for b in args.bots.split(",") if b.strip()]
    known = [*BUILTIN_BOTS, *EXAMPLES, *RESEARCH]
    named = [*dict.fromkeys([b for p in (args.pair or []) for b in p.split(":")] + args.bots)]
    unknown = [b for b in named if b not in known]
    if unknown:
        parser.error(f"no bot {', '.join(unknown)}; bots: {', '.join(known)}")
    for name, program in (("example-js", "node"), ("example-c", "cc")):
        if name in named and shutil.which(program) is None:
            parser.error(f"{name} needs {program} on the PATH")
    _setup(args.move_time, read_settings(parser, args))
    PROGRESS[0] = args.progress
    if args.table and not 2 <= args.table <= len(args.bots):
        parser.error(f"--table: from 2 to {len(args.bots)} seats (the --bots)")
    if args.table_paired and not (args.table and args.settings):
        parser.error("--table-paired compares a table with --set's options against the same "
                     "table as the bots ship: give --table N and --set BOT.OPTION=VALUE")
    if args.every_pair:
        args.pair = args.pair or every_pair(args.bots)
        args.solitaire_bots = args.solitaire_bots or args.bots[::-1]
    args.pair = args.pair or list(DEFAULT_PAIRS)
    args.solitaire_bots = args.solitaire_bots or list(SOLITAIRE_BOTS)
    if args.quick:
        args.games = 40
    rows = []
    for row in figures(args):
        rows.append(row)
        print(json.dumps(row), flush=True)
    print()
    print(markdown(rows))
    if args.docs is not None:
        write_table(args.docs, markdown(rows))
    return 0


def read_settings(parser: argparse.ArgumentParser, args: argparse.Namespace
                  ) -> dict[str, dict[str, str]]:
    """`--set`'s options by bot, each checked on the bot in every game this run plays."""
    settings: dict[str, dict[str, str]] = {}
    games = [args.game] if args.game != "all" else [*HEAD_TO_HEAD, "solitaire"]
    for setting in args.settings:
        target, sep, text = setting.partition("=")
        name, dot, option = target.partition(".")
        if not sep or not dot or not option or not text:
            parser.error(f"--set {setting!r}: write BOT.OPTION=VALUE, e.g. search.clear=1")
        if name not in BUILTIN_BOTS and name not in RESEARCH:
            parser.error(f"--set {setting!r}: no built-in bot {name!r}; built-in bots: "
                         f"{', '.join(BUILTIN_BOTS)}")
        for game in games:
            try:
                option_value(make_bot(game, name, 0), option, text)
            except ValueError as error:
                parser.error(f"--set {setting!r} ({game}): {error}")
        settings.setdefault(name, {})[option] = text
    return settings


TABLE_START, TABLE_END = "<!-- strength-table -->", "<!-- /strength-table -->"


def write_table(path: Path, table: str) -> None:
    """`table` into the file at `path`, in place of what stands between its markers."""
    text = path.read_text(encoding="utf-8")
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    if start < 0 or end < start:
        raise SystemExit(f"{path}: no {TABLE_START} ... {TABLE_END} lines to write the table in")
    head = text[:start + len(TABLE_START)]
    path.write_text(f"{head}\n{table}\n{text[end:]}", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
