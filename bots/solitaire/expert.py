"""The strong Five Crowns Solitaire bot, `expert`: the top rung of random < greedy < expert.

Runs in-process (`builtin:expert`, the class `SolitaireExpertBot`) and as a protocol bot through
the SDK (`python3 bots/solitaire/expert.py`). The player sees every pile and the card to place;
the order of the rest of the draw pile is unknown, but what it holds is not: the deck less every
card in sight and every card put out of play.

How it chooses a move (the drawn card into a pile, a card of that pile out of play):
- a pile's distance is the fewest cards it must still swap away before it closes
  (engine.fivecrowns_solver.fewest_left: the solver's search, each card left counting one);
- its outs are the unseen cards that would shorten that distance if drawn;
- every move is listed with the distance it leaves; a move that closes a pile comes first;
  otherwise, among the moves that shorten a distance the most (the drawn card straight out,
  and the most promising swaps), the bot takes the one after which its pile needs the fewest
  draws: distance x unseen cards / outs. Outs are memoised on the pile's cards, and a budget of
  solver searches per decision bounds the time (deterministic, unlike a clock). The budget
  counts the searches the decision needs as if nothing were memoised, and the view holds the
  cards put out of play, so a decision depends on the view alone: a game begun from a
  position goes on as the game went.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final

from meldref.bots.sdk import EngineBot, run
from meldref.engine.cards import FIVECROWNS_SUITED, JOKER, Card, Kind
from meldref.engine.fivecrowns.solver import Natural, fewest_left, fewest_left_without
from meldref.engine.solitaire import Place, SolitaireView

DECKS: Final = 2
JOKERS: Final = 3 * DECKS
BUDGET: Final = 200  # solver searches per decision (bounds the time; deterministic)
SHORTLIST: Final = 6  # swaps whose draws needed are counted exactly, the most promising first
DEAD_PILE: Final = 60  # draws a pile "takes" per card when no unseen card helps it
DECK_TYPES: Final = (*FIVECROWNS_SUITED, JOKER)


class PileValuer:
    """Distances of piles, memoised on the pile's cards (piles change one at a time).

    The memos are pure (a pile's cards decide its distance), so they are kept from decision
    to decision for speed; but `searches`, which the budget counts, is what a valuer new to
    the decision would have searched, so a decision depends on the view alone and a bot
    begun on a position plays as one that played the game to it."""

    def __init__(self, natural: str) -> None:
        self.natural: Natural = natural  # type: ignore[assignment]
        self.memo: dict[tuple[int, tuple[int, ...]], int] = {}
        self.useful_memo: dict[tuple[int, tuple[int, ...]], tuple[frozenset[Card], int]] = {}
        self.new_decision()

    def new_decision(self) -> None:
        """Count searches afresh: nothing is known to this decision yet."""
        self.searches = 0
        self.known: set[tuple[int, tuple[int, ...]]] = set()
        self.useful_known: set[tuple[int, tuple[int, ...]]] = set()

    def distance(self, size: int, cards: Sequence[Card]) -> int:
        """How many cards the pile must still swap out, at fewest."""
        key = _key(size, cards)
        if key not in self.known:
            self.known.add(key)
            self.searches += 1
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = _distance(cards, fewest_left(cards, size, self.natural),
                                             size)
        return hit

    def throws(self, size: int, cards: Sequence[Card]) -> dict[Card, int]:
        """The distance of the pile less each of its cards (one search for them all)."""
        self.searches += 1
        rest = fewest_left_without(cards, size, self.natural)
        out = {}
        for card, need in rest.items():
            kept = list(cards)
            kept.remove(card)
            out[card] = _distance(kept, need, size)
            self.memo[_key(size, kept)] = out[card]
            self.known.add(_key(size, kept))
        return out

    def useful(self, size: int, cards: Sequence[Card]) -> frozenset[Card]:
        """The cards (of the whole deck) that would shorten the pile's distance if drawn."""
        key = _key(size, cards)
        if key in self.useful_known:
            return self.useful_memo[key][0]
        self.useful_known.add(key)
        need = self.distance(size, cards)
        hit = self.useful_memo.get(key)
        if hit is not None:
            self.searches += hit[1]  # as a valuer new to the decision would search again
            return hit[0]
        raw = fewest_left(cards, size, self.natural)
        found: set[Card] = set()
        alike: dict[object, bool] = {}
        if need:
            naturals = [c for c in cards if not is_wild(c, size)]
            profile: dict[str, tuple[int, ...]] = {}
            for c in naturals:
                profile[c.suit] = (*profile.get(c.suit, ()), c.rank)
            for card in DECK_TYPES:
                if is_wild(card, size):
                    kind: object = "wild"
                elif _near(card, naturals):
                    kind = (card.rank, tuple(sorted(profile.get(card.suit, ()))))
                else:
                    continue
                if kind not in alike:
                    # Adding a card leaves at most one more card out, and throwing a card
                    # left out takes one away: the draw helps when the grown pile leaves
                    # no more cards out than the pile does now.
                    self.searches += 1
                    grown = fewest_left((*cards, card), size, self.natural)
                    alike[kind] = grown <= raw
                if alike[kind]:
                    found.add(card)
        self.useful_memo[key] = (frozenset(found), len(alike))
        return self.useful_memo[key][0]

    def cost(self, size: int, cards: Sequence[Card], unseen: Counter[Card], total: int
             ) -> float:
        """About how many draws the pile still takes: its distance over its share of outs."""
        need = self.distance(size, cards)
        if need == 0:
            return 0.0
        outs = sum(unseen[c] for c in self.useful(size, cards))
        return need * total / outs if outs else need * DEAD_PILE


def _key(size: int, cards: Sequence[Card]) -> tuple[int, tuple[int, ...]]:
    return (size, tuple(sorted(map(id, cards))))


def _promise(pile: Sequence[Card], kept: Card, thrown: Card, size: int) -> int:
    """A quick guess at what a swap does to a pile's chances: the cards the kept card goes
    with, less those the thrown card went with (wilds go with everything)."""

    def partners(card: Card) -> int:
        if is_wild(card, size):
            return len(pile)
        return sum(1 for c in pile if c is not card and (is_wild(c, size) or _near(card, [c])))

    return partners(kept) - partners(thrown)


def _near(card: Card, naturals: Sequence[Card]) -> bool:
    return any(c.rank == card.rank or (c.suit == card.suit and abs(c.rank - card.rank) <= 2)
               for c in naturals)


def _distance(cards: Sequence[Card], need: int, size: int) -> int:
    if need and need == len(cards):  # no group yet: one card, or a pair, may stay
        return need - (2 if _has_pair(cards, size) else 1)
    return need


def _has_pair(cards: Sequence[Card], size: int) -> bool:
    """Two cards that a third could make a group of."""
    plain = [c for c in cards if not is_wild(c, size)]
    if len(plain) < len(cards):
        return True
    return any(a.rank == b.rank or (a.suit == b.suit and abs(a.rank - b.rank) <= 2)
               for i, a in enumerate(plain) for b in plain[i + 1:])


def is_wild(card: Card, size: int) -> bool:
    return card.kind is Kind.JOKER or card.rank == size


def unseen_cards(view: SolitaireView) -> Counter[Card]:
    """The cards still in the draw pile below its top, as a multiset (order unknown): the deck
    less every pile, the top and the cards put out of play."""
    left: Counter[Card] = Counter({c: DECKS for c in FIVECROWNS_SUITED})
    left[JOKER] = JOKERS
    for pile in view.piles:
        left.subtract(pile)
    if view.draw_top is not None:
        left[view.draw_top] -= 1
    left.subtract(view.discarded)
    return +left


class SolitaireExpertBot:
    """Searches every pile choice, counting the draws each pile still needs (module docstring).
    It decides from the view alone (`PileValuer`): its memos only save time."""

    name = "expert"

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed  # it plays the same way every time: no draw of its own
        self.valuer: PileValuer | None = None

    def act(self, view: SolitaireView) -> Place:
        if self.valuer is None or self.valuer.natural != view.natural or view.moves == 0:
            self.valuer = PileValuer(view.natural)  # a new game: the old memos are dead weight
        self.valuer.new_decision()
        return self._choose(view)

    def _choose(self, view: SolitaireView) -> Place:
        top = view.draw_top
        assert top is not None and self.valuer is not None
        valuer = self.valuer
        unseen = unseen_cards(view)
        total = max(1, sum(unseen.values()))
        moves: list[tuple[int, int, str, Card, int]] = []  # -gain, after, text, card, size
        for size in view.open_piles():
            before = valuer.distance(size, view.pile(size))
            for card, after in valuer.throws(size, (*view.pile(size), top)).items():
                moves.append((after - before, after, card.text, card, size))
        closing = [m for m in moves if m[1] == 0]
        if closing:  # the largest pile first: the hardest to close again
            best = max(closing, key=lambda m: (m[4], m[2]))
            return Place(best[4], best[3])
        moves.sort(key=lambda m: (m[0], -m[4], m[2]))
        best_gain = moves[0][0]
        passes = [m for m in moves if m[0] == best_gain and m[3] is top][:1]  # all alike
        swaps = [m for m in moves if m[0] == best_gain and m[3] is not top]
        swaps.sort(key=lambda m: -_promise(view.pile(m[4]), top, m[3], m[4]))
        shortlist = passes + swaps[:SHORTLIST]
        start = valuer.searches
        chosen, chosen_cost = shortlist[0], float("inf")
        for move in shortlist:
            if valuer.searches - start > BUDGET:
                break
            _, _, _, card, size = move
            pile = view.pile(size)
            grown = [*pile, top]
            grown.remove(card)
            delta = (valuer.cost(size, grown, unseen, total)
                     - valuer.cost(size, pile, unseen, total))
            if delta < chosen_cost:
                chosen, chosen_cost = move, delta
        return Place(chosen[4], chosen[3])


def main() -> None:
    """Play as a protocol bot on standard input and output."""
    run(EngineBot({"solitaire": SolitaireExpertBot}, name="solitaire-expert"))


if __name__ == "__main__":
    main()
