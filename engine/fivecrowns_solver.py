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
table answers the hand less any one card.

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
  group, so the same choices less "left over" give the fewest wilds that group all the naturals
  (`cover`), and the hand less c goes out exactly when that is at most its wilds (wilds alone:
  one book of them, where the natural option allows it). Two facts of the whole hand answer
  most discards without a search, and neither can turn an answer: a *loner*, a natural with
  fewer than two other cards of its rank counting the wilds and no three consecutive ranks of
  its suit around it whose gaps the wilds fill, is in no group of the hand nor of any smaller
  hand (a run holds three such ranks), so the hand less any card but that loner keeps it and
  does not go out; and with two wilds or more, a natural added to a grouped hand makes a book
  with two of them, so when the whole hand needs more than its wilds plus two, no hand less a
  natural goes out (and less a wild, it has fewer wilds still).
- The tables are shared by every solver (`TABLES`, `COVERS`): a state's table is a function of
  the naturals left up to a renaming of suits, the mode and the number of wilds only.
Every answer is built into real groups through `melds.build_meld`, which checks it again.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Final, Literal

from .cards import SUITS, Card, Kind
from .melds import GroupKind, Meld, MeldRules, build_meld, fivecrowns_melds

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

FREE, RUN_ONLY = 0, 1
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


# The search's tables, shared by every solver: a state's table depends only on its shape (the
# naturals left up to a renaming of suits, and the mode) and on the wilds of the hand, not on
# the hand it came from nor on the wild rank (wild-rank cards are wilds, never naturals), so
# the next turn's hand, the next pile and the next game find most of their states here.
# Per wild count: shape -> table. Cleared when one grows past TABLE_LIMIT states.
TABLES: Final[dict[int, dict[int, tuple[int, ...]]]] = {}
COVERS: Final[dict[int, dict[int, int]]] = {}  # the same for `_Search.cover`
TABLE_LIMIT: Final = 50_000


def clear_tables() -> None:
    """Forget every table (benchmarks time a cold search)."""
    TABLES.clear()
    COVERS.clear()


class _Search:
    """Fewest natural points left over, for every wild budget, memoised per state."""

    def __init__(self, naturals: Iterable[Card], wilds: int) -> None:
        self.cards = sorted(naturals, key=lambda c: (c.rank, _SUIT_INDEX[c.suit]))
        self.wilds = wilds
        self.rank = [c.rank for c in self.cards]
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
        self.expanded = 0  # states searched here (not found in the tables): a hand's hardness
        # The tables of every solver with as many wilds, by state shape (see `TABLES`).
        self.shapes = TABLES.setdefault(wilds, {})
        self.covers: dict[int, int] = {}
        self.cover_shapes = COVERS.setdefault(wilds, {})
        self.suit_of = [_SUIT_INDEX[c.suit] for c in self.cards]
        # A card's weight in its suit's signature: 3 bits per rank count up to 7 copies.
        self.weight = [1 << 3 * (c.rank - LOWEST) for c in self.cards]
        self.rank_copies = {
            r: [copies[s, r] for s in SUITS if (s, r) in copies] for r in self.by_rank
        }

    def shape(self, mask: int, mode: int) -> int:
        """The state up to a renaming of suits (suits play symmetric parts), as one number."""
        sig = [0, 0, 0, 0, 0]
        suit, weight = self.suit_of, self.weight
        while mask:
            low = mask & -mask
            i = low.bit_length() - 1
            sig[suit[i]] += weight[i]
            mask ^= low
        key = mode
        for part in sorted(sig):
            key = key << 33 | part
        return key

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
        if hit is not None:
            return hit
        shape = self.shape(mask, mode)
        hit = self.shapes.get(shape)
        if hit is not None:
            self.memo[key] = hit
            return hit
        self.expanded += 1
        top = self.wilds
        if not mask:
            result = (0,) * (top + 1)
        else:
            best = [INFINITE] * (top + 1)
            for need, used, after in self.options(mask, mode):
                sub = self.left(mask & ~used, after)
                if need == LEAVE:
                    cost = self.rank[used.bit_length() - 1]
                    best = [min(b, s + cost) for b, s in zip(best, sub, strict=True)]
                    continue
                for w in range(need, top + 1):
                    if sub[w - need] < best[w]:
                        best[w] = sub[w - need]
            result = tuple(best)
        if len(self.shapes) >= TABLE_LIMIT:  # a bounded memory: start afresh
            self.shapes.clear()
        self.memo[key] = self.shapes[shape] = result
        return result

    def cover(self, mask: int, mode: int = FREE) -> int:
        """The fewest wilds that put every natural of `mask` in a group (INFINITE: none)."""
        key = mask | mode << 32
        hit = self.covers.get(key)
        if hit is not None:
            return hit
        shape = self.shape(mask, mode)
        hit = self.cover_shapes.get(shape)
        if hit is None:
            hit = 0 if not mask else INFINITE
            if mask:
                for need, used, after in self.options(mask, mode):
                    if need != LEAVE and need < hit:
                        hit = min(hit, need + self.cover(mask & ~used, after))
            if len(self.cover_shapes) >= TABLE_LIMIT:
                self.cover_shapes.clear()
            self.cover_shapes[shape] = hit
        self.covers[key] = hit
        return hit

    def walk(self, mask: int, w: int) -> tuple[list[tuple[int, list[Card]]], list[Card]]:
        """One choice reaching the table's value: ((wilds, naturals) per group, left over)."""
        groups: list[tuple[int, list[Card]]] = []
        leftover: list[Card] = []
        mode = FREE
        while mask:
            target = self.left(mask, mode)[w]
            for need, used, after in self.options(mask, mode):
                spend = max(need, 0)
                cost = self.rank[used.bit_length() - 1] if need == LEAVE else 0
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


# ----------------------------------------------------------------------------------------------
# Turning a choice into real groups


@dataclass
class _Group:
    kind: GroupKind
    naturals: list[Card]
    wilds: list[Card]

    @property
    def size(self) -> int:
        return len(self.naturals) + len(self.wilds)

    def build(self, rules: MeldRules) -> Meld:
        # Undeclared wilds: build_meld fills a run's gaps, then extends it up, then down.
        placed = [(c, None) for c in (*self.naturals, *self.wilds)]
        return build_meld(self.kind, placed, rules, MIN_GROUP)


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


class Solver:
    """Best splits of one hand, and of the hand less any one card (one shared search)."""

    def __init__(self, hand: Iterable[Card], wild_rank: int, natural: Natural = "none") -> None:
        self.hand = tuple(hand)
        self.wild_rank = wild_rank
        self.natural = natural
        self.rules = fivecrowns_melds(wild_rank)
        is_wild = self.rules.is_wild
        self.wilds = [c for c in self.hand if is_wild(c)]
        self.naturals = [c for c in self.hand if not is_wild(c)]

    @functools.cached_property
    def _search(self) -> _Search:
        # Built on first use: the loners answer many questions without it.
        return _Search(self.naturals, len(self.wilds))

    @functools.cached_property
    def loners(self) -> list[Card]:
        """The naturals (each copy) that no book or run of this hand can hold: fewer than two
        other cards of the rank counting the wilds, and no three consecutive ranks of the suit
        around it with their gaps within the wilds (a longer run holds such three). They are
        left over in every split of the hand, and of the hand less any other card."""
        wilds = len(self.wilds)
        ranks = Counter(c.rank for c in self.naturals)
        present = {(c.suit, c.rank) for c in self.naturals}
        out = []
        for card in self.naturals:
            rank, suit = card.rank, card.suit
            if ranks[rank] + wilds >= MIN_GROUP:
                continue
            if any(sum((suit, r) not in present for r in range(low, low + MIN_GROUP)) <= wilds
                   for low in range(max(LOWEST, rank - 2), min(rank, HIGHEST - 2) + 1)):
                continue
            out.append(card)
        return out

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

    def _all_wild_book(self, wilds: Sequence[Card]) -> bool:
        return self.natural == "none" and len(wilds) >= MIN_GROUP

    @functools.cached_property
    def whole(self) -> Split:
        """The best split of the whole hand; it bounds every discard (see `points`)."""
        return self.split()

    @functools.cached_property
    def whole_points(self) -> int:
        """The fewest points the whole hand leaves: `whole.points` without building groups."""
        return self.points()

    def points(self, without: Card | None = None) -> int:
        """The fewest points the hand (less `without`) leaves unlaid."""
        whole = self.__dict__.get("whole")  # only when already built: it costs more than this
        if without is not None and whole is not None and without in whole.leftover:
            return whole.points - card_points(without, self.wild_rank)
        mask, wilds = self._without(without)
        left = self._search.left(mask)[len(wilds)]
        naturals = self._search.points(mask)
        if left < naturals or self._all_wild_book(wilds):
            return left  # there is a group, so every wild finds a place
        return naturals + hand_points(wilds, self.wild_rank)

    def bound(self, without: Card) -> int:
        """A floor under `points(without)`: a split without it, plus it, is a split of the hand.
        (Exact when the card is left over in `whole`.)"""
        return self.whole_points - card_points(without, self.wild_rank)

    def goes_out_without(self, card: Card) -> bool:
        """Whether every card but `card` makes books and runs."""
        loners = self.loners  # any loner but `card` itself stays in the hand
        if loners and (len(loners) > 1 or loners[0] is not card):
            return False
        mask, wilds = self._without(card)
        if not mask:  # wilds alone: one book of them all, or nothing left at all
            return not wilds or self._all_wild_book(wilds)
        if len(self.wilds) >= 2 and self.cover > len(self.wilds) + 2:
            return False  # see `cover`
        return self._search.cover(mask) <= len(wilds)

    @functools.cached_property
    def cover(self) -> int:
        """The fewest wilds that group every natural of the hand. With two wilds or more, a
        natural added to a hand gets a book of its own with two of them, so a hand less one
        card goes out only if this is at most its wilds plus two."""
        return self._search.cover(self._search.full)

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
        once from what the hand shares (its loners, the cover of the whole hand, one memo)."""
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


def best_split(hand: Iterable[Card], wild_rank: int, natural: Natural = "none") -> Split:
    """The split of `hand` into books and runs that leaves the fewest points."""
    return Solver(hand, wild_rank, natural).split()


def go_out(
    hand: Iterable[Card], wild_rank: int, natural: Natural = "none", discard: Card | None = None
) -> tuple[Card, Split] | None:
    """How `hand` (after the draw) goes out: the discard and the groups of every other card."""
    return Solver(hand, wild_rank, natural).go_out(discard)
