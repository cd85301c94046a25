"""Replays as pages: the table at every step of a game in one self-contained HTML file.

The page's data is built by re-simulating the replay (`replay.simulate`) and taking, after the
deal and after every action, what the viewer may see:

- the full view: every seat's `observation(s)`, so every hand;
- a seat's view (`seat=K`): seat K's `observation(K)` only, and every event as K saw it
  (`Event.for_seat(K)`). Nothing else of the state is read, so the page cannot hold a card K
  did not see, whatever its script shows or hides; nor the seed, from which every deal follows.

An action that ends a hand (round) gets that hand's last table as its frame: the observation
after it already shows the next deal, so the frame is the previous one with the action's events
up to `hand_end` applied (the groups laid, the discard, and the hands, points and totals that
`hand_end` makes public). The next deal then gets a frame of its own.

What the observations lack is kept from the events as the viewer saw them: the discard pile's
cards (every discard and draw from it is public) and the groups of Solitaire's closed piles.

Frames are flat dicts (per-seat and per-pile lists split into `key.i` entries); the page holds
the first one whole and then only the entries that change, so a game of 300 actions at 14 seats
stays far under 1 MB. Words come from `words.describe_event`, as `replay show` prints them; each
game's frame, words and facts from its presentation (`replay/games/<game>.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from pathlib import Path
from typing import Final

from ..engine.game import (
    DEAL_ENDS,
    JSON,
    Event,
    EventKind,
    GameState,
    RuleOptionError,
    Termination,
    rules_to_json,
)
from ..protocol.errors import FaultOutcome, SeatStatus
from .botlogs import bot_logs
from .files import Outline, Replay, ReplayError, Step, open_replay, simulate
from .frames import Frame, Trackers
from .games import Presentation, presentation
from .words import describe_event, seat_name, sorted_hand

DATA_VERSION: Final = 2  # 2: the game's look, the enums and the result's words from Python
PER_INDEX: Final = frozenset({"sc", "hs", "hd", "pl", "pts", "ph", "ld", "cp", "sk", "lt",
                              "pc", "pz", "pg"})
ENDS: Final = DEAL_ENDS
# Why a game ended, in words, when the rules did not end it (the title says how they did).
ENDED: Final[Mapping[str, str]] = {
    Termination.TURN_CAP: "Stopped at the turn cap: a hand went on longer than the rules allow, "
    "so the referee ended the game where it stood (the turn-cap rule option).",
    Termination.FORFEIT: "Ended by forfeit: every other seat was out of the game (a timeout, a "
    "crash or too many illegal actions), so the referee stopped it.",
}
# The values the page's script compares with, from their enums (it spells none of them).
ENUMS: Final = {enum.__name__: {m.name: m.value for m in enum}
                for enum in (EventKind, SeatStatus, FaultOutcome, Termination)}


class ViewerError(ValueError):
    """A page that cannot be made as asked (a seat the game does not have)."""


def end_of_hand(frame: Frame, events: Iterable[Mapping[str, JSON]]) -> Frame:
    """The last table of a hand: `frame` (before the action) with the action's events up to
    `hand_end` applied. Every field used here is public."""
    end = {k: list(v) if isinstance(v, list) else v for k, v in frame.items()}
    for event in events:
        kind, seat = event.get("event"), event.get("seat")
        if kind == EventKind.LAY_DOWN and isinstance(seat, int):
            end["tb"] = [*end["tb"], *([seat, g, i] for g, i in
                                       zip(event["groups"], event["group_ids"], strict=True))]
            end["ld"][seat] = True
        elif kind == EventKind.HIT:
            end["tb"] = [[o, event["group"], i] if i == event["group_id"] else [o, g, i]
                         for o, g, i in end["tb"]]
        elif kind in (EventKind.GO_OUT, EventKind.LAST_TURN):
            end["tb"] = [*end["tb"], *([seat, g] for g in event.get("groups") or ())]
        elif kind in ENDS:
            hands = [str(h).split() for h in event["hands"]]
            end["hd"] = [sorted_hand(h) for h in hands]
            end["hs"] = [len(h) for h in hands]
            end["sc"], end["pts"] = list(event["totals"]), list(event["points"])
            if "laid" in event:
                end["ld"] = [p is not None for p in event["laid"]]
            if "completed" in event:
                end["cp"] = [[int(p) for p in str(c).split()] for c in event["completed"]]
            end["end"] = {"ended": event.get("ended"), "out": event.get("went_out")}
            end["tm"], end["dc"] = None, "end"
    return end


# ----------------------------------------------------------------------------------------------
# Steps and frames of a whole game


def flatten(frame: Frame) -> Frame:
    """Per-seat and per-pile lists as `key.i` entries, so a delta names only what changed."""
    flat: Frame = {}
    for key, value in frame.items():
        if key in PER_INDEX:
            flat.update((f"{key}.{i}", v) for i, v in enumerate(value))
        else:
            flat[key] = value
    return flat


def delta(previous: Frame, current: Frame) -> Frame:
    """The entries of `current` that differ from `previous` (both flat, with the same keys)."""
    if previous.keys() != current.keys():
        raise ValueError(f"frames with different fields: {sorted(previous.keys() ^ current)}")
    return {k: v for k, v in current.items() if previous[k] != v}


def _compact(step: dict[str, JSON]) -> dict[str, JSON]:
    return {k: v for k, v in step.items()
            if not (v is None or v is False or (isinstance(v, list) and not v))}


@dataclass(slots=True)
class _Builder:
    """Steps (what happened, in words) and frames (the table after it) of one game."""

    replay: Replay
    seat: int | None
    names: list[str]
    seen: Outline  # the faults read so far
    shown: Presentation
    steps: list[dict[str, JSON]] = field(default_factory=list)
    # The page's frames: the first whole and flat, then what changed at each step. Only the
    # last table is kept whole: all of a long game's at 14 seats took 50 MB.
    frames: list[Frame] = field(default_factory=list)
    table: Frame = field(default_factory=dict)  # the last frame, as built
    flat: Frame = field(default_factory=dict)  # the last frame, flat
    trackers: Trackers = field(default_factory=Trackers)
    applied: int = 0
    faults_told: int = 0

    @property
    def game(self) -> str:
        return self.replay.game.name

    @property
    def players(self) -> int:
        return int(self.replay.header["players"])

    def views(self, state: GameState) -> list[dict[str, JSON] | None]:
        return [state.observation(s).to_json() if self.seat in (None, s) else None
                for s in range(self.players)]

    def frame(self, state: GameState) -> Frame:
        views = self.views(state)
        public = next(v for v in views if v is not None)
        return self.shown.frame(views, public, self.trackers)

    def lines(self, events: Iterable[Event]) -> list[JSON]:
        """Each event in words as the viewer saw it; in the full view, an event with hidden
        parts is [full, as the others saw it, its seat] for the page's seat switch."""
        out: list[JSON] = []
        for event in events:
            seen = event.for_seat(self.seat)
            self.trackers.see(seen)
            text = describe_event(seen, self.names, self.game)
            public = (describe_event(event.for_seat(-1), self.names, self.game)
                      if self.seat is None else text)
            out.append([text, public, event.seat] if public != text else text)
        return out

    def add(self, kind: str, frame: Frame, lines: list[JSON], **more: JSON) -> None:
        flat = flatten(frame)
        self.frames.append(delta(self.flat, flat) if self.frames else flat)
        self.table, self.flat = frame, flat
        self.steps.append(_compact({"k": kind, "h": frame.get("h"), "L": lines, **more}))

    def opening(self, state: GameState) -> None:
        lines = self.lines(state.opening_events())
        self.add("o", self.frame(state), lines)

    def step(self, step: Step, state: GameState) -> None:
        record = step.record
        n = self.applied
        self.applied += 1
        cut = next((i + 1 for i, e in enumerate(step.events) if e.kind in ENDS),
                   len(step.events))
        before, after = step.events[:cut], step.events[cut:]
        lines = self.lines(before)
        skips = [[e.seat, e.public.get("victim")] for e in before if e.kind is EventKind.SKIP]
        skipped = [e.seat for e in before if e.kind is EventKind.SKIPPED]
        drawn = next((e.for_seat(self.seat).get("card") for e in before
                      if e.kind is EventKind.DRAW),
                     None)  # None where the viewer did not see the card
        more = {"n": n, "s": step.seat, "a": step.action, "dc": step.decision, "dr": drawn,
                "t": _elapsed(record.get("elapsed")), "au": bool(record.get("auto")),
                "F": [self.fault(f) for f in self.new_faults()], "sk": skips, "sx": skipped}
        if cut == len(step.events) and not any(e.kind in ENDS for e in before):
            self.add("a", self.frame(state), lines, **more)
            return
        end = end_of_hand(self.table, [e.for_seat(self.seat) for e in before])
        if "dis" in end:
            end.update(self.trackers.discard_fields(None))
        later = self.lines(after)
        if any(e.kind is EventKind.DEAL for e in after):
            self.add("a", end, lines, **more)
            self.add("d", self.frame(state), later, n=n)
        else:  # the game is over: its last hand's table stays on show
            self.add("a", end, lines + later, **more)

    def new_faults(self) -> list[dict[str, JSON]]:
        """The faults read since the last step: at a step, those of the decision it made
        (the faults recorded before its action); after the last, those after it."""
        fresh = self.seen.faults[self.faults_told:]
        self.faults_told = len(self.seen.faults)
        return [record for _, record in fresh]

    def leftover_faults(self) -> None:
        """Faults after the last action (or in a game without one) go on the last step."""
        faults = self.new_faults()
        if faults:
            self.steps[-1].setdefault("F", []).extend(self.fault(f) for f in faults)

    def fault(self, record: Mapping[str, JSON]) -> list[JSON]:
        seat = record.get("seat")
        # Another seat's fault detail can name its cards (an illegal or late action's text).
        detail = record.get("detail") if self.seat in (None, seat) else None
        return [seat, record.get("outcome"), detail, bool(record.get("fatal")),
                record.get("suppressed")]


def _elapsed(value: JSON) -> float | None:
    return round(float(value), 6) if isinstance(value, int | float) else None


def game_data(replay: Replay, seat: int | None = None, seen: Outline | None = None,
              ) -> dict[str, JSON]:
    """Everything the page shows of `replay`, as `seat` saw it (None: everything), read in one
    pass noted in `seen`. `ViewerError` for a seat the game does not have."""
    header = replay.header
    players = int(header["players"])
    if seat is not None and not 0 <= seat < players:
        raise ViewerError(f"--seat {seat}: the game has seats 0..{players - 1}")
    names = replay.seat_names() or [f"seat {i}" for i in range(players)]
    shown = presentation(replay.game.name)
    seen = seen or Outline()
    builder = _Builder(replay, seat, names, seen, shown)
    try:
        state = replay.new_state()
    except (RuleOptionError, ValueError, TypeError) as exc:  # as `simulate` says it
        raise ReplayError(1, f"cannot start the game from the header: {exc}") from None
    builder.opening(state)
    seen.read(replay, lambda r: simulate(r, on_step=builder.step))
    problem = None if seen.problem is None else str(seen.problem)
    if not builder.frames:
        raise ReplayError(1, problem or "no frame could be built")
    builder.leftover_faults()
    return {
        "v": DATA_VERSION, "game": header["game"], "title": replay.game.title,
        "id": header.get("game_id"), "players": players, "names": names,
        "seats": [_seat_info(s) for s in header.get("seats") or []],
        "seat": seat, "seed": header.get("seed") if seat is None else None,
        "rules": _changed_rules(replay), "move_time": (header.get("policy") or {}).get(
            "move_time"),
        **shown.facts(replay), "look": shown.look.to_json(), "enums": ENUMS,
        "result": _result(seen.result, shown, names), "problem": problem,
        "steps": builder.steps, "frames": builder.frames,
    }


def _seat_info(seat: Mapping[str, JSON]) -> dict[str, JSON]:
    return {"spec": seat.get("spec"), "version": seat.get("version")}


def _changed_rules(replay: Replay) -> dict[str, JSON]:
    defaults = rules_to_json(replay.game.rules())
    rules = replay.header.get("rules") or {}
    return {k: v for k, v in rules.items() if defaults.get(k, v) != v or k == "party"}


def _result(result: Mapping[str, JSON] | None, shown: Presentation, names: Sequence[str],
            ) -> dict[str, JSON] | None:
    if result is None:
        return None
    outcome = result.get("outcome") or {}
    return {"outcome": outcome, "status": result.get("status"),
            "faults": result.get("faults"), "actions": result.get("actions"),
            "title": (shown.result_title or _winners)(outcome, names),
            "why": ENDED.get(str(outcome.get("termination")))}


def _winners(outcome: Mapping[str, JSON], names: Sequence[str]) -> str:
    """The result's headline: its winners by name."""
    winners = [seat_name(names, s) for s in outcome.get("winners") or []]
    if not winners:
        return "No winner"
    return ("Winners: " if len(winners) > 1 else "Winner: ") + ", ".join(winners)


# ----------------------------------------------------------------------------------------------
# The page


def asset(name: str) -> str:
    """A file of the viewer's assets (meldref/replay/viewer/), as text."""
    return resources.files(__package__).joinpath("viewer", name).read_text(encoding="utf-8")


SITE_CSS: Final = "site.css"  # the served pages' one look (replay serve's and contest serve's)


def site_style(page_css: str | None = None) -> str:
    """The served pages' stylesheet (viewer/site.css), then a page's own rules (`page_css`,
    another asset) after it: what a page inlines in its <style>."""
    own = "" if page_css is None else "\n" + asset(page_css)
    return asset(SITE_CSS) + own


def script_json(data: JSON) -> str:
    """JSON safe inside a <script> element: no `<`, `>` or `&` (escaped in strings)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def fill(template: str, **parts: str) -> str:
    """`template` with each `@@NAME@@` replaced by its part (in one pass: a part's own text is
    never searched again)."""
    pieces = template.split("@@")
    for i in range(1, len(pieces), 2):
        pieces[i] = parts[pieces[i]]
    return "".join(pieces)


def page_title(data: Mapping[str, JSON]) -> str:
    names = " vs ".join(data["names"][:4]) + (" ..." if len(data["names"]) > 4 else "")
    view = "" if data["seat"] is None else f" (seat {data['seat']})"
    return f"{data['title']} {data['id'] or ''}{view} - {names}"


def viewer_page(data: Mapping[str, JSON], back: str | None = None) -> str:
    """The self-contained page of one game (`back`: a link to the list of games)."""
    return fill(asset("viewer.html"), TITLE=escape(page_title(data)), STYLE=asset("viewer.css"),
                SCRIPT=asset("viewer.js"), DATA=script_json({**data, "back": back}))


def replay_page(path: Path, seat: int | None = None, back: str | None = None,
                ) -> tuple[str, ReplayError | None]:
    """The page of the replay at `path` and what was wrong with the file (None: nothing);
    a replay that goes bad part way is shown up to there. `ViewerError` for a bad seat,
    `ReplayError` for a file that is no replay, `ReplayPathError` for a path not to read."""
    seen = Outline()
    data = game_data(open_replay(path), seat, seen)
    data["logs"] = bot_logs(path, data["id"], data["players"], seat)
    return viewer_page(data, back), seen.problem
