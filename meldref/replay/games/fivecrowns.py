"""Five Crowns as the replay tools show it: its events in words and the viewer's frame (the
round's wild rank and deal size, who went out, the last turns)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ...engine.fivecrowns.rules import ROUNDS
from ...engine.game import EventKind
from ..frames import Frame, Trackers, View, seat_lists
from ..words import describe_groups
from . import DRAW_EXAMPLE, Look, Presentation


def frame(views: Sequence[View | None], public: View, trackers: Trackers) -> Frame:
    seats = public["seats"]
    return {
        "h": public["round"], "dl": public["dealer"], "tm": public["to_move"],
        "dc": public["decision"], "tie": public["tiebreak"], "dp": public["draw_pile_size"],
        "wr": public["wild_rank"], "ds": public["deal_size"], "wo": public["went_out"],
        "tb": [[g["seat"], g["group"]] for g in public["table"]],
        **trackers.discard_fields(public["discard_top"]),
        **seat_lists(views, seats),
        "lt": [bool(s["had_last_turn"]) for s in seats],
        "end": None,
    }


PRESENTATION: Final = Presentation(
    frame=frame,
    look=Look(deal_word="round", layout="seats", deals=ROUNDS, wild_note=True,
              charts=(("sc", "each seat's total (lower is better)"),)),
    words={
        EventKind.GO_OUT: lambda event, who, names:
            f"{who} goes out with {describe_groups(event.get('groups'))}",
        EventKind.LAST_TURN: lambda event, who, names:
            f"{who} lays {describe_groups(event.get('groups'))} on the last turn, "
            f"{event.get('left')} cards left",
    },
    examples=(DRAW_EXAMPLE,
              ("discard 9S", "end your turn"),
              ("discard 7H run:3H,4H,5H book:QS,QD,X", "go out with groups")),
)
