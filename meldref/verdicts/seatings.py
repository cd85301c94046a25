"""The seatings one deal is played in, so that neither the cards of a seat nor the neighbour
a bot sits after can favour a bot over the deal set.

A seating is a tuple: `seating[s]` is the position, in the table's list of bots, of the bot
in seat s. Play goes round the table, seat k-1 passing to seat 0, so "b immediately follows a"
(b plays right after a: b may take what a discards, and a discards knowing b is next) is
counted round the table, wrap-around included.

Two properties are asked of a deal's seatings, over all its games:
- seat balance: every bot holds every seat equally often;
- neighbour balance: every bot immediately follows every other bot equally often.
Both together need a multiple of k(k-1) games per deal (k for the seats, k-1 for the
neighbours, and k and k-1 share no factor), so the smallest balanced deal set has k(k-1)
games: 2, 6, 12, 20, 30, 42 for k = 2..7.

What `seatings(k)` gives:
- k = 2..7: k(k-1) seatings with both properties (each bot in each seat k-1 times, after each
  other bot k times), in k-1 blocks of k seatings that are each a Latin square (every block
  alone is seat-balanced, so a deal set cut short after whole blocks still is). For k != 4
  the blocks are the k shifts (values + r mod k) of a base seating; the bases' cyclic
  differences cover every non-zero residue mod k exactly k times, which is neighbour balance.
  (For prime k the bases are j, 2j, 3j, ... mod k; k = 6 came from a search.) No such bases
  exist for k = 4; its 12 seatings came from an integer-programming search.
- k = 8..14: a Williams design, k seatings for even k and 2k for odd k (k(k-1) = 56..182
  games per deal would be more than a tournament plays): seat balance holds (each bot once
  per seat for even k, twice for odd k); each bot follows every other bot in the seats
  0..k-1 exactly once (even k) or twice (odd k), and the wrap-around from seat k-1 to seat 0
  adds one more for k (even) or 2k (odd) of the ordered pairs: every bot follows every other
  at least once, never more than one time more than the least. `williams(k)` gives this
  design for any k (for k <= 7 too, when a tournament cannot afford k(k-1) games per deal).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..engine.game import JSON

Seating = tuple[int, ...]
MAX_SEATS: Final = 14

# Base seatings whose k value-shifts, together, are balanced for seats and neighbours.
_BASES: Final[dict[int, tuple[Seating, ...]]] = {
    2: ((0, 1),),
    3: ((0, 1, 2), (0, 2, 1)),
    5: ((0, 1, 2, 3, 4), (0, 2, 4, 1, 3), (0, 3, 1, 4, 2), (0, 4, 3, 2, 1)),
    6: ((0, 1, 2, 3, 4, 5), (0, 2, 4, 1, 5, 3), (0, 2, 5, 3, 1, 4), (0, 3, 1, 5, 2, 4),
        (0, 5, 4, 3, 2, 1)),
    7: tuple(tuple(j * s % 7 for s in range(7)) for j in range(1, 7)),
}
# k = 4 has no such bases; three Latin squares found by search (scipy.optimize.milp).
_FOUR: Final[tuple[Seating, ...]] = (
    (0, 1, 2, 3), (1, 3, 0, 2), (2, 0, 3, 1), (3, 2, 1, 0),
    (0, 2, 3, 1), (1, 3, 2, 0), (2, 0, 1, 3), (3, 1, 0, 2),
    (0, 3, 1, 2), (1, 2, 3, 0), (2, 1, 0, 3), (3, 0, 2, 1),
)


def seatings(k: int) -> tuple[Seating, ...]:
    """The seatings of one deal at a table of `k` seats, in playing order (see the module
    docstring for the properties that hold at each k). k = 1 is the one seating (0,)."""
    if not 1 <= k <= MAX_SEATS:
        raise ValueError(f"seatings: 1..{MAX_SEATS} seats, not {k}")
    if k == 1:
        return ((0,),)
    if k == 4:
        return _FOUR
    if k in _BASES:
        return tuple(tuple((b + r) % k for b in base) for base in _BASES[k] for r in range(k))
    return williams(k)


def williams(k: int) -> tuple[Seating, ...]:
    """A Williams design: k seatings (even k) or 2k (odd k); see the module docstring."""
    if k < 2:
        raise ValueError(f"williams: 2 seats or more, not {k}")
    first, low, high = [0], 1, k - 1
    while len(first) < k:  # 0, 1, k-1, 2, k-2, ...
        first.append(low)
        low += 1
        if len(first) < k:
            first.append(high)
            high -= 1
    rows = [tuple((x + r) % k for x in first) for r in range(k)]
    if k % 2:
        rows += [tuple(reversed(row)) for row in rows]
    # Renamed so the first seating is the table as listed (renaming keeps both balances).
    name = {x: i for i, x in enumerate(first)}
    return tuple(tuple(name[x] for x in row) for row in rows)


@dataclass(frozen=True, slots=True)
class Balance:
    """How often each bot holds each seat, and follows each other bot, over some seatings."""

    seat_counts: frozenset[int]  # the distinct values of count(bot, seat)
    follow_counts: frozenset[int]  # the distinct values of count(bot a, then bot b), a != b

    @property
    def seats_balanced(self) -> bool:
        return len(self.seat_counts) == 1

    @property
    def neighbours_balanced(self) -> bool:
        return len(self.follow_counts) == 1 and 0 not in self.follow_counts

    def to_json(self) -> dict[str, JSON]:
        return {"seat_counts": sorted(self.seat_counts),
                "follow_counts": sorted(self.follow_counts),
                "seats_balanced": self.seats_balanced,
                "neighbours_balanced": self.neighbours_balanced}


def balance(rows: Sequence[Seating]) -> Balance:
    """The seat and neighbour counts of `rows` (all of one table size k >= 2)."""
    k = len(rows[0])
    if any(sorted(row) != list(range(k)) for row in rows):
        raise ValueError("balance: every seating must place each of 0..k-1 once")
    seats = Counter((row[s], s) for row in rows for s in range(k))
    follows = Counter((row[s], row[(s + 1) % k]) for row in rows for s in range(k))
    seat_counts = frozenset(seats[(b, s)] for b in range(k) for s in range(k))
    follow_counts = frozenset(follows[(a, b)] for a in range(k) for b in range(k) if a != b)
    return Balance(seat_counts, follow_counts)
