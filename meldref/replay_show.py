"""Reading replays as people: a game told move by move (as one seat saw it, if asked), and
figures over many replays."""

from __future__ import annotations

import contextlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .engine.cards import (
    COLOUR_NAMES,
    FC_RANK_TEXT,
    SUIT_NAMES,
    SUITS,
    Card,
    CardError,
    Kind,
    sort_key,
)
from .engine.game import rules_to_json
from .replay import (
    Replay,
    ReplayError,
    Step,
    event_for_seat,
    load_replay,
    read_lines,
    simulate,
    verify,
)

HAND_KEYS = ("hand_number", "round", "round_number", "hand")


# ----------------------------------------------------------------------------------------------
# One event in words


def _seat(names: Sequence[str], seat: Any) -> str:
    if isinstance(seat, int) and 0 <= seat < len(names):
        return f"seat {seat} ({names[seat]})"
    return f"seat {seat}"


def _value(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_value(v) for v in value) if value else "-"
    if value is None:
        return "-"
    return str(value)


def describe_event(event: Mapping[str, Any], names: Sequence[str]) -> str:
    """A line for one event as a seat saw it (hidden fields already removed)."""
    kind = str(event.get("event"))
    who = _seat(names, event["seat"]) if "seat" in event else ""
    card = event.get("card")
    if kind == "draw":
        what = f"draws {card}" if card else "draws a card"
        pile = "discard pile" if event.get("source") == "discard" else "draw pile"
        return f"{who} {what} from the {pile}"
    if kind == "discard":
        return f"{who} discards {card}"
    if kind == "skip":
        return f"{who} skips {_seat(names, event.get('victim'))}"
    if kind == "skipped":
        return f"{who} is skipped"
    if kind == "turn_up":
        return f"the discard pile starts with {card}"
    if kind == "deal":
        return _deal(event, who)
    if kind == "go_out":
        return f"{who} goes out with {describe_groups(event.get('groups'))}"
    if kind == "last_turn":
        return (f"{who} lays {describe_groups(event.get('groups'))} on the last turn, "
                f"{event.get('left')} cards left")
    if kind == "place":
        return (f"{who} puts {card} on pile {event.get('pile')} and discards "
                f"{event.get('discarded')} (next card {event.get('draw_top')}, "
                f"{event.get('draw_pile_size')} left)")
    if kind == "close":
        return f"pile {event.get('pile')} closes: {describe_groups(event.get('groups'))}"
    if kind == "lay_down":
        return f"{who} lays phase {event.get('phase')}: {describe_groups(event.get('groups'))}"
    if kind == "hit":
        return f"{who} hits group {event.get('group_id')} with {card} -> {event.get('group')}"
    if kind == "reshuffle":
        return f"the discard pile is shuffled into a new draw pile ({event.get('draw_pile_size')})"
    if kind in ("hand_end", "round_end"):
        return _hand_end(event, names)
    if kind == "game_over":
        return "game over"
    rest = " ".join(f"{k}={_value(v)}" for k, v in event.items() if k not in ("event", "seat"))
    return " ".join(p for p in (who, kind.replace("_", " "), rest) if p)


def _deal(event: Mapping[str, Any], who: str) -> str:
    if isinstance(event.get("piles"), list):
        piles = " | ".join(str(p) for p in event["piles"])
        return f"piles dealt: {piles}; next card {event.get('draw_top')}"
    hand = event.get("hand")
    if isinstance(hand, list):
        shown = format_hand(hand)
    else:
        shown = f"{event.get('hand_size') or event.get('deal_size')} cards"
    wild = f" ({event['wild_rank']}s wild)" if event.get("wild_rank") else ""
    return f"{who} is dealt {shown}{wild}"


def _hand_end(event: Mapping[str, Any], names: Sequence[str]) -> str:
    out = event.get("went_out")
    how = f"{_seat(names, out)} went out" if out is not None else str(event.get("ended"))
    left = event.get("hands")
    held = ""
    if isinstance(left, list):
        held = "; left in hand: " + ", ".join(
            f"s{s} {format_hand(str(h).split()) or '-'}" for s, h in enumerate(left))
    number = event.get("hand_number", event.get("round"))
    word = "round" if "round" in event else "hand"
    return (f"{word} {number} ends, {how}: points {_value(event.get('points'))}"
            f"; totals {_value(event.get('totals'))}{held}")


_PLURALS = {1: "ones", 2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes",
            7: "sevens", 8: "eights", 9: "nines", 10: "tens", 11: "elevens", 12: "twelves"}
_FC_PLURALS = {**_PLURALS, 11: "jacks", 12: "queens", 13: "kings"}


def describe_groups(groups: Any) -> str:
    """Laid groups in words, each with its cards: `set of 4 sevens (R7 B7 W=7 G7) + run 3-6
    (R3 B4 Y5 W=6)`; "nothing" for none."""
    if not isinstance(groups, list) or not groups:
        return "nothing"
    return " + ".join(f"{describe_group(str(g))} ({' '.join(str(g).partition(':')[2].split(','))})"
                      for g in groups)


def describe_group(token: str) -> str:
    """One group token in words ("set of 4 sevens", "run 3-6", "run 9-Q of hearts",
    "7 green cards"); the token itself if it cannot be read."""
    kind, _, body = token.partition(":")
    try:
        placed = [(Card.parse(c), d) for c, _, d in (p.partition("=") for p in body.split(","))]
    except CardError:
        return token
    fc = any(c.kind is Kind.JOKER or c.suit in SUITS for c, _ in placed)

    def value(card: Card, declared: str) -> str:
        return declared or (FC_RANK_TEXT[card.rank] if fc else str(card.rank))

    values = [value(c, d) for c, d in placed]
    if kind in ("set", "book") and values:
        rank = next((r for r, v in FC_RANK_TEXT.items() if v == values[0]), None) if fc else (
            int(values[0]) if values[0].isdigit() else None)
        plural = (_FC_PLURALS if fc else _PLURALS).get(rank or 0, f"{values[0]}s")
        return f"{kind} of {len(placed)} {plural}"
    if kind == "run" and values:
        suit = next((SUIT_NAMES[c.suit] for c, d in placed if not d and c.suit in SUITS), "")
        return f"run {values[0]}-{values[-1]}" + (f" of {suit}" if suit else "")
    if kind == "colour" and placed:
        colour = next((d or c.suit for c, d in placed if d or c.suit), "")
        return f"{len(placed)} {COLOUR_NAMES.get(colour, 'same-colour')} cards"
    return token


def format_hand(tokens: Iterable[str]) -> str:
    """Tokens sorted as people hold them: naturals by number, then wilds, then skips."""
    cards: list[Card] = []
    rest: list[str] = []
    for token in tokens:
        try:
            cards.append(Card.parse(token))
        except CardError:
            rest.append(token)
    return " ".join([c.text for c in sorted(cards, key=sort_key)] + rest)


# ----------------------------------------------------------------------------------------------
# A whole game


@dataclass(slots=True)
class Telling:
    """The lines of a game's account, with where reading stopped if the file was bad."""

    lines: list[str] = field(default_factory=list)
    problem: str | None = None


def lenient_replay(path: Path) -> tuple[Replay, str | None]:
    """A replay read up to its first bad line, and what was wrong (None if nothing)."""
    try:
        return load_replay(path), None
    except ReplayError as exc:
        if exc.line <= 1:
            raise
        problem = str(exc)
    replay: Replay | None = None
    with contextlib.suppress(ReplayError):
        for number, record in read_lines(path):
            if replay is None:
                replay = Replay(path, record)
            else:
                replay.records.append((number, record))
    assert replay is not None
    return replay, problem


class ShowError(ValueError):
    """A `--seat` or `--hand` the replay does not have (a usage error, not a bad file)."""


def tell(path: Path, seat: int | None = None, hand: int | None = None) -> Telling:
    """The game in `path` move by move; as `seat` saw it; only hand `hand` if given.
    `ShowError` for a seat or hand the game does not have."""
    replay, problem = lenient_replay(path)
    players = int(replay.header["players"])
    if seat is not None and not 0 <= seat < players:
        raise ShowError(f"--seat {seat}: the game has seats 0..{players - 1}")
    names = replay.seat_names() or [f"seat {i}" for i in range(players)]
    telling = Telling(_header_lines(replay, seat), problem)
    story = _Story(telling, names, seat, hand)
    for _, record in replay.records:
        if record["type"] == "start":
            story.events(record.get("events") or [])
    try:
        simulate(replay, on_step=story.step, before=story.before)
    except ReplayError as exc:
        telling.problem = telling.problem or str(exc)
    if hand is not None and hand not in story.seen:
        raise ShowError(f"--hand {hand}: the replay has hands 1..{max(story.seen)}")
    telling.lines.extend(_footer_lines(replay, names, seat))
    if telling.problem:
        telling.lines.append(f"!! stopped: {telling.problem}")
    return telling


@dataclass(slots=True)
class _Story:
    """Lines of a game as they happen, each kept only if it belongs to the hand asked for."""

    telling: Telling
    names: Sequence[str]
    seat: int | None
    only_hand: int | None
    hand: int = 1
    started: bool = False
    seen: set[int] = field(default_factory=lambda: {1})  # hand numbers dealt so far

    def add(self, line: str) -> None:
        if self.only_hand is None or self.hand == self.only_hand:
            self.telling.lines.append(line)

    def events(self, stored: Sequence[Mapping[str, Any]]) -> None:
        for data in stored:
            view = event_for_seat(data, self.seat)
            number = next((view[k] for k in HAND_KEYS if isinstance(view.get(k), int)), None)
            if view.get("event") == "deal" and number is not None and (
                    number != self.hand or not self.started):
                self.hand, self.started = number, True
                self.seen.add(number)
                word = "round" if "round" in view else "hand"
                self.add(f"-- {word} {number} --")
            self.add("    " + describe_event(view, self.names))

    def before(self, record: dict[str, Any], state: Any) -> None:
        if self.seat is None or state.to_move != self.seat:
            return
        with contextlib.suppress(Exception):
            held = state.observation(self.seat).to_json().get("hand")
            if isinstance(held, list):
                self.add(f"  seat {self.seat} holds {format_hand(held)}")

    def step(self, step: Step, state: Any) -> None:
        auto = " (played by the referee)" if step.record.get("auto") else ""
        self.add(f"#{step.record.get('n', '?')} {_seat(self.names, step.seat)} "
                 f"{step.decision}: {step.action}{auto}")
        self.events(step.record.get("events") or [])


def _header_lines(replay: Replay, seat: int | None) -> list[str]:
    h = replay.header
    defaults = {}
    with contextlib.suppress(Exception):
        defaults = rules_to_json(replay.game.rules())
    changed = {k: v for k, v in h["rules"].items() if defaults.get(k, v) != v}
    rules = " ".join(f"{k}={_value(v)}" for k, v in changed.items()) or "default rules"
    lines = [f"{h['game']}  seed {h['seed']}  {h['players']} players  {rules}"]
    for s in h.get("seats") or []:
        version = f" v{s['version']}" if s.get("version") else ""
        lines.append(f"  seat {s['seat']}: {s.get('name')}{version}  [{s.get('spec')}]")
    if seat is not None:
        lines.append(f"(as seat {seat} saw it: other hands and the draw pile hidden)")
    return lines


def _footer_lines(replay: Replay, names: Sequence[str], seat: int | None) -> list[str]:
    lines = []
    for fault in replay.faults():
        lines.append(f"fault: {_seat(names, fault.get('seat'))} {fault.get('outcome')}"
                     f"{' (fatal)' if fault.get('fatal') else ''}: {fault.get('detail')}")
    result = replay.result
    if result is None:
        lines.append("no result: the replay is truncated (the game did not finish)")
        return lines
    outcome = result.get("outcome", {})
    winners = ", ".join(_seat(names, s) for s in outcome.get("winners", [])) or "none"
    lines.append(f"result ({outcome.get('termination')}): winner {winners}; places "
                 f"{_value(outcome.get('places'))}; scores {_value(outcome.get('scores'))}")
    return lines


# ----------------------------------------------------------------------------------------------
# Figures over many replays


def replay_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Files as given; folders searched for *.jsonl (a tournament's replays/ folder)."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.jsonl") if p.name != "results.jsonl")
        else:
            yield path


@dataclass(slots=True)
class Stats:
    """Totals over replays: games, wins per seat and per bot, scores, faults, hands, decisions."""

    games: int = 0
    finished: int = 0
    unreadable: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    actions: int = 0
    decisions: int = 0
    hands: int = 0
    wins_by_seat: Counter[int] = field(default_factory=Counter)
    games_by_bot: Counter[str] = field(default_factory=Counter)
    wins_by_bot: Counter[str] = field(default_factory=Counter)
    score_by_bot: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    faults_by_bot: defaultdict[str, Counter[str]] = field(
        default_factory=lambda: defaultdict(Counter))
    games_by_name: Counter[str] = field(default_factory=Counter)

    def add(self, replay: Replay) -> None:
        self.games += 1
        names = replay.seat_names()
        for fault in replay.faults():
            seat = fault.get("seat")
            if isinstance(seat, int) and seat < len(names):
                # A summary fault stands for the `suppressed` faults it counts, not for one.
                count = fault.get("suppressed", 1)
                count = count if isinstance(count, int) and count >= 0 else 1
                self.faults_by_bot[names[seat]][str(fault.get("outcome"))] += count
        self.actions += len(replay.actions())
        result = replay.result
        if result is None:
            self.truncated.append(str(replay.path))
            return
        self.finished += 1
        self.decisions += int(result.get("decisions", 0))
        outcome = result.get("outcome", {})
        self.hands += int(outcome.get("hands") or outcome.get("rounds") or 0)
        winners = outcome.get("winners", [])
        for seat, name in enumerate(names):
            self.games_by_bot[name] += 1
            self.score_by_bot[name] += int(outcome.get("scores", [0] * len(names))[seat])
            if seat in winners:
                self.wins_by_bot[name] += 1
        for seat in winners:
            self.wins_by_seat[seat] += 1

    def to_json(self) -> dict[str, Any]:
        bots = sorted(set(self.games_by_bot) | set(self.faults_by_bot))
        return {
            "games": self.games, "finished": self.finished,
            "truncated": self.truncated, "unreadable": self.unreadable,
            "actions": self.actions, "decisions": self.decisions, "hands": self.hands,
            "mean_hands": round(self.hands / self.finished, 3) if self.finished else None,
            "mean_decisions": (round(self.decisions / self.finished, 3)
                               if self.finished else None),
            "wins_by_seat": {str(k): v for k, v in sorted(self.wins_by_seat.items())},
            "bots": [{
                "bot": b, "games": self.games_by_bot[b], "wins": self.wins_by_bot[b],
                "mean_score": (round(self.score_by_bot[b] / self.games_by_bot[b], 2)
                               if self.games_by_bot[b] else None),
                "faults": dict(sorted(self.faults_by_bot[b].items())),
            } for b in bots],
        }


def gather_stats(paths: Iterable[Path], check: bool = False) -> Stats:
    """Figures over every replay under `paths` (with `check`, each one is verified first)."""
    stats = Stats()
    for path in replay_files(paths):
        try:
            if check:
                verify(path)
            replay, problem = lenient_replay(path)
        except (ReplayError, OSError) as exc:
            stats.unreadable.append(f"{path}: {exc}")
            continue
        if problem is not None and "truncated" not in problem:
            stats.unreadable.append(f"{path}: {problem}")
            continue
        stats.add(replay)
    return stats
