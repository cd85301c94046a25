"""Toy Rummy as the replay tools show it (this becomes `meldref/replay/games/toyrummy.py`): the
viewer's frame, a panel per seat, and going out in words; drawing and discarding are told by
the words every game shares (`replay/words.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from meldref.engine.game import EventKind
from meldref.replay.frames import Frame, Trackers, View, seat_lists
from meldref.replay.games import Look, Presentation
from meldref.replay.words import describe_groups


def frame(views: Sequence[View | None], public: View, trackers: Trackers) -> Frame:
    return {
        "h": 1, "dl": 0, "tm": public["to_move"], "dc": public["decision"],
        "dp": public["draw_pile_size"], "tb": [],
        **trackers.discard_fields(public["discard_top"]),
        **seat_lists(views, public["seats"]),
        "end": None,
    }


PRESENTATION: Final = Presentation(
    frame=frame,
    look=Look(deal_word=None, layout="seats", opening="The cards are dealt",
              charts=(("hs", "cards in hand"),)),
    words={
        EventKind.GO_OUT: lambda event, who, names:
            f"{who} discards {event.get('card')} and goes out with "
            f"{describe_groups(event.get('groups'))}",
    },
)
