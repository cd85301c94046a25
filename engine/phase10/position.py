"""Phase 10 positions (spec/POSITION.md): a hand in play as a person writes it, and back.

Top level: `seed`, `hand_number`, `dealer`, `to_move`, `decision`, `turn`, `reshuffles`,
`laid_this_turn`, `discard_pile` and `draw_pile` (top card first), `tiebreak` (the tied seats
of a tie-break hand), `history` (how the hands before ended). `[[seat]]`: `hand`, `score`,
`completed`, `laid`, `skips`, and `phase` (derived; checked when written). `[[table]]`: `owner`
and `group`, in the order laid (group id 1, 2, ...).

What a seat is on this hand follows from the rules and what it completed, as at a deal
(`Phase10Rules.phase_to_make`); the checks below refuse what no game reaches: a phase out of
order, a seat that has not laid holding other than 10 cards, a group on the table of a seat that
has not laid, a Skip pending against the seat to move...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ..cards import SKIP, Card, phase10_deck
from ..common import tokens
from ..game import JSON, Rules, rules_of, rules_to_json
from ..meld_check import parse_meld
from ..melds import GroupKind, Meld, MeldError, format_meld
from ..position import (
    Codec,
    Fields,
    PositionError,
    account,
    check_players,
    fill_draw_pile,
    seed_of,
    top_first,
)
from . import GAME
from .rules import HAND_SIZE, Phase10Rules, describe_phase, why_not_phase

DECISIONS: Final = ("draw", "play")
ENDINGS: Final = ("out", "turn-cap", "no-cards")
KINDS: Final = (GroupKind.SET, GroupKind.RUN, GroupKind.COLOUR)


@dataclass(slots=True)
class _Seat:
    number: int
    hand: list[Card]
    score: int
    completed: list[int]
    laid: int | None
    skips: int
    written_phase: int | None
    groups: list[Meld] = field(default_factory=list)
    phase: int | None = None  # derived: the phase it makes this hand

    @property
    def where(self) -> str:
        return f"seat {self.number}: "


@dataclass(frozen=True, slots=True)
class _Hand:
    """The facts of the hand every seat's check needs."""

    rules: Phase10Rules
    number: int
    tied: tuple[int, ...] | None
    to_move: int
    drawn: bool  # the seat to move has drawn (decision play)


def read(fields: Fields, options: Rules) -> dict[str, JSON]:
    """A checked Phase 10 position as a snapshot (`Phase10State.from_snapshot`)."""
    rules = rules_of(Phase10Rules, options)
    seed = seed_of(fields)
    seat_fields = fields.tables("seat", "seat")
    n = len(seat_fields)
    check_players(GAME, n)
    hand_number = fields.whole("hand_number", 1, low=1, high=rules.hand_cap)
    dealer = fields.whole("dealer", 0, high=n - 1)
    tied = _read_tied(fields, rules, n, hand_number)
    playing = tied if tied is not None and rules.tiebreak_players == "tied" else tuple(range(n))
    seats = [_read_seat(i, f) for i, f in enumerate(seat_fields)]
    table = _read_table(fields, rules, seats, playing)
    to_move = fields.whole("to_move", high=n - 1)
    if to_move not in playing:
        raise fields.fail("to_move", f"seat {to_move} sits this tie-break hand out")
    decision = fields.word("decision", DECISIONS)
    hand = _Hand(rules, hand_number, tied, to_move, decision == "play")
    for seat in seats:
        _check_seat(hand, seat, seat.number in playing)
    _check_tied(hand, seats)
    turn = fields.whole("turn", 1, low=1, high=rules.turn_cap)
    _check_skips(hand, seats, playing, turn)
    laid_this_turn = fields.flag("laid_this_turn", False)
    if laid_this_turn and not (hand.drawn and seats[to_move].laid is not None):
        raise fields.fail("laid_this_turn", "only the seat to move, once it has laid its "
                          "phase this turn (decision play)")
    discard = list(reversed(fields.cards("discard_pile")))
    named, rest_wanted = fields.draw_pile("draw_pile")
    zones: list[tuple[str, Sequence[Card]]] = [(f"seat {s.number} hand", s.hand) for s in seats]
    zones += [(f"table group {i + 1}", m.cards) for i, (_, m) in enumerate(table)]
    zones += [("discard_pile", discard), ("draw_pile", named)]
    rest = account(phase10_deck(), zones)
    draw = fill_draw_pile(named, rest_wanted, rest, seed)
    if not hand.drawn:
        _check_can_draw(draw, discard)
    return {
        "game": GAME.name, "rules": rules_to_json(rules), "players": n, "seed": seed,
        "scores": [s.score for s in seats],
        "completed": [list(s.completed) for s in seats],
        "hand_number": hand_number, "dealer": dealer,
        "history": _read_history(fields, n, hand_number),
        "tied": None if tied is None else list(tied),
        "outcome": None,
        "playing": list(playing),
        "hands": [tokens(s.hand) for s in seats],
        "draw_pile": tokens(draw),
        "discard_pile": tokens(discard),
        "table": [{"id": i + 1, "owner": owner, "group": format_meld(m)}
                  for i, (owner, m) in enumerate(table)],
        "phase_now": [s.phase for s in seats],
        "laid": [s.laid for s in seats],
        "skips": [s.skips for s in seats],
        "turns": turn,
        "reshuffles": fields.whole("reshuffles", 0),
        "to_move": to_move,
        "decision": decision,
        "laid_this_turn": laid_this_turn,
    }


def _read_tied(fields: Fields, rules: Phase10Rules, n: int,
               hand_number: int) -> tuple[int, ...] | None:
    tied = fields.wholes("tiebreak", high=n - 1)
    if not tied:
        if rules.fixed_hands and hand_number > len(rules.sequence):
            raise fields.fail("hand_number", f"fixed-hands plays {len(rules.sequence)} hands "
                              "(more only as tie-break hands: name the tied seats in tiebreak)")
        return None
    if rules.tiebreak == "shared":
        raise fields.fail("tiebreak", "the rule option tiebreak=shared plays no tie-break hands")
    if len(tied) < 2 or sorted(set(tied)) != tied:
        raise fields.fail("tiebreak", "two tied seats or more, in seat order")
    if rules.fixed_hands and hand_number <= len(rules.sequence):
        raise fields.fail("tiebreak", f"with fixed-hands tie-break hands come after hand "
                          f"{len(rules.sequence)}")
    return tuple(tied)


def _read_seat(number: int, f: Fields) -> _Seat:
    seat = _Seat(number, f.cards("hand"), f.whole("score", 0), f.wholes("completed", low=1),
                 f.maybe_whole("laid", low=1), f.whole("skips", 0), f.maybe_whole("phase", low=1))
    f.done()
    return seat


def _read_table(fields: Fields, rules: Phase10Rules, seats: list[_Seat],
                playing: Sequence[int]) -> list[tuple[int, Meld]]:
    table = []
    for f in fields.tables("table", "table group", first=1):
        owner = f.whole("owner", high=len(seats) - 1)
        text = f.value("group")
        if not isinstance(text, str):
            raise f.fail("group", "a group token, e.g. set:R7,B7,W=7")
        try:
            meld = parse_meld(text, rules.melds)
        except MeldError as exc:
            raise f.fail("group", str(exc)) from None
        if meld.kind not in KINDS:
            raise f.fail("group", "Phase 10 groups are set, run and colour")
        if owner not in playing or seats[owner].laid is None:
            raise f.fail("owner", f"seat {owner} has not laid its phase this hand (no laid "
                         "= N): only a seat that laid has groups on the table")
        f.done()
        seats[owner].groups.append(meld)
        table.append((owner, meld))
    return table


def _read_history(fields: Fields, n: int, hand_number: int) -> list[dict[str, JSON]]:
    texts = fields.texts("history")
    if len(texts) > hand_number - 1:
        raise fields.fail("history", f"one entry per hand played before this one, the last "
                          f"ones (hand {hand_number} has {hand_number - 1} before it)")
    first = hand_number - len(texts)  # a game begun from a position knows the hands since
    return [_history_entry(fields, first + i, text, n) for i, text in enumerate(texts)]


def _history_entry(fields: Fields, hand: int, text: str, n: int) -> dict[str, JSON]:
    words = text.split()
    tiebreak = bool(words) and words[0] == "tiebreak"
    words = words[1:] if tiebreak else words
    went_out = int(words[1]) if len(words) == 2 and words[1].isdigit() else None
    if not words or words[0] not in ENDINGS or (words[0] == "out") != (
            went_out is not None and went_out < n) or len(words) > 2:
        raise fields.fail("history", f"entry {text!r}: [tiebreak] out <seat> | turn-cap | "
                          "no-cards")
    return {"hand": hand, "ended": words[0], "went_out": went_out, "tiebreak": tiebreak}


# ----------------------------------------------------------------------------------------------
# What no game reaches


def hand_phase(hand: _Hand, done: Sequence[int]) -> int | None:
    """The phase a seat that completed `done` makes in this hand (as the game deals it)."""
    return hand.rules.phase_to_make(hand.tied is not None, hand.number, len(done))


def _check_seat(hand: _Hand, seat: _Seat, playing: bool) -> None:
    if not playing:
        if seat.hand or seat.laid is not None or seat.skips:
            raise PositionError(f"{seat.where}it sits this tie-break hand out: no cards, no "
                                "laid phase, no Skips")
        seat.phase = None
        _check_completed(hand, seat, seat.completed)
        return
    done = _done_at_deal(hand, seat)
    _check_completed(hand, seat, done)
    seat.phase = seat.laid if seat.laid is not None else hand_phase(hand, done)
    if seat.written_phase is not None and seat.written_phase != seat.phase:
        on = f"phase {seat.phase}" if seat.phase is not None else "no phase yet (any-order)"
        raise PositionError(f"{seat.where}phase = {seat.written_phase}: it is on {on} this "
                            f"hand, having completed {_listed(done)}")
    _check_groups(hand, seat)
    _check_cards(hand, seat)


def _done_at_deal(hand: _Hand, seat: _Seat) -> list[int]:
    """The phases the seat had completed when this hand was dealt; `PositionError` if the
    phase it laid is not one it could lay."""
    laid, done, rules = seat.laid, seat.completed, hand.rules
    if laid is None or hand.tied is not None:
        if laid is not None and laid != rules.final_phase:
            raise PositionError(f"{seat.where}laid = {laid}: tie-break hands are played on "
                                f"phase {rules.final_phase}")
        return done
    again = not rules.completes(len(done)) and laid == rules.final_phase
    if again and done[-1] != laid:
        # Laid again, completing nothing (win=last-phase-and-out); under any-order the final
        # phase need not be one of those completed.
        return done
    if laid not in done:
        raise PositionError(f"{seat.where}laid = {laid} is not in completed: a phase is "
                            "completed as soon as it is laid")
    if done[-1] != laid:
        raise PositionError(f"{seat.where}laid = {laid}: the phase laid this hand is the "
                            "last one completed")
    before = done[:-1]
    expected = hand_phase(hand, before)
    if expected is not None and laid != expected:
        raise PositionError(f"{seat.where}laid = {laid}: having completed {_listed(before)} "
                            f"before this hand, it makes phase {expected} in it")
    return before


def _check_completed(hand: _Hand, seat: _Seat, done: Sequence[int]) -> None:
    rules = hand.rules
    wrong = [p for p in seat.completed if p not in rules.sequence]
    if wrong or len(set(seat.completed)) != len(seat.completed):
        raise PositionError(f"{seat.where}completed = {_listed(seat.completed)}: phases of "
                            f"{_listed(rules.sequence)} (phases={rules.phases}), each once")
    order = [rules.sequence.index(p) for p in seat.completed]
    if rules.fixed_hands:
        ok = order == sorted(order) and (hand.tied is not None
                                         or all(i < hand.number for i in order))
        shape = f"phases of the first {hand.number} hands, in order (fixed-hands)"
    elif rules.any_order:
        ok, shape = True, ""
    else:
        ok = order == list(range(len(order)))
        shape = "the first phases of the sequence, in order"
    if not ok:
        raise PositionError(f"{seat.where}completed = {_listed(seat.completed)}: {shape}")
    if len(seat.completed) > rules.target:
        raise PositionError(f"{seat.where}completed = {_listed(seat.completed)}: a seat "
                            f"completes {_phases(rules.target)} at most "
                            "(laying the last phase again completes nothing)")
    if hand.tied is None and not rules.fixed_hands and len(done) >= rules.target and (
            rules.win == "last-phase"):
        raise PositionError(f"{seat.where}completed {_listed(done)} before this hand: the game "
                            f"ended when it completed {_goal(rules)}")


def _check_tied(hand: _Hand, seats: list[_Seat]) -> None:
    if hand.tied is None:
        return
    rules = hand.rules
    scores = {seats[s].score for s in hand.tied}
    if len(scores) > 1:
        raise PositionError(f"tiebreak = {list(hand.tied)}: tied seats have equal scores, not "
                            f"{sorted(scores)}")
    short = [s for s in hand.tied if len(seats[s].completed) < rules.target]
    if short and not rules.fixed_hands:
        raise PositionError(f"tiebreak: seat {short[0]} has not completed {_goal(rules)}, "
                            "so it is not tied for the win")


def _check_groups(hand: _Hand, seat: _Seat) -> None:
    if seat.laid is None:
        return
    why = why_not_phase(seat.laid, seat.groups) or hand.rules.why_not_natural(seat.groups)
    if why is not None:
        raise PositionError(f"{seat.where}its groups on the table are not phase {seat.laid} "
                            f"({describe_phase(seat.laid)}) as laid and hit since: {why}")


def _check_cards(hand: _Hand, seat: _Seat) -> None:
    drawn = int(hand.drawn and seat.number == hand.to_move)
    size = len(seat.hand)
    if seat.laid is None and size != HAND_SIZE + drawn:
        held = "11 when it has drawn" if drawn else "10 (11 once it has drawn)"
        raise PositionError(f"{seat.where}it holds {size} cards; a seat that has not laid its "
                            f"phase holds {held}")
    if not 1 <= size <= HAND_SIZE + drawn:
        raise PositionError(f"{seat.where}it holds {size} cards: 1..{HAND_SIZE + drawn} (a "
                            "seat with none went out and ended the hand)")
    if seat.skips and seat.number == hand.to_move:
        raise PositionError(f"{seat.where}skips = {seat.skips}, but it is to move: a Skip "
                            "pending would have skipped this turn")
    if seat.skips > 1 and hand.rules.skip_repeat == "once-per-orbit":
        raise PositionError(f"{seat.where}skips = {seat.skips}: one at most "
                            "(skip-repeat=once-per-orbit)")


def _check_skips(hand: _Hand, seats: list[_Seat], playing: Sequence[int], turn: int) -> None:
    """Skips pending as play leaves them between turns. A Skip is pending against a seat from
    the discard that names it to that seat's next turn, so it was discarded after the seat's
    last turn by a seat that played since, one Skip a turn; the next player, and with two
    players the only other one, is skipped at once."""
    pending = [s for s in seats if s.skips]
    if not pending:
        return
    first, rules = pending[0], hand.rules
    if rules.skip_victim == "next" or len(playing) == 2:
        why = "skip-victim=next" if rules.skip_victim == "next" else "with two players"
        raise PositionError(f"{first.where}skips = {first.skips}: {why} a Skip's victim is the "
                            "next player, skipped at once, so none is pending between turns")
    total = sum(s.skips for s in pending)
    if total > turn - 1:
        raise PositionError(f"{total} Skip{'s' if total != 1 else ''} pending, but {turn - 1} "
                            f"turn{'s' if turn != 2 else ''} were played in this hand before "
                            "this one (each discards one Skip at most)")
    if rules.skip_repeat != "once-per-orbit":
        return  # Skips pile up; each skipped turn of their victim uses one
    n = len(seats)
    after = [t for t in ((hand.to_move + k) % n for k in range(1, n)) if t in playing]
    waiting = 0  # Skips pending against the seats looked at, latest first
    for later, t in enumerate(reversed(after)):  # `later`: the seats that played after t
        if seats[t].skips:
            waiting += 1
            if waiting > later:
                raise PositionError(f"seat {t}: skips = 1: {_played_after(later, waiting)} "
                                    f"before seat {hand.to_move}'s turn (only a seat that "
                                    "played after a seat's last turn can have skipped it "
                                    "since; one Skip a turn, skip-repeat=once-per-orbit)")


def _played_after(later: int, waiting: int) -> str:
    if not later:
        return "no seat played after it"
    return (f"only {later} seat{'s' if later != 1 else ''} played after it, for {waiting} "
            "Skips pending against it and the seats after it")


def _check_can_draw(draw: list[Card], discard: list[Card]) -> None:
    if draw:
        return
    if not discard or discard[-1] is SKIP:
        raise PositionError("nothing can be drawn (no draw pile, and no discard or a Skip on "
                            "top): the hand would have ended with nobody out")
    if len(discard) > 1:
        raise PositionError("the draw pile is empty at a draw: the discard pile but its top "
                            "would have been reshuffled into it (write those cards as the "
                            "draw_pile)")


def _listed(phases: Sequence[int]) -> str:
    return ", ".join(map(str, phases)) or "none"


def _phases(count: int) -> str:
    return f"{count} phase{'s' if count != 1 else ''}"


def _goal(rules: Phase10Rules) -> str:
    """What ends the game, in words: "phase 10", or under any-order "3 phases"."""
    return _phases(rules.target) if rules.any_order else f"phase {rules.final_phase}"


# ----------------------------------------------------------------------------------------------
# Writing


def write(snapshot: Mapping[str, JSON]) -> dict[str, JSON]:
    """The position of a Phase 10 snapshot (every key written, so it reads back exactly)."""
    out: dict[str, JSON] = {
        "seed": snapshot["seed"],
        "hand_number": snapshot["hand_number"],
        "dealer": snapshot["dealer"],
        "to_move": snapshot["to_move"],
        "decision": snapshot["decision"],
        "turn": snapshot["turns"],
        "reshuffles": snapshot["reshuffles"],
        "laid_this_turn": snapshot["laid_this_turn"],
        "discard_pile": top_first(snapshot["discard_pile"]),
        "draw_pile": top_first(snapshot["draw_pile"]),
    }
    if snapshot["tied"] is not None:
        out["tiebreak"] = list(snapshot["tied"])
    if snapshot["history"]:
        out["history"] = [_history_text(h) for h in snapshot["history"]]
    out["seat"] = [_seat_json(snapshot, s) for s in range(snapshot["players"])]
    if snapshot["table"]:
        out["table"] = [{"owner": g["owner"], "group": g["group"]} for g in snapshot["table"]]
    return out


def _seat_json(snapshot: Mapping[str, JSON], s: int) -> dict[str, JSON]:
    seat: dict[str, JSON] = {"hand": " ".join(snapshot["hands"][s]),
                             "score": snapshot["scores"][s],
                             "completed": list(snapshot["completed"][s])}
    if snapshot["phase_now"][s] is not None:
        seat["phase"] = snapshot["phase_now"][s]
    if snapshot["laid"][s] is not None:
        seat["laid"] = snapshot["laid"][s]
    if snapshot["skips"][s]:
        seat["skips"] = snapshot["skips"][s]
    return seat


def _history_text(entry: Mapping[str, JSON]) -> str:
    words = ["tiebreak"] if entry["tiebreak"] else []
    words.append(str(entry["ended"]))
    if entry["went_out"] is not None:
        words.append(str(entry["went_out"]))
    return " ".join(words)


CODEC: Final = Codec(read, write)
