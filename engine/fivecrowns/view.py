"""What a Five Crowns seat sees, and the legal actions it implies (for in-process bots).

`FiveCrownsView` is the observation of `FiveCrownsState.observation(seat)`; the state lists its
legal actions through it, so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..cards import Card
from ..common import DRAW_DISCARD, DRAW_PILE, Draw, tokens
from ..game import JSON, Rebuilt, by_init
from ..meld_check import parse_meld
from ..melds import Meld
from .actions import Action, Discard
from .rules import TIEBREAK_ROUND, deal_size, fivecrowns_melds, rank_text, wild_rank
from .solver import Natural, Solver


def draw_options(pile: bool, discard: bool) -> list[Draw]:
    """The draws there are: from the draw pile and the discard pile, when they hold cards."""
    if pile:
        return [DRAW_PILE, DRAW_DISCARD] if discard else [DRAW_PILE]
    return [DRAW_DISCARD] if discard else []


def discard_options(hand: Sequence[Card], wild_rank: int, natural: Natural, last_turn: bool
                    ) -> list[Discard]:
    """Each discard of `hand` (sorted as a view shows it); with it, the going out it allows,
    or on a last turn the best lay. (The view's and the state's legal actions, written once.)"""
    solver = Solver(hand, wild_rank, natural)
    cards = solver.discards()
    laying = cards if last_turn else solver.outs()
    out = []
    for card in cards:
        out.append(Discard.plain(card))
        if card in laying:
            groups = solver.split(card).groups
            if groups:
                out.append(Discard.laying(card, groups))
    return out



def is_last_turn(went_out: int | None, seat: int, playing: Sequence[bool],
                 had_last_turn: Sequence[bool]) -> bool:
    """Whether `seat`'s turn, now or to come, is its last of the round: someone else went out,
    and it is still playing and has not had that turn."""
    return (went_out is not None and went_out != seat and playing[seat]
            and not had_last_turn[seat])


@dataclass(frozen=True, slots=True)
class FiveCrownsView:
    """What one seat may know now, and the legal actions it implies (for in-process bots)."""

    seat: int
    players: int
    round: int  # 1..11; 12 is the tie-break round
    dealer: int
    to_move: int | None
    decision: str
    turn: int  # turns started this round
    turn_cap: int | None  # per seat
    natural: Natural
    decks: int
    hand: tuple[Card, ...]
    discard_top: Card | None
    discard_pile_size: int
    draw_pile_size: int
    went_out: int | None
    table: tuple[tuple[int, Meld], ...]  # (seat, group) laid this round
    playing: tuple[bool, ...]
    scores: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    had_last_turn: tuple[bool, ...]

    def __init__(self, seat: int, players: int, round: int, dealer: int, to_move: int | None,
                 decision: str, turn: int, turn_cap: int | None, natural: Natural, decks: int,
                 hand: tuple[Card, ...], discard_top: Card | None, discard_pile_size: int,
                 draw_pile_size: int, went_out: int | None, table: tuple[tuple[int, Meld], ...],
                 playing: tuple[bool, ...], scores: tuple[int, ...], hand_sizes: tuple[int,
                 ...], had_last_turn: tuple[bool, ...]) -> None:
        object.__setattr__(self, "seat", seat)
        object.__setattr__(self, "players", players)
        object.__setattr__(self, "round", round)
        object.__setattr__(self, "dealer", dealer)
        object.__setattr__(self, "to_move", to_move)
        object.__setattr__(self, "decision", decision)
        object.__setattr__(self, "turn", turn)
        object.__setattr__(self, "turn_cap", turn_cap)
        object.__setattr__(self, "natural", natural)
        object.__setattr__(self, "decks", decks)
        object.__setattr__(self, "hand", hand)
        object.__setattr__(self, "discard_top", discard_top)
        object.__setattr__(self, "discard_pile_size", discard_pile_size)
        object.__setattr__(self, "draw_pile_size", draw_pile_size)
        object.__setattr__(self, "went_out", went_out)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "playing", playing)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "hand_sizes", hand_sizes)
        object.__setattr__(self, "had_last_turn", had_last_turn)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    @property
    def deal_size(self) -> int:
        return deal_size(self.round)

    @property
    def wild_rank(self) -> int:
        return wild_rank(self.round)

    @property
    def my_turn(self) -> bool:
        return self.to_move == self.seat

    @property
    def last_turn(self) -> bool:
        """Someone went out: this seat's turn (now or to come) is its last this round."""
        return is_last_turn(self.went_out, self.seat, self.playing, self.had_last_turn)

    def solver(self, hand: Iterable[Card] | None = None) -> Solver:
        return Solver(self.hand if hand is None else hand, self.wild_rank, self.natural)

    def draw_options(self) -> list[Draw]:
        return draw_options(self.draw_pile_size > 0, self.discard_top is not None)

    def discard_options(self) -> list[Discard]:
        """Each discard; with it, the going out it allows, or on a last turn the best lay."""
        return discard_options(self.hand, self.wild_rank, self.natural, self.last_turn)

    def best_discard(self) -> Discard:
        """Go out if possible, else discard the card leaving the fewest points (the costliest
        of equals); on a last turn, lay the best groups of the rest."""
        solver = self.solver()
        card, points = solver.best_discard()
        if points == 0 or self.last_turn:
            return Discard.laying(card, solver.split(card).groups)
        return Discard(card)

    def legal_actions(self) -> list[Action]:
        if not self.my_turn:
            return []
        if self.decision == "draw":
            return list(self.draw_options())
        return list(self.discard_options())

    def to_json(self) -> dict[str, JSON]:
        seats = [
            {
                "seat": s,
                "playing": self.playing[s],
                "score": self.scores[s],
                "hand_size": self.hand_sizes[s],
                "gone_out": self.went_out == s,
                "had_last_turn": self.had_last_turn[s],
            }
            for s in range(self.players)
        ]
        return {
            "seat": self.seat,
            "round": self.round,
            "tiebreak": self.round == TIEBREAK_ROUND,
            "deal_size": self.deal_size,
            "wild_rank": rank_text(self.wild_rank),
            "dealer": self.dealer,
            "to_move": self.to_move,
            "decision": self.decision,
            "turn": self.turn,
            "turn_cap": self.turn_cap,
            "natural": self.natural,
            "decks": self.decks,
            "hand": tokens(self.hand),
            "discard_top": None if self.discard_top is None else self.discard_top.text,
            "discard_pile_size": self.discard_pile_size,
            "draw_pile_size": self.draw_pile_size,
            "went_out": self.went_out,
            "last_turn": self.last_turn,
            "table": [{"seat": s, "group": str(m)} for s, m in self.table],
            "seats": seats,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON], rules: object = None) -> FiveCrownsView:
        """The view whose `to_json()` is `data` (what a protocol bot is sent). The rules are
        taken and not needed (the view carries what it needs): `GameInfo.view_from_json`."""
        seats = sorted(data["seats"], key=lambda s: s["seat"])
        melds = fivecrowns_melds(wild_rank(data["round"]))
        return cls(
            seat=data["seat"],
            players=len(seats),
            round=data["round"],
            dealer=data["dealer"],
            to_move=data["to_move"],
            decision=data["decision"],
            turn=data["turn"],
            turn_cap=data["turn_cap"],
            natural=data["natural"],
            decks=data["decks"],
            hand=tuple(Card.parse(c) for c in data["hand"]),
            discard_top=None if data["discard_top"] is None else Card.parse(data["discard_top"]),
            discard_pile_size=data["discard_pile_size"],
            draw_pile_size=data["draw_pile_size"],
            went_out=data["went_out"],
            table=tuple((g["seat"], parse_meld(g["group"], melds)) for g in data["table"]),
            playing=tuple(bool(s["playing"]) for s in seats),
            scores=tuple(s["score"] for s in seats),
            hand_sizes=tuple(s["hand_size"] for s in seats),
            had_last_turn=tuple(bool(s["had_last_turn"]) for s in seats),
        )
