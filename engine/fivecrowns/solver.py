"""The best way to lay a Five Crowns hand in books and runs, exactly and fast.

Used by both Five Crowns games: "can this hand go out" (every card but the discard in books and
runs), the points a last-turn hand leaves, whether a Solitaire pile closes, and the bots.

How it searches. Wilds (Jokers and the round's wild rank) are interchangeable, so the search runs
over the natural cards only (at most 14) and counts the wilds each choice needs. The lowest
natural left is either left over, or in the book of its rank (with any subset of the other
naturals of that rank), or the lowest natural of a run of its suit up to some higher natural,
taking every natural of that suit in between (wilds fill the gaps and pad the run to 3). Results
are memoised on the multiset of naturals left, up to a renaming of the suits (which play
symmetric parts), as a table "fewest points left over with at most w wilds" for every w, so one
table answers the hand less any one card. The recursion runs on that shape itself (`Shapes`: per
suit, a count of each rank), so every hand, pile and game shares the tables; groups are built by
walking the same choices over the hand's own cards (`_Search.walk`), against the tables.

Why that is exact:
- A run that skips a natural x of its suit and range (a wild at x's place) can take x instead:
  the freed wild goes where x was (a book or another run keeps its length) or, if x was left
  over, the total only drops. A group left without a natural (when every group needs one) is
  broken up and its wilds go elsewhere, as below.
- Once the hand has one group, every other wild fits somewhere: in a book (no size limit), on a
  run shorter than 3..K, or by reshaping a full run (see `_reshape`). So the points left are the
  naturals left over, and wilds only count when no group can be made at all.
- Discards: the best split of the whole hand less card c, plus c, is a split of the whole hand,
  so it leaves at least (the whole hand's best) - (c's points); with c left over in that best
  split, exactly that. The best discard is searched from the costliest card down and stops once
  that floor rules out every cheaper card.
- Going out, for every discard at once (`outs`): a hand goes out when every natural is in a
  group, so the same choices less "left over" decide whether the naturals all fit in groups
  within a budget of wilds (`fits`, a search that stops at the first way; a grouping within
  budget b has no group needing more than b, so the search tries no others), and the hand less
  c goes out exactly when they fit within its wilds (wilds alone: one book of them, where the
  natural option allows it). Two facts of the whole hand answer most discards without a search
  of their own, and neither can turn an answer: a *loner*, a natural with fewer than two other
  cards of its rank counting the wilds and no three consecutive ranks of its suit around it
  whose gaps the wilds fill, is in no group of the hand nor of any smaller hand (a run holds
  three such ranks), so the hand less any card but that loner keeps it and does not go out;
  and a grouping of the hand less a natural c, plus the book of c and two wilds, groups the
  whole hand: so when the whole hand's naturals do not fit within its wilds plus two
  (`near_out`), no discard goes out (less a wild, the budget is smaller still). The other
  way round, when they fit with a wild to spare, every natural may go (`spare_wild`).
- The tables are shared by every solver (`Shapes`): a state's values are a function of the
  naturals left up to a renaming of suits, the mode and the number of wilds only. On shapes the
  choices are the same as on cards, in counts of copies rather than particular copies (two
  copies of a card are interchangeable), so both searches find the same values.
- Loners are left over in every split, so `points` searches the rest without them and adds
  their points. `wild_floor`, a floor under the wilds that group every natural, adds up the
  fewest wilds of groups that cannot be one group: any group holding natural x needs at least
  3 less the naturals of x's rank (a book) or the gaps of the three consecutive ranks around x
  at the fewest (a run), and naturals of different ranks and suits never share a group.
Every answer is built into real groups through `meld_check.build_meld`, which checks it again.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Final, Literal

from ..cards import FIVECROWNS_SUITED, JOKER, SUITS, Card, Kind
from ..game import Rebuilt, by_init
from ..meld_check import build_meld
from ..melds import GroupKind, Meld, MeldRules
from .rules import fivecrowns_melds

Natural = Literal["none", "group"]

JOKER_POINTS: Final = 50
WILD_POINTS: Final = 20  # the round's (or pile's) wild rank
MIN_GROUP: Final = 3
RUN_MAX: Final = 11  # 3..K
LOWEST, HIGHEST = 3, 13


def card_points(card: Card, wild_rank: int) -> int:
    """What `card` costs when left unused: face value, J 11, Q 12, K 13, Joker 50, wild rank 20."""
    if card.kind is Kind.JOKER:
        return JOKER_POINTS
    return WILD_POINTS if card.rank == wild_rank else card.rank


def hand_points(cards: Iterable[Card], wild_rank: int) -> int:
    """The points of `cards` left unused."""
    return sum(card_points(c, wild_rank) for c in cards)


@dataclass(frozen=True, slots=True)
class Split:
    """A way to lay a hand: its books and runs, the cards left over and their points."""

    groups: tuple[Meld, ...]
    leftover: tuple[Card, ...]
    points: int

    def __init__(self, groups: tuple[Meld, ...], leftover: tuple[Card, ...],
                 points: int) -> None:
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "leftover", leftover)
        object.__setattr__(self, "points", points)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    @property
    def goes_out(self) -> bool:
        """Every card is in a book or run."""
        return not self.leftover


# ----------------------------------------------------------------------------------------------
# The search. Naturals are sorted by rank, then suit; a state is the bit mask of the naturals
# left, plus a mode: once the book of the lowest rank is made, the other naturals of that rank
# may only start runs (a hand needs one book of a rank at most, as two merge, and a natural left
# over beside a book of its rank would join it). Of two equal cards the lower bit always goes
# first, so equal multisets have equal masks and share the memo.

# Final: compiled, a Final constant is inlined where a plain global is a module dict lookup.
FREE: Final = 0
RUN_ONLY: Final = 1
INFINITE: Final = 1 << 20
LEAVE: Final = -1

_SUIT_INDEX: Final = {s: i for i, s in enumerate(SUITS)}

Option = tuple[int, int, int]  # wilds needed (LEAVE: left over), naturals used, next mode


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low
        mask ^= low


def _lowest(mask: int, k: int) -> int:
    """The k lowest bits of `mask`."""
    out = 0
    for _ in range(k):
        low = mask & -mask
        out |= low
        mask ^= low
    return out


# ----------------------------------------------------------------------------------------------
# The values, by shape. A state's values depend only on its shape: the naturals left up to a
# renaming of suits (suits play symmetric parts), the mode and the number of wilds; not on the
# hand it came from nor on the wild rank (wild-rank cards are wilds, never naturals). So the
# recursion runs on shapes themselves, and its tables are shared by every solver: the next
# turn's hand, the next pile and the next game find most of their states already solved.
#
# A shape is (mode, s0, ..., s4): per suit, the sum of 8 ** (rank - 3) over its naturals
# (3 bits per rank count up to 7 copies), the five sorted. The choices for the lowest natural
# are those of `_Search.options` (a book of its rank, any copies of the other suits' or a run
# of its suit taking one copy of each rank up to a higher natural), in counts of copies.

Shape = tuple[int, ...]
# States kept in all the tables together (about 300 bytes each: under a MiB): past it they start
# afresh. The searches gain far more from their floors than from old states, so a small bound
# costs little; Solitaire's end of game (`pile_points`) finds a third fewer states to search
# with 3072 than with 1024.
TABLE_LIMIT: Final = 3072


class _Counts:
    """The tables' counts, as attributes of one object rather than module globals (compiled,
    a global is a dict entry read and written through the module's dict, on every state)."""

    def __init__(self) -> None:
        self.stored = 0  # states in all the tables together
        self.fits_solved = 0  # `fits` states searched (`solved_states`)


_COUNTS: Final = _Counts()


def _count_one() -> None:
    """One more state stored; at the bound every table is emptied (in place)."""
    _COUNTS.stored += 1
    if _COUNTS.stored > TABLE_LIMIT:
        clear_tables()


def _shape(mode: int, sigs: list[int]) -> Shape:
    """(mode, the five suits' signatures in order): a sorting network of five rather than
    `sorted` (compiled, it runs on machine integers and allocates only the tuple; a search
    makes several shapes a state)."""
    a, b, c, d, e = sigs
    if a > b:
        a, b = b, a
    if d > e:
        d, e = e, d
    if c > e:
        c, e = e, c
    if c > d:
        c, d = d, c
    if a > d:
        a, d = d, a
    if a > c:
        a, c = c, a
    if b > e:
        b, e = e, b
    if b > d:
        b, d = d, b
    if b > c:
        b, c = c, b
    return (mode, a, b, c, d, e)


def _can_run(sig: int, r: int, wilds: int) -> bool:
    """Whether the natural of rank index r of a suit with signature `sig` can be the lowest
    card of a run with a higher natural of the suit (within `wilds`)."""
    count = 1
    for t in range(r + 1, HIGHEST - LOWEST + 1):
        if sig >> 3 * t & 7:
            count += 1
            span = t - r + 1
            if max(MIN_GROUP, span) - count <= wilds:
                return True
            if span >= MIN_GROUP:
                return False
    return False


def _after(sigs: list[int], unit: int) -> int:
    """RUN_ONLY while naturals of the book's rank (the group of bits `unit`) remain."""
    group = unit * 7
    return RUN_ONLY if any(sig & group for sig in sigs) else FREE


class Shapes:
    """The search's values for hands with `wilds` wilds, by shape, memoised (bounded)."""

    def __init__(self, wilds: int, count: bool = False) -> None:
        self.wilds = wilds
        self.count = count  # what a natural left over costs: 1 (`fewest_left`), else its points
        self.tables: dict[Shape, tuple[int, ...]] = {}
        self.solved = 0  # states searched so far (a hand's hardness, for benchmarks)

    def left(self, shape: Shape) -> tuple[int, ...]:
        """Fewest natural points left over, with at most w wilds (w = 0..wilds)."""
        hit = self.tables.get(shape)
        if hit is not None:
            return hit
        top = self.wilds
        if not any(shape[1:]):
            result = (0,) * (top + 1)
        else:
            tables, count = self.tables, self.count
            best = [INFINITE] * (top + 1)
            for need, after, cost in _options(shape, top, True):
                sub = tables.get(after) or self.left(after)
                if need == LEAVE:
                    if count:
                        cost = 1
                    for w in range(top + 1):
                        if sub[w] + cost < best[w]:
                            best[w] = sub[w] + cost
                    continue
                for w in range(need, top + 1):
                    if sub[w - need] < best[w]:
                        best[w] = sub[w - need]
            result = tuple(best)
        _count_one()
        self.solved += 1
        self.tables[shape] = result
        return result


def _options(shape: Shape, wilds: int, leave: bool) -> list[tuple[int, Shape, int]]:
    """The choices for the lowest natural of `shape` needing at most `wilds` wilds: (wilds
    needed or LEAVE, the shape after, the points left over); LEAVE only with `leave`. (A list,
    not a generator: a search asks for them thousands of times a second, and there are few.)"""
    mode, sigs = shape[0], list(shape[1:])
    held = 0  # every rank held, in any suit
    for sig in sigs:
        held |= sig
    r = ((held & -held).bit_length() - 1) // 3  # the lowest rank, as 3..K = 0..10
    unit = 1 << 3 * r
    group = unit * 7
    j = 0  # the first suit holding it
    while not sigs[j] & group:
        j += 1
    out: list[tuple[int, Shape, int]] = []
    if mode == FREE:
        if leave:
            rest = list(sigs)
            rest[j] = rest[j] - unit
            out.append((LEAVE, _shape(FREE, rest), r + LOWEST))
        if any(sig & group for sig in sigs[j + 1:]) or sigs[j] >> 3 * r & 7 > 1:
            _books(out, sigs, r, j, unit, wilds)
        elif wilds >= MIN_GROUP - 1:  # the only natural of its rank: a book of it and 2 wilds
            rest = list(sigs)
            rest[j] = rest[j] - unit
            out.append((MIN_GROUP - 1, _shape(FREE, rest), 0))
    run = sigs[j]
    used, count = unit, 1
    for t in range(r + 1, HIGHEST - LOWEST + 1):
        if not run >> 3 * t & 7:
            continue
        used += 1 << 3 * t
        count += 1
        span = t - r + 1
        need = max(MIN_GROUP, span) - count
        if need <= wilds:
            rest = list(sigs)
            rest[j] = rest[j] - used
            after = mode if mode == FREE else _after(rest, unit)
            out.append((need, _shape(after, rest), 0))
        elif span >= MIN_GROUP:
            break  # longer runs only need more
    return out


def _books(out: list[tuple[int, Shape, int]], sigs: list[int], r: int, j: int, unit: int,
           wilds: int) -> None:
    """Append the books of the lowest natural (rank r, suit j) to `out`."""
    # A natural of the rank kept out of the book must start a run, so one that cannot is in.
    choices = []
    for i, sig in enumerate(sigs):
        n = (sig >> 3 * r & 7) - (i == j)
        if n > 0:
            least = 0 if _can_run(sig, r, wilds) else n
            choices.append([(i, k) for k in range(least, n + 1)])
    for picked in product(*choices):
        rest = list(sigs)
        rest[j] = rest[j] - unit
        taken = 1
        for i, k in picked:
            rest[i] = rest[i] - (k * unit)
            taken += k
        need = max(0, MIN_GROUP - taken)
        if need <= wilds:
            out.append((need, _shape(_after(rest, unit), rest), 0))


# Whether a shape's naturals all fit in groups within a budget of wilds: per shape, the largest
# budget known to fail and the smallest known to do (any smaller fails, any larger does).
# Independent of the hand's wilds: a grouping within budget b has no group needing more.
FITS: Final[dict[Shape, tuple[int, int]]] = {}


def fits(shape: Shape, budget: int) -> bool:
    """Whether every natural of `shape` goes in a group with at most `budget` wilds in all."""
    fail, ok = FITS.get(shape, (-1, INFINITE))
    if budget <= fail:
        return False
    if budget >= ok:
        return True
    found = not any(shape[1:]) or any(
        fits(after, budget - need) for need, after, _ in _options(shape, budget, False))
    _COUNTS.fits_solved += 1
    _count_one()
    FITS[shape] = (fail, budget) if found else (budget, ok)
    return found


SHAPES: Final[dict[tuple[int, bool], Shapes]] = {}  # per number of wilds and cost


def shapes(wilds: int, count: bool = False) -> Shapes:
    """The shared tables of hands with `wilds` wilds (`count`: cards left, not points)."""
    found = SHAPES.get((wilds, count))
    if found is None:
        found = SHAPES[wilds, count] = Shapes(wilds, count)
    return found


def clear_tables() -> None:
    """Forget every state (benchmarks time a cold search; the memory bound)."""
    for table in SHAPES.values():  # in place: a search under way goes on with its own
        table.tables.clear()
    FITS.clear()
    _COUNTS.stored = 0


def reset_counts() -> None:
    """Empty the tables and zero the counts of `solved_states`."""
    clear_tables()
    for table in SHAPES.values():
        table.solved = 0
    _COUNTS.fits_solved = 0


def solved_states() -> int:
    """States searched so far (a hand's hardness, after `clear_tables`, for benchmarks)."""
    return sum(table.solved for table in SHAPES.values()) + _COUNTS.fits_solved


class _Search:
    """Fewest natural points left over, for every wild budget, memoised per state."""

    def __init__(self, naturals: Iterable[Card], wilds: int, count: bool = False) -> None:
        self.cards = sorted(naturals, key=lambda c: (c.rank, _SUIT_INDEX[c.suit]))
        self.wilds = wilds
        self.rank = [c.rank for c in self.cards]
        # What a natural left over costs: its points, or 1 when counting cards (`fewest_left`).
        self.cost = [1] * len(self.cards) if count else self.rank
        self.full = (1 << len(self.cards)) - 1
        self.by_rank: dict[int, int] = {}  # rank -> bits of its naturals
        copies: dict[tuple[str, int], int] = {}  # (suit, rank) -> bits of one card's copies
        for i, c in enumerate(self.cards):
            self.by_rank[c.rank] = self.by_rank.get(c.rank, 0) | 1 << i
            copies[c.suit, c.rank] = copies.get((c.suit, c.rank), 0) | 1 << i
        self.copies = copies
        # Per natural: the (rank, bits) of each higher rank of its suit in the hand.
        self.ladder = [
            [(r, copies[c.suit, r]) for r in range(c.rank + 1, HIGHEST + 1)
             if (c.suit, r) in copies]
            for c in self.cards
        ]
        self.memo: dict[int, tuple[int, ...]] = {}
        self.shapes = shapes(wilds, count)
        self.suit_of = [_SUIT_INDEX[c.suit] for c in self.cards]
        # A card's weight in its suit's signature: 3 bits per rank count up to 7 copies.
        self.weight = [1 << 3 * (c.rank - LOWEST) for c in self.cards]
        self.rank_copies = {
            r: [copies[s, r] for s in SUITS if (s, r) in copies] for r in self.by_rank
        }

    def shape(self, mask: int, mode: int) -> Shape:
        """The state up to a renaming of suits (see `Shapes`)."""
        sig = [0, 0, 0, 0, 0]
        suit, weight = self.suit_of, self.weight
        while mask:
            low = mask & -mask
            i = low.bit_length() - 1
            s = suit[i]
            sig[s] = sig[s] + weight[i]
            mask ^= low
        return _shape(mode, sig)

    def mask_of(self, cards: Iterable[Card]) -> int:
        """The state holding exactly `cards` (naturals of the hand)."""
        mask = 0
        for c in cards:
            free = self.copies[c.suit, c.rank] & ~mask
            mask |= free & -free
        return mask

    def points(self, mask: int) -> int:
        return sum(self.rank[b.bit_length() - 1] for b in _bits(mask))

    def runs(self, low: int, mask: int) -> Iterator[tuple[int, int]]:
        """(wilds needed, naturals used) of each run from natural `low` up to a higher one."""
        i = low.bit_length() - 1
        rank, used, count = self.rank[i], low, 1
        for top, bits in self.ladder[i]:
            free = mask & bits
            if not free:
                continue
            used |= free & -free
            count += 1
            span = top - rank + 1
            need = max(MIN_GROUP, span) - count
            if need <= self.wilds:
                yield need, used
            elif span >= MIN_GROUP:
                return  # longer runs only need more

    def can_run(self, low: int, mask: int) -> bool:
        """Whether natural `low` can be the lowest card of a run with a higher natural."""
        return next(self.runs(low, mask), None) is not None

    def books(self, low: int, mask: int) -> Iterator[tuple[int, int]]:
        # A natural of the rank kept out of the book must start a run, so one that cannot is in.
        choices = []
        for copies in self.rank_copies[self.rank[low.bit_length() - 1]]:
            bits = mask & copies & ~low
            if bits:
                n = bits.bit_count()
                least = 0 if self.can_run(bits & -bits, mask) else n
                choices.append([_lowest(bits, k) for k in range(least, n + 1)])
        for picked in product(*choices):
            taken = low
            for bits in picked:
                taken |= bits
            need = max(0, MIN_GROUP - taken.bit_count())
            if need <= self.wilds:
                yield need, taken

    def options(self, mask: int, mode: int) -> Iterator[Option]:
        """Every choice for the lowest natural (see the module docstring)."""
        low = mask & -mask
        if mode == FREE:
            yield LEAVE, low, FREE
            for need, used in self.books(low, mask):
                yield need, used, self._after_book(mask & ~used, low)
        for need, used in self.runs(low, mask):
            yield need, used, mode if mode == FREE else self._after_book(mask & ~used, low)

    def _after_book(self, remaining: int, low: int) -> int:
        """RUN_ONLY while naturals of the book's rank remain."""
        if not remaining:
            return FREE
        rank = self.rank[low.bit_length() - 1]
        return RUN_ONLY if self.rank[(remaining & -remaining).bit_length() - 1] == rank else FREE

    def left(self, mask: int, mode: int = FREE) -> tuple[int, ...]:
        """Fewest natural points left over from `mask`, with at most w wilds (w = 0..wilds)."""
        key = mask | mode << 32
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self.shapes.left(self.shape(mask, mode))
        return hit

    def walk(self, mask: int, w: int) -> tuple[list[tuple[int, list[Card]]], list[Card]]:
        """One choice reaching the table's value: ((wilds, naturals) per group, left over)."""
        if mask and fits(self.shape(mask, FREE), w):
            return self._walk_out(mask, w), []
        groups: list[tuple[int, list[Card]]] = []
        leftover: list[Card] = []
        mode = FREE
        while mask:
            target = self.left(mask, mode)[w]
            for need, used, after in self.options(mask, mode):
                spend = max(need, 0)
                cost = self.cost[used.bit_length() - 1] if need == LEAVE else 0
                if spend <= w and self.left(mask & ~used, after)[w - spend] + cost == target:
                    break
            else:
                raise AssertionError("solver table and walk disagree")
            cards = [self.cards[b.bit_length() - 1] for b in _bits(used)]
            if need == LEAVE:
                leftover += cards
            else:
                groups.append((spend, cards))
            mask, mode, w = mask & ~used, after, w - spend
        return groups, leftover


    def _walk_out(self, mask: int, w: int) -> list[tuple[int, list[Card]]]:
        """`walk` of naturals that all fit in groups within `w` wilds, without the tables: the
        first choice whose rest fits is the one `walk` takes (nothing left over is its value 0,
        and leaving a natural over costs points)."""
        groups: list[tuple[int, list[Card]]] = []
        mode = FREE
        while mask:
            for need, used, after in self.options(mask, mode):
                if need != LEAVE and need <= w and fits(self.shape(mask & ~used, after), w - need):
                    break
            else:
                raise AssertionError("solver fits and walk disagree")
            groups.append((need, [self.cards[b.bit_length() - 1] for b in _bits(used)]))
            mask, mode, w = mask & ~used, after, w - need
        return groups


# ----------------------------------------------------------------------------------------------
# Turning a choice into real groups


@dataclass
class _Group:
    kind: GroupKind
    naturals: list[Card]
    wilds: list[Card]

    # Hand-written: mypyc compiles it, not the dataclass's generated one (engine/game.py).
    def __init__(self, kind: GroupKind, naturals: list[Card], wilds: list[Card]) -> None:
        self.kind = kind
        self.naturals = naturals
        self.wilds = wilds

    @property
    def size(self) -> int:
        return len(self.naturals) + len(self.wilds)

    def build(self, rules: MeldRules) -> Meld:
        # Undeclared wilds: build_meld fills a run's gaps, then extends it up, then down.
        # The splits of one hand less each card share most groups: each is checked once.
        # (`rules` are always the solver's, Five Crowns' of one wild rank.)
        key = (self.kind, rules.wild_rank, *self.naturals, *self.wilds)
        meld = _BUILT.get(key)
        if meld is None:
            placed = [(c, None) for c in (*self.naturals, *self.wilds)]
            meld = build_meld(self.kind, placed, rules, MIN_GROUP)
            if len(_BUILT) >= BUILT_LIMIT:
                _BUILT.clear()
            _BUILT[key] = meld
        return meld


# Groups built (`_Group.build`), by kind, wild rank and cards, in order: a bounded memo (a Meld
# is immutable). The splits that share groups are those of one hand, so a few hundred KiB will do.
BUILT_LIMIT: Final = 1024
_BUILT: Final[dict[tuple[object, ...], Meld]] = {}


def _absorb(groups: list[_Group], extra: list[Card], natural: Natural) -> None:
    """Put every spare wild into the groups (always possible once there is a group)."""
    while extra:
        book = next((g for g in groups if g.kind is GroupKind.BOOK), None)
        if book is not None:
            book.wilds += extra
            return
        for g in groups:
            room = RUN_MAX - g.size
            g.wilds += extra[:room]
            extra = extra[room:]
        if extra:
            groups[:1] = _reshape(groups[0], natural)


def _reshape(run: _Group, natural: Natural) -> list[_Group]:
    """A full run (3..K) as groups that hold the same cards and have room for another wild."""
    if len(run.naturals) <= 1:
        return [_Group(GroupKind.BOOK, run.naturals, run.wilds)]
    ranked = sorted(run.naturals, key=lambda c: c.rank)
    for cut in range(LOWEST + 2, HIGHEST - 2):  # both halves at least 3 long
        low = [c for c in ranked if c.rank <= cut]
        high = ranked[len(low):]
        if natural == "none" or (low and high):
            size = cut - LOWEST + 1
            wilds = run.wilds[: size - len(low)]
            return [
                _Group(GroupKind.RUN, low, wilds),
                _Group(GroupKind.RUN, high, run.wilds[len(wilds):]),
            ]
    # Every natural is in 3..5 or in J..K: the top one makes a book with two wilds.
    return [
        _Group(GroupKind.BOOK, ranked[-1:], run.wilds[:2]),
        _Group(GroupKind.RUN, ranked[:-1], run.wilds[2:]),
    ]


# ----------------------------------------------------------------------------------------------
# The public questions


def _runnable(short: int, rank: int) -> int:
    """Bit n set when the ranks held of a suit near `rank` (bit k of n: rank - 2 + k) fill at
    least `short` places of three consecutive ranks (3..K) that hold `rank`."""
    windows = [0b111 << low for low in range(max(LOWEST, rank - 2), min(rank, HIGHEST - 2) + 1)]
    out = 0
    for near in range(32):
        held = near << rank - 2
        if any((held & window).bit_count() >= short for window in windows):
            out |= 1 << near
    return out


# For a natural of each rank, with a book or window short of 2 or 3 naturals: the runs it can be
# in, as `_runnable` bit sets.
_RUNNABLE: Final = {short: [_runnable(short, r) if r >= LOWEST else 0 for r in range(HIGHEST + 1)]
                    for short in (2, 3)}


def _run_gaps(rank: int) -> list[int]:
    """Per 5-bit neighbourhood (as `_runnable`): the fewest ranks missing from three
    consecutive ranks (3..K) that hold `rank`."""
    windows = [0b111 << low for low in range(max(LOWEST, rank - 2), min(rank, HIGHEST - 2) + 1)]
    return [min(MIN_GROUP - ((near << rank - 2) & w).bit_count() for w in windows)
            for near in range(32)]


_RUN_GAPS: Final = [_run_gaps(r) if r >= LOWEST else [] for r in range(HIGHEST + 1)]


def wild_floor(naturals: Sequence[Card]) -> int:
    """A floor under the wilds that group every natural of a hand. Any group holding natural x
    needs at least need(x) wilds: a book of its rank 3 - (naturals of the rank), a run of its
    suit the gaps of the three consecutive ranks around x it covers, at the fewest. Naturals of
    different ranks and suits are never in one group, so for such a set the needs add up: the
    set is picked greedily, neediest first."""
    return _floor(naturals, *_tally(naturals))


Tally = tuple[list[int], dict[str, int]]  # naturals per rank; per suit, the bits of its ranks


def _tally(naturals: Iterable[Card]) -> Tally:
    ranks = [0] * (HIGHEST + 1)
    suits = dict.fromkeys(SUITS, 0)
    for c in naturals:
        ranks[c.rank] += 1
        suits[c.suit] |= 1 << c.rank
    return ranks, suits


def _floor(naturals: Sequence[Card], ranks: list[int], suits: dict[str, int]) -> int:
    """`wild_floor` of `naturals`, whose `_tally` is given."""
    needs = []
    for c in naturals:
        rank = c.rank
        if ranks[rank] >= MIN_GROUP:
            continue  # a book of its own naturals: needs no wild
        need = min(MIN_GROUP - ranks[rank], _RUN_GAPS[rank][suits[c.suit] >> rank - 2 & 0b11111])
        if need > 0:
            needs.append((need, rank, c.suit))
    if not needs:
        return 0
    needs.sort(reverse=True)
    floor, seen_ranks, seen_suits = 0, set(), set()
    for need, rank, suit in needs:
        if rank not in seen_ranks and suit not in seen_suits:
            floor += need
            seen_ranks.add(rank)
            seen_suits.add(suit)
    return floor


def _loners(naturals: Sequence[Card], wilds: int, tally: Tally | None = None) -> list[Card]:
    """`Solver.loners` of a hand of `naturals` and `wilds` wilds (`tally`: their `_tally`)."""
    if wilds >= MIN_GROUP - 1:
        return []  # every natural makes a book with two wilds
    ranks, suits = _tally(naturals) if tally is None else tally
    short = MIN_GROUP - wilds  # naturals a book or a three-card window must hold
    runs = _RUNNABLE[short]
    return [card for card in naturals
            if ranks[card.rank] < short
            and not runs[card.rank] >> (suits[card.suit] >> card.rank - 2 & 0b11111) & 1]


_JOKER_CODE: Final = -2  # `_codes` of a Joker; -1: a card of the wild rank


def _codes(wild_rank: int) -> dict[Card, int]:
    """Per Five Crowns card: rank << 3 | suit index (`_SUIT_INDEX`) if it is a natural when
    `wild_rank` is wild, else `_JOKER_CODE` or -1 (a card of the wild rank). One lookup per
    card where `groups_all` and `pile_points` asked for its kind, rank and suit."""
    found = _CODES.get(wild_rank)
    if found is None:
        found = _CODES[wild_rank] = {JOKER: _JOKER_CODE} | {
            c: -1 if c.rank == wild_rank else c.rank << 3 | _SUIT_INDEX[c.suit]
            for c in FIVECROWNS_SUITED}
    return found


_CODES: Final[dict[int, dict[Card, int]]] = {}  # per wild rank asked (3..13 in play)


def groups_all(cards: Sequence[Card], wild_rank: int, natural: Natural = "none") -> bool:
    """`Solver(cards, wild_rank, natural).groups_all()` (a Solitaire pile closes: asked of
    every pile after the deal and of one each move), from one pass over the cards: its loners,
    its `wild_floor` and its shape for `fits`, without a solver or a card list of its own."""
    return close_check(cards, wild_rank, natural) == CLOSES


CLOSES: Final = -1  # `close_check`: every card makes books and runs
STAYS_OPEN: Final = -2  # `close_check`: some card makes none, and the hand has no loner


def close_check(cards: Sequence[Card], wild_rank: int, natural: Natural = "none") -> int:
    """`groups_all` with its reason when false: CLOSES, STAYS_OPEN, or a loner (`loners`)
    that keeps the hand from closing, coded rank << 3 | suit (`_SUIT_INDEX`). A loner stays
    one while no card comes that could group with it and no wild comes (`keeps_loner`): a
    Solitaire pile is checked again only when its loner may have gone."""
    naturals, ranks, suits = _coded_tally(cards, _codes(wild_rank))
    wilds = len(cards) - len(naturals)
    if not naturals:
        return CLOSES if not wilds or (natural == "none" and wilds >= MIN_GROUP) else STAYS_OPEN
    if wilds < MIN_GROUP - 1:
        loner = _first_loner(naturals, wilds, ranks, suits)
        if loner >= 0:
            return loner
    if _coded_floor(naturals, ranks, suits) > wilds:
        return STAYS_OPEN
    # The shape only for the few hands that get this far.
    return CLOSES if fits(_part_shape(naturals), wilds) else STAYS_OPEN


def _coded_tally(cards: Sequence[Card], codes: dict[Card, int]
                 ) -> tuple[list[int], list[int], list[int]]:
    """(the naturals coded as `codes` says, naturals per rank, per suit the bits of its ranks):
    `_tally` of a hand in one pass, without a card list of its own."""
    # Lists updated as x[i] = x[i] + y, not x[i] += y: compiled, the augmented form of a list
    # item is Python's generic in-place add.
    ranks = [0] * (HIGHEST + 1)
    suits = [0, 0, 0, 0, 0]  # by `_SUIT_INDEX`
    naturals: list[int] = []
    for c in cards:
        code = codes[c]
        if code >= 0:
            rank, suit = code >> 3, code & 7
            ranks[rank] = ranks[rank] + 1
            suits[suit] = suits[suit] | (1 << rank)
            naturals.append(code)
    return naturals, ranks, suits


def _is_loner(code: int, wilds: int, ranks: list[int], suits: list[int]) -> bool:
    """Whether a natural coded as in `groups_all` is one `_loners` names: fewer of its rank
    than a book needs, and no three-card window of its suit around it (at wilds < 2)."""
    short = MIN_GROUP - wilds
    rank = code >> 3
    return (ranks[rank] < short
            and not _RUNNABLE[short][rank] >> (suits[code & 7] >> rank - 2 & 0b11111) & 1)


def _first_loner(naturals: list[int], wilds: int, ranks: list[int], suits: list[int]) -> int:
    """The first natural that `_loners` calls a loner (coded as in `groups_all`), or -1."""
    for code in naturals:
        if _is_loner(code, wilds, ranks, suits):
            return code
    return -1


def keeps_loner(loner: int, out: Card, into: Card, wild_rank: int) -> bool:
    """Whether `loner` (as `close_check` returns it) of a hand is still a loner once card
    `out` leaves the hand and card `into` joins it. A loner has fewer naturals of its rank than
    a book needs, and no three consecutive ranks of its suit around it that the wilds fill;
    losing a card only makes that truer, and so does losing a wild. Only a card of its rank, or
    of its suit within two ranks of it, or one wild more, can give it a group (or `out` may be
    the loner itself: a copy left behind would still be one, but the first found may differ)."""
    codes = _codes(wild_rank)
    gone, came = codes[out], codes[into]
    if gone == loner:
        return False
    if came < 0:  # a wild comes: as many wilds as before only if one goes
        return gone < 0
    rank, near = loner >> 3, came >> 3
    return near != rank and (came & 7 != loner & 7 or abs(near - rank) > 2)


def pile_points(cards: Sequence[Card], wild_rank: int, natural: Natural = "none") -> int:
    """`Solver(cards, wild_rank, natural).points()` (what a Solitaire pile left open costs:
    asked of every open pile when a game ends), from one pass over the cards and a search of
    each part of the hand on its own. Two naturals share a group only if they share a rank or
    their suit with at most `wilds` ranks between them, so the naturals split into parts that
    no group joins (`_parts`); the hand's best with at most w wilds is the best sum of its
    parts' bests over the ways to share the w wilds among them. A part's table is the shared
    search's (`Shapes.left`) of its own shape: small parts recur from pile to pile and game
    to game, where whole hands hardly ever do."""
    codes = _codes(wild_rank)
    naturals, ranks, suits = _coded_tally(cards, codes)
    natural_points = sum(code >> 3 for code in naturals)  # a natural scores its rank
    jokers = sum(1 for c in cards if codes[c] == _JOKER_CODE)
    wilds = len(cards) - len(naturals)
    wild_points = jokers * JOKER_POINTS + (wilds - jokers) * WILD_POINTS
    # Loners are left over whatever the rest does (`Solver.loners`): the search goes without.
    kept = naturals
    if wilds < MIN_GROUP - 1:
        kept = _not_loners(naturals, wilds, ranks, suits)
    left = natural_points - sum(code >> 3 for code in kept)  # the loners' points
    table = shapes(wilds)
    best = [0] * (wilds + 1)
    for part in _parts(kept, wilds, ranks):
        best = _share(best, table.left(_part_shape(part)))
    left += best[wilds]
    if left < natural_points or (natural == "none" and wilds >= MIN_GROUP):
        return left  # there is a group, so every wild finds a place
    return natural_points + wild_points


def _not_loners(naturals: list[int], wilds: int, ranks: list[int], suits: list[int]
                ) -> list[int]:
    """The naturals (coded as in `groups_all`) that `_first_loner` would not call loners."""
    return [code for code in naturals if not _is_loner(code, wilds, ranks, suits)]


def _parts(naturals: list[int], wilds: int, ranks: list[int]) -> list[list[int]]:
    """`naturals` (coded as in `groups_all`; `ranks`: the hand's naturals per rank) in parts
    no book or run joins. Two are linked when they can share a group: a book of their rank,
    if it holds enough naturals for the wilds (a book of k naturals needs 3 - k wilds), or a
    run of their suit with at most `wilds` ranks between them (each gap of a run is a wild).
    Each part keeps the order given."""
    parts: list[list[int]] = []
    book = MIN_GROUP - wilds  # the fewest naturals of a book
    for code in naturals:
        rank, suit = code >> 3, code & 7
        books = ranks[rank] >= book
        joined: list[int] = []  # the parts this natural links, and merges into one
        for i, part in enumerate(parts):
            for other in part:
                near = other >> 3
                if (books and near == rank) or (
                        other & 7 == suit and abs(near - rank) <= wilds + 1):
                    joined.append(i)
                    break
        if not joined:
            parts.append([code])
            continue
        first = parts[joined[0]]
        for i in reversed(joined[1:]):
            first += parts.pop(i)
        first.append(code)
    return parts


def _part_shape(part: list[int]) -> Shape:
    """The shape (see `Shapes`) of naturals coded as in `groups_all`."""
    sigs = [0, 0, 0, 0, 0]
    for code in part:
        sigs[code & 7] = sigs[code & 7] + (1 << 3 * ((code >> 3) - LOWEST))
    return _shape(FREE, sigs)


def _share(best: list[int], part: tuple[int, ...]) -> list[int]:
    """Fewest points left with at most w wilds (w = 0..) of the naturals of `best` and of a
    part no group shares with them: the best of every way to share the w wilds."""
    if len(best) == 1:  # no wilds to share (a pile's usual case)
        return [best[0] + part[0]]
    out: list[int] = []
    for w in range(len(best)):  # loops, not min() of a generator: compiled, no generator
        least = INFINITE
        for k in range(w + 1):
            least = min(least, best[w - k] + part[k])
        out.append(least)
    return out


# Suit indexes (`_SUIT_INDEX`) ranked as their letters are (`_floor` breaks ties by letter).
_LETTER_RANK: Final = [sorted(SUITS).index(s) for s in SUITS]


def _coded_floor(naturals: list[int], ranks: list[int], suits: list[int]) -> int:
    """`_floor` for naturals coded as in `groups_all`: the same needs, taken in the same
    order (neediest, then highest rank, then last suit letter first), each need coded as
    need << 8 | rank << 3 | its suit's letter rank, so that they sort as plain numbers."""
    needs: list[int] = []
    for code in naturals:
        rank, suit = code >> 3, code & 7
        if ranks[rank] >= MIN_GROUP:
            continue
        need = min(MIN_GROUP - ranks[rank], _RUN_GAPS[rank][suits[suit] >> rank - 2 & 0b11111])
        if need > 0:
            needs.append(need << 8 | rank << 3 | _LETTER_RANK[suit])
    if not needs:
        return 0
    needs.sort(reverse=True)
    floor, seen_ranks, seen_suits = 0, 0, 0
    for key in needs:
        rank, letter = key >> 3 & 31, key & 7
        if not seen_ranks >> rank & 1 and not seen_suits >> letter & 1:
            floor += key >> 8
            seen_ranks |= 1 << rank
            seen_suits |= 1 << letter
    return floor


@functools.cache
def _wild_cards(wild_rank: int) -> frozenset[Card]:
    """Every card that is wild when `wild_rank` is (the Jokers and that rank)."""
    rules = fivecrowns_melds(wild_rank)
    return frozenset(c for c in (*FIVECROWNS_SUITED, JOKER) if rules.is_wild(c))


class Solver:
    """Best splits of one hand, and of the hand less any one card (one shared search)."""

    def __init__(self, hand: Iterable[Card], wild_rank: int, natural: Natural = "none") -> None:
        self.hand = tuple(hand)
        self.wild_rank = wild_rank
        self.natural = natural
        self.rules = fivecrowns_melds(wild_rank)
        wild = _wild_cards(wild_rank)
        self.wilds = [c for c in self.hand if c in wild]
        self.naturals = [c for c in self.hand if c not in wild]
        # Built on first use (the properties below): most questions need only a few of them.
        self._memo_search: _Search | None = None
        self._memo_sigs: list[int] | None = None
        self._memo_natural_points: int | None = None
        self._memo_loners: list[Card] | None = None
        self._memo_whole: Split | None = None
        self._memo_whole_points: int | None = None
        self._memo_floor: int | None = None
        self._memo_spare_wild: bool | None = None
        self._memo_near_out: bool | None = None

    @property
    def _search(self) -> _Search:
        # Built only to build groups (`split`): the values come from the shapes' tables.
        if self._memo_search is None:
            self._memo_search = _Search(self.naturals, len(self.wilds))
        return self._memo_search

    @property
    def _sigs(self) -> list[int]:
        """The naturals' signature per suit (see `Shapes`)."""
        if self._memo_sigs is None:
            sigs = [0, 0, 0, 0, 0]
            for c in self.naturals:
                sigs[_SUIT_INDEX[c.suit]] += 1 << 3 * (c.rank - LOWEST)
            self._memo_sigs = sigs
        return self._memo_sigs

    def _state(self, without: Card | None, loners: Sequence[Card] = ()
               ) -> tuple[Shape, int, int]:
        """(shape, wilds, natural points) of the hand less `without`, and less `loners` in the
        shape only."""
        sigs, wilds = self._sigs, len(self.wilds)
        points = self._natural_points
        if without is not None:
            if without not in self.hand:
                raise ValueError(f"{without} is not in the hand")
            if without in self.wilds:
                wilds -= 1
            else:
                sigs = list(sigs)
                sigs[_SUIT_INDEX[without.suit]] -= 1 << 3 * (without.rank - LOWEST)
                points -= without.rank
        if loners:
            sigs = list(sigs)
            for c in loners:
                sigs[_SUIT_INDEX[c.suit]] -= 1 << 3 * (c.rank - LOWEST)
        return _shape(FREE, sigs), wilds, points

    @property
    def _natural_points(self) -> int:
        if self._memo_natural_points is None:
            self._memo_natural_points = sum(c.rank for c in self.naturals)
        return self._memo_natural_points

    @property
    def loners(self) -> list[Card]:
        """The naturals (each copy) that no book or run of this hand can hold: fewer than two
        other cards of the rank counting the wilds, and no three consecutive ranks of the suit
        around it with their gaps within the wilds (a longer run holds such three). They are
        left over in every split of the hand, and of the hand less any other card."""
        if self._memo_loners is None:
            self._memo_loners = _loners(self.naturals, len(self.wilds))
        return self._memo_loners

    def _without(self, card: Card | None) -> tuple[int, list[Card]]:
        full = self._search.full
        if card is None:
            return full, self.wilds
        if card not in self.hand:
            raise ValueError(f"{card} is not in the hand")
        if self.rules.is_wild(card):
            wilds = list(self.wilds)
            wilds.remove(card)
            return full, wilds
        return full & ~self._search.mask_of([card]), self.wilds

    def _all_wild_book(self, wilds: Sequence[Card] | int) -> bool:
        count = wilds if isinstance(wilds, int) else len(wilds)
        return self.natural == "none" and count >= MIN_GROUP

    @property
    def whole(self) -> Split:
        """The best split of the whole hand; it bounds every discard (see `points`)."""
        if self._memo_whole is None:
            self._memo_whole = self.split()
        return self._memo_whole

    @property
    def whole_points(self) -> int:
        """The fewest points the whole hand leaves: `whole.points` without building groups."""
        if self._memo_whole_points is None:
            self._memo_whole_points = self.points()
        return self._memo_whole_points

    def points(self, without: Card | None = None) -> int:
        """The fewest points the hand (less `without`) leaves unlaid."""
        whole = self._memo_whole  # only when already built: it costs
        if without is not None and whole is not None and without in whole.leftover:  # more
            return whole.points - card_points(without, self.wild_rank)
        # Loners are left over whatever the rest does: the search goes without them.
        loners = list(self.loners)
        if without in loners:
            loners.remove(without)
        shape, wilds, naturals = self._state(without, loners)
        left = shapes(wilds).left(shape)[wilds] + sum(c.rank for c in loners)
        if left < naturals or self._all_wild_book(wilds):
            return left  # there is a group, so every wild finds a place
        spare = list(self.wilds)
        if without in spare:
            spare.remove(without)
        return naturals + hand_points(spare, self.wild_rank)

    def bound(self, without: Card) -> int:
        """A floor under `points(without)`: a split without it, plus it, is a split of the hand.
        (Exact when the card is left over in `whole`.)"""
        return self.whole_points - card_points(without, self.wild_rank)

    def groups_all(self) -> bool:
        """Whether every card of the hand makes books and runs (a Solitaire pile closes)."""
        if self.loners:
            return False
        if not self.naturals:
            return not self.wilds or self._all_wild_book(self.wilds)
        if self.floor > len(self.wilds):
            return False
        return fits(_shape(FREE, self._sigs), len(self.wilds))

    @property
    def floor(self) -> int:
        """`wild_floor` of the hand's naturals."""
        if self._memo_floor is None:
            self._memo_floor = wild_floor(self.naturals)
        return self._memo_floor

    def goes_out_without(self, card: Card) -> bool:
        """Whether every card but `card` makes books and runs."""
        loners = self.loners  # any loner but `card` itself stays in the hand
        if loners and (len(loners) > 1 or loners[0] is not card):
            return False
        if not self.near_out:
            return False  # see `near_out`
        shape, wilds, naturals = self._state(card)
        if not naturals:  # wilds alone: one book of them all, or nothing left at all
            return not wilds or self._all_wild_book(wilds)
        if card in self.wilds:
            return fits(shape, wilds)
        if self.spare_wild:
            return True  # see `spare_wild`
        rest = list(self.naturals)
        rest.remove(card)
        return wild_floor(rest) <= wilds and fits(shape, wilds)

    @property
    def spare_wild(self) -> bool:
        """Whether the hand's naturals all fit in groups with a wild to spare. Then the hand
        less any natural goes out: its group takes a wild in its place (a book of three, a
        run's gap or end) or stays as it is; a group left without a natural breaks up and
        its wilds join the others."""
        if self._memo_spare_wild is None:
            self._memo_spare_wild = bool(self.wilds) and fits(_shape(FREE, self._sigs),
                                                              len(self.wilds) - 1)
        return self._memo_spare_wild

    @property
    def near_out(self) -> bool:
        """Whether the hand's naturals all fit in groups with its wilds and two more: a natural
        added to a grouped hand gets a book of its own with two more wilds, so a hand less one
        card goes out only if this is true."""
        if self._memo_near_out is None:
            budget = len(self.wilds) + 2
            self._memo_near_out = self.floor <= budget and fits(_shape(FREE, self._sigs), budget)
        return self._memo_near_out

    def split(self, without: Card | None = None) -> Split:
        """A best split of the hand (less `without`), with its groups built and checked."""
        mask, wilds = self._without(without)
        chosen, leftover = self._search.walk(mask, len(wilds))
        pool = list(wilds)
        groups: list[_Group] = []
        for need, cards in chosen:
            kind = GroupKind.RUN if len({c.rank for c in cards}) > 1 else GroupKind.BOOK
            groups.append(_Group(kind, cards, pool[:need]))
            pool = pool[need:]
        if not groups and self._all_wild_book(pool):
            groups, pool = [_Group(GroupKind.BOOK, [], pool)], []
        if groups:
            _absorb(groups, pool, self.natural)
            pool = []
        leftover += pool
        melds = tuple(g.build(self.rules) for g in groups)
        if self.natural == "group" and any(m.naturals(self.rules) == 0 for m in melds):
            raise AssertionError(f"solver built an all-wild group from {self.hand}")
        return Split(melds, tuple(leftover), hand_points(leftover, self.wild_rank))

    def discards(self) -> list[Card]:
        """Each distinct card of the hand once, in hand order."""
        return list(dict.fromkeys(self.hand))

    def outs(self) -> list[Card]:
        """The discards (distinct cards, in hand order) that go out: every discard answered at
        once from what the hand shares (its loners, `near_out`, the shared tables)."""
        loners = self.loners
        if len(loners) > 1 or not self.near_out:
            return []  # see `goes_out_without`
        return [card for card in self.discards() if self.goes_out_without(card)]

    def _costliest_first(self) -> list[Card]:
        return sorted(self.discards(), key=lambda c: -card_points(c, self.wild_rank))

    def best_discard(self) -> tuple[Card, int]:
        """The discard leaving the fewest points (ties: the costliest card goes)."""
        best: tuple[Card, int] | None = None
        for card in self._costliest_first():
            if best is not None and max(0, self.bound(card)) >= best[1]:
                break  # no cheaper card can do better: their floors only rise
            points = self.points(card)
            if best is None or points < best[1]:
                best = (card, points)
        assert best is not None, "an empty hand has no discard"
        return best

    def go_out(self, discard: Card | None = None) -> tuple[Card, Split] | None:
        """A discard and split that lay every other card (with `discard` if given), or None."""
        choices = [discard] if discard is not None else self._costliest_first()
        for card in choices:
            if self.goes_out_without(card):
                return card, self.split(card)
        return None


def fewest_left(cards: Iterable[Card], wild_rank: int, natural: Natural = "none") -> int:
    """The fewest cards of `cards` left out of books and runs (not the fewest points): in
    Solitaire, how many cards a pile must still swap before it closes."""
    return _fewest(list(cards), wild_rank, natural, [None])[None]


def fewest_left_without(
    cards: Iterable[Card], wild_rank: int, natural: Natural = "none"
) -> dict[Card, int]:
    """`fewest_left` of `cards` less one copy of each of its cards, card by card (one search)."""
    hand = list(cards)
    return _fewest(hand, wild_rank, natural, list(dict.fromkeys(hand)))  # type: ignore[return-value]


def _fewest(
    hand: list[Card], wild_rank: int, natural: Natural, without: Sequence[Card | None]
) -> dict[Card | None, int]:
    rules = fivecrowns_melds(wild_rank)
    naturals = [c for c in hand if not rules.is_wild(c)]
    search = _Search(naturals, len(hand) - len(naturals), count=True)  # each card left: one
    out: dict[Card | None, int] = {}
    for card in without:
        mask, wilds = search.full, search.wilds
        if card is not None and rules.is_wild(card):
            wilds -= 1
        elif card is not None:
            mask &= ~search.mask_of([card])
        left = search.left(mask)[wilds]
        if left < mask.bit_count() or (natural == "none" and wilds >= MIN_GROUP):
            out[card] = left  # there is a group, so every wild finds a place
        else:
            out[card] = mask.bit_count() + wilds
    return out
