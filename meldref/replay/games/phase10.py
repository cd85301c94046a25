"""Phase 10 as the replay tools show it: its events in words, the viewer's frame (the phases
each seat is on and has made), and the phases' requirements the page lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final

from ...engine.game import JSON, EventKind, rules_of
from ...engine.phase10.rules import PHASES, Phase10Rules, describe_phase
from ..frames import Frame, Trackers, View, seat_lists
from ..words import describe_groups, seat_name
from . import DRAW_EXAMPLE, Look, Presentation

if TYPE_CHECKING:
    from ..files import Replay


def frame(views: Sequence[View | None], public: View, trackers: Trackers) -> Frame:
    seats = public["seats"]
    return {
        "h": public["hand_number"], "dl": public["dealer"], "tm": public["to_move"],
        "dc": public["decision"], "tie": public["tiebreak"], "dp": public["draw_pile_size"],
        "tb": [[g["owner"], g["group"], g["id"]] for g in public["table"]],
        **trackers.discard_fields(public["discard_top"]),
        **seat_lists(views, seats),
        "ph": [s["phase"] for s in seats], "ld": [bool(s["laid"]) for s in seats],
        "cp": [list(s["completed"]) for s in seats], "sk": [s["skip_pending"] for s in seats],
        "end": None,
    }


def facts(replay: Replay) -> dict[str, JSON]:
    """The phases' requirements in words and the game's sequence of phases."""
    return {"needs": {str(p): describe_phase(p) for p in PHASES},
            "sequence": list(rules_of(Phase10Rules, replay.rules()).sequence)}


def _lay_down(event: Mapping[str, JSON], who: str, names: Sequence[str]) -> str:
    return f"{who} lays phase {event.get('phase')}: {describe_groups(event.get('groups'))}"


def _hit(event: Mapping[str, JSON], who: str, names: Sequence[str]) -> str:
    return (f"{who} hits group {event.get('group_id')} with {event.get('card')} -> "
            f"{event.get('group')}")


PRESENTATION: Final = Presentation(
    frame=frame,
    look=Look(deal_word="hand", layout="seats",
              charts=(("sc", "each seat's total (lower is better)"),
                      ("ph", "the phase each seat is on"))),
    words={
        EventKind.SKIP: lambda event, who, names:
            f"{who} skips {seat_name(names, event.get('victim'))}",
        EventKind.SKIPPED: lambda event, who, names: f"{who} is skipped",
        EventKind.LAY_DOWN: _lay_down,
        EventKind.HIT: _hit,
    },
    facts=facts,
    examples=(DRAW_EXAMPLE,
              ("lay set:R7,B7,W set:Y3,G3,R3", "your whole phase"),
              ("hit 2 R8   hit 1 W=5", "add a card to group 2"),
              ("discard R9   discard S 2", "a Skip names its victim")),
)
