"""Finished games as the verdicts read them, and what one deal gave one pair of bots.

A result line (`results.jsonl`) becomes a `GameResult`: the deal, the bots in seat order, their
places and scores. Everything downstream sorts games by `GameResult.key`, which names the
table by its bots in alphabetical order (not by the schedule's table number, which follows the
order bots were listed in), so the figures never depend on the order of games or of bots.

The unit of evidence for two bots is the *deal set*: every game of one deal in which both sat.
A deal is named by its seed when the line has one (each table of a tournament deals its own
cards, `tournament.schedule.deal_seed`), else by its number; with duplicate deals a deal set
is one deal played in every seating of the schedule (at several tables, if they share their
cards: those games belong to one unit); without, a single game.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..engine.game import JSON

GameKey = tuple[tuple[str, ...], int, tuple[str, ...], tuple[int, ...], tuple[float, ...]]


class ResultLineError(ValueError):
    """A result line that lacks what the verdicts need (deal, bots, places, scores)."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """One finished game: its deal, the bots in seat order, their places (1 = best, equal
    places share) and their scores in the game's own units; the deal's seed when known."""

    deal: int
    bots: tuple[str, ...]
    places: tuple[int, ...]
    scores: tuple[float, ...]
    seed: int | None = None

    def __post_init__(self) -> None:
        if not (len(self.bots) == len(self.places) == len(self.scores) >= 1):
            raise ResultLineError(f"deal {self.deal}: bots, places and scores differ in length")

    @staticmethod
    def from_json(line: Mapping[str, JSON]) -> GameResult | None:
        """The game of a result line; None for a game that did not finish ("status" not
        "ok"); `ResultLineError` for a line without its deal, bots, places or scores."""
        if line.get("status") != "ok":
            return None
        try:
            deal = line["deal"]
            bots, places, scores = line["bots"], line["places"], line["scores"]
            if isinstance(deal, bool) or not isinstance(deal, int):
                raise TypeError("deal")
            seed = line.get("seed")
            if isinstance(seed, bool) or not isinstance(seed, int):
                seed = None
            return GameResult(deal, tuple(str(b) for b in bots), tuple(int(p) for p in places),
                              tuple(float(s) for s in scores), seed)
        except (KeyError, TypeError, ValueError) as exc:
            name = line.get("game_id", "?")
            raise ResultLineError(f"result {name}: no usable {exc}") from None

    @property
    def table(self) -> tuple[str, ...]:
        """The bots at the table, in alphabetical order."""
        return tuple(sorted(self.bots))

    @property
    def unit(self) -> int:
        """What names the deal: its seed, else its number (games of one unit share cards)."""
        return self.deal if self.seed is None else self.seed

    @property
    def key(self) -> GameKey:
        """The canonical order of games: by table, deal, then seating."""
        return (self.table, self.unit, self.bots, self.places, self.scores)

    @property
    def rated(self) -> bool:
        """Whether the game tells bots apart: two seats or more, no bot in two of them (a
        bot against itself, or alone at Solitaire, says nothing about relative strength)."""
        return len(self.bots) >= 2 and len(set(self.bots)) == len(self.bots)


def read_games(lines: Iterable[Mapping[str, JSON]]) -> list[GameResult]:
    """The finished games of result lines, in canonical order (unfinished ones left out)."""
    games = [g for g in (GameResult.from_json(line) for line in lines) if g is not None]
    return sorted(games, key=lambda g: g.key)


def margin(first_score: float, second_score: float, higher_is_better: bool) -> float:
    """How much better `first` did, in score units: positive = first better. Phase 10 and
    Five Crowns count penalty points (lower is better), Solitaire piles closed (higher)."""
    return first_score - second_score if higher_is_better else second_score - first_score


@dataclass(frozen=True, slots=True)
class DealSet:
    """What one deal gave two bots: the games where both sat, the first bot's wins (placed
    better) and draws (equal places) among them, and its summed score margin."""

    deal: int
    games: int
    wins: int
    draws: int
    margin: float

    @property
    def losses(self) -> int:
        return self.games - self.wins - self.draws

    @property
    def half_points(self) -> int:
        """2 per win, 1 per draw: 0..2m for a deal set of m games."""
        return 2 * self.wins + self.draws

    @property
    def score(self) -> float:
        return self.half_points / (2 * self.games)

    def flipped(self) -> DealSet:
        return DealSet(self.deal, self.games, self.losses, self.draws, -self.margin)


Pair = tuple[str, str]


def pair_deal_sets(games: Iterable[GameResult], higher_is_better: bool
                   ) -> dict[Pair, tuple[DealSet, ...]]:
    """Every pair of bots that shared a table (the names in alphabetical order) with its deal
    sets in deal order, from the first name's side. Games that are not `rated` are left
    out."""
    acc: dict[Pair, dict[int, list[float]]] = defaultdict(dict)
    for game in sorted(games, key=lambda g: g.key):
        if not game.rated:
            continue
        for i, j in _seat_pairs(game):
            a, b = game.bots[i], game.bots[j]
            pa, pb = game.places[i], game.places[j]
            cell = acc[(a, b)].setdefault(game.unit, [0, 0, 0, 0.0])
            cell[0] += 1
            cell[1] += pa < pb
            cell[2] += pa == pb
            cell[3] += margin(game.scores[i], game.scores[j], higher_is_better)
    return {pair: tuple(DealSet(d, int(c[0]), int(c[1]), int(c[2]), c[3])
                        for d, c in sorted(deals.items()))
            for pair, deals in sorted(acc.items())}


def _seat_pairs(game: GameResult) -> Iterable[tuple[int, int]]:
    """Seat pairs (i, j) with game.bots[i] < game.bots[j] alphabetically."""
    seats = sorted(range(len(game.bots)), key=lambda s: game.bots[s])
    for x, i in enumerate(seats):
        for j in seats[x + 1:]:
            yield i, j


def deal_sets_of(games: Iterable[GameResult], first: str, second: str,
                 higher_is_better: bool) -> tuple[DealSet, ...]:
    """The deal sets of two bots from `first`'s side (empty if they never shared a table)."""
    a, b = sorted((first, second))
    found = pair_deal_sets((g for g in games if first in g.bots and second in g.bots),
                           higher_is_better).get((a, b), ())
    return found if a == first else tuple(d.flipped() for d in found)


def complete_deal_sets(deal_sets: Sequence[DealSet], seatings: int) -> list[DealSet]:
    """The deal sets with all their `seatings` games (the SPRT's units); a deal cut short by
    a stopped or failed run is left out rather than counted with some seatings missing."""
    return [d for d in deal_sets if d.games == seatings]
