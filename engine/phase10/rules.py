"""Phase 10's facts and rule options (digest 1.1-1.8): the phases, card points, `Phase10Rules`."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ..cards import COLOURS, Card, Kind
from ..game import RuleOptionError, check_fields
from ..meld_search import Need
from ..melds import GroupKind, Meld, MeldRules, format_meld

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 6
HAND_SIZE: Final = 10
SPAN: Final = 12  # numbers 1..12
PHASE10_MELDS: Final = MeldRules(low=1, high=SPAN, suits=COLOURS)  # sets, runs, colour groups

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


# Each phase's requirement in words, written once: every Phase 10 view's JSON holds its seat's.
PHASE_NEEDS: Final[Mapping[int, str]] = {phase: describe_phase(phase) for phase in PHASES}


def card_points(card: Card) -> int:
    """Penalty points of a card left in hand: 1..9 = 5, 10..12 = 10, Skip = 15, Wild = 25."""
    if card.kind is Kind.WILD:
        return 25
    if card.kind is Kind.SKIP:
        return 15
    return 5 if card.rank <= 9 else 10


def why_not_phase(phase: int, melds: list[Meld]) -> str | None:
    """Why `melds` are not exactly the groups of `phase` (each at least its size), or None.

    Groups only grow once laid, so the groups a seat has on the table pass too."""
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


# ----------------------------------------------------------------------------------------------
# Rule options


@dataclass(frozen=True, slots=True)
class Phase10Rules:
    """Every rule option of Phase 10 (digest 1.2-1.8); the defaults are the printed rules."""

    dealer: Literal["random", "seat0"] = "random"  # first dealer: seeded random, or seat 0
    # After each hand the deal passes to the left (seed 003), or the first dealer keeps it
    # (seeds 000/001: "a dealer is chosen", the rotation being their alternative).
    deal_rotation: Literal["left", "fixed"] = "left"
    first_skip: Literal["skip-first-player", "twist"] = "skip-first-player"  # turned-up Skip
    natural: Literal["phase", "group", "none"] = "phase"  # where a natural card is required
    run_wrap: bool = False  # 12 is followed by 1 in a run
    skip_victim: Literal["choose", "next"] = "choose"  # who a discarded Skip skips
    skip_repeat: Literal["once-per-orbit", "unlimited"] = "once-per-orbit"  # pending skips
    hit_on_lay_turn: Literal["any", "own"] = "any"  # groups one may hit in the lay-down turn
    going_out: Literal["any", "must-discard"] = "any"  # may the last card go by a hit
    # Who wins: a seat that completes the last phase (seed 003), or one that completes it and
    # goes out in the same hand (seed 002: "completes phase 10 and runs out of cards").
    win: Literal["last-phase", "last-phase-and-out"] = "last-phase"
    tiebreak: Literal["first-out", "first-to-lay", "shared"] = "first-out"
    # Who is dealt into tie-break hands: the tied seats (seed 003's printed rules), or every
    # seat (seed 003's encyclopedia part: "everyone takes part"); only a tied seat wins it.
    tiebreak_players: Literal["tied", "everyone"] = "tied"
    phases: Literal["all", "even", "odd"] = "all"  # which phases are played, in order
    phases_to_win: int | None = None  # the game ends when a seat completes this many
    any_order: bool = False  # phases in any order, each once
    fixed_hands: bool = False  # one hand per phase, everyone on phase k in hand k
    turn_cap: int = 300  # turns per hand before it ends with nobody out
    hand_cap: int | None = 100  # hands per game before it ends on the turn cap

    def __post_init__(self) -> None:
        check_fields(self)
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
        if self.win == "last-phase-and-out":
            raise RuleOptionError(
                "rule options fixed-hands and win=last-phase-and-out exclude each other: "
                "fixed-hands is won by the lowest total after the last hand"
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
        """The phase that takes the place of phase 10: the one tie-break hands are played on,
        and the one laid again under win=last-phase-and-out.

        In order it is the last phase a seat reaches: the `target`-th of the sequence. With
        any-order every phase of the sequence stays in play however few end the game, so it is
        the sequence's last (seeds 002/003: the tied players replay phase 10)."""
        return self.sequence[-1] if self.any_order else self.sequence[self.target - 1]

    def completes(self, completed: int) -> bool:
        """Whether a lay-down by a seat that completed `completed` phases completes one: not
        once the target is reached (win=last-phase-and-out lays the last phase again)."""
        return completed < self.target

    @property
    def melds(self) -> MeldRules:
        return _WRAP_MELDS if self.run_wrap else PHASE10_MELDS

    def why_not_natural(self, melds: Sequence[Meld]) -> str | None:
        """Why a phase of `melds` breaks the `natural` option (too few non-Wild cards), or None."""
        if self.natural == "phase" and not any(m.naturals(self.melds) for m in melds):
            return "natural=phase: a phase needs at least one natural (non-Wild) card"
        if self.natural == "group":
            for m in melds:
                if not m.naturals(self.melds):
                    return f"natural=group: {format_meld(m)} needs a natural (non-Wild) card"
        return None

    def phase_to_make(self, tie_break: bool, hand_number: int, completed: int) -> int | None:
        """The phase a seat that completed `completed` phases makes in hand `hand_number`
        (None: any-order, chosen as it lays)."""
        if tie_break:
            return self.final_phase
        if self.fixed_hands:
            return self.sequence[hand_number - 1]
        if not self.completes(completed):
            # win=last-phase-and-out: the target reached, not yet out: the last phase again.
            return self.final_phase
        if self.any_order:
            return None
        return self.sequence[completed]


_WRAP_MELDS: Final = dataclasses.replace(PHASE10_MELDS, wrap=True)
