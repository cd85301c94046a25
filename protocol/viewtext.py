"""The `view` and `item` lines of the three games, written straight from their view objects.

`wire.view_lines(view.to_json())` is the definition: it builds a dict per request and encodes
every value by its type. The referee writes a request for every decision of every game, so for
the views it knows (Phase 10, Five Crowns, Solitaire) it writes the same bytes directly from the
view's fields, and keeps the lines of the parts that rarely change (a seat's record, a group on
the table, a pile, a phase's words) in small bounded caches keyed by their values. Any other
view goes the generic way. tests/test_protocol_viewtext.py checks both agree on every position
of many games.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final, TypeVar, cast

from ..engine.cards import FC_RANK_TEXT, Card
from ..engine.common import Draw
from ..engine.fivecrowns.actions import Discard as FiveCrownsDiscard
from ..engine.fivecrowns.rules import TIEBREAK_ROUND, deal_size, rank_text, wild_rank
from ..engine.fivecrowns.view import FiveCrownsView
from ..engine.game import Observation
from ..engine.melds import Meld
from ..engine.phase10.actions import Discard
from ..engine.phase10.rules import describe_phase
from ..engine.phase10.view import Phase10View, TableGroup
from ..engine.solitaire import PILE_SIZES, SolitaireView
from .wire import encode_text, encode_value, legal_line, view_lines

CACHE: Final = 256  # lines kept per kind of record: a few games' worth, a bounded memory
K = TypeVar("K")
V = TypeVar("V")


def _kept(cache: dict[K, V], key: K, value: V) -> V:
    """`value`, kept in `cache` under `key`; a full cache is emptied first. A plain dict, not
    `functools.lru_cache`: a call of the compiled writer costs less than a call through the
    cache's wrapper, and a request of Solitaire asks up to 14 of them."""
    if len(cache) >= CACHE:
        cache.clear()
    cache[key] = value
    return value


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _cards(cards: tuple[Card, ...]) -> str:
    # Card tokens hold no `,` or `:`, so a list of them is always joined by `,`. (A tuple, as
    # every view holds its cards: compiled, an indexed loop, not the iterator protocol.)
    return ",".join([c.text for c in cards]) or "-"


def _numbers(values: tuple[int, ...]) -> str:
    # The same few tuples all game (phases left, Skip victims, phases completed): a lookup
    # where the join converts every number to text again.
    text = _NUMBERS.get(values)
    if text is None:
        text = _kept(_NUMBERS, values, ",".join([str(v) for v in values]) or "-")
    return text


_NUMBERS: Final[dict[tuple[int, ...], str]] = {}


def _maybe(value: int | None) -> str:
    return "none" if value is None else str(value)


# ----------------------------------------------------------------------------------------------
# Phase 10


_PHASE10_SEATS: Final[dict[tuple[int, bool, int | None, bool, int, int, int, tuple[int, ...]],
                           str]] = {}
_PHASE10_GROUPS: Final[dict[TableGroup, str]] = {}
_NEEDS: Final[dict[int | None, str]] = {}


class _Phase10Seat:
    """A seat's `item seats` line as last written, and the values it was written from: the
    line of every seat but the one that just moved is the same at the next request, and
    comparing its values costs less than hashing them into a key (`_PHASE10_SEATS`)."""

    def __init__(self) -> None:
        self.playing = False
        self.phase: int | None = None
        self.laid = False
        self.score = 0
        self.hand_size = 0
        self.skips = 0
        self.completed: tuple[int, ...] = ()
        self.line = ""  # none yet: no comparison holds


_PHASE10_SHOWN: Final[list[_Phase10Seat]] = []  # by seat


def _phase10_seat(seat: int, playing: bool, phase: int | None, laid: bool, score: int,
                  hand_size: int, skips: int, completed: tuple[int, ...]) -> str:
    while len(_PHASE10_SHOWN) <= seat:
        _PHASE10_SHOWN.append(_Phase10Seat())
    shown = _PHASE10_SHOWN[seat]
    if (shown.line and shown.score == score and shown.hand_size == hand_size
            and shown.skips == skips and shown.playing == playing and shown.laid == laid
            and shown.phase == phase and shown.completed == completed):
        return shown.line
    key = (seat, playing, phase, laid, score, hand_size, skips, completed)
    line = _PHASE10_SEATS.get(key)
    if line is None:
        line = _kept(_PHASE10_SEATS, key, (
            f"item seats seat {seat} playing {_flag(playing)} phase {_maybe(phase)} laid "
            f"{_flag(laid)} score {score} hand_size {hand_size} skip_pending {skips} "
            f"completed {_numbers(completed)}"))
    shown.playing, shown.phase, shown.laid, shown.score = playing, phase, laid, score
    shown.hand_size, shown.skips, shown.completed, shown.line = hand_size, skips, completed, line
    return line


def _phase10_group(group: TableGroup) -> str:
    # A TableGroup never changes (a hit makes a new one), so its line is kept by identity.
    line = _PHASE10_GROUPS.get(group)
    if line is not None:
        return line
    return _kept(_PHASE10_GROUPS, group, f"item table id {group.id} owner {group.owner} group "
                 f"{encode_text(group.token)}")


def _needs(phase: int | None) -> str:
    line = _NEEDS.get(phase)
    if line is not None:
        return line
    return _kept(_NEEDS, phase, "none" if phase is None else encode_text(describe_phase(phase)))


class _Phase10Viewer:
    """The parts of a seat's Phase 10 view line that change a few times a hand, not at every
    decision, as last written for that seat, and the values they were written from (the game's
    rules by identity: the same object all game, held here, so no other takes its id). The
    phases left and the Skip victims are the view's properties, worked out again at each call:
    written from here, a request asks neither."""

    def __init__(self) -> None:
        self.rules: object = None
        self.tiebreak = False
        self.phase: int | None = None
        self.laid: int | None = None
        self.completed: tuple[int, ...] = ()
        self.laid_this_turn = False
        self.middle = ""  # from ` turn_cap` to `hand `
        self.victims_rules: object = None
        self.playing: tuple[bool, ...] = ()
        self.skips: tuple[int, ...] = ()
        self.victims = ""


_PHASE10_VIEWERS: Final[list[_Phase10Viewer]] = []  # by the seat whose view it is


def _phase10_viewer(seat: int) -> _Phase10Viewer:
    while len(_PHASE10_VIEWERS) <= seat:
        _PHASE10_VIEWERS.append(_Phase10Viewer())
    return _PHASE10_VIEWERS[seat]


def _phase10_middle(view: Phase10View, shown: _Phase10Viewer, seat: int,
                    phase: int | None) -> str:
    """The view line from `turn_cap` to `hand`: the rules' cap, the seat's phase and what it
    has laid."""
    rules, laid, completed = view.rules, view.laid[seat], view.completed[seat]
    if not (shown.rules is rules and shown.tiebreak == view.tiebreak and shown.phase == phase
            and shown.laid == laid and shown.laid_this_turn == view.laid_this_turn
            and shown.completed == completed):
        shown.rules, shown.tiebreak, shown.phase, shown.laid = rules, view.tiebreak, phase, laid
        shown.laid_this_turn, shown.completed = view.laid_this_turn, completed
        shown.middle = (
            f" turn_cap {encode_value(rules.turn_cap)} tiebreak {_flag(view.tiebreak)} phase "
            f"{_maybe(phase)} needs {_needs(phase)} phases_left {_numbers(view.phases_left)} "
            f"laid {_maybe(laid)} laid_this_turn {_flag(view.laid_this_turn)} hand ")
    return shown.middle


def _phase10_victims(view: Phase10View, shown: _Phase10Viewer) -> str:
    rules = view.rules
    if not (shown.victims_rules is rules and shown.playing == view.playing
            and shown.skips == view.skips):
        shown.victims_rules, shown.playing, shown.skips = rules, view.playing, view.skips
        shown.victims = _numbers(view.victims)
    return shown.victims


def phase10_lines(view: Phase10View) -> list[str]:
    """`wire.view_lines(view.to_json())`, written directly."""
    seat = view.seat
    phase = view.phases[seat]
    table = view.table
    shown = _phase10_viewer(seat)
    head = (
        f"view seat {seat} hand_number {view.hand_number} dealer {view.dealer} to_move "
        f"{_maybe(view.to_move)} decision {encode_text(view.decision)} turn {view.turn}"
        f"{_phase10_middle(view, shown, seat, phase)}{_cards(view.hand)} discard_top "
        f"{'none' if view.discard_top is None else view.discard_top.text} draw_pile_size "
        f"{view.draw_pile_size}{'' if table else ' table -'} victims "
        f"{_phase10_victims(view, shown)}"
    )
    lines = [head]
    for group in table:
        lines.append(_phase10_group(group))
    laid, skips = view.laid, view.skips
    for s in range(view.players):
        lines.append(_phase10_seat(s, view.playing[s], view.phases[s], laid[s] is not None,
                                   view.scores[s], view.hand_sizes[s], skips[s],
                                   view.completed[s]))
    return lines


# ----------------------------------------------------------------------------------------------
# Five Crowns


_FIVECROWNS_SEATS: Final[dict[tuple[int, bool, int, int, bool, bool], str]] = {}
_FIVECROWNS_GROUPS: Final[dict[tuple[int, Meld], str]] = {}
_ROUND_FACTS: Final[dict[int, str]] = {}


class _FiveCrownsSeat:
    """A seat's `item seats` line as last written, and the values it was written from (as
    `_Phase10Seat`)."""

    def __init__(self) -> None:
        self.playing = False
        self.score = 0
        self.hand_size = 0
        self.gone_out = False
        self.had_last_turn = False
        self.line = ""  # none yet: no comparison holds


_FIVECROWNS_SHOWN: Final[list[_FiveCrownsSeat]] = []  # by seat


def _fivecrowns_seat(seat: int, playing: bool, score: int, hand_size: int, gone_out: bool,
                     had_last_turn: bool) -> str:
    while len(_FIVECROWNS_SHOWN) <= seat:
        _FIVECROWNS_SHOWN.append(_FiveCrownsSeat())
    shown = _FIVECROWNS_SHOWN[seat]
    if (shown.line and shown.score == score and shown.hand_size == hand_size
            and shown.playing == playing and shown.gone_out == gone_out
            and shown.had_last_turn == had_last_turn):
        return shown.line
    key = (seat, playing, score, hand_size, gone_out, had_last_turn)
    line = _FIVECROWNS_SEATS.get(key)
    if line is None:
        line = _kept(_FIVECROWNS_SEATS, key, (
            f"item seats seat {seat} playing {_flag(playing)} score {score} hand_size "
            f"{hand_size} gone_out {_flag(gone_out)} had_last_turn {_flag(had_last_turn)}"))
    shown.playing, shown.score, shown.hand_size = playing, score, hand_size
    shown.gone_out, shown.had_last_turn, shown.line = gone_out, had_last_turn, line
    return line


def _fivecrowns_group(seat: int, meld: Meld) -> str:
    line = _FIVECROWNS_GROUPS.get((seat, meld))
    if line is not None:
        return line
    return _kept(_FIVECROWNS_GROUPS, (seat, meld),
                 f"item table seat {seat} group {encode_text(str(meld))}")


def _round_facts(round_number: int) -> str:
    line = _ROUND_FACTS.get(round_number)
    if line is not None:
        return line
    wild = encode_text(rank_text(wild_rank(round_number)))
    return _kept(_ROUND_FACTS, round_number, (
        f"round {round_number} tiebreak {_flag(round_number == TIEBREAK_ROUND)} deal_size "
        f"{deal_size(round_number)} wild_rank {wild}"))


def fivecrowns_lines(view: FiveCrownsView) -> list[str]:
    """`wire.view_lines(view.to_json())`, written directly."""
    table = view.table
    went_out = view.went_out
    head = (
        f"view seat {view.seat} {_round_facts(view.round)} dealer {view.dealer} to_move "
        f"{_maybe(view.to_move)} decision {encode_text(view.decision)} turn {view.turn} "
        f"turn_cap {_maybe(view.turn_cap)} natural {encode_text(view.natural)} decks "
        f"{view.decks} hand {_cards(view.hand)} discard_top "
        f"{'none' if view.discard_top is None else view.discard_top.text} discard_pile_size "
        f"{view.discard_pile_size} draw_pile_size {view.draw_pile_size} went_out "
        f"{_maybe(went_out)} last_turn {_flag(view.last_turn)}{'' if table else ' table -'}"
    )
    # Loops, not a generator unpacked into the list: the generator's object and the list's
    # extension through it cost more than the usual empty table's lines.
    lines = [head]
    for seat, meld in table:
        lines.append(_fivecrowns_group(seat, meld))
    for s in range(view.players):
        lines.append(_fivecrowns_seat(s, view.playing[s], view.scores[s], view.hand_sizes[s],
                                      went_out == s, view.had_last_turn[s]))
    return lines


# ----------------------------------------------------------------------------------------------
# Solitaire


# The piles' sizes as a compiled global (PILE_SIZES is read from a Python module, by name, at
# every use), and each pile's line up to its `closed` flag.
_SIZES: Final[tuple[int, ...]] = tuple(PILE_SIZES)
_PILE_HEADS: Final = tuple([f"item piles size {size} wild_rank {encode_text(FC_RANK_TEXT[size])}"
                            f" closed " for size in _SIZES])


class _Shown:
    """A pile's lines as last written, by the pile's own tuple (`cards is`): the game keeps one
    tuple per pile until the pile changes, so a request finds all its piles here but the one
    the last move changed. Only the last: a pile seldom comes back to cards it held before, and
    new deals never do, so a cache keyed by the cards would cost its hashing for nothing."""

    def __init__(self) -> None:
        self.cards: tuple[Card, ...] | None = None
        self.closed = False
        self.line = ""
        self.legal_cards: tuple[Card, ...] | None = None
        self.legal: list[str] = []


_SHOWN: Final = [_Shown() for _ in _SIZES]  # by the pile's index in PILE_SIZES


def solitaire_lines(view: SolitaireView) -> list[str]:
    """`wire.view_lines(view.to_json())`, written directly."""
    closed, piles = view.closed, view.piles
    count = 0
    for flag in closed:  # `sum(closed)`, without a call through the interpreter
        if flag:
            count += 1
    head = (
        f"view seat {view.seat} to_move {_maybe(view.to_move)} decision "
        f"{encode_text(view.decision)} natural {encode_text(view.natural)} draw_top "
        f"{'none' if view.draw_top is None else view.draw_top.text} draw_pile_size "
        f"{view.draw_pile_size} out_of_play {view.out_of_play} discarded "
        f"{_cards(view.discarded)} moves {view.moves} piles_closed {count}"
    )
    lines = [head]
    for index in range(len(_SIZES)):
        # `_pile`, written out: eleven calls a request.
        shown, shut, cards = _SHOWN[index], closed[index], piles[index]
        if cards is not shown.cards or shut != shown.closed:
            shown.cards, shown.closed = cards, shut
            shown.line = f"{_PILE_HEADS[index]}{_flag(shut)} cards {_cards(cards)}"
        lines.append(shown.line)
    return lines


# Per card, its `legal place <pile> <card>` line for each pile, in the order of PILE_SIZES:
# a request lists up to 88 of them, and each is written once. At most one entry per card of
# the decks, so bounded as it is.
_PLACE_LINES: Final[dict[Card, tuple[str, ...]]] = {}


def _place_lines(card: Card) -> tuple[str, ...]:
    lines = _PLACE_LINES.get(card)
    if lines is None:
        lines = _PLACE_LINES[card] = tuple([f"legal place {size} {card.text}" for size in _SIZES])
    return lines


def _holds_line(lines: list[str], line: str) -> bool:
    return any(seen is line for seen in lines)


def _pile_legal(index: int, cards: tuple[Card, ...]) -> list[str]:
    """The `legal` lines of placing a card already on pile `index` again, each distinct card
    once, in order (kept by the pile's tuple until the pile changes)."""
    shown = _SHOWN[index]
    if cards is not shown.legal_cards:
        # A card's line is one object (`_PLACE_LINES`): a card seen twice is the same line.
        legal: list[str] = []
        for card in cards:
            line = _place_lines(card)[index]
            if not _holds_line(legal, line):
                legal.append(line)
        shown.legal_cards, shown.legal = cards, legal
    return shown.legal


def solitaire_legal(view: SolitaireView) -> list[str]:
    """`legal` lines of `view.legal_actions()`, a pile at a time: a move changes one pile, and
    a request lists up to 88 actions."""
    top = view.draw_top
    if view.to_move is None or top is None:
        return []
    drawn = _place_lines(top)
    piles, closed = view.piles, view.closed
    out: list[str] = []
    for index in range(len(_SIZES)):
        if not closed[index]:
            legal = _pile_legal(index, piles[index])
            out.extend(legal)
            # The drawn card is on the pile when its line is among the pile's (one object per
            # card and pile): a compiled loop over a list, where the pile is a Sequence.
            if not _holds_line(legal, drawn[index]):
                out.append(drawn[index])
    return out


# ----------------------------------------------------------------------------------------------


# The legal lines of the actions a view hands out as one object each, by that object: Phase 10's
# discards (one per card and victim, `phase10.view._discard`), Five Crowns' plain discards
# (`Discard.plain`) and both games' two draws; a discard decision lists one for each card held.
# (By identity: the object kept beside its line cannot die, so its id is not reused while it is
# here. Actions made new for each request, hits and lays, are written each time.)
_ACTION_LINES: Final[dict[int, tuple[object, str]]] = {}


def _kept_line(action: object) -> str:
    kept = _ACTION_LINES.get(id(action))
    if kept is None or kept[0] is not action:
        kept = _kept(_ACTION_LINES, id(action), (action, legal_line(str(action))))
    return kept[1]


def phase10_legal(view: Phase10View) -> list[str]:
    """`legal` lines of `view.legal_actions()`, from the request's own view (the game's list
    is that view's: `CardGameState.legal_actions` would build it again), draws' and discards'
    lines kept."""
    return [_kept_line(action) if type(action) is Discard or type(action) is Draw
            else legal_line(str(action)) for action in view.legal_actions()]


def fivecrowns_legal(view: FiveCrownsView) -> list[str]:
    """`legal` lines of `view.legal_actions()`, from the request's own view (the game's list
    calls the view's functions on a hand it sorts again), draws' and plain discards' lines
    kept."""
    return [_kept_line(action) if type(action) is Draw
            or (type(action) is FiveCrownsDiscard and not action.groups)
            else legal_line(str(action)) for action in view.legal_actions()]


# The views written straight from their fields (any other goes the generic way), dispatched by
# exact type in `request_lines`: a compiled call of each writer, typed, where a call through a
# dict of writers went by the interpreter and took any argument.
WRITTEN: Final = (Phase10View, FiveCrownsView, SolitaireView)


def request_lines(observation: Observation, hints: Callable[[], Iterable[str]] | None,
                  view: bool = True) -> list[str]:
    """The `view` and `item` lines of a seat's observation (any object with `to_json()`), then,
    with `hints` (the seat is to move), the `legal` lines of its request: the game's legal
    actions (`hints`), or the same written from the observation where a writer knows its view
    (the game lists its legal actions through that same view, so they are the game's). With
    `view` False, the `legal` lines alone."""
    kind = type(observation)
    if kind is Phase10View:
        phase10 = cast(Phase10View, observation)
        lines = phase10_lines(phase10) if view else []
        if hints is not None:
            lines += phase10_legal(phase10)
        return lines
    if kind is FiveCrownsView:
        fivecrowns = cast(FiveCrownsView, observation)
        lines = fivecrowns_lines(fivecrowns) if view else []
        if hints is not None:
            lines += fivecrowns_legal(fivecrowns)
        return lines
    if kind is SolitaireView:
        solitaire = cast(SolitaireView, observation)
        lines = solitaire_lines(solitaire) if view else []
        if hints is not None:
            lines += solitaire_legal(solitaire)
        return lines
    lines = view_lines(observation.to_json()) if view else []
    if hints is not None:
        lines += [legal_line(text) for text in hints()]
    return lines


def observation_lines(observation: Observation) -> list[str]:
    """The `view` and `item` lines of a seat's observation."""
    return request_lines(observation, None)


def legal_lines(observation: Observation, hints: Callable[[], Iterable[str]]) -> list[str]:
    """The `legal` lines of a request alone (`request_lines`)."""
    return request_lines(observation, hints, view=False)
