"""Phase 10 actions: small frozen values whose `str()` is their protocol text, and the parser.

    draw pile | draw discard
    lay [phase=N] <group> <group>...      e.g. lay set:R7,B7,W set:G1,Y1,B1
    hit <group-id> <card>[=decl]          e.g. hit 3 W=8
    discard <card> [<victim-seat>]        e.g. discard S 2
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from ..cards import Card, CardError
from ..common import Draw, parse_draw
from ..game import InvalidActionError, Rebuilt, by_init
from ..melds import (
    Declared,
    GroupKind,
    Meld,
    MeldError,
    MeldRules,
    Placed,
    parse_group,
)
from ..numbers import is_count, parse_count, quoted
from .rules import PHASE10_MELDS, SPAN

Group = tuple[GroupKind, tuple[Placed, ...]]


@dataclass(frozen=True, slots=True)
class LayDown:
    """`lay [phase=N] <group> <group>...`: the whole phase at once, extras in its own groups."""

    groups: tuple[Group, ...]
    phase: int | None = None

    def __init__(self, groups: tuple[Group, ...], phase: int | None = None) -> None:
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "phase", phase)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

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

    def __init__(self, group_id: int, card: Card, declared: Declared = None) -> None:
        object.__setattr__(self, "group_id", group_id)
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "declared", declared)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    def __str__(self) -> str:
        decl = "" if self.declared is None else f"={self.declared}"
        return f"hit {self.group_id} {self.card.text}{decl}"


@dataclass(frozen=True, slots=True)
class Discard:
    """`discard <card> [<victim-seat>]`: ends the turn; a Skip names the seat it skips."""

    card: Card
    victim: int | None = None

    def __init__(self, card: Card, victim: int | None = None) -> None:
        object.__setattr__(self, "card", card)
        object.__setattr__(self, "victim", victim)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    def __str__(self) -> str:
        return f"discard {self.card.text}" + ("" if self.victim is None else f" {self.victim}")


Action = Draw | LayDown | Hit | Discard  # Draw (engine.common) is the same in Five Crowns


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
        raise InvalidActionError(f"unknown action {quoted(words[0])}; "
                                 "one of: draw, lay, hit, discard")
    try:
        return parser(args)
    except (CardError, MeldError) as exc:
        raise InvalidActionError(f"{quoted(text)}: {exc}") from None


def _parse_lay(args: list[str]) -> LayDown:
    phase = None
    if args and args[0].lower().startswith("phase="):
        value = args[0].partition("=")[2]
        if not is_count(value):
            raise InvalidActionError(f"lay: {quoted(args[0], 30)} should be phase=N "
                                     "with N a number")
        phase, args = int(value), args[1:]
    if not args:
        raise InvalidActionError("lay needs groups: lay [phase=N] set:R7,B7,W set:...")
    groups = []
    for token in args:
        kind, placed = parse_group(token, PHASE10_MELDS)
        if kind is GroupKind.BOOK:
            raise InvalidActionError(f"{quoted(token)}: Phase 10 groups are set, run or colour")
        groups.append((kind, tuple(placed)))
    return LayDown(tuple(groups), phase)


def _parse_hit(args: list[str]) -> Hit:
    usage = "hit takes a group id and a card: hit 3 R7 (or hit 3 W=8)"
    if len(args) != 2:
        raise InvalidActionError(usage)
    group = parse_count(args[0], f"{usage}; the group id")
    text, _, decl = args[1].partition("=")
    declared: Declared = None
    if decl:
        declared = decl.upper() if decl.upper() in PHASE10_MELDS.suits else _number(decl)
    return Hit(group, Card.parse(text), declared)


def _number(text: str) -> int:
    if not is_count(text) or not 1 <= int(text) <= SPAN:
        raise InvalidActionError(f"{quoted(text, 20)} is neither a number 1..12 "
                                 "nor a colour R, B, Y, G")
    return int(text)


def _parse_discard(args: list[str]) -> Discard:
    usage = "discard takes a card and, for a Skip, a seat: discard S 2"
    if len(args) not in (1, 2):
        raise InvalidActionError(usage)
    victim = parse_count(args[1], f"{usage}; the seat") if len(args) == 2 else None
    return Discard(Card.parse(args[0]), victim)


_PARSERS: Final[Mapping[str, Callable[[list[str]], Action]]] = {
    "draw": parse_draw,
    "lay": _parse_lay,
    "hit": _parse_hit,
    "discard": _parse_discard,
}
