"""A tiny card game implementing engine.game.GameState, for protocol tests that must not depend
on the real games' rules (and run fast).

48 distinct cards (R1..G12), each seat holds 3. A turn: "draw" (`draw pile` | `draw discard`),
then "discard" (`discard <card>`). After `turns` turns (or an empty draw pile) the lowest hand
total wins; hands are revealed at the end (one `hand_end` event a seat).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from meldref.bots import register_builtin
from meldref.engine.cards import PHASE10_NUMBERS, Card, CardError, rng_for, shuffled
from meldref.engine.game import (
    Event,
    EventKind,
    GameInfo,
    IllegalActionError,
    InvalidActionError,
    Outcome,
    Ruling,
    Termination,
    check_choice,
)


@dataclass(frozen=True, slots=True)
class FakeRules:
    """Options of the fake game (they exercise every option type on the wire)."""

    turns: int = 6
    draw_discard: bool = True  # whether `draw discard` is allowed
    label: str | None = None
    scoring: str = "low"

    def __post_init__(self) -> None:
        check_choice("scoring", self.scoring, ("low", "high"))


@dataclass(frozen=True, slots=True)
class FakeAction:
    verb: str  # "draw" or "discard"
    what: str  # "pile" / "discard" / card token

    def __str__(self) -> str:
        return f"{self.verb} {self.what}"


@dataclass
class FakeView:
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return self.data


@dataclass
class FakeState:
    rules: FakeRules
    players: int
    hands: list[list[Card]]
    draw_pile: list[Card]
    discard_pile: list[Card]
    turn: int = 0
    seat: int = 0
    phase: str = "draw"
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
        """Running totals: each seat's hand total now."""
        return [sum(c.rank for c in h) for h in self.hands]

    def opening_events(self) -> list[Event]:
        return []  # nothing is dealt face up: the first request tells each seat its hand

    def parse_action(self, text: str) -> FakeAction:
        words = text.split()
        if len(words) != 2 or words[0] not in ("draw", "discard"):
            raise InvalidActionError(f"{text!r}: expected `draw pile|discard` or `discard CARD`")
        if words[0] == "draw":
            if words[1] not in ("pile", "discard"):
                raise InvalidActionError(f"{text!r}: draw from `pile` or `discard`")
            return FakeAction("draw", words[1])
        try:
            return FakeAction("discard", Card.parse(words[1]).text)
        except CardError as exc:
            raise InvalidActionError(str(exc)) from None

    def why_illegal(self, action: Any) -> str | None:
        if not isinstance(action, FakeAction):
            return "not an action of this game"
        if self.over:
            return "the game is over"
        if action.verb != self.phase:
            return f"it is time to {self.phase}, not to {action.verb}"
        if action.verb == "draw":
            if action.what == "discard" and not self.rules.draw_discard:
                return "drawing the discard is off in these rules"
            if action.what == "discard" and not self.discard_pile:
                return "the discard pile is empty"
            return None
        if Card.parse(action.what) not in self.hands[self.seat]:
            return f"{action.what} is not in your hand"
        return None

    def judge(self, action: Any) -> Ruling:
        return Ruling(action, self.why_illegal(action))

    def apply(self, action: Any) -> list[Event]:
        if isinstance(action, Ruling):
            action = action.action
        why = self.why_illegal(action)
        if why:
            raise IllegalActionError(why)
        hand = self.hands[self.seat]
        if action.verb == "draw":
            if action.what == "pile":
                card = self.draw_pile.pop()
                event = Event(EventKind.DRAW, self.seat, {"from": "pile"}, {"card": card.text})
            else:
                card = self.discard_pile.pop()
                event = Event(EventKind.DRAW, self.seat, {"from": "discard", "card": card.text})
            hand.append(card)
            self.phase = "discard"
            return [event]
        card = Card.parse(action.what)
        hand.remove(card)
        self.discard_pile.append(card)
        events = [Event(EventKind.DISCARD, self.seat, {"card": card.text})]
        self.turn += 1
        self.phase = "draw"
        self.seat = (self.seat + 1) % self.players
        if self.turn >= self.rules.turns or not self.draw_pile:
            events += self._finish()
        return events

    def _finish(self) -> list[Event]:
        totals = self.scores
        key = totals if self.rules.scoring == "low" else [-t for t in totals]
        places = tuple(1 + sum(1 for o in key if o < k) for k in key)
        self.over = Outcome(Termination.NORMAL, places, tuple(totals))
        events = [Event(EventKind.HAND_END, s, {"cards": [c.text for c in h], "total": totals[s]})
                  for s, h in enumerate(self.hands)]
        return [*events, Event(EventKind.GAME_OVER, None, {"scores": totals, "skipped": None})]

    def observation(self, seat: int) -> FakeView:
        return FakeView({
            "seat": seat,
            "hand": [c.text for c in self.hands[seat]],
            "discard_top": self.discard_pile[-1].text if self.discard_pile else None,
            "draw_size": len(self.draw_pile),
            "turn": self.turn,
            "my_turn": self.seat == seat and not self.over,
            "players": [{"seat": i, "hand_size": len(h)} for i, h in enumerate(self.hands)],
        })

    def legal_actions(self) -> list[FakeAction]:
        if self.over:
            return []
        if self.phase == "draw":
            options = [FakeAction("draw", "pile"), FakeAction("draw", "discard")]
        else:
            options = [FakeAction("discard", c.text) for c in self.hands[self.seat]]
        return [a for a in options if self.why_illegal(a) is None]

    def autoplay_action(self) -> FakeAction:
        return self.legal_actions()[0]

    def snapshot(self) -> dict[str, Any]:
        return {
            "rules": {"turns": self.rules.turns, "draw_discard": self.rules.draw_discard,
                      "label": self.rules.label, "scoring": self.rules.scoring},
            "players": self.players,
            "hands": [[c.text for c in h] for h in self.hands],
            "draw_pile": [c.text for c in self.draw_pile],
            "discard_pile": [c.text for c in self.discard_pile],
            "turn": self.turn, "seat": self.seat, "phase": self.phase,
        }

    def public_view(self) -> dict[str, Any]:
        return {**self.snapshot(), "scores": self.scores}


def new_game(rules: FakeRules, players: int, seed: int) -> FakeState:
    deck = shuffled(PHASE10_NUMBERS, rng_for(seed, "deal", 0))
    hands = [[deck.pop() for _ in range(3)] for _ in range(players)]
    return FakeState(rules, players, hands, deck, [deck.pop()])


def from_snapshot(data: Mapping[str, Any]) -> FakeState:
    cards = lambda xs: [Card.parse(x) for x in xs]  # noqa: E731
    return FakeState(
        FakeRules(**data["rules"]), data["players"], [cards(h) for h in data["hands"]],
        cards(data["draw_pile"]), cards(data["discard_pile"]), data["turn"], data["seat"],
        data["phase"],
    )


class RandomFakeBot:
    name = "random"

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def act(self, view: FakeView) -> str:
        data = view.to_json()
        if len(data["hand"]) == 3:
            return "draw pile"
        return f"discard {self.rng.choice(data['hand'])}"


class CrashingBot:
    name = "crasher"

    def __init__(self, seed: int) -> None:
        pass

    def act(self, view: FakeView) -> str:
        raise ZeroDivisionError("on purpose")


GAME = GameInfo(
    name="fake",
    title="Fake test game",
    min_players=1,
    max_players=4,
    rules_type=FakeRules,
    new_game=new_game,
    from_snapshot=from_snapshot,
    decisions=("draw", "discard"),
)
register_builtin(GAME.name, {"random": RandomFakeBot, "crasher": CrashingBot})
