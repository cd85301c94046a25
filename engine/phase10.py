"""Phase 10 (digest section 1): rule options, actions, the hand-by-hand state machine, views.

A game is a series of hands. In each hand every seat tries to lay down its current phase (the
whole phase at once), then to get rid of its cards by hitting laid groups and discarding; the
first seat with no cards left goes out and ends the hand. Laying a phase earns the credit at once;
the game ends at the end of a hand in which a seat completed the last phase of the sequence.

Shuffles come from `cards.rng_for(seed, ...)`: the deal of hand h from ("deal", h), the k-th
reshuffle of hand h from ("reshuffle", h, k), the first dealer from ("dealer",). A snapshot thus
holds no generator state. Piles are lists whose *end* is the top.
"""

from __future__ import annotations

import dataclasses
import typing
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from .cards import SKIP, WILD, Card, CardError, Kind, phase10_deck, rng_for, shuffled
from .game import (
    JSON,
    Event,
    GameInfo,
    IllegalActionError,
    InvalidActionError,
    Outcome,
    RuleOptionError,
    Termination,
    check_choice,
    option_name,
    rules_from_json,
    rules_to_json,
)
from .melds import (
    PHASE10_MELDS,
    Declared,
    GroupKind,
    Meld,
    MeldError,
    MeldRules,
    Need,
    Placed,
    build_meld,
    extend,
    find_groups,
    format_meld,
    parse_group,
)

# ----------------------------------------------------------------------------------------------
# The game's facts

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 6
HAND_SIZE: Final = 10
SPAN: Final = 12  # numbers 1..12

_SET, _RUN, _COLOUR = GroupKind.SET, GroupKind.RUN, GroupKind.COLOUR

PHASES: Final[Mapping[int, tuple[Need, ...]]] = {
    1: (Need(_SET, 3), Need(_SET, 3)),
    2: (Need(_SET, 3), Need(_RUN, 4)),
    3: (Need(_SET, 4), Need(_RUN, 4)),
    4: (Need(_RUN, 7),),
    5: (Need(_RUN, 8),),
    6: (Need(_RUN, 9),),
    7: (Need(_SET, 4), Need(_SET, 4)),
    8: (Need(_COLOUR, 7),),
    9: (Need(_SET, 5), Need(_SET, 2)),
    10: (Need(_SET, 5), Need(_SET, 3)),
}

SEQUENCES: Final[Mapping[str, tuple[int, ...]]] = {
    "all": tuple(range(1, 11)),
    "even": (2, 4, 6, 8, 10),
    "odd": (1, 3, 5, 7, 9),
}


def describe_phase(phase: int) -> str:
    """The phase's requirement in words: "2 sets of 3", "1 set of 3 + 1 run of 4"..."""
    needs = PHASES[phase]
    if needs[0].kind is _COLOUR:
        return f"{needs[0].size} cards of one colour"
    if len(needs) == 1:
        return f"1 {needs[0].kind.value} of {needs[0].size}"
    if len(set(needs)) == 1:
        return f"{len(needs)} {needs[0].kind.value}s of {needs[0].size}"
    return " + ".join(f"1 {n.kind.value} of {n.size}" for n in needs)


def card_points(card: Card) -> int:
    """Penalty points of a card left in hand: 1..9 = 5, 10..12 = 10, Skip = 15, Wild = 25."""
    if card.kind is Kind.WILD:
        return 25
    if card.kind is Kind.SKIP:
        return 15
    return 5 if card.rank <= 9 else 10


# ----------------------------------------------------------------------------------------------
# Rule options


@dataclass(frozen=True, slots=True)
class Phase10Rules:
    """Every rule option of Phase 10 (digest 1.2-1.8); the defaults are the printed rules."""

    dealer: Literal["random", "seat0"] = "random"  # first dealer: seeded random, or seat 0
    first_skip: Literal["skip-first-player", "twist"] = "skip-first-player"  # turned-up Skip
    natural: Literal["phase", "group", "none"] = "phase"  # where a natural card is required
    run_wrap: bool = False  # 12 is followed by 1 in a run
    skip_victim: Literal["choose", "next"] = "choose"  # who a discarded Skip skips
    skip_repeat: Literal["once-per-orbit", "unlimited"] = "once-per-orbit"  # pending skips
    hit_on_lay_turn: Literal["any", "own"] = "any"  # groups one may hit in the lay-down turn
    going_out: Literal["any", "must-discard"] = "any"  # may the last card go by a hit
    tiebreak: Literal["first-out", "first-to-lay", "shared"] = "first-out"
    phases: Literal["all", "even", "odd"] = "all"  # which phases are played, in order
    phases_to_win: int | None = None  # the game ends when a seat completes this many
    any_order: bool = False  # phases in any order, each once
    fixed_hands: bool = False  # one hand per phase, everyone on phase k in hand k
    turn_cap: int = 300  # turns per hand before it ends with nobody out
    hand_cap: int | None = 100  # hands per game before it ends on the turn cap

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _check_option(f.name, getattr(self, f.name), _HINTS[f.name])
        length = len(SEQUENCES[self.phases])
        if self.phases_to_win is not None and not 1 <= self.phases_to_win <= length:
            raise RuleOptionError(
                f"rule option phases-to-win={self.phases_to_win}: 1..{length} "
                f"with phases={self.phases}"
            )
        if self.turn_cap < 1:
            raise RuleOptionError(f"rule option turn-cap={self.turn_cap}: at least 1")
        if self.hand_cap is not None and self.hand_cap < 1:
            raise RuleOptionError(f"rule option hand-cap={self.hand_cap}: at least 1, or none")
        if self.fixed_hands:
            self._check_fixed_hands(length)

    def _check_fixed_hands(self, length: int) -> None:
        if self.any_order:
            raise RuleOptionError(
                "rule options fixed-hands and any-order exclude each other: fixed-hands puts "
                "everyone on phase k in hand k"
            )
        if self.phases_to_win is not None:
            raise RuleOptionError(
                "rule options fixed-hands and phases-to-win exclude each other: fixed-hands "
                "always plays one hand per phase"
            )
        if self.hand_cap is not None and self.hand_cap < length:
            raise RuleOptionError(
                f"rule option hand-cap={self.hand_cap}: fixed-hands plays {length} hands"
            )

    @property
    def sequence(self) -> tuple[int, ...]:
        """The phases a seat may make, in order (any-order: in any order)."""
        return SEQUENCES[self.phases]

    @property
    def target(self) -> int:
        """How many phases a seat completes to end the game."""
        return self.phases_to_win or len(self.sequence)

    @property
    def final_phase(self) -> int:
        """The phase that takes the place of phase 10: end of game and tie-break hands."""
        return self.sequence[self.target - 1]

    @property
    def melds(self) -> MeldRules:
        return _WRAP_MELDS if self.run_wrap else PHASE10_MELDS


_HINTS: Final = typing.get_type_hints(Phase10Rules)
_WRAP_MELDS: Final = dataclasses.replace(PHASE10_MELDS, wrap=True)


def _check_option(name: str, value: object, hint: Any) -> None:
    args = typing.get_args(hint)
    if typing.get_origin(hint) is Literal:
        check_choice(name, value, args)
    elif hint is bool and not isinstance(value, bool):
        raise RuleOptionError(f"rule option {option_name(name)}={value!r}: yes or no")
    elif hint is not bool and not (
        (isinstance(value, int) and not isinstance(value, bool))
        or (value is None and type(None) in args)
    ):
        raise RuleOptionError(f"rule option {option_name(name)}={value!r}: a whole number")


# ----------------------------------------------------------------------------------------------
# Actions: small values whose str() is the protocol text


@dataclass(frozen=True, slots=True)
class Draw:
    """`draw pile` or `draw discard`."""

    source: Literal["pile", "discard"]

    def __str__(self) -> str:
        return f"draw {self.source}"


Group = tuple[GroupKind, tuple[Placed, ...]]


@dataclass(frozen=True, slots=True)
class LayDown:
    """`lay [phase=N] <group> <group>...`: the whole phase at once, extras in its own groups."""

    groups: tuple[Group, ...]
    phase: int | None = None

    def __str__(self) -> str:
        words = ["lay"] if self.phase is None else ["lay", f"phase={self.phase}"]
        return " ".join([*words, *(group_text(g) for g in self.groups)])

    @staticmethod
    def from_melds(melds: Iterable[Meld], phase: int | None, rules: MeldRules) -> LayDown:
        """The lay-down that puts `melds` on the table as they are (wilds declared)."""
        groups = tuple(
            (m.kind, tuple((c, v if rules.is_wild(c) else None)
                           for c, v in zip(m.cards, m.stands_for, strict=True)))
            for m in melds
        )
        return LayDown(groups, phase)


@dataclass(frozen=True, slots=True)
class Hit:
    """`hit <group-id> <card>[=decl]`: add one card to a laid group."""

    group_id: int
    card: Card
    declared: Declared = None

    def __str__(self) -> str:
        decl = "" if self.declared is None else f"={self.declared}"
        return f"hit {self.group_id} {self.card.text}{decl}"


@dataclass(frozen=True, slots=True)
class Discard:
    """`discard <card> [<victim-seat>]`: ends the turn; a Skip names the seat it skips."""

    card: Card
    victim: int | None = None

    def __str__(self) -> str:
        return f"discard {self.card.text}" + ("" if self.victim is None else f" {self.victim}")


Action = Draw | LayDown | Hit | Discard


def group_text(group: Group) -> str:
    """A group's token as written in a lay-down: ``run:R3,R4,W=5,G6``."""
    kind, placed = group
    return f"{kind.value}:" + ",".join(
        c.text if d is None else f"{c.text}={d}" for c, d in placed
    )


def parse_action(text: str) -> Action:
    """The action written as `text`; `InvalidActionError` if it is not a Phase 10 action."""
    words = text.split()
    if not words:
        raise InvalidActionError("empty action; one of: draw, lay, hit, discard")
    verb, args = words[0].lower(), words[1:]
    parser = _PARSERS.get(verb)
    if parser is None:
        raise InvalidActionError(f"unknown action {words[0]!r}; one of: draw, lay, hit, discard")
    try:
        return parser(args)
    except (CardError, MeldError) as exc:
        raise InvalidActionError(f"{text.strip()!r}: {exc}") from None


def _parse_draw(args: list[str]) -> Draw:
    if len(args) != 1 or args[0].lower() not in ("pile", "discard"):
        raise InvalidActionError("draw takes one word: draw pile | draw discard")
    return Draw(typing.cast(Literal["pile", "discard"], args[0].lower()))


def _parse_lay(args: list[str]) -> LayDown:
    phase = None
    if args and args[0].lower().startswith("phase="):
        value = args[0].partition("=")[2]
        if not value.isdigit():
            raise InvalidActionError(f"lay: {args[0]!r} should be phase=N with N a number")
        phase, args = int(value), args[1:]
    if not args:
        raise InvalidActionError("lay needs groups: lay [phase=N] set:R7,B7,W set:...")
    groups = []
    for token in args:
        kind, placed = parse_group(token, PHASE10_MELDS)
        if kind is GroupKind.BOOK:
            raise InvalidActionError(f"{token!r}: Phase 10 groups are set, run or colour")
        groups.append((kind, tuple(placed)))
    return LayDown(tuple(groups), phase)


def _parse_hit(args: list[str]) -> Hit:
    if len(args) != 2 or not args[0].isdigit():
        raise InvalidActionError("hit takes a group id and a card: hit 3 R7 (or hit 3 W=8)")
    text, _, decl = args[1].partition("=")
    declared: Declared = None
    if decl:
        declared = decl.upper() if decl.upper() in PHASE10_MELDS.suits else _number(decl)
    return Hit(int(args[0]), Card.parse(text), declared)


def _number(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= SPAN:
        raise InvalidActionError(f"{text!r} is neither a number 1..12 nor a colour R, B, Y, G")
    return int(text)


def _parse_discard(args: list[str]) -> Discard:
    if len(args) not in (1, 2) or (len(args) == 2 and not args[1].isdigit()):
        raise InvalidActionError("discard takes a card and, for a Skip, a seat: discard S 2")
    return Discard(Card.parse(args[0]), int(args[1]) if len(args) == 2 else None)


_PARSERS: Final[Mapping[str, Callable[[list[str]], Action]]] = {
    "draw": _parse_draw,
    "lay": _parse_lay,
    "hit": _parse_hit,
    "discard": _parse_discard,
}


# ----------------------------------------------------------------------------------------------
# Groups on the table


class TableGroup:
    """A laid group: its id (stable for the hand), its owner and the checked meld."""

    __slots__ = ("_accepts", "id", "meld", "owner")

    def __init__(self, group_id: int, owner: int, meld: Meld, wrap: bool) -> None:
        self.id = group_id
        self.owner = owner
        self.meld = meld
        # What a card must be to extend the group; precomputed because bots ask on every turn.
        self._accepts: Any
        if meld.kind is _RUN:
            self._accepts = _run_ends(meld, wrap)
        elif meld.kind is _COLOUR:
            self._accepts = meld.colour
        else:
            self._accepts = meld.rank

    def fits(self, card: Card) -> tuple[Declared, ...]:
        """The declarations under which `card` extends this group (as `melds.fits`, faster)."""
        kind = card.kind
        if kind is Kind.SKIP:
            return ()
        group = self.meld.kind
        if kind is Kind.WILD:
            return self._accepts if group is _RUN else (None,)
        if group is _RUN:
            return (None,) if card.rank in self._accepts else ()
        have = card.suit if group is _COLOUR else card.rank
        return (None,) if have == self._accepts else ()

    @property
    def token(self) -> str:
        return format_meld(self.meld)

    def to_json(self) -> dict[str, JSON]:
        return {"id": self.id, "owner": self.owner, "group": format_meld(self.meld)}


def _run_ends(meld: Meld, wrap: bool) -> tuple[int, ...]:
    """The values that extend a run: above its top first, then below its bottom."""
    if len(meld.cards) >= SPAN:
        return ()
    lo, hi = meld.low, meld.high
    if wrap:
        return tuple(dict.fromkeys((hi % SPAN + 1, (lo - 2) % SPAN + 1)))
    return tuple(v for v in (hi + 1, lo - 1) if 1 <= v <= SPAN)


# ----------------------------------------------------------------------------------------------
# How far a hand is from a phase (bots' heuristic and a cheap test before the finder)

_WINDOWS: Final = {
    (size, wrap): tuple(
        sum(1 << ((start - 1 + k) % SPAN + 1) for k in range(size))
        for start in range(1, (SPAN if wrap else SPAN - size + 1) + 1)
    )
    for size in range(1, SPAN + 1)
    for wrap in (False, True)
}


def missing_cards(hand: Iterable[Card], needs: Sequence[Need], wrap: bool = False) -> int:
    """How many cards (wilds) the natural cards of `hand` lack to make `needs` (Phase 10 needs).

    Exact for every Phase 10 phase when wilds are free to take any value: a phase can be laid
    only if this is at most the number of wilds held (the natural-card rule aside).
    """
    ranks = [0] * (SPAN + 1)
    colours: Counter[str] = Counter()
    for card in hand:
        if card.kind is Kind.NUMBER:
            ranks[card.rank] += 1
            colours[card.suit] += 1
    runs = [n.size for n in needs if n.kind is _RUN]
    sets = sorted((n.size for n in needs if n.kind is not _RUN and n.kind is not _COLOUR),
                  reverse=True)
    colour = [n.size for n in needs if n.kind is _COLOUR]
    if colour:
        return max(0, colour[0] - max(colours.values(), default=0))
    if not runs:
        return _missing_sets(sets, sorted(ranks, reverse=True))
    mask = sum(1 << r for r in range(1, SPAN + 1) if ranks[r])
    windows = _WINDOWS.get((runs[0], wrap), ())
    if not windows:
        return runs[0] + sum(sets)
    if not sets:
        return runs[0] - max((mask & w).bit_count() for w in windows)
    return min(_missing_set_and_run(sets[0], runs[0], ranks, mask, w) for w in windows)


def _missing_sets(sets: list[int], counts: list[int]) -> int:
    apart = sum(max(0, size - count) for size, count in zip(sets, counts, strict=False))
    apart += sum(sets[len(counts):])
    together = max(0, sum(sets) - counts[0]) if len(sets) == 2 else apart
    return min(apart, together)


def _missing_set_and_run(size: int, length: int, ranks: list[int], mask: int, window: int) -> int:
    best = 0
    for r in range(1, SPAN + 1):
        left = ranks[r] - ((window >> r) & 1 if ranks[r] else 0)
        best = max(best, left)
    return length - (mask & window).bit_count() + max(0, size - best)


def skip_victims(
    rules: Phase10Rules, seat: int, playing: Sequence[bool], skips: Sequence[int]
) -> tuple[int, ...]:
    """The seats a Skip discarded by `seat` may skip, in seat order from its left."""
    n = len(playing)
    order = [s for s in ((seat + k) % n for k in range(1, n)) if playing[s]]
    if rules.skip_victim == "next":
        order = order[:1]
    if rules.skip_repeat == "once-per-orbit":
        return tuple(s for s in order if not skips[s])
    return tuple(order)


# ----------------------------------------------------------------------------------------------
# What a seat sees


class Phase10View:
    """What one seat may know now, and the legal actions it implies (for in-process bots).

    Holds immutable values only (tuples, interned cards, checked melds), so building it costs a
    few tuple copies and a bot may keep it.
    """

    __slots__ = (
        "completed", "dealer", "decision", "discard_top", "draw_pile_size", "hand",
        "hand_number", "hand_sizes", "laid", "laid_this_turn", "phases", "players", "playing",
        "rules", "scores", "seat", "skips", "table", "tiebreak", "to_move", "turn",
    )

    def __init__(self, **values: Any) -> None:
        for name, value in values.items():
            setattr(self, name, value)

    seat: int
    rules: Phase10Rules
    players: int
    hand_number: int
    dealer: int
    to_move: int | None
    decision: str
    turn: int
    tiebreak: bool
    hand: tuple[Card, ...]
    discard_top: Card | None
    draw_pile_size: int
    table: tuple[TableGroup, ...]
    laid_this_turn: bool
    playing: tuple[bool, ...]  # per seat: plays this hand (tie-break hands seat only the tied)
    phases: tuple[int | None, ...]  # per seat: the phase made this hand (any-order: once laid)
    laid: tuple[int | None, ...]  # per seat: the phase laid this hand, or None
    scores: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    skips: tuple[int, ...]  # per seat: Skips pending against it
    completed: tuple[tuple[int, ...], ...]  # per seat: phases completed, in order

    # -- derived facts -------------------------------------------------------------------------

    @property
    def my_turn(self) -> bool:
        return self.to_move == self.seat

    @property
    def phase(self) -> int | None:
        """This seat's phase this hand (any-order: None until it lays one)."""
        return self.phases[self.seat]

    @property
    def has_laid(self) -> bool:
        return self.laid[self.seat] is not None

    @property
    def phases_left(self) -> tuple[int, ...]:
        """The phases this seat may lay now (one, or in any-order every one not yet made)."""
        if self.has_laid:
            return ()
        if self.tiebreak or not self.rules.any_order:
            return (self.phases[self.seat],)  # type: ignore[return-value]
        done = set(self.completed[self.seat])
        return tuple(p for p in self.rules.sequence if p not in done)

    @property
    def victims(self) -> tuple[int, ...]:
        """The seats a Skip discarded now may skip."""
        return skip_victims(self.rules, self.seat, self.playing, self.skips)

    # -- legal actions, as the state will judge them -------------------------------------------

    def draw_options(self) -> list[Draw]:
        out = [Draw("pile")] if self.draw_pile_size else []
        if self.discard_top is not None and self.discard_top is not SKIP:
            out.append(Draw("discard"))
        return out

    def discard_options(self) -> list[Discard]:
        out = []
        victims = self.victims
        for card in dict.fromkeys(self.hand):
            if card is SKIP and victims:
                out.extend(Discard(card, v) for v in victims)
            else:
                out.append(Discard(card))
        return out

    def hittable_groups(self) -> tuple[TableGroup, ...]:
        """The groups this seat may hit now (none before its phase is down)."""
        if not self.has_laid:
            return ()
        if self.laid_this_turn and self.rules.hit_on_lay_turn == "own":
            return tuple(g for g in self.table if g.owner == self.seat)
        return self.table

    def hit_options(self) -> list[Hit]:
        if self.rules.going_out == "must-discard" and len(self.hand) <= 1:
            return []
        groups = self.hittable_groups()
        return [
            Hit(g.id, card, d)
            for card in dict.fromkeys(self.hand)
            for g in groups
            for d in g.fits(card)
        ]

    def find_lay(self, phase: int) -> LayDown | None:
        """The finder's way to lay `phase` from this hand (fewest wilds), or None."""
        needs = PHASES[phase]
        wilds = sum(1 for c in self.hand if c is WILD)
        if missing_cards(self.hand, needs, self.rules.run_wrap) > wilds:
            return None  # the finder is much dearer than this count
        melds = find_groups(self.hand, needs, self.rules.melds, self.rules.natural)
        if melds is None:
            return None
        return LayDown.from_melds(melds, phase, self.rules.melds)

    def lay_options(self) -> list[LayDown]:
        if self.decision != "play" or not self.my_turn:
            return []
        found = (self.find_lay(p) for p in self.phases_left)
        return [lay for lay in found if lay is not None]

    def legal_actions(self) -> list[Action]:
        """Every draw, discard and single-card hit, and one lay-down per phase the finder finds."""
        if not self.my_turn:
            return []
        if self.decision == "draw":
            return list(self.draw_options())
        return [*self.lay_options(), *self.hit_options(), *self.discard_options()]

    # -- protocol form -------------------------------------------------------------------------

    def to_json(self) -> dict[str, JSON]:
        seat = self.seat
        seats = [
            {
                "seat": s,
                "playing": self.playing[s],
                "phase": self.phases[s],
                "laid": self.laid[s] is not None,
                "score": self.scores[s],
                "hand_size": self.hand_sizes[s],
                "skip_pending": self.skips[s],
                "completed": " ".join(map(str, self.completed[s])),
            }
            for s in range(self.players)
        ]
        phase = self.phases[seat]
        return {
            "seat": seat,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "to_move": self.to_move,
            "decision": self.decision,
            "turn": self.turn,
            "turn_cap": self.rules.turn_cap,
            "tiebreak": self.tiebreak,
            "phase": phase,
            "needs": describe_phase(phase) if phase is not None else None,
            "phases_left": list(self.phases_left),
            "laid": self.laid[seat],
            "laid_this_turn": self.laid_this_turn,
            "hand": [c.text for c in self.hand],
            "discard_top": None if self.discard_top is None else self.discard_top.text,
            "draw_pile_size": self.draw_pile_size,
            "table": [g.to_json() for g in self.table],
            "seats": seats,
            "victims": list(self.victims),
        }


# ----------------------------------------------------------------------------------------------
# The state


class Phase10State:
    """A Phase 10 game in progress (implements `engine.game.GameState`)."""

    rules: Phase10Rules
    players: int
    seed: int | str

    def __init__(self, rules: Phase10Rules, players: int, seed: int | str) -> None:
        GAME.check_players(players)
        self._setup(rules, players, seed)
        self.dealer = (
            0 if rules.dealer == "seat0" else rng_for(seed, "dealer").randrange(players)
        )
        self._opening = self._deal(tuple(range(players)))

    def _setup(self, rules: Phase10Rules, players: int, seed: int | str) -> None:
        self.rules, self.players, self.seed = rules, players, seed
        self._melds = rules.melds
        self.scores = [0] * players
        self.completed: list[tuple[int, ...]] = [()] * players
        self.hand_number = 0
        self.dealer = 0
        self.history: list[dict[str, JSON]] = []  # one entry per finished hand
        self.tied: tuple[int, ...] | None = None  # seats of the tie-break hands
        self._outcome: Outcome | None = None
        self._opening: list[Event] = []
        self._checked: tuple[LayDown, list[Meld], int] | None = None

    # -- GameState: questions ------------------------------------------------------------------

    @property
    def to_move(self) -> int | None:
        return None if self._outcome is not None else self._to_move

    @property
    def decision(self) -> str:
        return "over" if self._outcome is not None else self._decision

    @property
    def outcome(self) -> Outcome | None:
        return self._outcome

    def opening_events(self) -> list[Event]:
        """The events of the first deal (later deals come from the `apply` that ends a hand)."""
        return list(self._opening)

    def parse_action(self, text: str) -> Action:
        return parse_action(text)

    def observation(self, seat: int) -> Phase10View:
        return Phase10View(
            seat=seat,
            rules=self.rules,
            players=self.players,
            hand_number=self.hand_number,
            dealer=self.dealer,
            to_move=self.to_move,
            decision=self.decision,
            turn=self.turns,
            tiebreak=self.tied is not None,
            hand=tuple(self.hands[seat]),
            discard_top=self.discard_pile[-1] if self.discard_pile else None,
            draw_pile_size=len(self.draw_pile),
            table=self.table,
            laid_this_turn=self.laid_this_turn and self._to_move == seat,
            playing=self.playing,
            phases=tuple(self.phase_now),
            laid=tuple(self.laid),
            scores=tuple(self.scores),
            hand_sizes=tuple(map(len, self.hands)),
            skips=tuple(self.skips),
            completed=tuple(self.completed),
        )

    def legal_actions(self) -> list[Action]:
        if self._outcome is not None:
            return []
        return self.observation(self._to_move).legal_actions()

    def autoplay_action(self) -> Action:
        """Draw from the pile (else the discard); discard the dearest card, Skips last."""
        if self._decision == "draw":
            return Draw("pile") if self.draw_pile else Draw("discard")
        hand = self.hands[self._to_move]
        plain = [c for c in hand if c is not SKIP]
        if plain:
            return Discard(max(plain, key=card_points))
        victims = skip_victims(self.rules, self._to_move, self.playing, self.skips)
        return Discard(SKIP, victims[0] if victims else None)

    def why_illegal(self, action: Any) -> str | None:
        if self._outcome is not None:
            return "the game is over"
        check = _WHY.get(type(action))
        if check is None:
            return f"not a Phase 10 action: {action!r}"
        return check(self, action)

    def _why_draw(self, action: Draw) -> str | None:
        if self._decision != "draw":
            return "you have drawn already: lay, hit or discard"
        if action.source == "pile":
            return None if self.draw_pile else "the draw pile is empty: draw discard"
        if not self.discard_pile:
            return "the discard pile is empty"
        top = self.discard_pile[-1]
        return f"{top.text} cannot be drawn from the discard pile" if top is SKIP else None

    def _why_discard(self, action: Discard) -> str | None:
        if self._decision != "play":
            return "draw first: draw pile or draw discard"
        seat = self._to_move
        if action.card not in self.hands[seat]:
            return f"you do not hold {action.card.text}"
        if action.card is not SKIP:
            return None if action.victim is None else "only a Skip names a victim"
        victims = skip_victims(self.rules, seat, self.playing, self.skips)
        if action.victim is None:
            if len(victims) > 1:
                return f"say whom the Skip skips: discard S <seat>, one of {_seats(victims)}"
            return None
        if action.victim in victims:
            return None
        return self._why_not_victim(seat, action.victim, victims)

    def _why_not_victim(self, seat: int, victim: int, victims: tuple[int, ...]) -> str:
        allowed = f"; victims now: {_seats(victims)}" if victims else "; nobody can be skipped now"
        if victim == seat:
            return "you cannot skip yourself" + allowed
        if not 0 <= victim < self.players or not self.playing[victim]:
            return f"seat {victim} is not playing this hand" + allowed
        if self.rules.skip_victim == "next" and victim != self._next[seat]:
            return f"skip-victim=next: the Skip skips the next seat, {self._next[seat]}"
        return f"seat {victim} already has a Skip pending (once per orbit)" + allowed

    def _why_hit(self, action: Hit) -> str | None:
        if self._decision != "play":
            return "draw first: draw pile or draw discard"
        seat = self._to_move
        hand = self.hands[seat]
        if self.laid[seat] is None:
            return "you have not laid your phase yet: hits come after your own phase is down"
        if not 1 <= action.group_id <= len(self.table):
            ids = ", ".join(str(g.id) for g in self.table)
            return f"no group {action.group_id} on the table; groups: {ids}"
        group = self.table[action.group_id - 1]
        if self.laid_this_turn and self.rules.hit_on_lay_turn == "own" and group.owner != seat:
            return ("hit-on-lay-turn=own: in the turn you lay your phase you may hit only your "
                    "own groups")
        if action.card not in hand:
            return f"you do not hold {action.card.text}"
        if action.declared is not None and action.card is not WILD:
            return f"{action.card.text} is not wild: write it without ={action.declared}"
        if len(hand) == 1 and self.rules.going_out == "must-discard":
            return "going-out=must-discard: keep your last card to discard"
        try:
            extend(group.meld, action.card, action.declared, self._melds)
        except MeldError as exc:
            return str(exc)
        return None

    def _why_lay(self, action: LayDown) -> str | None:
        return self._check_lay(action)[0]

    def _check_lay(self, action: LayDown) -> tuple[str | None, list[Meld], int]:
        if self._checked is not None and self._checked[0] is action:
            return None, self._checked[1], self._checked[2]
        if self._decision != "play":
            return "draw first: draw pile or draw discard", [], 0
        seat = self._to_move
        if self.laid[seat] is not None:
            return f"you have laid phase {self.laid[seat]} already this hand", [], 0
        phase, reason = self._lay_phase(seat, action.phase)
        if reason is None:
            reason = _held(self.hands[seat], [c for _, placed in action.groups for c, _ in placed])
        melds: list[Meld] = []
        if reason is None:
            melds, reason = self._build_groups(action.groups)
        if reason is None:
            reason = _matches_phase(phase, melds) or self._natural_error(melds)
        if (reason is None and self.rules.going_out == "must-discard"
                and sum(map(len, melds)) == len(self.hands[seat])):
            reason = "going-out=must-discard: keep a card to discard"
        if reason is None:
            self._checked = (action, melds, phase)
        return reason, melds, phase

    def _lay_phase(self, seat: int, asked: int | None) -> tuple[int, str | None]:
        if self.tied is not None or not self.rules.any_order:
            phase = self.phase_now[seat]
            assert phase is not None
            if asked is not None and asked != phase:
                return phase, f"you are on phase {phase} this hand, not phase {asked}"
            return phase, None
        left = [p for p in self.rules.sequence if p not in self.completed[seat]]
        if asked is None:
            return 0, f"any-order: say which phase you lay, e.g. lay phase={left[0]} ..."
        if asked not in left:
            return 0, f"phase {asked} is not one you may lay; phases left: {_seats(left)}"
        return asked, None

    def _build_groups(self, groups: Sequence[Group]) -> tuple[list[Meld], str | None]:
        melds = []
        for kind, placed in groups:
            for card, decl in placed:
                if decl is not None and card is not WILD:
                    own = card.suit if kind is _COLOUR else card.rank
                    if decl != own:
                        return [], f"{card.text} is not wild and cannot stand for {decl}"
            try:
                melds.append(build_meld(kind, placed, self._melds))
            except MeldError as exc:
                return [], str(exc)
        return melds, None

    def _natural_error(self, melds: list[Meld]) -> str | None:
        rule = self.rules.natural
        if rule == "phase" and not any(m.naturals(self._melds) for m in melds):
            return "natural=phase: a phase needs at least one natural (non-Wild) card"
        if rule == "group":
            for m in melds:
                if not m.naturals(self._melds):
                    return f"natural=group: {format_meld(m)} needs a natural (non-Wild) card"
        return None

    # -- GameState: playing --------------------------------------------------------------------

    def apply(self, action: Any) -> list[Event]:
        reason = self.why_illegal(action)
        if reason is not None:
            raise IllegalActionError(reason)
        events = _DO[type(action)](self, action)
        self._checked = None
        return events

    def _draw(self, action: Draw) -> list[Event]:
        seat = self._to_move
        if action.source == "pile":
            card = self.draw_pile.pop()
            event = Event("draw", seat, {"source": "pile"}, {"card": card.text})
        else:
            card = self.discard_pile.pop()
            event = Event("draw", seat, {"source": "discard", "card": card.text})
        self.hands[seat].append(card)
        self._decision = "play"
        return [event]

    def _lay(self, action: LayDown) -> list[Event]:
        _, melds, phase = self._check_lay(action)
        seat = self._to_move
        hand = self.hands[seat]
        ids = []
        for meld in melds:
            for card in meld.cards:
                hand.remove(card)
            ids.append(len(self.table) + 1)
            self.table = (*self.table, TableGroup(ids[-1], seat, meld, self.rules.run_wrap))
        self.laid[seat] = phase
        self.phase_now[seat] = phase
        self.laid_this_turn = True
        events = [Event("lay_down", seat, {
            "phase": phase, "groups": [format_meld(m) for m in melds], "group_ids": ids,
        })]
        if self.tied is None:
            self.completed[seat] = (*self.completed[seat], phase)
        elif self.rules.tiebreak == "first-to-lay":
            self._end_hand(None, "tiebreak-lay", events)
            self._finish((seat,), "tiebreak-first-to-lay", Termination.NORMAL, events)
            return events
        if not hand:
            self._end_hand(seat, "out", events)
        return events

    def _hit(self, action: Hit) -> list[Event]:
        seat = self._to_move
        index = action.group_id - 1
        old = self.table[index]
        meld = extend(old.meld, action.card, action.declared, self._melds)
        group = TableGroup(old.id, old.owner, meld, self.rules.run_wrap)
        self.table = (*self.table[:index], group, *self.table[index + 1:])
        self.hands[seat].remove(action.card)
        events = [Event("hit", seat, {
            "group_id": old.id, "card": action.card.text, "group": format_meld(meld),
        })]
        if not self.hands[seat]:
            self._end_hand(seat, "out", events)
        return events

    def _discard(self, action: Discard) -> list[Event]:
        seat = self._to_move
        hand = self.hands[seat]
        hand.remove(action.card)
        self.discard_pile.append(action.card)
        self.laid_this_turn = False
        events = [Event("discard", seat, {"card": action.card.text})]
        if not hand:
            self._end_hand(seat, "out", events)
            return events
        victim = action.victim
        if action.card is SKIP and victim is None:
            victims = skip_victims(self.rules, seat, self.playing, self.skips)
            victim = victims[0] if victims else None
        if action.card is SKIP and victim is not None:
            self.skips[victim] += 1
            events.append(Event("skip", seat, {"victim": victim}))
        self._start_turn(self._next[seat], events)
        return events

    # -- the flow of a hand --------------------------------------------------------------------

    def _deal(self, seats: tuple[int, ...]) -> list[Event]:
        """Start the next hand among `seats` (all, or the tied seats of a tie-break hand)."""
        self.hand_number += 1
        n = self.players
        self.playing = tuple(s in seats for s in range(n))
        self._next = [0] * n
        for i, s in enumerate(seats):
            self._next[s] = seats[(i + 1) % len(seats)]
        order = [(self.dealer + k) % n for k in range(1, n + 1)]
        order = [s for s in order if self.playing[s]]
        deck = shuffled(phase10_deck(), rng_for(self.seed, "deal", self.hand_number))
        self.hands = [[] for _ in range(n)]
        for _ in range(HAND_SIZE):
            for s in order:
                self.hands[s].append(deck.pop())
        self.draw_pile = deck
        self.discard_pile = [deck.pop()]
        self.table: tuple[TableGroup, ...] = ()
        self.phase_now = [self._phase_for(s) if self.playing[s] else None for s in range(n)]
        self.laid: list[int | None] = [None] * n
        self.skips = [0] * n
        self.turns = 0
        self.reshuffles = 0
        self.laid_this_turn = False
        events = [
            Event("deal", s, {"hand_number": self.hand_number, "dealer": self.dealer,
                              "phase": self.phase_now[s], "hand_size": HAND_SIZE},
                  {"hand": [c.text for c in self.hands[s]]})
            for s in order
        ]
        events.append(Event("turn_up", None, {"card": self.discard_pile[-1].text}))
        while self.discard_pile[-1] is SKIP and self.rules.first_skip == "twist":
            self.discard_pile.append(deck.pop())
            events.append(Event("turn_up", None, {"card": self.discard_pile[-1].text}))
        if self.discard_pile[-1] is SKIP:
            self.skips[order[0]] += 1
        self._start_turn(order[0], events)
        return events

    def _phase_for(self, seat: int) -> int | None:
        if self.tied is not None:
            return self.rules.final_phase
        if self.rules.fixed_hands:
            return self.rules.sequence[self.hand_number - 1]
        if self.rules.any_order:
            return None
        return self.rules.sequence[len(self.completed[seat])]

    def _start_turn(self, seat: int, events: list[Event]) -> None:
        while self.skips[seat]:
            self.skips[seat] -= 1
            events.append(Event("skipped", seat))
            seat = self._next[seat]
        if self.turns >= self.rules.turn_cap:
            self._end_hand(None, "turn-cap", events)
            return
        if not self.draw_pile and len(self.discard_pile) > 1:
            self._reshuffle(events)
        if not self.draw_pile and (not self.discard_pile or self.discard_pile[-1] is SKIP):
            self._end_hand(None, "no-cards", events)
            return
        self.turns += 1
        self._to_move = seat
        self._decision = "draw"

    def _reshuffle(self, events: list[Event]) -> None:
        self.reshuffles += 1
        top = self.discard_pile.pop()
        rng = rng_for(self.seed, "reshuffle", self.hand_number, self.reshuffles)
        self.draw_pile = shuffled(self.discard_pile, rng)
        self.discard_pile = [top]
        events.append(Event("reshuffle", None, {"draw_pile_size": len(self.draw_pile)}))

    def _end_hand(self, went_out: int | None, ended: str, events: list[Event]) -> None:
        seats = [s for s in range(self.players) if self.playing[s]]
        points = [0 if s == went_out else sum(map(card_points, self.hands[s])) for s in seats]
        if self.tied is None:  # tie-break hands decide the tie only; they score nothing
            for s, p in zip(seats, points, strict=True):
                self.scores[s] += p
        self.history.append({"hand": self.hand_number, "ended": ended, "went_out": went_out,
                             "tiebreak": self.tied is not None})
        self._to_move, self._decision = 0, "over"
        events.append(Event("hand_end", None, {
            "hand_number": self.hand_number,
            "tiebreak": self.tied is not None,
            "ended": ended,
            "went_out": went_out,
            "hands": [" ".join(c.text for c in h) for h in self.hands],
            "points": [points[seats.index(s)] if s in seats else 0 for s in range(self.players)],
            "totals": list(self.scores),
            "laid": list(self.laid),
            "completed": [" ".join(map(str, c)) for c in self.completed],
        }))
        if ended != "tiebreak-lay":
            self._after_hand(went_out, events)

    def _after_hand(self, went_out: int | None, events: list[Event]) -> None:
        if self.tied is not None:
            if went_out is not None:
                self._finish((went_out,), "tiebreak-first-out", Termination.NORMAL, events)
                return
            contenders: tuple[int, ...] | None = self.tied
        elif self.rules.fixed_hands:
            over = self.hand_number == len(self.rules.sequence)
            contenders = tuple(range(self.players)) if over else None
        else:
            done = [s for s in range(self.players) if len(self.completed[s]) >= self.rules.target]
            contenders = tuple(done) or None
        if contenders is not None and self.tied is None:
            best = min(self.scores[s] for s in contenders)
            tied = tuple(s for s in contenders if self.scores[s] == best)
            if len(tied) == 1 or self.rules.tiebreak == "shared":
                by = "phase" if len(contenders) == 1 else "score"
                self._finish(tied, by if len(tied) == 1 else "shared", Termination.NORMAL, events)
                return
            self.tied = tied
        if self.rules.hand_cap is not None and self.hand_number >= self.rules.hand_cap:
            self._finish(self.tied or self._leaders(), "hand-cap", Termination.TURN_CAP, events)
            return
        self.dealer = (self.dealer + 1) % self.players
        events.extend(self._deal(self.tied or tuple(range(self.players))))

    def _leaders(self) -> tuple[int, ...]:
        keys = [self._rank_key(s) for s in range(self.players)]
        return tuple(s for s in range(self.players) if keys[s] == min(keys))

    def _rank_key(self, seat: int) -> tuple[int, int]:
        if self.rules.fixed_hands:
            return (0, self.scores[seat])
        return (-len(self.completed[seat]), self.scores[seat])

    def _finish(
        self, winners: tuple[int, ...], decided_by: str, termination: Termination,
        events: list[Event],
    ) -> None:
        places = []
        for s in range(self.players):
            if s in winners:
                places.append(1)
            else:
                key = self._rank_key(s)
                ahead = sum(1 for t in range(self.players) if t not in winners
                            and self._rank_key(t) < key)
                places.append(len(winners) + ahead + 1)
        endings = [str(h["ended"]) for h in self.history]
        self._outcome = Outcome(termination, tuple(places), tuple(self.scores), {
            "decided_by": decided_by,
            "hands": self.hand_number,
            "hand_endings": endings,
            "hands_without_winner": sum(1 for e in endings if e in ("turn-cap", "no-cards")),
            "tiebreak_hands": sum(1 for h in self.history if h["tiebreak"]),
            "phases_completed": [len(c) for c in self.completed],
        })
        events.append(Event("game_over", None, self._outcome.to_json()))

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, JSON]:
        out = self._outcome
        return {
            "game": "phase10",
            "rules": rules_to_json(self.rules),
            "players": self.players,
            "seed": self.seed,
            "scores": list(self.scores),
            "completed": [list(c) for c in self.completed],
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "history": [dict(h) for h in self.history],
            "tied": None if self.tied is None else list(self.tied),
            "outcome": None if out is None else {
                "termination": out.termination.value, "places": list(out.places),
                "scores": list(out.scores), "detail": dict(out.detail),
            },
            "playing": [s for s in range(self.players) if self.playing[s]],
            "hands": [_tokens(h) for h in self.hands],
            "draw_pile": _tokens(self.draw_pile),
            "discard_pile": _tokens(self.discard_pile),
            "table": [g.to_json() for g in self.table],
            "phase_now": list(self.phase_now),
            "laid": list(self.laid),
            "skips": list(self.skips),
            "turns": self.turns,
            "reshuffles": self.reshuffles,
            "to_move": self._to_move,
            "decision": self._decision,
            "laid_this_turn": self.laid_this_turn,
        }

    @classmethod
    def from_snapshot(cls, data: Mapping[str, JSON]) -> Phase10State:
        """The state `snapshot()` wrote; `ValueError` if `data` is not a Phase 10 snapshot."""
        if data.get("game") != "phase10":
            raise ValueError(f"not a Phase 10 snapshot (game={data.get('game')!r})")
        try:
            return cls._restore(data)
        except (KeyError, TypeError, IndexError, CardError, MeldError) as exc:
            raise ValueError(f"broken Phase 10 snapshot: {exc!r}") from None

    @classmethod
    def _restore(cls, data: Mapping[str, JSON]) -> Phase10State:
        state = cls.__new__(cls)
        rules = rules_from_json(Phase10Rules, data["rules"])
        n = int(data["players"])
        state._setup(rules, n, data["seed"])
        state.scores = list(data["scores"])
        state.completed = [tuple(c) for c in data["completed"]]
        state.hand_number, state.dealer = data["hand_number"], data["dealer"]
        state.history = [dict(h) for h in data["history"]]
        state.tied = None if data["tied"] is None else tuple(data["tied"])
        if data["outcome"] is not None:
            o = data["outcome"]
            state._outcome = Outcome(Termination(o["termination"]), tuple(o["places"]),
                                     tuple(o["scores"]), dict(o["detail"]))
        seats = tuple(data["playing"])
        state.playing = tuple(s in seats for s in range(n))
        state._next = [0] * n
        for i, s in enumerate(seats):
            state._next[s] = seats[(i + 1) % len(seats)]
        state.hands = [_cards(h) for h in data["hands"]]
        state.draw_pile = _cards(data["draw_pile"])
        state.discard_pile = _cards(data["discard_pile"])
        state.table = tuple(
            TableGroup(g["id"], g["owner"], _table_meld(g["group"], rules.melds), rules.run_wrap)
            for g in data["table"]
        )
        state.phase_now, state.laid = list(data["phase_now"]), list(data["laid"])
        state.skips, state.turns = list(data["skips"]), data["turns"]
        state.reshuffles = data["reshuffles"]
        state._to_move, state._decision = data["to_move"], data["decision"]
        state.laid_this_turn = data["laid_this_turn"]
        return state

    def public_view(self) -> dict[str, JSON]:
        """The referee's whole view (every hand and the pile order): the snapshot itself."""
        return self.snapshot()


_WHY: Final[Mapping[type, Callable[[Phase10State, Any], str | None]]] = {
    Draw: Phase10State._why_draw,
    LayDown: Phase10State._why_lay,
    Hit: Phase10State._why_hit,
    Discard: Phase10State._why_discard,
}
_DO: Final[Mapping[type, Callable[[Phase10State, Any], list[Event]]]] = {
    Draw: Phase10State._draw,
    LayDown: Phase10State._lay,
    Hit: Phase10State._hit,
    Discard: Phase10State._discard,
}


def _matches_phase(phase: int, melds: list[Meld]) -> str | None:
    """Why `melds` are not exactly the groups of `phase` (each at least its size), or None."""
    needs = PHASES[phase]
    want = f"phase {phase} needs {describe_phase(phase)}"
    if len(melds) != len(needs):
        return (f"{want}, not {len(melds)} group{'s' if len(melds) != 1 else ''} (extra cards "
                "may only extend the phase's own groups)")
    got = sorted(m.kind.value for m in melds)
    if got != sorted(n.kind.value for n in needs):
        return f"{want}, not {' + '.join(got)}"
    # Same kinds: the largest group goes to the largest need of its kind.
    pairs = zip(sorted(melds, key=lambda m: (m.kind.value, -len(m))),
                sorted(needs, key=lambda n: (n.kind.value, -n.size)), strict=True)
    for meld, need in pairs:
        if len(meld) < need.size:
            return f"{want}: {format_meld(meld)} has {len(meld)} cards, not {need.size}"
    return None


def _table_meld(token: str, rules: MeldRules) -> Meld:
    """A laid group from its table token, exactly as it was (checked by the meld core).

    `parse_meld` re-anchors a full wrapped run (all 12 numbers) at 1; the token's own order,
    in which every wild is declared, is the group as laid and extended.
    """
    kind, placed = parse_group(token, rules)
    meld = build_meld(kind, placed, rules)
    if kind is not _RUN:
        return meld
    values = tuple(int(d) if d is not None else c.rank for c, d in placed)
    return Meld(kind, tuple(c for c, _ in placed), values)


def _held(hand: list[Card], used: list[Card]) -> str | None:
    have = Counter(hand)
    for card, count in Counter(used).items():
        if have[card] < count:
            held = f"only {have[card]}" if have[card] else "no"
            return f"you hold {held} {card.text}, the lay uses {count}"
    return None


def _seats(seats: Iterable[int]) -> str:
    return ", ".join(map(str, seats))


def _tokens(cards: Iterable[Card]) -> list[str]:
    return [c.text for c in cards]


def _cards(tokens: Iterable[str]) -> list[Card]:
    return [Card.parse(t) for t in tokens]


def new_game(rules: Phase10Rules, players: int, seed: int | str) -> Phase10State:
    """A new game: the first hand is dealt and the first player is to draw."""
    return Phase10State(rules, players, seed)


def _bots() -> Mapping[str, Callable[[int], Any]]:
    from .phase10_bots import BOTS  # the bots import this module

    return BOTS


class _LazyBots(Mapping[str, Callable[[int], Any]]):
    def __getitem__(self, key: str) -> Callable[[int], Any]:
        return _bots()[key]

    def __iter__(self) -> Any:
        return iter(_bots())

    def __len__(self) -> int:
        return len(_bots())


GAME: Final = GameInfo(
    name="phase10",
    title="Phase 10",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    rules_type=Phase10Rules,
    new_game=new_game,
    from_snapshot=Phase10State.from_snapshot,
    bots=_LazyBots(),
    decisions=("draw", "play"),
)
