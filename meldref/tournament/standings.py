"""Standings from finished games: openskill ratings, win rates with intervals, and SPRT.

Every figure is computed from the game results alone, in the order of the games' schedule index,
so a tournament played with several jobs (games finishing in any order) or resumed after an
interruption gives exactly the standings of an uninterrupted run.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

Z95 = 1.959963984540054  # two-sided 95% normal quantile


@dataclass(slots=True)
class BotLine:
    """One bot's row of the standings."""

    name: str
    games: int = 0
    wins: float = 0.0  # a win shared by k seats counts 1/k
    place_sum: int = 0
    score_sum: int = 0
    faults: int = 0
    mu: float = 0.0
    sigma: float = 0.0

    @property
    def ordinal(self) -> float:
        """The conservative rating openskill ranks by: mu - 3 sigma."""
        return self.mu - 3 * self.sigma

    @property
    def mean_place(self) -> float:
        return self.place_sum / self.games if self.games else 0.0

    @property
    def mean_score(self) -> float:
        return self.score_sum / self.games if self.games else 0.0

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "bot": self.name, "games": self.games, "wins": round(self.wins, 6),
            "win_rate": round(self.win_rate, 6), "mean_place": round(self.mean_place, 6),
            "mean_score": round(self.mean_score, 6), "faults": self.faults,
            "mu": round(self.mu, 6), "sigma": round(self.sigma, 6),
            "ordinal": round(self.ordinal, 6),
        }


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Two bots' record against each other, from the first bot's side."""

    first: str
    second: str
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + self.draws / 2) / self.games if self.games else 0.5

    def score_interval(self, z: float = Z95) -> Interval:
        """Wilson score interval of the first bot's score (draws count half)."""
        return wilson(self.score, self.games, z)

    def elo(self) -> tuple[float, Interval]:
        """The Elo difference the score implies, with the Wilson interval mapped to Elo."""
        band = self.score_interval()
        return elo_from_score(self.score), Interval(elo_from_score(band.low),
                                                    elo_from_score(band.high))

    def to_json(self) -> dict[str, Any]:
        band = self.score_interval()
        elo, elo_band = self.elo()
        return {
            "first": self.first, "second": self.second, "wins": self.wins, "draws": self.draws,
            "losses": self.losses, "score": round(self.score, 6),
            "score_ci95": [round(band.low, 6), round(band.high, 6)],
            "elo": _finite(elo), "elo_ci95": [_finite(elo_band.low), _finite(elo_band.high)],
        }


def _finite(x: float) -> float | None:
    return round(x, 2) if math.isfinite(x) else None


def wilson(p: float, n: int, z: float = Z95) -> Interval:
    """The Wilson score interval for a proportion `p` observed over `n` trials."""
    if n == 0:
        return Interval(0.0, 1.0)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def elo_from_score(score: float) -> float:
    """Logistic Elo difference for an expected score (infinite at 0 and 1)."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400 * math.log10(1 / score - 1)


def score_from_elo(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


# ----------------------------------------------------------------------------------------------
# SPRT


@dataclass(frozen=True, slots=True)
class SprtSpec:
    """Test H0: elo = elo0 against H1: elo = elo1 with error rates alpha and beta."""

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    @staticmethod
    def parse(text: str) -> SprtSpec:
        """From "elo0,elo1[,alpha,beta]", e.g. "0,10,0.05,0.05"."""
        parts = [p for p in text.replace(" ", "").split(",") if p]
        if len(parts) not in (2, 4):
            raise ValueError(f"--sprt {text!r}: expected elo0,elo1 or elo0,elo1,alpha,beta")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            raise ValueError(f"--sprt {text!r}: numbers expected") from None
        if not all(math.isfinite(v) for v in values):
            raise ValueError(f"--sprt {text!r}: finite numbers expected")
        spec = SprtSpec(*values)
        if spec.elo0 >= spec.elo1:
            raise ValueError(f"--sprt {text!r}: elo0 must be below elo1")
        if not (0 < spec.alpha < 0.5 and 0 < spec.beta < 0.5):
            raise ValueError(f"--sprt {text!r}: alpha and beta must be in (0, 0.5)")
        return spec

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, wins: int, draws: int, losses: int) -> float:
        """Log-likelihood ratio, the normal approximation of the trinomial (fishtest's GSPRT).

        Half a game is added to each of wins, draws and losses (a Jeffreys-style prior), so a
        one-sided record such as 10-0-0 has a variance and a finite ratio.
        """
        if wins + draws + losses == 0:
            return 0.0
        w, d, l_ = wins + 0.5, draws + 0.5, losses + 0.5
        n = w + d + l_
        s = (w + d / 2) / n
        var = (w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + l_ * s**2) / n
        s0, s1 = score_from_elo(self.elo0), score_from_elo(self.elo1)
        return (n - 1.5) * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)

    def verdict(self, wins: int, draws: int, losses: int) -> str | None:
        """"H1" (accept elo1), "H0" (accept elo0), or None while undecided."""
        llr = self.llr(wins, draws, losses)
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None


# ----------------------------------------------------------------------------------------------
# Standings


@dataclass(slots=True)
class Standings:
    """Every bot's line, ranked by openskill ordinal, and the head-to-head of two bots."""

    lines: list[BotLine]
    head_to_head: HeadToHead | None = None
    sprt: SprtSpec | None = None
    failed_games: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"standings": [line.to_json() for line in self.lines],
                               "failed_games": self.failed_games}
        if self.head_to_head is not None:
            h = self.head_to_head
            out["head_to_head"] = h.to_json()
            if self.sprt is not None:
                out["sprt"] = {
                    "elo0": self.sprt.elo0, "elo1": self.sprt.elo1, "alpha": self.sprt.alpha,
                    "beta": self.sprt.beta, "llr": round(self.sprt.llr(h.wins, h.draws,
                                                                       h.losses), 4),
                    "bounds": [round(self.sprt.lower, 4), round(self.sprt.upper, 4)],
                    "verdict": self.sprt.verdict(h.wins, h.draws, h.losses),
                }
        return out


def compute_standings(
    results: Iterable[Mapping[str, Any]],
    bots: Sequence[str],
    sprt: SprtSpec | None = None,
) -> Standings:
    """Standings from result lines (see `meldref.tournament.run`): `bots`, `places`, `scores`."""
    ordered = sorted(results, key=lambda r: r.get("index", 0))
    lines = {name: BotLine(name) for name in bots}
    model = PlackettLuce()
    ratings = {name: model.rating(name=name) for name in bots}
    failed = 0
    for result in ordered:
        if result.get("status") != "ok":
            failed += 1
            continue
        _count(result, lines)
        _rate(model, result, ratings)
    tables = _solitaire_tables(ordered)
    for table in tables:
        _rate(model, table, ratings)
    for name, line in lines.items():
        line.mu, line.sigma = ratings[name].mu, ratings[name].sigma
    ranked = sorted(lines.values(), key=lambda b: (-b.ordinal, b.name))
    h2h = head_to_head([*ordered, *tables], bots[0], bots[1]) if len(bots) == 2 else None
    return Standings(ranked, h2h, sprt if h2h else None, failed)


def _count(result: Mapping[str, Any], lines: dict[str, BotLine]) -> None:
    seats, places, scores = result["bots"], result["places"], result["scores"]
    winners = [s for s, p in enumerate(places) if p == 1]
    faults = result.get("faults") or [[] for _ in seats]
    for seat, name in enumerate(seats):
        line = lines.setdefault(name, BotLine(name))
        line.games += 1
        line.place_sum += places[seat]
        line.score_sum += scores[seat]
        line.faults += len(faults[seat])
        if seat in winners:  # none in a lost Solitaire game (place 2: the deck won)
            line.wins += 1 / len(winners)


def _rate(model: PlackettLuce, result: Mapping[str, Any], ratings: dict[str, Any]) -> None:
    seats, places = result["bots"], result["places"]
    if len(set(seats)) != len(seats) or len(seats) < 2:
        return  # a bot against itself, or solitaire: nothing to learn about relative strength
    for name in seats:
        ratings.setdefault(name, model.rating(name=name))
    teams = [[ratings[name]] for name in seats]
    rated = model.rate(teams, ranks=list(places))
    for name, team in zip(seats, rated, strict=True):
        ratings[name] = team[0]


def _solitaire_tables(results: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One-seat games (Solitaire) rated as if the bots that played the same deal sat at one
    table, ranked by score (piles closed: higher is better)."""
    by_seed: dict[Any, list[Mapping[str, Any]]] = {}
    for r in results:
        if r.get("status") == "ok" and len(r["bots"]) == 1:
            by_seed.setdefault(r["seed"], []).append(r)
    tables = []
    for games in by_seed.values():
        if len({g["bots"][0] for g in games}) < 2 or len(games) != len({g["bots"][0]
                                                                        for g in games}):
            continue
        scores = [g["scores"][0] for g in games]
        places = [1 + sum(1 for t in scores if t > s) for s in scores]
        tables.append({"bots": [g["bots"][0] for g in games], "places": places,
                       "status": "ok"})
    return tables


def head_to_head(results: Iterable[Mapping[str, Any]], first: str, second: str) -> HeadToHead:
    """Wins, draws and losses of `first` against `second` over games where both sat."""
    wins = draws = losses = 0
    for r in results:
        if r.get("status") != "ok" or first not in r["bots"] or second not in r["bots"]:
            continue
        a = r["places"][r["bots"].index(first)]
        b = r["places"][r["bots"].index(second)]
        wins += a < b
        draws += a == b
        losses += a > b
    return HeadToHead(first, second, wins, draws, losses)
