"""Finding a way to lay a list of group requirements (a Phase 10 phase) from a hand.

The referee never searches: it checks the groups a seat lays (`meld_check`). The search serves
the seats' views, which list a lay-down among the legal actions, and the bots.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .cards import Card, Kind
from .game import Rebuilt, by_init
from .meld_check import build_meld
from .melds import SAME_RANK, GroupKind, Meld, MeldRules, Placed


@dataclass(frozen=True, slots=True)
class Need:
    """One group a phase requires: its kind and minimum size (e.g. a run of 4)."""

    kind: GroupKind
    size: int

    def __init__(self, kind: GroupKind, size: int) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "size", size)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    def __str__(self) -> str:
        return f"{self.kind.value} of {self.size}"


def find_groups(
    hand: Iterable[Card], needs: Sequence[Need], rules: MeldRules, natural: str = "none"
) -> list[Meld] | None:
    """A way to lay every need from `hand` with disjoint cards, using the fewest wilds; or None.

    `natural` is "none", "phase" (at least one natural card in all) or "group" (one in each).
    Exact for requirement lists in which at most one need is a run or colour group (every Phase
    10 phase): sets are tried with every possible split between natural cards and wilds, and the
    run or colour group, searched last, takes natural cards wherever it can.
    """
    cards = list(hand)
    wilds = [c for c in cards if rules.is_wild(c)]
    naturals = [c for c in cards if c.kind is Kind.NUMBER and not rules.is_wild(c)]
    order = sorted(needs, key=lambda n: (n.kind not in SAME_RANK, -n.size))
    best = _search(order, naturals, len(wilds), rules, natural)
    if best is None:
        return None
    return _attach_wilds(best, wilds, rules)


Candidate = tuple[GroupKind, tuple[Card, ...], int, int | str]  # kind, naturals, wilds, key


def _search(
    needs: Sequence[Need], naturals: list[Card], wilds: int, rules: MeldRules, natural: str
) -> list[Candidate] | None:
    if not needs:
        return []
    need, rest = needs[0], needs[1:]
    best: list[Candidate] | None = None
    best_wilds = wilds + 1
    for cand in _candidates(need, naturals, wilds, rules, exhaustive=bool(rest)):
        if natural == "group" and not cand[1]:
            continue
        remaining = list(naturals)
        for c in cand[1]:
            remaining.remove(c)
        tail = _search(rest, remaining, wilds - cand[2], rules, natural)
        if tail is None:
            continue
        found = [cand, *tail]
        used = sum(c[2] for c in found)
        if natural == "phase" and not any(c[1] for c in found):
            continue
        if used < best_wilds:
            best, best_wilds = found, used
            if used == 0:
                break
    return best


def _candidates(
    need: Need, naturals: list[Card], wilds: int, rules: MeldRules, exhaustive: bool
) -> list[Candidate]:
    by_key: dict[int | str, list[Card]] = {}
    if need.kind is GroupKind.COLOUR:
        for c in naturals:
            by_key.setdefault(c.suit, []).append(c)
    elif need.kind in SAME_RANK:
        for c in naturals:
            by_key.setdefault(c.rank, []).append(c)
    else:
        return _run_candidates(need, naturals, wilds, rules)
    out: list[Candidate] = []
    for key, group in by_key.items():
        top = min(len(group), need.size)
        floor = max(1, need.size - wilds)
        counts = range(top, floor - 1, -1) if exhaustive else range(top, top - 1, -1)
        out.extend((need.kind, tuple(group[:k]), need.size - k, key) for k in counts if k >= floor)
    if wilds >= need.size:
        key = rules.suits[0] if need.kind is GroupKind.COLOUR else rules.high
        out.append((need.kind, (), need.size, key))
    out.sort(key=lambda c: c[2])
    return out


def _run_candidates(
    need: Need, naturals: list[Card], wilds: int, rules: MeldRules
) -> list[Candidate]:
    size = need.size
    if size > rules.span:
        return []
    suits: Sequence[str] = rules.suits if rules.run_same_suit else ("",)
    last_start = rules.high if rules.wrap else rules.high - size + 1
    out: list[Candidate] = []
    for suit in suits:
        by_rank: dict[int, Card] = {}
        for c in naturals:
            if not suit or c.suit == suit:
                by_rank.setdefault(c.rank, c)
        for start in range(rules.low, last_start + 1):
            values = [(start - rules.low + k) % rules.span + rules.low for k in range(size)]
            picked = tuple(by_rank[v] for v in values if v in by_rank)
            missing = size - len(picked)
            if missing <= wilds:
                out.append((GroupKind.RUN, picked, missing, start))
    out.sort(key=lambda c: c[2])
    return out


def _attach_wilds(found: list[Candidate], wilds: list[Card], rules: MeldRules) -> list[Meld]:
    melds = []
    pool = list(wilds)
    for kind, picked, n_wild, key in found:
        use, pool = pool[:n_wild], pool[n_wild:]
        placed: list[Placed] = [(c, None) for c in picked]
        if kind is GroupKind.RUN:
            taken = {c.rank for c in picked}
            size = len(picked) + n_wild
            values = [(int(key) - rules.low + k) % rules.span + rules.low for k in range(size)]
            gaps = [v for v in values if v not in taken]
            placed += list(zip(use, gaps, strict=True))
        else:
            placed += [(w, key) for w in use]
        melds.append(build_meld(kind, placed, rules))
    return melds
