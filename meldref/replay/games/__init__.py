"""How each game is shown: one module per game, found by the game's name as `find_game` finds
its rules (`presentation("phase10")` is `games/phase10.py`'s `PRESENTATION`).

A game's presentation says its own events in words (the generic ones are in `words.py`),
builds the viewer's frame from the observations (`frame`), adds the facts its page shows
(`facts`: Phase 10's phases) and tells the generic page what to draw (`look`: the word for a
deal, the layout, the charts...). `replay show`, a person's seat and the HTML viewer read
nothing else of a game, so none of them names one.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from ...engine.game import JSON, EventKind, find_game
from ...engine.registry import find_part

if TYPE_CHECKING:
    from ..files import Replay
    from ..frames import Frame, Trackers, View

# (event as the seat saw it, who acted in words, the seats' names) -> a line
Describer = Callable[[Mapping[str, JSON], str, Sequence[str]], str]
# (every seat's view, None where the viewer may not see it; the public one; the trackers)
FrameMaker = Callable[[Sequence["View | None"], "View", "Trackers"], "Frame"]
# Drawing, the same in every game that draws (`meldref play`'s shortcuts p and d).
DRAW_EXAMPLE: Final = ("draw pile | draw discard", "shortcuts: p, d")


def no_facts(replay: Replay) -> dict[str, JSON]:
    return {}


@dataclass(frozen=True, slots=True)
class Look:
    """What the viewer's page draws for a game (the page holds it as `look`)."""

    deal_word: str | None  # "hand", "round"; None: the game is one deal
    layout: Literal["seats", "piles"]  # a panel per seat, or a panel per pile
    deals: int | None = None  # deals in a game when fixed ("round 3 of 11")
    wild_note: bool = False  # the strip says which rank is wild this deal
    charts: tuple[tuple[str, str], ...] = ()  # (frame key, title): a line per seat over steps
    result_table: bool = True  # the result lists the seats (a one-seat game does not)
    opening: str | None = None  # the first step's headline when not "<Deal word> 1 is dealt"

    def to_json(self) -> dict[str, JSON]:
        return {"deal_word": self.deal_word, "layout": self.layout, "deals": self.deals,
                "wild_note": self.wild_note, "charts": [list(c) for c in self.charts],
                "result_table": self.result_table, "opening": self.opening}


@dataclass(frozen=True, slots=True)
class Presentation:
    """One game as `replay show`, `meldref play` and the viewer show it."""

    frame: FrameMaker
    look: Look
    words: Mapping[EventKind, Describer] = field(default_factory=dict)
    facts: Callable[[Replay], dict[str, JSON]] = no_facts
    # The result's headline from the outcome and the names (None: the winners by name).
    result_title: Callable[[Mapping[str, JSON], Sequence[str]], str] | None = None
    # `meldref play`'s help: actions as the protocol writes them, and what each does.
    examples: tuple[tuple[str, str], ...] = ()


def presentation(game: str) -> Presentation:
    """The presentation of the game called `game` (`UnknownGameError` if none is)."""
    return typing.cast(Presentation, find_part(__name__, find_game(game).name, "PRESENTATION"))
