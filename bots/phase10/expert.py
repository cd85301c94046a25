"""The strong Phase 10 bot, `expert`: the top rung of the ladder random < greedy < expert.

Runs in-process (`builtin:expert`, the class `Phase10ExpertBot`) and as a protocol bot through
the SDK (`python3 bots/phase10/expert.py`). It decides from its seat's view, and remembers what
the views it was shown reveal over a hand (the discard tops, how the draw pile shrank):

- discard-pile tracking: cards buried in the discard pile are out of the draw pile, so the bot
  counts the cards still to come ("outs") from the cards it has not seen;
- what opponents need: a card the next seat took from the discard pile marks its number (or
  colour) as wanted, a card it threw away as not; once a seat has laid, any card that fits a
  group on the table is one it can hit; the bot keeps those cards from the discard pile;
- its own phase: it keeps the discard that leaves the fewest cards missing, then the most outs;
  it takes the discard only when that brings the phase closer (or the card can be hit);
- after laying: it hits everything (naturals first, wilds where they open room for its other
  cards) and throws the card least likely to become hittable, the costliest of equals;
- Skips are discarded at once, at the seat nearest to winning; Wilds are never thrown while
  another card can go.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from meldref.bots.sdk import EngineBot, run
from meldref.bots.tiebreak import Tiebreak
from meldref.engine.cards import COLOURS, PHASE10_NUMBERS, SKIP, WILD, Card, Kind
from meldref.engine.common import DRAW_DISCARD, DRAW_PILE, Draw
from meldref.engine.meld_check import build_meld, extend
from meldref.engine.melds import Meld, MeldError
from meldref.engine.phase10.actions import Action, Discard, Hit, LayDown
from meldref.engine.phase10.rules import PHASES, SPAN, card_points
from meldref.engine.phase10.view import Phase10View, missing_cards

COPIES: Final = 2  # of each coloured number in the deck
WILDS_IN_DECK: Final = 8
FEED_WEIGHT: Final = 6.0  # outs a discard is worth giving up to keep a wanted card from a rival
_BY_RANK: Final = {r: next(c for c in PHASE10_NUMBERS if c.rank == r) for r in range(1, SPAN + 1)}
_BY_COLOUR: Final = {s: next(c for c in PHASE10_NUMBERS if c.suit == s) for s in COLOURS}


@dataclass
class HandMemory:
    """What this seat has seen during the current hand, from its views in turn."""

    key: tuple[int, bool] = (0, False)
    turn: int = -1
    dead: Counter[Card] = field(default_factory=Counter)  # buried in the discard pile
    wanted: dict[int, Counter[object]] = field(default_factory=dict)  # seat -> ranks/colours
    unwanted: dict[int, Counter[object]] = field(default_factory=dict)
    my_discard: Card | None = None
    pile_after_draw: int = -1
    seen_top: Card | None = None

    def observe(self, view: Phase10View) -> None:
        """Take in a view: a new hand resets; a draw decision tells what happened since."""
        key = (view.hand_number, view.tiebreak)
        if key != self.key or view.turn < self.turn:
            self.__init__()  # type: ignore[misc]
            self.key = key
        self.turn = view.turn
        if view.decision == "draw":
            self._after_others(view)

    def _after_others(self, view: Phase10View) -> None:
        top, size = view.discard_top, view.draw_pile_size
        mine = self.my_discard
        if mine is None or self.pile_after_draw < 0:
            return
        if size > self.pile_after_draw:  # a reshuffle: the buried cards are back in the pile
            self.dead.clear()
            return
        rival = _previous_seat(view)
        if view.players == 2 and size == self.pile_after_draw and top is not mine:
            self.wanted.setdefault(rival, Counter())[_trait(view, rival, mine)] += 1
        else:
            self.dead[mine] += 1  # covered by the next discard (or, rarely, taken)
        if top is not None and top is not mine and rival is not None:
            self.unwanted.setdefault(rival, Counter())[_trait(view, rival, top)] += 1
        self.my_discard = None

    def played(self, view: Phase10View, action: Action) -> None:
        """Remember the seat's own move (its discard, and the pile after its draw)."""
        if isinstance(action, Draw) and action.source == "pile":
            self.pile_after_draw = view.draw_pile_size - 1
            if view.discard_top is not None:
                self.dead[view.discard_top] += 1  # left on the pile, to be covered by ours
        elif isinstance(action, Draw):
            self.pile_after_draw = view.draw_pile_size
        elif isinstance(action, Discard):
            self.my_discard = action.card


def _previous_seat(view: Phase10View) -> int:
    """The seat that plays just before this one (whose discard it may take)."""
    n = view.players
    for k in range(1, n):
        seat = (view.seat - k) % n
        if view.playing[seat]:
            return seat
    return view.seat


def _next_seat(view: Phase10View) -> int:
    n = view.players
    for k in range(1, n):
        seat = (view.seat + k) % n
        if view.playing[seat]:
            return seat
    return view.seat


def _trait(view: Phase10View, seat: int, card: Card) -> object:
    """What a rival collects when it keeps `card`: its colour for phase 8, else its number."""
    phase = view.phases[seat]
    if phase is not None and PHASES[phase][0].kind.value == "colour":
        return card.suit
    return card.rank


# ----------------------------------------------------------------------------------------------
# How far a hand is from its phase


def distance(cards: Sequence[Card], phases: Iterable[int], wrap: bool) -> int:
    """Cards still lacking for the nearest phase, wilds counted as found."""
    wilds = cards.count(WILD)
    return min(max(0, missing_cards(cards, PHASES[p], wrap) - wilds) for p in phases)


def unseen(view: Phase10View, memory: HandMemory) -> Counter[Card]:
    """Cards that may still come from the draw pile: the deck less every card this seat saw."""
    left: Counter[Card] = Counter({c: COPIES for c in PHASE10_NUMBERS})
    left[WILD] = WILDS_IN_DECK
    seen = Counter(view.hand) + memory.dead
    for group in view.table:
        seen.update(group.meld.cards)
    if view.discard_top is not None:
        seen[view.discard_top] += 1
    for card, n in seen.items():
        if card in left:
            left[card] = max(0, left[card] - n)
    return left


def outs(rest: list[Card], phases: Sequence[int], wrap: bool, left: Counter[Card],
         now: int) -> int:
    """How many unseen cards would bring `rest` closer to its phase if drawn."""
    if now == 0:
        return 0
    ranks, colours = _improvers(rest, tuple(phases), wrap, now)
    total = left[WILD]
    for card, n in left.items():
        if card.kind is Kind.NUMBER:
            total += n * ((card.rank in ranks) + (card.suit in colours))
    return total


# The numbers and colours that bring a hand closer, by hand: they do not depend on the unseen
# cards, and the same hands come back often (the search's rollouts meet the same guesses with
# each candidate), so they are remembered, up to `_IMPROVERS_MAX` hands.
_IMPROVERS: dict[tuple[tuple[str, ...], tuple[int, ...], bool, int],
                 tuple[frozenset[int], frozenset[str]]] = {}
_IMPROVERS_MAX: Final = 20_000  # about 15 MB at most


def _improvers(rest: list[Card], phases: tuple[int, ...], wrap: bool, now: int
               ) -> tuple[frozenset[int], frozenset[str]]:
    key = (tuple(sorted(c.text for c in rest)), phases, wrap, now)
    found = _IMPROVERS.get(key)
    if found is None:
        colour = any(PHASES[p][0].kind.value == "colour" for p in phases)
        found = (frozenset(r for r, card in _BY_RANK.items()
                           if distance([*rest, card], phases, wrap) < now),
                 frozenset(s for s, card in _BY_COLOUR.items()
                           if colour and distance([*rest, card], phases, wrap) < now))
        if len(_IMPROVERS) >= _IMPROVERS_MAX:
            _IMPROVERS.clear()
        _IMPROVERS[key] = found
    return found


# ----------------------------------------------------------------------------------------------
# The bot


class Phase10ExpertBot:
    """Plays its phase for speed and keeps what its rivals need (see the module docstring)."""

    name = "expert"
    # Its weights, as attributes so that bench/bench_ceiling.py can play it against copies with
    # others (none it tried there did clearly better; docs/bots.md has the scores).
    feed_weight: float = FEED_WEIGHT
    points_weight: float = 0.0  # outs a point shed is worth before laying: only ties decide

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed  # breaks ties between equal choices (bots.tiebreak)
        self.memory = HandMemory()

    def act(self, view: Phase10View) -> Action:
        self.memory.observe(view)
        action = self._choose(view)
        self.memory.played(view, action)
        return action

    def _choose(self, view: Phase10View) -> Action:
        if view.decision == "draw":
            return self._draw(view)
        if not view.has_laid:
            lay = self._lay(view)
            if lay is not None:
                return lay
        else:
            hit = self._hit(view)
            if hit is not None:
                return hit
        return self._discard(view)

    # -- drawing -------------------------------------------------------------------------------

    def _draw(self, view: Phase10View) -> Draw:
        options = view.draw_options()
        top = view.discard_top
        if len(options) == 1 or top is None:
            return options[0]
        if top is WILD:
            return DRAW_DISCARD
        if view.has_laid:
            fits = any(g.fits(top) for g in view.hittable_groups() or view.table)
            return DRAW_DISCARD if fits else DRAW_PILE
        wrap, phases = view.rules.run_wrap, view.phases_left
        now = distance(view.hand, phases, wrap)
        taken = [*view.hand, top]
        best = min(distance(_without(taken, c), phases, wrap)
                   for c in dict.fromkeys(view.hand) if c is not SKIP)
        return DRAW_DISCARD if best < now else DRAW_PILE

    # -- laying down and hitting ---------------------------------------------------------------

    def _lay(self, view: Phase10View) -> LayDown | None:
        for phase in sorted(view.phases_left, reverse=True):
            lay = view.find_lay(phase)
            if lay is not None:
                return with_extras(view, lay)
        return None

    def _hit(self, view: Phase10View) -> Hit | None:
        hits = view.hit_options()
        if not hits:
            return None
        naturals = [h for h in hits if h.card is not WILD]
        if naturals:
            return naturals[0]
        # A wild goes where it makes room for the most of the other cards in hand.
        rest = _without(list(view.hand), WILD)
        groups = {g.id: g for g in view.hittable_groups()}
        rules = view.rules.melds

        def opened(hit: Hit) -> int:
            try:
                meld = extend(groups[hit.group_id].meld, WILD, hit.declared, rules)
            except (MeldError, KeyError):
                return -1
            return sum(1 for c in rest if c is not WILD and _fits(meld, c, rules))

        return max(hits, key=opened)

    # -- discarding ----------------------------------------------------------------------------

    def _discard(self, view: Phase10View) -> Discard:
        hand = view.hand
        if SKIP in hand:
            victims = view.victims
            if victims or all(c is SKIP or c is WILD for c in hand):
                return Discard(SKIP, leader(view, victims))
        plain = [c for c in dict.fromkeys(hand) if c is not SKIP and c is not WILD]
        if not plain:
            return Discard(WILD if WILD in hand else SKIP, None)
        risk = self._feed_risk(view)
        if view.has_laid:
            # Nothing to build any more: the card least likely to fit the table later, the
            # costliest first (a hand ends soon, and what is left in it counts).
            tie = self.tiebreak(view)
            return Discard(min(plain, key=lambda c: (
                risk(c), _hit_chance(view, c), -card_points(c), tie(c.text))))
        return Discard(min(plain, key=self.discard_cost(view, risk)))

    def tiebreak(self, view: Phase10View) -> Tiebreak:
        """Equal choices ordered by a draw of this seat's seed and the turn (bots.tiebreak)."""
        return Tiebreak("phase10-expert", self.seed, view.hand_number, view.tiebreak, view.turn)

    def discard_cost(self, view: Phase10View, risk: Callable[[Card], int]
                     ) -> Callable[[Card], tuple[int, float, int, float]]:
        """How a discard ranks before laying, lowest first: the cards the phase still lacks
        after it; then what it feeds the next seat (`risk`, weighed) less the outs it leaves;
        then the costliest card."""
        hand, wrap, phases = list(view.hand), view.rules.run_wrap, view.phases_left
        left = unseen(view, self.memory)

        tie = self.tiebreak(view)

        def cost(card: Card) -> tuple[int, float, int, float]:
            rest = _without(hand, card)
            d = distance(rest, phases, wrap)
            gain = outs(rest, phases, wrap, left, d)
            shed = self.points_weight * card_points(card)
            return (d, self.feed_weight * risk(card) - gain - shed, -card_points(card),
                    tie(card.text))

        return cost

    def _feed_risk(self, view: Phase10View):  # type: ignore[no-untyped-def]
        """How much a card helps the seat that may take it from the discard pile (0..2)."""
        rival = _next_seat(view)
        if rival == view.seat:
            return lambda card: 0
        wanted = self.memory.wanted.get(rival, Counter())
        unwanted = self.memory.unwanted.get(rival, Counter())
        if view.laid[rival] is not None:
            groups = view.table
            return lambda card: 2 if any(g.fits(card) for g in groups) else 0

        def risk(card: Card) -> int:
            trait = _trait(view, rival, card)
            if wanted[trait]:
                return 2
            return 0 if unwanted[trait] else 1

        return risk


# ----------------------------------------------------------------------------------------------
# Helpers


def _without(cards: list[Card], card: Card) -> list[Card]:
    rest = list(cards)
    rest.remove(card)
    return rest


def _fits(meld: Meld, card: Card, rules: object) -> bool:
    try:
        extend(meld, card, None, rules)  # type: ignore[arg-type]
    except MeldError:
        return False
    return True


def _hit_chance(view: Phase10View, card: Card) -> int:
    """How near `card` is to fitting a group on the table: 2 next to a run's end after one
    more card, 1 if a set of its number may still come, else 0."""
    best = 0
    for group in view.table:
        meld = group.meld
        if meld.kind.value == "run":
            if card.rank in (meld.high + 2, meld.low - 2):
                best = max(best, 2)
        elif meld.kind.value == "set" and meld.rank == card.rank:
            best = max(best, 2)
    return best


def with_extras(view: Phase10View, lay: LayDown) -> LayDown:
    """`lay` with every natural card left in hand that extends one of its groups."""
    rules = view.rules.melds
    melds: list[Meld] = [build_meld(kind, placed, rules) for kind, placed in lay.groups]
    rest = list(view.hand)
    for meld in melds:
        for card in meld.cards:
            rest.remove(card)
    keep = 1 if view.rules.going_out == "must-discard" else 0
    grown = True
    while grown and len(rest) > keep:
        grown = False
        for card in [c for c in rest if c is not WILD and c is not SKIP]:
            for i, meld in enumerate(melds):
                try:
                    melds[i] = extend(meld, card, None, rules)
                except MeldError:
                    continue
                rest.remove(card)
                grown = True
                break
            if len(rest) <= keep:
                break
    return LayDown.from_melds(melds, lay.phase, rules)


def leader(view: Phase10View, victims: tuple[int, ...]) -> int | None:
    """The victim nearest to winning: most phases, phase down, fewest cards, lowest score."""
    if not victims:
        return None
    return max(victims, key=lambda s: (
        len(view.completed[s]), view.laid[s] is not None, -view.hand_sizes[s], -view.scores[s],
    ))


def main() -> None:
    """Play as a protocol bot on standard input and output."""
    run(EngineBot({"phase10": Phase10ExpertBot}, name="phase10-expert"))


if __name__ == "__main__":
    main()
