"""Chance where the cards are drawn: the deals and the draws of a game as chance events over the
cards not yet fixed, for searches that copy states (OpenSpiel's games, meldref.envs.spiel).

The engine deals from a shuffle fixed by its seed, so a copied state would hold every future
card. Here a card's identity is fixed only when some seat sees it:

- a draw from the face-down pile picks one of the pile's cards (each card equally likely: a
  kind by its count); the engine's order of the pile is never read, so a reshuffle (the discard
  pile turned into the draw pile) fixes nothing and each later draw is the chance event;
- a shown top of the draw pile (a game whose view shows it, `draw_top`) is picked the same way
  when it is turned up;
- a deal fixes each dealt card in turn, over the deck's cards not yet dealt: the real deal
  distribution, one card at a time. The engine's own deal is kept for everything but the cards:
  the hands (`hands` in the snapshot) are its cards replaced; the turned-up cards, which the
  rules read as they deal (a turned-up Skip), are matched by dealing again from other seeds
  until the engine turns up the picked cards, so the rules' ruling on them is the engine's own;
  a game that deals face-up piles (`piles`, no hands) is read back through its position reader
  (engine/position.py), which judges the piles as the deal does.

Everything works on snapshots and on the state's `draw_pile` (top last), the names every game's
snapshot uses (meldref.envs.hidden reads the same), so no game is named here.
"""

from __future__ import annotations

import json
import typing
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from ..engine.cards import Card, sorted_cards
from ..engine.common import Draw
from ..engine.game import JSON, Action, Event, EventKind, GameInfo, GameState, Rules
from ..engine.position import codec as position_codec
from ..engine.position import read_position

# Dealing again from other seeds until the engine turns up the picked cards takes about as many
# tries as the deck has cards per kind (50 or so); this many means something is wrong.
MAX_TRIES: Final = 200_000
# Per kind of deal (`Deal._deal_kind`), the dealer and turned-up cards of the engine's deal from
# seed "openspiel:k", k = 1, 2...: every deal of that kind turns up the same cards from the same
# seed, so a search dealing the same round again and again finds its seed here (two deals by
# the engine, not fifty). The first matching seed is taken either way: a copy deals the same.
_SEEDS: dict[tuple[str, ...], list[tuple[object, tuple[str, ...]]]] = {}


def deck_kinds(info: GameInfo, rules: Rules, players: int) -> tuple[str, ...]:
    """The card kinds of a game's deck, in the engine's card order: the chance outcomes."""
    snapshot = info.new_game(rules, players, 0).snapshot()
    return tuple(c.text for c in sorted_cards({Card.parse(t): None for t in _all_cards(snapshot)}))


def _all_cards(snapshot: dict[str, JSON]) -> list[str]:
    """Every card a freshly dealt snapshot holds (hands, piles, draw and discard piles)."""
    out = [t for hand in snapshot.get("hands", []) for t in hand]
    out += [t for pile in snapshot.get("piles", []) for t in pile]
    return out + list(snapshot["draw_pile"]) + list(snapshot.get("discard_pile", []))


def outcomes(cards: Counter[str], kinds: Sequence[str]) -> list[tuple[int, float]]:
    """Each kind `cards` holds, by its index in `kinds`, with its share of the cards."""
    total = sum(cards.values())
    return [(i, cards[k] / total) for i, k in enumerate(kinds) if cards[k]]


def draw_pile(state: GameState) -> list[Card]:
    """The state's face-down pile, top last (the list itself: a draw swaps into it)."""
    return typing.cast(list[Card], state.draw_pile)  # type: ignore[attr-defined]


def put_on_top(state: GameState, token: str) -> None:
    """Make a card `token` the draw pile's top, swapping it with the card there (the order
    below is never read: each draw is picked again)."""
    pile = draw_pile(state)
    card = Card.parse(token)
    at = next(i for i in range(len(pile) - 1, -1, -1) if pile[i] is card)
    pile[at], pile[-1] = pile[-1], pile[at]


def is_pile_draw(action: Action) -> bool:
    return isinstance(action, Draw) and action.source == "pile"


def shows_top(state: GameState) -> bool:
    """Whether the seat to move sees the draw pile's top now (it must be fixed first)."""
    seat = state.to_move
    return (seat is not None and bool(draw_pile(state))
            and "draw_top" in state.observation(seat).to_json())


@dataclass
class Deal:
    """A deal in progress: which cards the engine dealt where, and the cards picked so far.

    `before` is the snapshot before the action that dealt and `action` that action (None for a
    game's first deal, dealt by `new_game`); the engine deals again from there with other seeds
    to match the turned-up cards. `slots` names where each picked card goes, in order:
    ("hand", seat), ("pile", index) or ("up", position in the discard pile)."""

    info: GameInfo
    rules: Rules
    players: int
    dealt: GameState  # the engine's deal (its cards are replaced)
    before: dict[str, JSON] | None
    action: str | None
    slots: list[tuple[str, int]]
    left: Counter[str]  # the deck's cards not yet picked
    picked: list[str] = field(default_factory=list)

    @staticmethod
    def of(info: GameInfo, rules: Rules, players: int, dealt: GameState,
           before: dict[str, JSON] | None, action: str | None) -> Deal:
        snapshot = dealt.snapshot()
        if "hands" in snapshot:
            slots = [("hand", s) for s, hand in enumerate(snapshot["hands"]) for _ in hand]
            slots.append(("up", 0))
        else:
            slots = [("pile", p) for p, pile in enumerate(snapshot["piles"]) for _ in pile]
        return Deal(info, rules, players, dealt, before, action, slots,
                    Counter(_all_cards(snapshot)))

    def where(self) -> tuple[str, int]:
        """Where the next picked card goes."""
        return self.slots[len(self.picked)]

    def pick(self, token: str) -> GameState | None:
        """Put card `token` in the next slot; the dealt state once the deal is whole."""
        self.left[token] -= 1
        self.picked.append(token)
        if len(self.picked) < len(self.slots):
            return None
        if self.slots[-1][0] != "up":
            return self._piles_dealt()
        shown = [t for (kind, _), t in zip(self.slots, self.picked, strict=True) if kind == "up"]
        self.dealt = self._turning_up(shown)
        turned = list(self.dealt.snapshot()["discard_pile"])
        if len(turned) > len(shown):  # the rules turn up another (Phase 10's twist)
            self.slots.append(("up", len(shown)))
            return None
        return self._hands_dealt()

    def _turning_up(self, shown: list[str]) -> GameState:
        """The engine's deal from the same position whose turned-up cards begin with `shown`:
        its own, or the first of seeds "openspiel:1", ":2"... that turns them up."""
        snapshot = self.dealt.snapshot()
        if snapshot["discard_pile"][:len(shown)] == shown:
            return self.dealt
        wanted = (snapshot.get("dealer"), tuple(shown))
        seen = _SEEDS.setdefault(self._deal_kind(), [])
        for k, (dealer, turned) in enumerate(seen, 1):
            if (dealer, turned[:len(shown)]) == wanted:
                return self._dealt_from(f"openspiel:{k}")
        while len(seen) < MAX_TRIES:
            state = self._dealt_from(f"openspiel:{len(seen) + 1}")
            snapshot = state.snapshot()
            seen.append((snapshot.get("dealer"), tuple(snapshot["discard_pile"])))
            if (seen[-1][0], seen[-1][1][:len(shown)]) == wanted:
                return state
        raise RuntimeError(f"no deal of {self.info.name} turned up {shown} in {MAX_TRIES} seeds")

    def _deal_kind(self) -> tuple[str, ...]:
        """What decides the engine's turned-up cards for each seed: the game, its rules and
        seats, and the deal (its number, the seats dealt in, the dealer), told apart by the
        engine's deal from one fixed seed."""
        snapshot = self._dealt_from("openspiel:0").snapshot()
        return (self.info.name, repr(self.rules), str(self.players),
                json.dumps([snapshot["hands"], snapshot["discard_pile"], snapshot.get("dealer")]))

    def _dealt_from(self, seed: str) -> GameState:
        if self.before is None:
            return self.info.new_game(self.rules, self.players, seed)
        state = self.info.from_snapshot({**self.before, "seed": seed})
        assert self.action is not None
        state.apply(state.parse_action(self.action))
        return state

    def _hands_dealt(self) -> GameState:
        snapshot = self.dealt.snapshot()
        hands: list[list[str]] = [[] for _ in snapshot["hands"]]
        for (kind, seat), token in zip(self.slots, self.picked, strict=True):
            if kind == "hand":
                hands[seat].append(token)
        snapshot["hands"] = hands
        snapshot["draw_pile"] = list(self.left.elements())
        return self.info.from_snapshot(snapshot)

    def _piles_dealt(self) -> GameState:
        snapshot = self.dealt.snapshot()
        piles: list[list[str]] = [[] for _ in snapshot["piles"]]
        for (_, pile), token in zip(self.slots, self.picked, strict=True):
            piles[pile].append(token)
        snapshot["piles"] = piles
        snapshot["draw_pile"] = list(self.left.elements())
        # Read back as a position: its reader judges each pile as the deal does (closed).
        position = {"game": snapshot["game"], **position_codec(self.info).write(snapshot)}
        return self.info.from_snapshot(read_position(self.info, self.rules, position).snapshot)


def deals_in(events: Sequence[Event]) -> bool:
    """Whether an action's events hold a new deal."""
    return any(e.kind is EventKind.DEAL for e in events)
