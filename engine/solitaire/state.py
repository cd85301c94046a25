"""Five Crowns Solitaire (digest 2.6): eleven face-up piles to close before the draw pile runs out.

The 116 cards are shuffled (``rng_for(seed, "deal", 1)``) into piles of 3, 4, ..., 13 cards
(named by that dealt size) and a draw pile of 28. Each pile has its own wilds: the Jokers and the
rank equal to its size. A move puts the draw pile's top card into an open pile and discards one
card of that pile out of play. A pile whose cards all make books and runs closes; every pile
closed wins, an empty draw pile first loses. Piles are checked after the deal and every move.

The outcome ranks the player against the deck: place 1 (winners [0]) for a won game, place 2
(winners []: the deck won) for a lost one. The score is the number of piles closed either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final, Literal

from ..cards import (
    FC_RANK_TEXT,
    Card,
    CardError,
    fivecrowns_deck,
    parse_cards,
    rng_for,
    shuffled,
    sort_key,
)
from ..common import (
    CardGameState,
    Checks,
    Moves,
    restore_outcome,
    snapshot_outcome,
    tokens,
)
from ..fivecrowns.solver import Natural, Solver
from ..game import (
    JSON,
    Event,
    GameInfo,
    InvalidActionError,
    Outcome,
    Termination,
    check_fields,
    rules_from_json,
)
from ..numbers import is_count, quoted

PILE_SIZES: Final = tuple(range(3, 14))  # a pile is named by its dealt size, also its wild rank
DECKS: Final = 2
WON: Final = 1  # the player's place in a won game; in a lost one the deck is first
LOST: Final = 2


@dataclass(frozen=True, slots=True)
class SolitaireRules:
    """The rule options of Five Crowns Solitaire."""

    natural: Literal["none", "group"] = "none"  # group: every book and run needs a natural card

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass(frozen=True, slots=True)
class Place:
    """`place <pile> <card>`: the draw pile's top goes into `pile`, then `card` leaves it."""

    pile: int
    card: Card

    def __str__(self) -> str:
        return f"place {self.pile} {self.card.text}"


def parse_action(text: str) -> Place:
    """The action written as `text`; `InvalidActionError` if it is not a Solitaire action."""
    words = text.split()
    if len(words) != 3 or words[0].lower() != "place" or not is_count(words[1]):
        raise InvalidActionError(
            f"{quoted(text)}: write place <pile 3..13> <card>, e.g. place 5 QH"
        )
    try:
        return Place(int(words[1]), Card.parse(words[2]))
    except CardError as exc:
        raise InvalidActionError(f"{quoted(text)}: {exc}") from None


@dataclass(frozen=True, slots=True)
class SolitaireView:
    """Everything the player may know: every pile (face up) and the draw pile's top only."""

    natural: Natural
    piles: tuple[tuple[Card, ...], ...]  # in the order of PILE_SIZES
    closed: tuple[bool, ...]
    draw_top: Card | None
    draw_pile_size: int
    out_of_play: int
    moves: int
    to_move: int | None
    decision: str
    seat: int = 0

    def pile(self, size: int) -> tuple[Card, ...]:
        return self.piles[PILE_SIZES.index(size)]

    def open_piles(self) -> list[int]:
        return [size for size, shut in zip(PILE_SIZES, self.closed, strict=True) if not shut]

    def solver(self, size: int, extra: Card | None = None) -> Solver:
        """The solver of pile `size`, with `extra` added to it."""
        cards = self.pile(size) if extra is None else (*self.pile(size), extra)
        return Solver(cards, size, self.natural)

    def legal_actions(self) -> list[Place]:
        if self.to_move is None or self.draw_top is None:
            return []
        return [
            Place(size, card)
            for size in self.open_piles()
            for card in dict.fromkeys((*self.pile(size), self.draw_top))
        ]

    def to_json(self) -> dict[str, JSON]:
        piles = [
            {"size": size, "wild_rank": FC_RANK_TEXT[size], "closed": shut,
             "cards": [c.text for c in cards]}
            for size, cards, shut in zip(PILE_SIZES, self.piles, self.closed, strict=True)
        ]
        return {
            "seat": self.seat,
            "to_move": self.to_move,
            "decision": self.decision,
            "natural": self.natural,
            "draw_top": None if self.draw_top is None else self.draw_top.text,
            "draw_pile_size": self.draw_pile_size,
            "out_of_play": self.out_of_play,
            "moves": self.moves,
            "piles_closed": sum(self.closed),
            "piles": piles,
        }


class SolitaireState(CardGameState):
    """A Solitaire game in progress (implements `engine.game.GameState`)."""

    game_name = "solitaire"
    title = "Solitaire"
    players = 1
    _to_move = 0  # one seat, and always the same decision
    _decision = "place"

    def __init__(self, rules: SolitaireRules, players: int, seed: int | str) -> None:
        GAME.check_players(players)
        self.rules, self.seed = rules, seed
        deck = shuffled(fivecrowns_deck(DECKS), rng_for(seed, "deal", 1))
        self.piles = [[deck.pop() for _ in range(size)] for size in PILE_SIZES]
        self.draw_pile = deck
        self.closed = [False] * len(PILE_SIZES)
        self.out_of_play: list[Card] = []
        self.moves = 0
        self._outcome: Outcome | None = None
        self._opening = [Event("deal", 0, {
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
            piles=tuple(tuple(sorted(p, key=sort_key)) for p in self.piles),
            closed=tuple(self.closed),
            draw_top=self.draw_pile[-1] if self.draw_pile else None,
            draw_pile_size=len(self.draw_pile),
            out_of_play=len(self.out_of_play),
            moves=self.moves,
            to_move=self.to_move,
            decision=self.decision,
            seat=seat,
        )

    def autoplay_action(self) -> Place:
        """The drawn card into the first open pile, and straight out again."""
        first = next(s for s, shut in zip(PILE_SIZES, self.closed, strict=True) if not shut)
        return Place(first, self.draw_pile[-1])

    def _why_place(self, action: Place) -> str | None:
        if action.pile not in PILE_SIZES:
            return f"no pile {action.pile}: piles are named by their dealt size, 3..13"
        index = PILE_SIZES.index(action.pile)
        if self.closed[index]:
            return f"pile {action.pile} is closed and takes no more cards"
        top = self.draw_pile[-1]
        if action.card is not top and action.card not in self.piles[index]:
            return (f"{action.card.text} is neither in pile {action.pile} nor the drawn card "
                    f"{top.text}")
        return None

    # -- GameState: playing --------------------------------------------------------------------

    def _place(self, action: Place, plan: None = None) -> list[Event]:
        pile = self.piles[PILE_SIZES.index(action.pile)]
        drawn = self.draw_pile.pop()
        pile.append(drawn)
        pile.remove(action.card)
        self.out_of_play.append(action.card)
        self.moves += 1
        events = [Event("place", 0, {
            "pile": action.pile,
            "card": drawn.text,
            "discarded": action.card.text,
            "draw_top": self.draw_pile[-1].text if self.draw_pile else None,
            "draw_pile_size": len(self.draw_pile),
        })]
        self._check_close(action.pile, events)
        self._check_end(events)
        return events

    # The one action's check and move (`CardGameState.why_illegal` and `apply`).
    _checks: ClassVar[Checks] = {Place: _why_place}
    _moves: ClassVar[Moves] = {Place: _place}

    def _check_close(self, size: int, events: list[Event]) -> None:
        index = PILE_SIZES.index(size)
        split = Solver(self.piles[index], size, self.rules.natural).split()
        if split.goes_out:
            self.closed[index] = True
            events.append(Event("close", 0, {
                "pile": size, "groups": [str(m) for m in split.groups],
            }))

    def _check_end(self, events: list[Event]) -> None:
        won = all(self.closed)
        if not won and self.draw_pile:
            return
        left = [(s, p) for s, p, shut in zip(PILE_SIZES, self.piles, self.closed, strict=True)
                if not shut]
        closed = sum(self.closed)
        place = WON if won else LOST
        self._end_game(Outcome(Termination.NORMAL, (place,), (closed,), {
            "won": won,
            "piles_closed": closed,
            "open_piles": [s for s, _ in left],
            "cards_left": sum(len(p) for _, p in left),
            "points_left": sum(Solver(p, s, self.rules.natural).points() for s, p in left),
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
        state = cls.__new__(cls)
        state.rules = rules_from_json(SolitaireRules, data["rules"])
        state.seed = data["seed"]
        state.piles = [parse_cards(p) for p in data["piles"]]
        state.closed = [bool(c) for c in data["closed"]]
        state.draw_pile = parse_cards(data["draw_pile"])
        state.out_of_play = parse_cards(data["out_of_play"])
        state.moves = int(data["moves"])
        state._outcome = restore_outcome(data["outcome"])
        state._opening = []
        if len(state.piles) != len(PILE_SIZES):
            raise ValueError(f"broken Solitaire snapshot: {len(state.piles)} piles, not 11")
        return state


def new_game(rules: SolitaireRules, players: int, seed: int | str) -> SolitaireState:
    """A new game: the piles are dealt (and checked) and the first card is to be placed."""
    return SolitaireState(rules, players, seed)


GAME: Final = GameInfo(
    name="solitaire",
    title="Five Crowns Solitaire",
    min_players=1,
    max_players=1,
    rules_type=SolitaireRules,
    new_game=new_game,
    from_snapshot=SolitaireState.from_snapshot,
    decisions=("place",),
    default_players=1,
    higher_scores_win=True,
)
