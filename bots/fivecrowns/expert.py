"""The strong Five Crowns bot, `expert`: the top rung of the ladder random < greedy < expert.

Runs in-process (`builtin:expert`, the class `FiveCrownsExpertBot`) and as a protocol bot through
the SDK (`python3 bots/fivecrowns/expert.py`). Every hand it values is valued exactly by the
engine's solver (engine.fivecrowns_solver: the fewest points a hand leaves in books and runs).

- Going out: as soon as the solver finds a way, it goes out (the fewest points: none).
- Drawing: it compares the discard's exact value (take it, then the best discard) with the
  expected value of a draw from the pile, over the cards it has not seen: the deck less its
  hand, the cards laid and the cards it saw buried in the discard pile.
- Discarding: each discard is valued by the points it leaves now and by the expected points
  after the next draw (again over the unseen cards), weighted by how likely the round is to
  end first; a card the next seat took from the discard pile marks its rank and suit as
  wanted, and such cards are kept from it when the values are close.
- Last turn: the solver lays the best groups (the fewest points left).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from meldref.bots.sdk import EngineBot, run
from meldref.bots.tiebreak import Tiebreak
from meldref.engine.cards import FIVECROWNS_SUITED, JOKER, Card, Kind
from meldref.engine.common import DRAW_DISCARD, DRAW_PILE, Draw
from meldref.engine.fivecrowns.actions import Action, Discard
from meldref.engine.fivecrowns.solver import Solver, card_points
from meldref.engine.fivecrowns.view import FiveCrownsView

JOKERS_PER_DECK: Final = 3
BUDGET: Final = 60  # solver searches per decision: bounds the time, keeps the bot deterministic
CANDIDATES: Final = 3  # discards searched one draw deep, the best by points now
MARGIN: Final = 12  # ... and only those within this many points of the best
# The chance that a rival goes out before this seat's next turn grows with the turns each seat
# has played and shrinks with the cards dealt: END_RATE x rivals x turns per seat / deal size.
END_RATE: Final = 0.54
END_MAX: Final = 0.9
FEED_COST: Final = 2.0  # points a discard is worth giving up to keep a card from a rival


@dataclass
class RoundMemory:
    """What this seat saw of the discard pile during the current round."""

    key: tuple[int, int] = (0, -1)
    turn: int = -1
    dead: Counter[Card] = field(default_factory=Counter)
    wanted: Counter[tuple[int, str]] = field(default_factory=Counter)  # next seat's keeps
    my_discard: Card | None = None
    pile_after: int = -1  # the discard pile's size after this seat's discard

    def observe(self, view: FiveCrownsView) -> None:
        key = (view.round, view.dealer)
        if key != self.key or view.turn < self.turn:
            self.__init__()  # type: ignore[misc]
            self.key = key
        self.turn = view.turn
        if view.decision != "draw" or self.my_discard is None:
            return
        mine, size = self.my_discard, view.discard_pile_size
        if size < self.pile_after:  # a reshuffle: the buried cards are back in the pile
            self.dead.clear()
        elif size == self.pile_after and view.players == 2:  # taken, and another thrown
            self.wanted[mine.rank, mine.suit] += 1
        else:
            self.dead[mine] += 1
        self.my_discard = None

    def played(self, view: FiveCrownsView, action: Action) -> None:
        if isinstance(action, Draw):
            if action.source == "pile" and view.discard_top is not None:
                self.dead[view.discard_top] += 1
        elif isinstance(action, Discard):
            self.my_discard = action.card
            self.pile_after = view.discard_pile_size + 1


def unseen(view: FiveCrownsView, memory: RoundMemory) -> Counter[Card]:
    """The cards that may still come from the draw pile, as far as this seat can tell."""
    left: Counter[Card] = Counter({c: view.decks for c in FIVECROWNS_SUITED})
    left[JOKER] = JOKERS_PER_DECK * view.decks
    seen = Counter(view.hand) + memory.dead
    for _, meld in view.table:
        seen.update(meld.cards)
    if view.discard_top is not None:
        seen[view.discard_top] += 1
    for card, n in seen.items():
        left[card] = max(0, left[card] - n)
    return +left


class Valuer:
    """Expected points after a draw, for the hands of one decision (solvers memoised)."""

    def __init__(self, view: FiveCrownsView, left: Counter[Card], budget: int) -> None:
        self.view = view
        self.budget = budget  # solver searches left for this decision (deterministic)
        self.wild = view.wild_rank
        self.left = left
        self.total = sum(left.values()) or 1
        self.cache: dict[tuple[Card, ...], int] = {}

    def is_wild(self, card: Card) -> bool:
        return card.kind is Kind.JOKER or card.rank == self.wild

    def best_after(self, hand: tuple[Card, ...]) -> int:
        """The fewest points `hand` (one card over) leaves after its best discard."""
        key = tuple(sorted(hand, key=id))
        hit = self.cache.get(key)
        if hit is None:
            self.budget -= 1
            hit = self.cache[key] = Solver(hand, self.wild, self.view.natural).best_discard()[1]
        return hit

    def expected(self, hand: tuple[Card, ...]) -> float | None:
        """The mean over unseen draws of the points left after the best discard; None when
        the decision's budget of searches runs out first."""
        solver = Solver(hand, self.wild, self.view.natural)
        now = solver.whole
        costliest = max((card_points(c, self.wild) for c in now.leftover), default=0)
        naturals = [c for c in hand if not self.is_wild(c)]
        wilds = len(hand) - len(naturals)
        profile: dict[str, tuple[int, ...]] = {}
        for c in naturals:
            profile[c.suit] = (*profile.get(c.suit, ()), c.rank)
        known: dict[object, int] = {}  # draws alike up to a renaming of suits share a value
        total = 0.0
        for card, n in self.left.items():
            if self.is_wild(card):
                key: object = card.kind
            elif _connects(card, naturals, wilds):
                key = (card.rank, tuple(sorted(profile.get(card.suit, ()))))
            else:  # it joins nothing: it is thrown, or it stands in for a costlier card
                total += n * (now.points - max(0, costliest - card_points(card, self.wild)))
                continue
            value = known.get(key)
            if value is None:
                if self.budget <= 0:
                    return None
                value = known[key] = self.best_after((*hand, card))
            total += n * value
        return total / self.total


def _connects(card: Card, naturals: list[Card], wilds: int) -> bool:
    """Whether `card` could be in a group with the hand's cards: a book with two others of its
    rank or wilds, or a run three long around it (every longer run holds such a window)."""
    same = sum(1 for c in naturals if c.rank == card.rank)
    if same + wilds >= 2:
        return True
    ranks = {c.rank for c in naturals if c.suit == card.suit and c.rank != card.rank}
    r = card.rank
    return any(
        len(ranks & {lo, lo + 1, lo + 2}) + wilds >= 2
        for lo in (r - 2, r - 1, r)
        if lo >= 3 and lo + 2 <= 13
    )


class FiveCrownsExpertBot:
    """Values hands exactly and one draw ahead (see the module docstring)."""

    name = "expert"
    # Its weights, as attributes so that bench/bench_ceiling.py can play it against copies with
    # others (docs/bots.md has the scores).
    budget: int = BUDGET
    candidates: int = CANDIDATES
    margin: int = MARGIN
    end_rate: float = END_RATE
    feed_cost: float = FEED_COST

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed  # breaks ties between equal discards (bots.tiebreak)
        self.memory = RoundMemory()

    def act(self, view: FiveCrownsView) -> Action:
        self.memory.observe(view)
        action = self._draw(view) if view.decision == "draw" else self._discard(view)
        self.memory.played(view, action)
        return action

    def _end_chance(self, view: FiveCrownsView) -> float:
        """How likely the round ends before this seat's next turn."""
        if view.last_turn:
            return 1.0
        rivals = sum(view.playing) - 1
        played = view.turn / max(1, sum(view.playing))
        return min(END_MAX, self.end_rate * rivals * played / max(3, view.deal_size))

    # -- drawing -------------------------------------------------------------------------------

    def _draw(self, view: FiveCrownsView) -> Draw:
        options = view.draw_options()
        top = view.discard_top
        if len(options) == 1 or top is None:
            return options[0]
        valuer = Valuer(view, unseen(view, self.memory), self.budget)
        if valuer.is_wild(top):
            return DRAW_DISCARD
        taken = valuer.best_after((*view.hand, top))
        if taken == 0:
            return DRAW_DISCARD
        now = view.solver().points()
        if taken >= now:  # a draw from the pile never leaves more than the hand now
            return DRAW_PILE
        pile = valuer.expected(view.hand)
        return DRAW_DISCARD if pile is None or taken < pile else DRAW_PILE

    # -- discarding ----------------------------------------------------------------------------

    def _discard(self, view: FiveCrownsView) -> Discard:
        solver = view.solver()
        out = solver.go_out()
        if out is not None:
            card, split = out
            return Discard.laying(card, split.groups)
        if view.last_turn:
            return last_turn_discard(view)
        # A wild thrown is taken by the next seat nearly every time: never while another
        # card can go (it only lowers this seat's points, and hands the rival a card it uses).
        discards = keep_wilds(view, solver.discards())
        tie = Tiebreak("fivecrowns-expert", self.seed, view.round, view.turn)
        options = sorted((solver.points(c), -card_points(c, view.wild_rank), tie(c.text), c)
                         for c in discards)
        best = options[0][0]
        shortlist = [o for o in options if o[0] <= best + self.margin][:self.candidates]
        if len(shortlist) == 1:
            return Discard(shortlist[0][3])
        valuer = Valuer(view, unseen(view, self.memory), self.budget)
        end = self._end_chance(view)
        wanted = self.memory.wanted
        best_card, best_value = shortlist[0][3], float("inf")
        for points, _, _, card in shortlist:
            rest = list(view.hand)
            rest.remove(card)
            later = valuer.expected(tuple(rest))
            if later is None:
                break
            feed = self.feed_cost * (wanted[card.rank, card.suit] > 0)
            value = end * points + (1 - end) * later + feed
            if value < best_value:
                best_card, best_value = card, value
        return Discard(best_card)


def is_wild(view: FiveCrownsView, card: Card) -> bool:
    """A Joker, or a card of the round's wild rank."""
    return card.kind is Kind.JOKER or card.rank == view.wild_rank


def keep_wilds(view: FiveCrownsView, cards: Iterable[Card]) -> list[Card]:
    """The discards that are not wild, or all of them when every one is."""
    cards = list(cards)
    plain = [c for c in cards if not is_wild(view, c)]
    return plain or cards


def last_turn_discard(view: FiveCrownsView) -> Discard:
    """The last turn's discard, laying the best groups: the fewest points left, and between
    equals a card that is not wild (the seats after this one may still have their last turn:
    a wild gains them more than it saves here)."""
    best = view.best_discard()
    if not is_wild(view, best.card):
        return best
    solver = view.solver()
    floor = solver.points(best.card)
    equal = [c for c in solver.discards() if not is_wild(view, c) and solver.points(c) <= floor]
    if not equal:
        return best
    return Discard.laying(equal[0], solver.split(equal[0]).groups)


def main() -> None:
    """Play as a protocol bot on standard input and output."""
    run(EngineBot({"fivecrowns": FiveCrownsExpertBot}, name="fivecrowns-expert"))


if __name__ == "__main__":
    main()
