"""Five Crowns Solitaire as the replay tools show it: its events in words, the viewer's frame
(a panel per pile: its cards, or its groups once closed) and the result's headline."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ...engine.game import JSON, EventKind
from ...engine.solitaire.rules import PILE_SIZES
from ..frames import DISCARD_SHOWN, Frame, Trackers, View
from ..words import describe_groups, next_card
from . import Look, Presentation


def frame(views: Sequence[View | None], public: View, trackers: Trackers) -> Frame:
    piles = public["piles"]
    return {
        "tm": public["to_move"], "dc": public["decision"], "dp": public["draw_pile_size"],
        "top": public["draw_top"], "mv": public["moves"], "sc": [public["piles_closed"]],
        "dis": trackers.pile[-DISCARD_SHOWN:], "dn": public["out_of_play"],
        "pc": [list(p["cards"]) for p in piles], "pz": [bool(p["closed"]) for p in piles],
        "pg": [trackers.closed.get(int(p["size"])) for p in piles],
    }


def result_title(outcome: Mapping[str, JSON], names: Sequence[str]) -> str:
    if outcome.get("won"):
        return "Won: every pile closed"
    return f"Lost to the deck: {outcome.get('piles_closed') or 0} of {len(PILE_SIZES)} piles closed"


def _deal(event: Mapping[str, JSON], who: str, names: Sequence[str]) -> str:
    piles = " | ".join(str(p) for p in event.get("piles") or ())
    return f"piles dealt: {piles}; {next_card(event)}"


def _place(event: Mapping[str, JSON], who: str, names: Sequence[str]) -> str:
    return (f"{who} puts {event.get('card')} on pile {event.get('pile')} and discards "
            f"{event.get('discarded')} ({next_card(event)})")


PRESENTATION: Final = Presentation(
    frame=frame,
    look=Look(deal_word=None, layout="piles", charts=(("sc", "piles closed"),),
              result_table=False, opening="The piles are dealt"),
    words={
        EventKind.DEAL: _deal,
        EventKind.PLACE: _place,
        EventKind.CLOSE: lambda event, who, names:
            f"pile {event.get('pile')} closes: {describe_groups(event.get('groups'))}",
    },
    result_title=result_title,
    examples=(("place 7 QH", "to pile 7, then discard QH"),),
)
