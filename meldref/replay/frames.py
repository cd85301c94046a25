"""What a frame of the viewer is made of, for every game: the discard pile and the closed
piles kept from the events as the viewer saw them (what the observations lack), and the lists
per seat. Each game's presentation (`replay/games/`) builds its frames from these."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ..engine.game import JSON, EventKind
from .words import sorted_hand

DISCARD_SHOWN: Final = 12  # cards of the discard pile a frame holds (the top last)
Frame = dict[str, JSON]  # a frame's fields by their short keys, as the page reads them
View = Mapping[str, JSON]  # an observation's JSON (`observation(seat).to_json()`)


@dataclass(slots=True)
class Trackers:
    """The discard pile's cards (table games) or the cards out of play and the closed piles'
    groups (Solitaire), from the events as the viewer saw them."""

    pile: list[str] = field(default_factory=list)
    count: int = 0
    closed: dict[int, list[str]] = field(default_factory=dict)
    dealing: bool = False

    def see(self, event: Mapping[str, JSON]) -> None:
        kind = event.get("event")
        if kind == EventKind.DEAL:
            self.dealing = True
        elif kind == EventKind.TURN_UP:
            if self.dealing:  # a new hand: the old discard pile went back into the deck
                self.pile, self.count, self.dealing = [], 0, False
            self._push(event["card"])
        elif kind == EventKind.DISCARD:
            self._push(event["card"])
        elif kind == EventKind.DRAW and event.get("source") == "discard" and self.pile:
            self.pile.pop()
            self.count -= 1
        elif kind == EventKind.RESHUFFLE:
            self.pile, self.count = self.pile[-1:], min(self.count, 1)
        elif kind == EventKind.PLACE:
            self._push(event["discarded"])
        elif kind == EventKind.CLOSE:
            self.closed[int(event["pile"])] = list(event.get("groups") or [])

    def _push(self, card: str) -> None:
        self.pile.append(card)
        self.count += 1

    def discard_fields(self, top: str | None) -> Frame:
        if top is not None and (not self.pile or self.pile[-1] != top):
            self.pile, self.count = [top], max(self.count, 1)  # trust the observation
        return {"dis": self.pile[-DISCARD_SHOWN:], "dn": self.count}


def seat_lists(views: Sequence[View | None], seats: Sequence[Mapping[str, JSON]]) -> Frame:
    """The per-seat fields of a table game's frame: scores, hand sizes, in play, the hands the
    viewer may see, the points of a hand's end (none yet)."""
    return {
        "sc": [s["score"] for s in seats],
        "hs": [s["hand_size"] for s in seats],
        "pl": [bool(s["playing"]) for s in seats],
        "hd": [sorted_hand(v["hand"]) if v is not None else None for v in views],
        "pts": [None] * len(seats),
    }
