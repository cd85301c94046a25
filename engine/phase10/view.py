"""What a Phase 10 seat sees: table groups, the seat's view and the legal actions it implies.

`Phase10View` is the observation of `Phase10State.observation(seat)`; in-process bots decide from
it alone, and the state lists its legal actions through it, so the two never disagree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ..cards import SKIP, WILD, Card, Kind
from ..common import DRAW_DISCARD, DRAW_PILE, Draw, tokens
from ..game import JSON, Rebuilt, Rules, by_init, rules_of
from ..meld_check import parse_meld
from ..meld_search import Need, find_groups
from ..melds import Declared, GroupKind, Meld, format_meld
from .actions import Action, Discard, Hit, LayDown
from .rules import PHASE_NEEDS, PHASES, SPAN, Phase10Rules

_RUN, _COLOUR = GroupKind.RUN, GroupKind.COLOUR


class TableGroup:
    """A laid group: its id (stable for the hand), its owner and the checked meld."""

    __slots__ = ("_ends", "_token", "_value", "id", "meld", "owner")

    def __init__(self, group_id: int, owner: int, meld: Meld, wrap: bool) -> None:
        self.id = group_id
        self.owner = owner
        self.meld = meld
        # What a card must be to extend the group; precomputed because bots ask on every turn:
        # a run's values at its ends, a colour group's colour, a set's rank.
        self._ends: tuple[int, ...] = ()
        self._value: int | str = 0
        if meld.kind is _RUN:
            self._ends = _run_ends(meld, wrap)
        elif meld.kind is _COLOUR:
            self._value = meld.colour
        else:
            self._value = meld.rank
        self._token: str | None = None  # written when first asked (every view's JSON asks)

    def fits(self, card: Card) -> tuple[Declared, ...]:
        """The declarations under which `meld_check.extend` takes `card`, the top end first."""
        kind = card.kind
        if kind is Kind.SKIP:
            return ()
        group = self.meld.kind
        if kind is Kind.WILD:
            return self._ends if group is _RUN else (None,)
        if group is _RUN:
            return (None,) if card.rank in self._ends else ()
        have = card.suit if group is _COLOUR else card.rank
        return (None,) if have == self._value else ()

    @property
    def token(self) -> str:
        """The group's protocol token (`format_meld`), written once: a group stays on the
        table for the hand and every view's JSON holds it."""
        if self._token is None:
            self._token = format_meld(self.meld)
        return self._token

    def to_json(self) -> dict[str, JSON]:
        return {"id": self.id, "owner": self.owner, "group": self.token}


def _run_ends(meld: Meld, wrap: bool) -> tuple[int, ...]:
    """The values that extend a run: above its top first, then below its bottom."""
    if len(meld.cards) >= SPAN:
        return ()
    lo, hi = meld.low, meld.high
    if wrap:
        return tuple(dict.fromkeys((hi % SPAN + 1, (lo - 2) % SPAN + 1)))
    return tuple(v for v in (hi + 1, lo - 1) if 1 <= v <= SPAN)


# ----------------------------------------------------------------------------------------------
# How far a hand is from a phase (bots' heuristic and a cheap test before the finder)

_WINDOWS: Final = {
    (size, wrap): tuple(
        sum(1 << ((start - 1 + k) % SPAN + 1) for k in range(size))
        for start in range(1, (SPAN if wrap else SPAN - size + 1) + 1)
    )
    for size in range(1, SPAN + 1)
    for wrap in (False, True)
}


def missing_cards(hand: Iterable[Card], needs: Sequence[Need], wrap: bool = False) -> int:
    """How many cards (wilds) the natural cards of `hand` lack to make `needs` (Phase 10 needs).

    Exact for every Phase 10 phase when wilds are free to take any value: a phase can be laid
    only if this is at most the number of wilds held (the natural-card rule aside).
    """
    if needs[0].kind is _COLOUR:
        colours = Counter(c.suit for c in hand if c.kind is Kind.NUMBER)
        return max(0, needs[0].size - max(colours.values(), default=0))
    return _missing_by_rank(_rank_counts(hand), needs, wrap)


def missing_without_each(
    hand: Sequence[Card], needs: Sequence[Need], wrap: bool = False
) -> dict[Card, int]:
    """`missing_cards` of `hand` less one copy of each of its cards, card by card (discards)."""
    if needs[0].kind is _COLOUR:
        return {c: missing_cards(_without(hand, c), needs, wrap) for c in dict.fromkeys(hand)}
    ranks = _rank_counts(hand)
    whole = _missing_by_rank(ranks, needs, wrap)
    by_rank: dict[int, int] = {}
    for card in dict.fromkeys(hand):
        if card.kind is Kind.NUMBER and card.rank not in by_rank:
            ranks[card.rank] -= 1
            by_rank[card.rank] = _missing_by_rank(ranks, needs, wrap)
            ranks[card.rank] += 1
    return {c: by_rank[c.rank] if c.kind is Kind.NUMBER else whole for c in dict.fromkeys(hand)}


def _without(hand: Sequence[Card], card: Card) -> list[Card]:
    rest = list(hand)
    rest.remove(card)
    return rest


def _rank_counts(hand: Iterable[Card]) -> list[int]:
    ranks = [0] * (SPAN + 1)
    for card in hand:
        if card.kind is Kind.NUMBER:
            ranks[card.rank] += 1
    return ranks


def _missing_by_rank(ranks: list[int], needs: Sequence[Need], wrap: bool) -> int:
    sets = sorted((n.size for n in needs if n.kind is not _RUN), reverse=True)
    runs = [n.size for n in needs if n.kind is _RUN]
    if not runs:
        return _missing_sets(sets, sorted(ranks, reverse=True))
    windows = _WINDOWS.get((runs[0], wrap), ())
    if not windows:
        return runs[0] + sum(sets)
    mask = 0
    for r in range(1, SPAN + 1):
        if ranks[r]:
            mask |= 1 << r
    if not sets:
        return runs[0] - max((mask & w).bit_count() for w in windows)
    return _missing_set_and_run(sets[0], runs[0], ranks, mask, windows)


def _missing_sets(sets: list[int], counts: list[int]) -> int:
    apart = sum(max(0, size - count) for size, count in zip(sets, counts, strict=False))
    apart += sum(sets[len(counts):])
    together = max(0, sum(sets) - counts[0]) if len(sets) == 2 else apart
    return min(apart, together)


def _missing_set_and_run(
    size: int, length: int, ranks: list[int], mask: int, windows: tuple[int, ...]
) -> int:
    # The run takes one card of each number it covers; the set gets what is left of its number.
    # Only numbers within one of the most plentiful can give the set its best count.
    top = max(ranks)
    plenty = [(r, c) for r, c in enumerate(ranks) if c and c >= top - 1]
    best = length + size
    for w in windows:
        kept = max((c - ((w >> r) & 1) for r, c in plenty), default=0)
        best = min(best, length - (mask & w).bit_count() + max(0, size - kept))
    return best


_VICTIMS: dict[tuple[str, str, int, tuple[bool, ...], tuple[int, ...]], tuple[int, ...]] = {}


def skip_victims(
    rules: Phase10Rules, seat: int, playing: Sequence[bool], skips: Sequence[int]
) -> tuple[int, ...]:
    """The seats a Skip discarded by `seat` may skip, in seat order from its left."""
    # Asked several times a decision (the legal actions, the request's text, the judge) with
    # the same few arguments all game: one lookup in a small bounded table.
    key = (rules.skip_victim, rules.skip_repeat, seat, tuple(playing), tuple(skips))
    found = _VICTIMS.get(key)
    if found is None:
        if len(_VICTIMS) >= 1024:
            _VICTIMS.clear()
        found = _VICTIMS[key] = _skip_victims(rules, seat, playing, skips)
    return found


def _skip_victims(
    rules: Phase10Rules, seat: int, playing: Sequence[bool], skips: Sequence[int]
) -> tuple[int, ...]:
    n = len(playing)
    order = [s for s in ((seat + k) % n for k in range(1, n)) if playing[s]]
    if rules.skip_victim == "next":
        order = order[:1]
    if rules.skip_repeat == "once-per-orbit":
        return tuple(s for s in order if not skips[s])
    return tuple(order)


# ----------------------------------------------------------------------------------------------
# What a seat sees

_DISCARDS: dict[tuple[Card, int | None], Discard] = {}  # one per card and victim: a few dozen


def _discard(card: Card, victim: int | None) -> Discard:
    """`Discard(card, victim)`, one value of each (legal actions list one per card held)."""
    action = _DISCARDS.get((card, victim))
    if action is None:
        action = _DISCARDS[card, victim] = Discard(card, victim)
    return action



@dataclass(slots=True, eq=False)
class Phase10View:
    """What one seat may know now, and the legal actions it implies (for in-process bots).

    Holds immutable values only (tuples, interned cards, checked melds), so building it costs a
    few tuple copies and a bot may keep it.
    """

    seat: int
    rules: Phase10Rules
    players: int
    hand_number: int
    dealer: int
    to_move: int | None
    decision: str
    turn: int
    tiebreak: bool
    hand: tuple[Card, ...]
    discard_top: Card | None
    draw_pile_size: int
    table: tuple[TableGroup, ...]
    laid_this_turn: bool
    playing: tuple[bool, ...]  # per seat: plays this hand (tie-break hands seat only the tied)
    phases: tuple[int | None, ...]  # per seat: the phase made this hand (any-order: once laid)
    laid: tuple[int | None, ...]  # per seat: the phase laid this hand, or None
    scores: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    skips: tuple[int, ...]  # per seat: Skips pending against it
    completed: tuple[tuple[int, ...], ...]  # per seat: phases completed, in order

    def __init__(self, seat: int, rules: Phase10Rules, players: int, hand_number: int,
                 dealer: int, to_move: int | None, decision: str, turn: int, tiebreak: bool,
                 hand: tuple[Card, ...], discard_top: Card | None, draw_pile_size: int,
                 table: tuple[TableGroup, ...], laid_this_turn: bool, playing: tuple[bool, ...],
                 phases: tuple[int | None, ...], laid: tuple[int | None, ...],
                 scores: tuple[int, ...], hand_sizes: tuple[int, ...], skips: tuple[int, ...],
                 completed: tuple[tuple[int, ...], ...]) -> None:
        self.seat = seat
        self.rules = rules
        self.players = players
        self.hand_number = hand_number
        self.dealer = dealer
        self.to_move = to_move
        self.decision = decision
        self.turn = turn
        self.tiebreak = tiebreak
        self.hand = hand
        self.discard_top = discard_top
        self.draw_pile_size = draw_pile_size
        self.table = table
        self.laid_this_turn = laid_this_turn
        self.playing = playing
        self.phases = phases
        self.laid = laid
        self.scores = scores
        self.hand_sizes = hand_sizes
        self.skips = skips
        self.completed = completed

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    # -- derived facts -------------------------------------------------------------------------

    @property
    def my_turn(self) -> bool:
        return self.to_move == self.seat

    @property
    def phase(self) -> int | None:
        """This seat's phase this hand (any-order: None until it lays one)."""
        return self.phases[self.seat]

    @property
    def has_laid(self) -> bool:
        return self.laid[self.seat] is not None

    @property
    def phases_left(self) -> tuple[int, ...]:
        """The phases this seat may lay now (one, or in any-order every one not yet made)."""
        if self.has_laid:
            return ()
        if self.tiebreak or not self.rules.any_order or self.phases[self.seat] is not None:
            # One phase: in order, in tie-break hands, and (win=last-phase-and-out) the last
            # phase again for a seat that completed every phase without going out.
            return (self.phases[self.seat],)  # type: ignore[return-value]
        done = set(self.completed[self.seat])
        return tuple(p for p in self.rules.sequence if p not in done)

    @property
    def victims(self) -> tuple[int, ...]:
        """The seats a Skip discarded now may skip."""
        return skip_victims(self.rules, self.seat, self.playing, self.skips)

    # -- legal actions, as the state will judge them -------------------------------------------

    def draw_options(self) -> list[Draw]:
        out = [DRAW_PILE] if self.draw_pile_size else []
        if self.discard_top is not None and self.discard_top is not SKIP:
            out.append(DRAW_DISCARD)
        return out

    def discard_options(self) -> list[Discard]:
        out: list[Discard] = []
        victims = self.victims
        for card in dict.fromkeys(self.hand):
            if card is SKIP and victims:
                out.extend(_discard(card, v) for v in victims)
            else:
                out.append(_discard(card, None))
        return out

    def hittable_groups(self) -> tuple[TableGroup, ...]:
        """The groups this seat may hit now (none before its phase is down)."""
        if not self.has_laid:
            return ()
        if self.laid_this_turn and self.rules.hit_on_lay_turn == "own":
            return tuple(g for g in self.table if g.owner == self.seat)
        return self.table

    def hit_options(self) -> list[Hit]:
        if self.rules.going_out == "must-discard" and len(self.hand) <= 1:
            return []
        groups = self.hittable_groups()
        return [
            Hit(g.id, card, d)
            for card in dict.fromkeys(self.hand)
            for g in groups
            for d in g.fits(card)
        ]

    def find_lay(self, phase: int) -> LayDown | None:
        """A legal lay-down of `phase` from this hand, the finder's (fewest wilds), or None."""
        needs = PHASES[phase]
        if missing_cards(self.hand, needs, self.rules.run_wrap) > self.hand.count(WILD):
            return None  # the finder is much dearer than this count
        melds = find_groups(self.hand, needs, self.rules.melds, self.rules.natural)
        if melds is None:
            return None
        if self.rules.going_out == "must-discard" and sum(map(len, melds)) == len(self.hand):
            return None
        return LayDown.from_melds(melds, phase, self.rules.melds)

    def lay_options(self) -> list[LayDown]:
        if self.decision != "play" or not self.my_turn:
            return []
        found = (self.find_lay(p) for p in self.phases_left)
        return [lay for lay in found if lay is not None]

    def legal_actions(self) -> list[Action]:
        """Every draw, discard and single-card hit, and one lay-down per phase the finder finds."""
        if not self.my_turn:
            return []
        if self.decision == "draw":
            return list(self.draw_options())
        return [*self.lay_options(), *self.hit_options(), *self.discard_options()]

    # -- protocol form -------------------------------------------------------------------------

    def to_json(self) -> dict[str, JSON]:
        seat = self.seat
        seats = [
            {
                "seat": s,
                "playing": self.playing[s],
                "phase": self.phases[s],
                "laid": self.laid[s] is not None,
                "score": self.scores[s],
                "hand_size": self.hand_sizes[s],
                "skip_pending": self.skips[s],
                "completed": list(self.completed[s]),
            }
            for s in range(self.players)
        ]
        phase = self.phases[seat]
        return {
            "seat": seat,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "to_move": self.to_move,
            "decision": self.decision,
            "turn": self.turn,
            "turn_cap": self.rules.turn_cap,
            "tiebreak": self.tiebreak,
            "phase": phase,
            "needs": PHASE_NEEDS[phase] if phase is not None else None,
            "phases_left": list(self.phases_left),
            "laid": self.laid[seat],
            "laid_this_turn": self.laid_this_turn,
            "hand": tokens(self.hand),
            "discard_top": None if self.discard_top is None else self.discard_top.text,
            "draw_pile_size": self.draw_pile_size,
            "table": [g.to_json() for g in self.table],
            "seats": seats,
            "victims": list(self.victims),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON], rules: Rules) -> Phase10View:
        """The view whose `to_json()` is `data` (what a protocol bot is sent), under `rules`
        (the `rule` lines): a seat's laid phase is its phase once `laid` is true."""
        rules = rules_of(Phase10Rules, rules)
        seats = sorted(data["seats"], key=lambda s: s["seat"])
        seat = int(data["seat"])
        laid = tuple(
            data["laid"] if s["seat"] == seat else (s["phase"] if s["laid"] else None)
            for s in seats
        )
        melds = rules.melds
        return cls(
            seat=seat,
            rules=rules,
            players=len(seats),
            hand_number=data["hand_number"],
            dealer=data["dealer"],
            to_move=data["to_move"],
            decision=data["decision"],
            turn=data["turn"],
            tiebreak=data["tiebreak"],
            hand=tuple(Card.parse(c) for c in data["hand"]),
            discard_top=None if data["discard_top"] is None else Card.parse(data["discard_top"]),
            draw_pile_size=data["draw_pile_size"],
            table=tuple(TableGroup(g["id"], g["owner"], parse_meld(g["group"], melds),
                                   rules.run_wrap) for g in data["table"]),
            laid_this_turn=data["laid_this_turn"],
            playing=tuple(bool(s["playing"]) for s in seats),
            phases=tuple(s["phase"] for s in seats),
            laid=laid,
            scores=tuple(s["score"] for s in seats),
            hand_sizes=tuple(s["hand_size"] for s in seats),
            skips=tuple(s["skip_pending"] for s in seats),
            completed=tuple(tuple(s["completed"]) for s in seats),
        )
