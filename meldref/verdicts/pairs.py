"""Head-to-head records and the cross table: every pair of bots, from their deal sets.

For two bots that shared tables: their games (wins, draws and losses against each other at
those tables), their deal sets (won, halved, lost), the score with its interval, Elo,
normalised Elo and LOS from the deal-set variance (`verdicts_elo`), the mean score margin per
game with its standard error, and, when every deal set has the same number of games m, how
many deal sets scored each of 0, 1/(2m), ..., 1 (for m = 2: the pentanomial LL, LD, LW+DD,
DW, WW).

Bots that never share a table (Five Crowns Solitaire: one seat) have no head-to-head; they
are compared on the deals both played: the difference of their win rates and of their scores,
paired by deal, with standard errors from the spread of the per-deal differences.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..engine.game import JSON
from .elo import Estimate, ScoreStats, ratio_estimate, signed
from .games import DealSet, GameResult, margin, pair_deal_sets


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Two bots' record against each other at the tables they shared, from `first`'s side."""

    first: str
    second: str
    deal_sets: tuple[DealSet, ...]

    @property
    def wins(self) -> int:
        return sum(d.wins for d in self.deal_sets)

    @property
    def draws(self) -> int:
        return sum(d.draws for d in self.deal_sets)

    @property
    def losses(self) -> int:
        return sum(d.losses for d in self.deal_sets)

    @property
    def games(self) -> int:
        return sum(d.games for d in self.deal_sets)

    @property
    def stats(self) -> ScoreStats:
        """Score, Elo, normalised Elo and LOS, with the deal sets as independent units."""
        return ScoreStats.from_units([d.half_points / 2 for d in self.deal_sets],
                                     [d.games for d in self.deal_sets])

    @property
    def margin(self) -> Estimate:
        """Mean score margin per game (positive: `first` did better), deal sets as units."""
        return ratio_estimate([d.margin for d in self.deal_sets],
                              [d.games for d in self.deal_sets])[0]

    @property
    def deal_record(self) -> tuple[int, int, int]:
        """Deal sets won, halved and lost (score above, at, below 1/2)."""
        won = sum(1 for d in self.deal_sets if d.half_points > d.games)
        lost = sum(1 for d in self.deal_sets if d.half_points < d.games)
        return won, len(self.deal_sets) - won - lost, lost

    @property
    def seatings(self) -> int | None:
        """m, the games of every deal set, when they all have the same number."""
        sizes = {d.games for d in self.deal_sets}
        return sizes.pop() if len(sizes) == 1 else None

    @property
    def counts(self) -> tuple[int, ...] | None:
        """Deal sets by half-points 0..2m (m = `seatings`); None if the sizes differ."""
        m = self.seatings
        if m is None:
            return None
        out = [0] * (2 * m + 1)
        for d in self.deal_sets:
            out[d.half_points] += 1
        return tuple(out)

    def flipped(self) -> HeadToHead:
        """The same record from `second`'s side."""
        return HeadToHead(self.second, self.first, tuple(d.flipped() for d in self.deal_sets))

    def to_json(self) -> dict[str, JSON]:
        won, halved, lost = self.deal_record
        counts = self.counts
        return {
            **self.stats.to_json(),
            "first": self.first, "second": self.second, "games": self.games,
            "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "deal_sets": len(self.deal_sets), "deal_sets_won": won,
            "deal_sets_halved": halved, "deal_sets_lost": lost,
            "seatings": self.seatings, "counts": None if counts is None else list(counts),
            "margin": self.margin.to_json(),
        }

    def text(self) -> str:
        """Two lines for people: the record, then the figures."""
        won, halved, lost = self.deal_record
        m = self.margin
        return (f"{self.first} vs {self.second}: +{self.wins} ={self.draws} -{self.losses} "
                f"({self.games} games; deal sets +{won} ={halved} -{lost})\n"
                f"{self.stats.text()}; score margin {signed(m.mean, 1)} per game"
                f"{_plus_minus(m, 1)}")


def _plus_minus(x: Estimate, scale: float) -> str:
    """", 95% CI +- 2.3" or " (no 95% interval: why)"."""
    why = x.why_no_interval
    if why is not None:
        return f" (no 95% interval: {why})"
    return f", 95% CI +- {scale * x.half_width:.1f}"


@dataclass(frozen=True, slots=True)
class SameDeals:
    """Two bots that never share a table compared on the deals both played (Solitaire),
    from `first`'s side: win rate and score differences paired by deal."""

    first: str
    second: str
    deals: int
    win_rate: Estimate  # first's win rate minus second's
    score: Estimate  # first's score minus second's, sign: positive = first did better

    def flipped(self) -> SameDeals:
        return SameDeals(self.second, self.first, self.deals,
                         self.win_rate.negated(), self.score.negated())

    def to_json(self) -> dict[str, JSON]:
        return {"first": self.first, "second": self.second, "deals": self.deals,
                "win_rate_difference": self.win_rate.to_json(),
                "score_difference": self.score.to_json()}

    def text(self) -> str:
        w, s = self.win_rate, self.score
        return (f"{self.first} vs {self.second} on {self.deals} common deals: win rate "
                f"{signed(100 * w.mean, 1)} points{_plus_minus(w, 100)}, score "
                f"{signed(s.mean, 2)}{_plus_minus(s, 1)}")


def head_to_head(games: Iterable[GameResult], first: str, second: str,
                 higher_is_better: bool) -> HeadToHead | None:
    """The record of `first` against `second`; None if they never shared a table."""
    games = [g for g in games if first in g.bots and second in g.bots]
    return _table(games, higher_is_better).get((first, second))


@dataclass(frozen=True, slots=True)
class CrossTable:
    """Every pair of bots: a head-to-head where they shared tables, else a same-deal
    comparison where both played one-seat games on common deals."""

    bots: tuple[str, ...]  # alphabetical
    pairs: tuple[HeadToHead | SameDeals, ...]  # first < second alphabetically

    def get(self, first: str, second: str) -> HeadToHead | SameDeals | None:
        """The pair from `first`'s side, or None if nothing compares them."""
        for pair in self.pairs:
            if (pair.first, pair.second) == (first, second):
                return pair
            if (pair.first, pair.second) == (second, first):
                return pair.flipped()
        return None

    def to_json(self) -> dict[str, JSON]:
        return {"bots": list(self.bots), "pairs": [p.to_json() for p in self.pairs]}


def cross_table(games: Sequence[GameResult], bots: Iterable[str] = (),
                higher_is_better: bool = False) -> CrossTable:
    """The cross table of every bot in `games` (and in `bots`, even without games)."""
    names = tuple(sorted({*bots, *(b for g in games for b in g.bots)}))
    table = _table(games, higher_is_better)
    same = _same_deals(games, higher_is_better)
    pairs: list[HeadToHead | SameDeals] = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if (a, b) in table:
                pairs.append(table[(a, b)])
            elif (a, b) in same:
                pairs.append(same[(a, b)])
    return CrossTable(names, tuple(pairs))


def _table(games: Iterable[GameResult], higher_is_better: bool
           ) -> dict[tuple[str, str], HeadToHead]:
    out: dict[tuple[str, str], HeadToHead] = {}
    for (a, b), deal_sets in pair_deal_sets(games, higher_is_better).items():
        h2h = HeadToHead(a, b, deal_sets)
        out[(a, b)], out[(b, a)] = h2h, h2h.flipped()
    return out


def _same_deals(games: Iterable[GameResult], higher_is_better: bool
                ) -> dict[tuple[str, str], SameDeals]:
    # Per bot and deal: (games, wins, summed score) over its one-seat games.
    played: dict[str, dict[int, list[float]]] = defaultdict(dict)
    for game in games:
        if len(game.bots) == 1:
            cell = played[game.bots[0]].setdefault(game.unit, [0, 0, 0.0])
            cell[0] += 1
            cell[1] += game.places[0] == 1
            cell[2] += game.scores[0]
    out: dict[tuple[str, str], SameDeals] = {}
    names = sorted(played)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            common = sorted(set(played[a]) & set(played[b]))
            if not common:
                continue
            wins, scores = [], []
            for d in common:
                ga, gb = played[a][d], played[b][d]
                wins.append(ga[1] / ga[0] - gb[1] / gb[0])
                scores.append(margin(ga[2] / ga[0], gb[2] / gb[0], higher_is_better))
            out[(a, b)] = SameDeals(a, b, len(common), _paired(wins), _paired(scores))
    return out


def _paired(differences: Sequence[float]) -> Estimate:
    ones = [1.0] * len(differences)
    return ratio_estimate(differences, ones)[0]
