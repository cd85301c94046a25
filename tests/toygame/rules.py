"""Toy Rummy: the smallest rummy docs/adding-a-game.md adds as its worked example (it becomes
`engine/toyrummy/__init__.py`; tests/test_add_a_game.py plays it).

24 cards (1..6 in four colours), three to a seat, one face up to start the discard pile. A turn:
`draw pile` or `draw discard`, then `discard CARD`, or `go out CARD` when the three cards kept
are a set (one number) or a run (three numbers in a row, any colours). Going out ends the game;
so do an empty draw pile and the turn cap. Each seat scores the numbers of the cards it holds
(0 for the seat that went out); lower is better.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from meldref.engine.cards import PHASE10_NUMBERS, Card, CardError, rng_for, shuffled
from meldref.engine.game import (
    JSON,
    Event,
    EventKind,
    GameInfo,
    IllegalActionError,
    InvalidActionError,
    Outcome,
    Rules,
    Ruling,
    Termination,
    check_fields,
    check_players,
    rules_from_json,
    rules_of,
    rules_to_json,
)

NAME: Final = "toyrummy"
DECK: Final = tuple(card for card in PHASE10_NUMBERS if card.rank <= 6)  # 24 cards
HAND: Final = 3
MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 4


@dataclass(frozen=True, slots=True)
class ToyRummyRules:
    """The options (`-r turn-cap=20 -r runs=false`)."""

    turn_cap: int = 40  # turns in all before the game ends without anyone out
    runs: bool = True  # whether three numbers in a row go out, as well as one number thrice

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass(frozen=True, slots=True)
class Move:
    """`draw pile`, `draw discard`, `discard R3`, `go out R3`: its text is its protocol form."""

    verb: str  # "draw", "discard" or "go out"
    what: str  # "pile" / "discard" / a card token

    def __str__(self) -> str:
        return f"{self.verb} {self.what}"


def parse_move(text: str) -> Move:
    words = text.split()
    if words[:1] == ["draw"] and len(words) == 2 and words[1] in ("pile", "discard"):
        return Move("draw", words[1])
    verb, card = " ".join(words[:-1]), words[-1] if words else ""
    if verb not in ("discard", "go out"):
        raise InvalidActionError(f"{text!r}: `draw pile`, `draw discard`, `discard CARD` or "
                                 "`go out CARD`")
    try:
        return Move(verb, Card.parse(card).text)
    except CardError as exc:
        raise InvalidActionError(str(exc)) from None


def is_meld(cards: Sequence[Card], runs: bool) -> bool:
    ranks = sorted(card.rank for card in cards)
    return len(set(ranks)) == 1 or (runs and ranks == list(range(ranks[0], ranks[0] + HAND)))


def moves_for(hand: Sequence[Card], decision: str, discard_top: str | None,
              runs: bool) -> list[Move]:
    """The legal moves of a seat holding `hand` (what its view and the state both know)."""
    if decision == "draw":
        return [Move("draw", "pile"), *([Move("draw", "discard")] if discard_top else [])]
    out = []
    for card in dict.fromkeys(hand):
        kept = list(hand)
        kept.remove(card)
        out.append(Move("discard", card.text))
        if is_meld(kept, runs):
            out.append(Move("go out", card.text))
    return out


@dataclass(frozen=True)
class ToyRummyView:
    """What a seat may know: its hand, the discard pile's top, everyone's score and hand size."""

    data: Mapping[str, JSON]
    rules: ToyRummyRules

    def to_json(self) -> dict[str, JSON]:
        return dict(self.data)

    def legal_actions(self) -> list[Move]:
        if self.data["to_move"] != self.data["seat"]:
            return []
        hand = [Card.parse(text) for text in self.data["hand"]]
        return moves_for(hand, str(self.data["decision"]), self.data["discard_top"],
                         self.rules.runs)


@dataclass
class ToyRummyState:
    rules: ToyRummyRules
    players: int
    seed: int | str
    hands: list[list[Card]]
    draw_pile: list[Card]
    discard_pile: list[Card]
    seat: int = 0
    phase: str = "draw"
    turns: int = 0
    moves: int = 0
    over: Outcome | None = None

    @property
    def to_move(self) -> int | None:
        return None if self.over else self.seat

    @property
    def decision(self) -> str:
        return self.phase

    @property
    def outcome(self) -> Outcome | None:
        return self.over

    @property
    def scores(self) -> list[int]:
        return [sum(card.rank for card in hand) for hand in self.hands]

    def opening_events(self) -> list[Event]:
        dealt = [Event(EventKind.DEAL, s, {}, {"hand": [c.text for c in hand]})
                 for s, hand in enumerate(self.hands)]
        return [*dealt, Event(EventKind.TURN_UP, None, {"card": self.discard_pile[-1].text})]

    def parse_action(self, text: str) -> Move:
        return parse_move(text)

    def legal_actions(self) -> list[Move]:
        if self.over:
            return []
        top = self.discard_pile[-1].text if self.discard_pile else None
        return moves_for(self.hands[self.seat], self.phase, top, self.rules.runs)

    def why_illegal(self, action: Any) -> str | None:
        if self.over:
            return "the game is over"
        if action in self.legal_actions():
            return None
        if not isinstance(action, Move) or (action.verb == "draw") != (self.phase == "draw"):
            return f"it is time to {self.phase}"
        if action.verb == "draw":
            return "the discard pile is empty"
        if Card.parse(action.what) not in self.hands[self.seat]:
            return f"{action.what} is not in your hand"
        return "the three cards kept are neither a set nor a run"

    def judge(self, action: Any) -> Ruling:
        return Ruling(action, self.why_illegal(action), None, self.moves)

    def apply(self, action: Any) -> list[Event]:
        if isinstance(action, Ruling):
            if action.position != self.moves:
                raise IllegalActionError("a ruling made in another position")
            action = action.action
        why = self.why_illegal(action)
        if why:
            raise IllegalActionError(why)
        self.moves += 1
        seat, hand = self.seat, self.hands[self.seat]
        if action.verb == "draw":
            self.phase = "play"
            if action.what == "pile":
                card = self.draw_pile.pop()
                hand.append(card)
                return [Event(EventKind.DRAW, seat, {"source": "pile"}, {"card": card.text})]
            card = self.discard_pile.pop()
            hand.append(card)
            return [Event(EventKind.DRAW, seat, {"source": "discard", "card": card.text})]
        card = Card.parse(action.what)
        hand.remove(card)
        self.discard_pile.append(card)
        if action.verb == "go out":
            groups = [",".join(c.text for c in hand)]
            return [Event(EventKind.GO_OUT, seat, {"card": card.text, "groups": groups}),
                    *self._finish(out=seat)]
        events = [Event(EventKind.DISCARD, seat, {"card": card.text})]
        self.turns += 1
        self.seat, self.phase = (seat + 1) % self.players, "draw"
        if self.turns >= self.rules.turn_cap or not self.draw_pile:
            events += self._finish(out=None)
        return events

    def _finish(self, out: int | None) -> list[Event]:
        if out is not None:
            self.hands[out] = []
        scores = self.scores
        places = tuple(1 + sum(1 for other in scores if other < mine) for mine in scores)
        capped = out is None and self.draw_pile
        ended = Termination.TURN_CAP if capped else Termination.NORMAL
        self.over = Outcome(ended, places, tuple(scores))
        return [Event(EventKind.GAME_OVER, None, self.over.to_json())]

    def observation(self, seat: int) -> ToyRummyView:
        scores = self.scores
        return ToyRummyView({
            "seat": seat, "to_move": self.to_move, "decision": self.phase,
            "turn": self.turns, "turn_cap": self.rules.turn_cap,
            "hand": [card.text for card in self.hands[seat]],
            "discard_top": self.discard_pile[-1].text if self.discard_pile else None,
            "draw_pile_size": len(self.draw_pile),
            "seats": [{"seat": s, "score": scores[s] if self.over else 0,
                       "hand_size": len(hand), "playing": True}
                      for s, hand in enumerate(self.hands)],
        }, self.rules)

    def autoplay_action(self) -> Move:
        return self.legal_actions()[0]

    def snapshot(self) -> dict[str, JSON]:
        return {
            "game": NAME, "rules": rules_to_json(self.rules), "players": self.players,
            "seed": self.seed, "hands": [[c.text for c in hand] for hand in self.hands],
            "draw_pile": [c.text for c in self.draw_pile],
            "discard_pile": [c.text for c in self.discard_pile],
            "seat": self.seat, "phase": self.phase, "turns": self.turns, "moves": self.moves,
            "outcome": None if self.over is None else self.over.to_json(),
        }

    def public_view(self) -> dict[str, JSON]:
        return {**self.snapshot(), "scores": self.scores}


def new_game(rules: Rules, players: int, seed: int | str) -> ToyRummyState:
    check_players(NAME, MIN_PLAYERS, MAX_PLAYERS, players)
    deck = shuffled(DECK, rng_for(seed, "deal", 0))
    hands = [[deck.pop() for _ in range(HAND)] for _ in range(players)]
    return ToyRummyState(rules_of(ToyRummyRules, rules), players, seed, hands, deck, [deck.pop()])


def from_snapshot(data: Mapping[str, JSON]) -> ToyRummyState:
    def cards(texts: Sequence[str]) -> list[Card]:
        return [Card.parse(text) for text in texts]

    done = data["outcome"]
    over = None if done is None else Outcome(Termination(done["termination"]),
                                             tuple(done["places"]), tuple(done["scores"]))
    return ToyRummyState(
        rules_from_json(ToyRummyRules, data["rules"]), data["players"], data["seed"],
        [cards(hand) for hand in data["hands"]], cards(data["draw_pile"]),
        cards(data["discard_pile"]), data["seat"], data["phase"], data["turns"], data["moves"],
        over)


GAME: Final = GameInfo(
    name=NAME,
    title="Toy Rummy",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    rules_type=ToyRummyRules,
    new_game=new_game,
    from_snapshot=from_snapshot,
    decisions=("draw", "play"),
    default_players=2,
)

__all__ = ["GAME", "Move", "ToyRummyRules", "ToyRummyState", "ToyRummyView"]
