"""Five Crowns Solitaire (digest 2.6): eleven face-up piles to close before the draw pile runs out.

The 116 cards are shuffled (``rng_for(seed, "deal", 1)``) into piles of 3, 4, ..., 13 cards
(named by that dealt size) and a draw pile of 28. Each pile has its own wilds: the Jokers and the
rank equal to its size. A move puts the draw pile's top card into an open pile and discards one
card of that pile out of play. A pile whose cards all make books and runs closes; every pile
closed wins, an empty draw pile first loses. Piles are checked after the deal and every move.

The game's facts and rule options live in `rules`, the action in `actions`, what the player sees
in `view`; the package (`meldref.engine.solitaire`) exports what other code needs of them.

The outcome ranks the player against the deck: place 1 (winners [0]) for a won game, place 2
(winners []: the deck won) for a lost one. The score is the number of piles closed either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..cards import (
    Card,
    fivecrowns_deck,
    holds,
    parse_cards,
    rng_for,
    shuffled,
    sorted_cards,
    sorted_swap,
)
from ..common import (
    CardGameState,
    Checks,
    Moves,
    blank_state,
    restore_outcome,
    snapshot_outcome,
    tokens,
)
from ..fivecrowns.solver import CLOSES, STAYS_OPEN, Solver, close_check, keeps_loner, pile_points
from ..game import (
    JSON,
    Event,
    EventKind,
    Outcome,
    Rules,
    Termination,
    check_players,
    rules_from_json,
    rules_of,
)
from .actions import Place, parse_action, place
from .rules import DECKS, LOST, PILE_SIZES, WON, SolitaireRules
from .view import SolitaireView, legal_places, pile_places

# The smallest and largest pile: pile `size` is PILE_SIZES[size - SMALLEST]. (Final here, in a
# compiled module, they are read as C values.)
SMALLEST: Final = PILE_SIZES[0]
LARGEST: Final = PILE_SIZES[-1]


class SolitaireState(CardGameState[SolitaireRules]):
    """A Solitaire game in progress (implements `engine.game.GameState`)."""

    game_name = "solitaire"
    title = "Solitaire"
    players = 1
    _to_move = 0  # one seat, and always the same decision
    _decision = "place"

    def __init__(self, rules: SolitaireRules, players: int, seed: int | str) -> None:
        check_players(self.game_name, 1, 1, players)
        self.rules, self.seed = rules, seed
        deck = shuffled(fivecrowns_deck(DECKS), rng_for(seed, "deal", 1))
        self.piles = [[deck.pop() for _ in range(size)] for size in PILE_SIZES]
        self._sorted = [tuple(sorted_cards(p)) for p in self.piles]  # as the views show them
        self._places = _places_of(self._sorted)  # per pile, its own discards
        self.draw_pile = deck
        self.closed = [False] * len(PILE_SIZES)
        # Per pile, why its last check found it open (`close_check`: a loner, or STAYS_OPEN).
        self._open_by = [STAYS_OPEN] * len(PILE_SIZES)
        self.out_of_play: list[Card] = []
        self.moves = 0
        self._outcome: Outcome | None = None
        self._opening = [Event(EventKind.DEAL, 0, {
            "piles": [" ".join(c.text for c in p) for p in self.piles],
            "draw_top": self.draw_pile[-1].text,
            "draw_pile_size": len(self.draw_pile),
        })]
        for size in PILE_SIZES:
            self._check_close(size, self._opening)
        self._check_end(self._opening)

    # -- GameState: questions (the others are `CardGameState`'s) --------------------------------

    @property
    def scores(self) -> tuple[int]:
        """The piles closed so far (the game's one running total)."""
        return (sum(self.closed),)

    def parse_action(self, text: str) -> Place:
        return parse_action(text)

    def observation(self, seat: int = 0) -> SolitaireView:
        return SolitaireView(
            natural=self.rules.natural,
            piles=tuple(self._sorted),
            closed=tuple(self.closed),
            draw_top=self.draw_pile[-1] if self.draw_pile else None,
            draw_pile_size=len(self.draw_pile),
            out_of_play=len(self.out_of_play),
            moves=self.moves,
            to_move=self.to_move,
            decision=self.decision,
            seat=seat,
            discarded=tuple(self.out_of_play),
        )

    def legal_actions(self) -> list[Place]:
        # The view's legal actions (the same function), without building the whole view.
        if self._outcome is not None or not self.draw_pile:
            return []
        return legal_places(self._sorted, self.closed, self.draw_pile[-1], self._places)

    def autoplay_action(self) -> Place:
        """The drawn card into the first open pile, and straight out again."""
        first = next(s for s, shut in zip(PILE_SIZES, self.closed, strict=True) if not shut)
        return place(first, self.draw_pile[-1])

    def _why_place(self, action: Place) -> str | None:
        # Arithmetic, not `in` and `.index` of PILE_SIZES: compiled, those compare the sizes
        # as Python objects, and every move asks three times.
        if not SMALLEST <= action.pile <= LARGEST:
            return f"no pile {action.pile}: piles are named by their dealt size, 3..13"
        index = action.pile - SMALLEST
        if self.closed[index]:
            return f"pile {action.pile} is closed and takes no more cards"
        top = self.draw_pile[-1]
        if action.card is not top and not holds(self.piles[index], action.card):
            return (f"{action.card.text} is neither in pile {action.pile} nor the drawn card "
                    f"{top.text}")
        return None

    # -- GameState: playing --------------------------------------------------------------------

    def _place(self, action: Place, plan: None = None) -> list[Event]:
        index = action.pile - SMALLEST
        pile = self.piles[index]
        drawn = self.draw_pile.pop()
        pile.append(drawn)
        pile.remove(action.card)
        self._sorted[index] = cards = sorted_swap(self._sorted[index], action.card, drawn)
        self._places[index] = pile_places(action.pile, cards)
        self.out_of_play.append(action.card)
        self.moves += 1
        events = [Event(EventKind.PLACE, 0, {
            "pile": action.pile,
            "card": drawn.text,
            "discarded": action.card.text,
            "draw_top": self.draw_pile[-1].text if self.draw_pile else None,
            "draw_pile_size": len(self.draw_pile),
        })]
        # A pile holding what it held (the drawn card went straight out), or still holding
        # the loner that kept it open, stays open without asking the solver.
        loner = self._open_by[index]
        if action.card is not drawn and not (
                loner >= 0 and keeps_loner(loner, action.card, drawn, action.pile)):
            self._check_close(action.pile, events)
        self._check_end(events)
        return events

    # Each action type's check and move (`CardGameState.why_illegal` and `apply`): the tables
    # after the class.
    def _checks(self) -> Checks:
        return _CHECKS

    def _moves(self) -> Moves:
        return _MOVES

    def _check_close(self, size: int, events: list[Event]) -> None:
        """Close pile `size` if its cards all make groups (the only pile a move changes)."""
        index = size - SMALLEST
        verdict = close_check(self.piles[index], size, self.rules.natural)
        self._open_by[index] = verdict
        if verdict == CLOSES:
            # The groups themselves only for a pile that closes.
            solver = Solver(self.piles[index], size, self.rules.natural)
            self.closed[index] = True
            events.append(Event(EventKind.CLOSE, 0, {
                "pile": size, "groups": [str(m) for m in solver.split().groups],
            }))

    def _check_end(self, events: list[Event]) -> None:
        won = all(self.closed)
        if not won and self.draw_pile:
            return
        left = [(s, p) for s, p, shut in zip(PILE_SIZES, self.piles, self.closed, strict=True)
                if not shut]
        closed = sum(self.closed)
        player_place = WON if won else LOST
        self._end_game(Outcome(Termination.NORMAL, (player_place,), (closed,), {
            "won": won,
            "piles_closed": closed,
            "open_piles": [s for s, _ in left],
            "cards_left": sum(len(p) for _, p in left),
            "points_left": sum(pile_points(p, s, self.rules.natural) for s, p in left),
            "moves": self.moves,
        }), events)

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, JSON]:
        return {
            **self._snapshot_head(),
            "piles": [tokens(p) for p in self.piles],
            "closed": list(self.closed),
            "draw_pile": tokens(self.draw_pile),
            "out_of_play": tokens(self.out_of_play),
            "moves": self.moves,
            "outcome": snapshot_outcome(self._outcome),
        }

    @classmethod
    def _restore(cls, data: Mapping[str, JSON]) -> SolitaireState:
        state = blank_state(cls)
        state.rules = rules_from_json(SolitaireRules, data["rules"])
        state.seed = data["seed"]
        state.piles = [parse_cards(p) for p in data["piles"]]
        state._sorted = [tuple(sorted_cards(p)) for p in state.piles]
        state._places = _places_of(state._sorted)
        state.closed = [bool(c) for c in data["closed"]]
        state._open_by = [STAYS_OPEN] * len(PILE_SIZES)  # unknown: the next move checks
        state.draw_pile = parse_cards(data["draw_pile"])
        state.out_of_play = parse_cards(data["out_of_play"])
        state.moves = int(data["moves"])
        state._outcome = restore_outcome(data["outcome"])
        state._opening = []
        if len(state.piles) != len(PILE_SIZES):
            raise ValueError(f"broken Solitaire snapshot: {len(state.piles)} piles, not 11")
        return state


def _places_of(piles: list[tuple[Card, ...]]) -> list[tuple[Place, ...]]:
    """Each pile's own discards (`view.pile_places`), in the order of PILE_SIZES."""
    return [pile_places(size, cards) for size, cards in zip(PILE_SIZES, piles, strict=True)]


def new_game(rules: Rules, players: int, seed: int | str) -> SolitaireState:
    """A new game: the piles are dealt (and checked) and the first card is to be placed."""
    return SolitaireState(rules_of(SolitaireRules, rules), players, seed)


# Each action type's check and move, read by `_checks` and `_moves`.
_CHECKS: Final[Checks] = {Place: SolitaireState._why_place}
_MOVES: Final[Moves] = {Place: SolitaireState._place}
