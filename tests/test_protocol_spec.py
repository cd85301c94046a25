"""spec/PROTOCOL.md documents every line, key, item and event the three games send, and the
games are seen sending every event the spec lists.

Games are played through real pipes with bots/random_bot.py in every seat, from the start and
from prepared positions that reach the paths random play rarely meets: a tie at the end of
Phase 10 followed by tie-break hands (first-out, first-to-lay), and Five Crowns' tie-break
round. What seat 0 is sent is sorted into fields: the `view` keys, each item's keys, each
event's keys, the `gameover` keys and the `rule` names; each must appear in its own row or
block of the game's spec section (an event key in that event's row, not just anywhere).
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from support import RANDOM_BOT, ROOT

from meldref.engine.game import Event, EventKind, GameInfo, GameState, find_game
from meldref.protocol.referee import MatchPolicy, close_all, play_game
from meldref.protocol.seats import seat_from_spec
from meldref.settings import parse_rules

POLICY = MatchPolicy(move_time=10.0, first_move_time=20.0, startup_time=20.0)
SPEC = (ROOT / "spec" / "PROTOCOL.md").read_text()
SECTIONS = {"phase10": "## 10. Phase 10", "fivecrowns": "## 11. Five Crowns",
            "solitaire": "## 12. Five Crowns Solitaire"}
Fields = dict[tuple[str, str], set[str]]  # (line type, item name / event kind) -> keys
PATHS = ("tiebreak", "decided_by", "ended")  # event keys whose values are collected too


# ----------------------------------------------------------------------------------------------
# What is sent


def fields_sent(lines: Iterable[str]) -> Fields:
    out: Fields = defaultdict(set)
    for line in lines:
        words = line.split()
        kind = words[0]
        if kind in ("view", "gameover"):
            out[kind, ""].update(words[1::2])
        elif kind in ("item", "event"):
            out[kind, words[1]].update(words[2::2])
            for key, value in zip(words[2::2], words[3::2], strict=False):
                if key in PATHS:  # which paths were taken
                    out["value", f"{words[1]}.{key}"].add(value)
        elif kind == "rule":
            out["rule", ""].add(words[1])
        out["type", ""].add(kind)
        if kind in ("view", "gameover", "item", "event"):  # keys whose values hold `_`
            pairs = words[1::2] if kind in ("view", "gameover") else words[2::2]
            values = words[2::2] if kind in ("view", "gameover") else words[3::2]
            out["underscore", ""].update(k for k, v in zip(pairs, values, strict=False)
                                         if "_" in v)
    return out


class Prepared:
    """A game state reached by scripted actions, handed to the referee as a new game: the
    script's events are its opening events (what the seats are told first)."""

    def __init__(self, state: GameState, events: list[Event]) -> None:
        self._state, self._events = state, events

    def opening_events(self) -> list[Event]:
        return list(self._events)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._state, name)


def scripted(state: GameState, *texts: str) -> Prepared:
    events: list[Event] = []
    for text in texts:
        events += state.apply(state.parse_action(text))
    return Prepared(state, events)


def play_piped(game: GameInfo, players: int, seed: int, rules: dict[str, str] | None = None,
               start: Callable[[], Any] | None = None) -> Fields:
    if start is not None:  # the game starts from a prepared position
        game = dataclasses.replace(game, new_game=lambda *_: start())
    lines: list[str] = []
    hook = lambda way, text: lines.append(text) if way == ">" else None  # noqa: E731
    seats = [seat_from_spec(f"{RANDOM_BOT} --seed {seed + i}", game,
                            on_line=hook if i == 0 else None) for i in range(players)]
    try:
        record = play_game(game, parse_rules(game.rules_type, rules or {}), seats, seed, POLICY)
    finally:
        close_all(seats)
    assert all(f == [] for f in record.faults), record.faults
    return fields_sent(lines)


def phase10_tie_then_tiebreak_hands() -> Prepared:
    """Seats 0 and 1 complete phase 10 in hand 1 with equal totals (seat 0 goes out with its
    last card): tie-break hands follow, at most 3 of them (hand-cap 4, turn-cap 40)."""
    from phase10_positions import position

    from meldref.engine.phase10 import Phase10Rules

    rules = Phase10Rules(dealer="seat0", turn_cap=40, hand_cap=4)
    nine = list(range(1, 10))
    state = position(["Y1", "R1", "B2 B4"], rules=rules, phase_now=[10, 10, 9],
                     laid=[10, 10, None], completed=[[*nine, 10], [*nine, 10], nine[:8]],
                     scores=[55, 50, 0])
    return scripted(state, "discard Y1")


def phase10_tiebreak_first_to_lay() -> Prepared:
    """A tie-break hand under `tiebreak first-to-lay`: seat 0 can lay phase 10 at once."""
    from phase10_positions import position

    from meldref.engine.phase10 import Phase10Rules

    rules = Phase10Rules(dealer="seat0", tiebreak="first-to-lay")
    nine = list(range(1, 10))
    state = position(["R8 B8 G8 Y8 R8 R3 B3 G3 Y1 Y8", "B1 B2", ""], rules=rules,
                     phase_now=[10, 10, None], completed=[[*nine, 10]] * 2 + [nine],
                     tied=[0, 1], playing=[0, 1], scores=[55, 55, 0], hand_number=2,
                     draw="B5 B6")
    return Prepared(state, [])


def fivecrowns_tiebreak_round() -> Prepared:
    """The last turns of round 11 leave seats 0 and 1 tied: round 12 is dealt to them."""
    from fivecrowns_positions import position

    from meldref.engine.fivecrowns import FiveCrownsRules

    rules = FiveCrownsRules(dealer="seat0", tiebreak="round")
    state = position(["", "5H 6H 7H 8C", "5H 6H 7H 8C"], rules=rules, round=11, to_move=1,
                     went_out=0, scores=[10, 10, 30], had_last_turn=[False] * 3,
                     decision="discard", draw="4D 3S")
    return scripted(state, "discard 8C run:5H,6H,7H", "draw pile", "discard 8C run:5H,6H,7H")


def fivecrowns_short_draw_pile() -> Prepared:
    """Round 1 with one card left to draw and hands far from going out: the discard pile is
    soon reshuffled."""
    from fivecrowns_positions import position

    state = position(["KS QD 7C", "JH 9C 5S"], discard="9H 8S JD QC 10*", draw="4D")
    return Prepared(state, [])


def solitaire_seed_with_a_closing_deal() -> int:
    """A seed whose deal closes a pile (at once, whatever the bot does)."""
    game = find_game("solitaire")
    return next(seed for seed in range(1, 200) if any(
        e.kind == "close" for e in game.new_game(game.rules(), 1, seed).opening_events()))


GAMES: dict[str, list[tuple[int, Callable[[], int] | int, Callable[[], Any] | None]]] = {
    "phase10": [(3, 2, None), (2, 5, phase10_tie_then_tiebreak_hands),
                (3, 1, phase10_tiebreak_first_to_lay)],
    "fivecrowns": [(2, 2, fivecrowns_short_draw_pile), (3, 4, fivecrowns_tiebreak_round)],
    "solitaire": [(1, 2, None), (1, solitaire_seed_with_a_closing_deal, None)],
}


@pytest.fixture(scope="module")
def sent() -> dict[str, Fields]:
    out: dict[str, Fields] = {}
    for name, runs in GAMES.items():
        merged: Fields = defaultdict(set)
        for players, seed, start in runs:
            number = seed() if callable(seed) else seed
            for key, keys in play_piped(find_game(name), players, number, None, start).items():
                merged[key] |= keys
        out[name] = merged
    return out


# ----------------------------------------------------------------------------------------------
# What the spec says


def section(name: str) -> str:
    start = SPEC.index(SECTIONS[name])
    stop = SPEC.find("\n## ", start + 5)
    return SPEC[start:stop]


def block(text: str, title: str) -> str:
    """The part of a game section from `**<title>**` to the next bold title."""
    start = text.index(f"**{title}**")
    stop = text.find("\n**", start + 4)
    return text[start:] if stop < 0 else text[start:stop]


def quoted(text: str) -> set[str]:
    return set(re.findall(r"`([^`\s]+)`", text))


def rows(text: str) -> dict[str, set[str]]:
    """Table rows by the first quoted word of their first cell: every quoted word of the row."""
    out: dict[str, set[str]] = {}
    for line in text.splitlines():
        first = re.match(r"\|\s*`([^`]+)`", line)
        if first:
            out[first.group(1)] = quoted(line)
    return out


def gameover_row() -> set[str]:
    return next(quoted(line) for line in SPEC.splitlines() if line.startswith("| `gameover"))


# ----------------------------------------------------------------------------------------------
# The checks


@pytest.mark.parametrize("name", list(SECTIONS))
def test_every_event_key_is_documented_in_its_event_row(name: str,
                                                        sent: dict[str, Fields]) -> None:
    documented = rows(block(section(name), "Events"))
    missing = {kind: sorted(keys - {"seat"} - documented.get(kind, set()))
               for (line, kind), keys in sent[name].items() if line == "event"}
    missing = {k: v for k, v in missing.items() if v or k not in documented}
    assert missing == {}, f"{SECTIONS[name]}: events or event keys not documented: {missing}"


@pytest.mark.parametrize("name", list(SECTIONS))
def test_every_documented_event_is_seen(name: str, sent: dict[str, Fields]) -> None:
    # Proof that the games above reach every path the spec describes (tie-breaks included).
    seen = {kind for line, kind in sent[name] if line == "event"}
    documented = set(rows(block(section(name), "Events")))
    assert documented - seen == set(), f"{name}: never seen {sorted(documented - seen)}"


@pytest.mark.parametrize("name", list(SECTIONS))
def test_view_items_rules_and_gameover_are_documented(name: str,
                                                      sent: dict[str, Fields]) -> None:
    text = section(name)
    items_text = block(text, "Items")
    item_rows = rows(items_text)
    # An empty table may come on the view line as `<item name> -`.
    view = quoted(block(text, "View")) | quoted(items_text)
    problems = []
    for (line, key), keys in sent[name].items():
        if line == "value":
            continue
        if line == "view":
            problems += [f"view {k}" for k in keys - view]
        elif line == "item":
            documented = item_rows.get(key, quoted(items_text) if not item_rows else set())
            problems += [f"item {key} {k}" for k in keys - documented] or (
                [] if key in quoted(items_text) else [f"item {key}"])
        elif line == "rule":
            problems += [f"rule {k}" for k in keys - quoted(block(text, "Rule options"))]
        elif line == "gameover":
            over = gameover_row() | rows(block(text, "Events")).get("game_over", set())
            problems += [f"gameover {k}" for k in keys - over]
    assert problems == [], f"{SECTIONS[name]} does not document {sorted(problems)}"


def test_the_tiebreak_paths_were_taken(sent: dict[str, Fields]) -> None:
    phase10, fivecrowns = sent["phase10"], sent["fivecrowns"]
    assert phase10["value", "hand_end.tiebreak"] == {"true", "false"}
    assert "tiebreak-lay" in phase10["value", "hand_end.ended"]
    assert {"tiebreak-first-to-lay", "phase"} <= phase10["value", "game_over.decided_by"]
    assert phase10["value", "game_over.decided_by"] & {"tiebreak-first-out", "hand-cap"}
    assert fivecrowns["value", "round_end.tiebreak"] == {"true", "false"}
    assert "tiebreak-round" in fivecrowns["value", "game_over.decided_by"]


def test_every_event_the_engine_makes_is_documented_and_seen(sent: dict[str, Fields]) -> None:
    made = set()
    for path in (ROOT / "engine").rglob("*.py"):  # one package per game under engine/
        made |= {EventKind[name].value
                 for name in re.findall(r"\bEvent\(\s*EventKind\.(\w+)", path.read_text())}
    assert made, "no Event(...) found in engine/: the scan is out of date"
    documented = set().union(*(rows(block(section(n), "Events")) for n in SECTIONS))
    seen = {kind for fields in sent.values() for line, kind in fields if line == "event"}
    assert made - documented == set(), f"undocumented events {sorted(made - documented)}"
    assert made - seen == set(), f"events never seen in these games {sorted(made - seen)}"


# ----------------------------------------------------------------------------------------------
# Section 1: message shapes and the list rule; sections 10-12: the rule option tables


def test_every_message_type_sent_has_its_shape_in_section_1(sent: dict[str, Fields]) -> None:
    shapes = SPEC[SPEC.index("| message | positional words | then |"):SPEC.index("## 2. ")]
    documented = {word for line in shapes.splitlines() if line.strip().startswith("| `")
                  for word in quoted(line.strip().split("|")[1])}
    types = set().union(*(fields["type", ""] for fields in sent.values()))
    assert types - documented == set(), f"message types without a shape: {types - documented}"


def test_underscores_only_in_nested_lists_and_text(sent: dict[str, Fields]) -> None:
    # Section 1: `_` joins an inner list (one per seat or pile) or stands for spaces in text.
    keys = set().union(*(fields["underscore", ""] for fields in sent.values()))
    assert keys <= {"needs", "hands", "completed", "piles"}, keys
    rule = SPEC[SPEC.index("**`,` separates"):SPEC.index("## 2. ")]
    assert all(f"`{key}`" in rule for key in keys - {"needs"})


def option_rows(text: str) -> dict[str, tuple[set[str], str]]:
    """A `| option | values | default |` table: option -> (quoted values, quoted default)."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            out[cells[0].strip("`")] = (quoted(cells[1]), cells[2].strip("`"))
    return out


def allowed(hint: Any) -> tuple[set[str], bool]:
    """The values an option's type allows as protocol tokens, and whether whole numbers do."""
    import types
    import typing

    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Literal:
        return set(args), False
    if hint is bool:
        return {"true", "false"}, False
    none = {"none"} if typing.get_origin(hint) in (typing.Union, types.UnionType) else set()
    return none, True


@pytest.mark.parametrize("name", list(SECTIONS))
def test_rule_option_tables_match_the_engine(name: str) -> None:
    import typing

    from meldref.engine.game import rules_to_json
    from meldref.protocol.wire import encode_value

    game = find_game(name)
    defaults = rules_to_json(game.rules())
    hints = typing.get_type_hints(game.rules_type)
    table = option_rows(block(section(name), "Rule options"))
    assert list(table) == list(defaults), "every option, in the order the rule lines come"
    rules_md = (ROOT / "spec" / "RULES.md").read_text()
    start = rules_md.index({"phase10": "## Phase 10", "fivecrowns": "## Five Crowns\n",
                            "solitaire": "## Five Crowns Solitaire"}[name])
    stop = rules_md.find("\n## ", start + 5)
    rules_rows = rows(rules_md[rules_md.index("### Rule options", start):stop])
    for field in dataclasses.fields(game.rules_type):
        option = field.name.replace("_", "-")
        values, default = table[option]
        tokens, numbers = allowed(hints[field.name])
        assert default == encode_value(defaults[option]), option
        assert values == tokens, f"{option}: spec says {values}, the engine takes {tokens}"
        assert not numbers or "whole number" in block(section(name), "Rule options"), option
        assert tokens <= rules_rows[option] | {"none", "true", "false"}, f"RULES.md {option}"


@pytest.mark.parametrize(("victim_rule", "pending", "victims"), [
    ("choose", (0, 0, 0), (1, 2)),
    ("choose", (0, 1, 0), (2,)),
    ("choose", (0, 1, 1), ()),
    ("next", (0, 0, 0), (1,)),
    ("next", (0, 1, 0), ()),
])
def test_section_10_skip_table_is_what_the_engine_does(victim_rule: str, pending: tuple[int, ...],
                                                       victims: tuple[int, ...]) -> None:
    from phase10_positions import position

    from meldref.engine.phase10 import Phase10Rules

    rules = Phase10Rules(dealer="seat0", skip_victim=victim_rule)  # type: ignore[arg-type]
    state = position(["S R3 R4", "B5 B6", "G7 G8"], rules=rules, skips=list(pending))
    view = state.observation(0).to_json()
    assert view["victims"] == list(victims)
    legal = lambda text: state.why_illegal(state.parse_action(text)) is None  # noqa: E731
    assert legal("discard S") == (len(victims) <= 1)
    assert [legal(f"discard S {seat}") for seat in (0, 1, 2)] == [s in victims for s in (0, 1, 2)]
    assert not legal("discard R3 1")
    hints = sorted(str(a) for a in state.legal_actions() if str(a).startswith("discard S"))
    assert hints == ([f"discard S {v}" for v in victims] if victims else ["discard S"])
