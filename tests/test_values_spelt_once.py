"""Event kinds, fault outcomes and seat statuses are spelt once, in their enums.

`EventKind` (engine/game.py), `FaultOutcome` and `SeatStatus` (protocol/errors.py) are StrEnums:
the files and the protocol hold their values as before, and the code compares with the members.
These tests walk the source (Python with `ast`, the viewer's scripts by their comparisons) and
fail on a value spelt as a bare string where one of them is made or compared with: an
`Event("draw", ...)`, a `Fault("timeout", ...)`, `kind == "deal"`, `outcome in ("timeout",
"stalled")`, `status[seat] != "ok"`, `s !== "ok"` in a script. The game's presentation and the
pages get the values from Python instead.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from meldref.engine.game import GAME_NAMES, EventKind, GameState
from meldref.protocol.errors import FaultOutcome, SeatStatus
from meldref.protocol.seats import Seat
from meldref.replay.games import presentation

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["engine", "protocol", "bots", "meldref"]  # meldref/ links the first three: skipped
LINKS = {ROOT / "meldref" / name for name in ("engine", "protocol", "bots")}
ENUM_MODULES = {ROOT / "engine" / "game.py", ROOT / "protocol" / "errors.py"}
SCRIPTS = sorted((ROOT / "meldref" / "replay" / "viewer").glob("*.js"))

EVENT_KINDS = {k.value for k in EventKind}
OUTCOMES = {o.value for o in FaultOutcome}
STATUSES = {s.value for s in SeatStatus}
# What an expression is named (its variable, attribute or the key it reads) -> the values it
# holds. A result line's `status` ("ok" or "error": the game was played or not) is not a
# seat's, so a key named status is not counted; a seat's is read by index (`status[seat]`).
BY_NAME: dict[str, set[str]] = {
    "kind": EVENT_KINDS, "event": EVENT_KINDS,
    "outcome": OUTCOMES,
    "status": STATUSES, "st": STATUSES, "seat_status": STATUSES, "on_failure": STATUSES,
}
KEYS: dict[str, set[str]] = {"event": EVENT_KINDS, "outcome": OUTCOMES}
# The constructors whose first argument is a kind or an outcome.
MAKERS: dict[str, set[str]] = {"Event": EVENT_KINDS, "Fault": OUTCOMES}
# Where a name above holds something else that happens to be spelt like one of the values.
NOT_THESE = {
    # A card's kind in the SDK (standard library only: it cannot import the engine's enums).
    ("bots/sdk.py", "skip"),
    # A reward's name in the research environments ("place": by the place reached).
    ("meldref/envs/rewards.py", "place"),
}


def python_files() -> Iterator[Path]:
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            if not any(path.is_relative_to(link) for link in LINKS) and path not in ENUM_MODULES:
                yield path


def _name(node: ast.expr) -> tuple[str | None, bool]:
    """What `node` is named, and whether the name is a key it reads (`x["event"]`,
    `x.get("event")`)."""
    if isinstance(node, ast.Name):
        return node.id, False
    if isinstance(node, ast.Attribute):
        return node.attr, False
    if isinstance(node, ast.Subscript):
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value, True
        return _name(node.value)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return node.args[0].value, True
    return None, False


def _values(node: ast.expr) -> Iterator[ast.Constant]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        for item in node.elts:
            yield from _values(item)


def _expected(node: ast.expr) -> set[str]:
    name, key = _name(node)
    if name is None:
        return set()
    return (KEYS if key else BY_NAME).get(name, set())


def spelt(path: Path) -> Iterator[tuple[int, str]]:
    """(line, value) of each bare value in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for side in sides:
                values = set().union(*(_expected(other) for other in sides if other is not side))
                yield from ((c.lineno, c.value) for c in _values(side) if c.value in values)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                node.func.id in MAKERS and node.args):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.lineno, first.value


def test_no_python_spells_a_kind_outcome_or_status() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}: {value!r}"
             for path in python_files() for line, value in spelt(path)
             if (str(path.relative_to(ROOT)), value) not in NOT_THESE]
    assert not found, "spelt outside its enum:\n" + "\n".join(found)


# A script's comparison with a quoted text: `x === "ok"`, `"ok" !== x`.
COMPARED = re.compile(r'[!=]==\s*"([^"\\]*)"|"([^"\\]*)"\s*[!=]==')


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_script_spells_a_kind_outcome_or_status(script: Path) -> None:
    values = EVENT_KINDS | OUTCOMES | STATUSES
    found = [f"{script.name}:{n}: {a or b!r}"
             for n, line in enumerate(script.read_text(encoding="utf-8").splitlines(), 1)
             for a, b in COMPARED.findall(line) if (a or b) in values]
    assert not found, "spelt in the page's script (give it the enum's value):\n" + "\n".join(found)


@pytest.mark.parametrize("code", [
    'Event("draw", 0)', 'Fault("timeout", "slow")', 'if kind == "deal": pass',
    'x = outcome in ("timeout", "stalled")', 'x = self.status[seat] != "ok"',
    'x = event.get("event") == "game_over"', 'x = "forfeit" not in status',
])
def test_the_walk_finds_each_form(code: str, tmp_path: Path) -> None:
    path = tmp_path / "sample.py"
    path.write_text(code + "\n", encoding="utf-8")
    assert list(spelt(path)), code


def test_the_walk_leaves_other_words_alone(tmp_path: Path) -> None:
    path = tmp_path / "sample.py"
    path.write_text('x = line.get("status") != "ok"\nif source == "discard": pass\n'
                    'y = msg.kind == "malformed"\n', encoding="utf-8")
    assert not list(spelt(path))


# Probes of a member's name on what is not a state or a seat, each with why.
NOT_A_STATE_OR_SEAT = {
    ("protocol/seats.py", "name"): "an in-process bot: any object with act(), named or not",
}


def test_nothing_probes_the_game_state_or_a_seat() -> None:
    """`GameState` and `Seat` declare what the referee, the tournament and the replay tools read
    (`rules`, `seed`, `opening_events`, a seat's `ids`...): no `getattr(state, "seed", ...)`
    or `getattr(seat, "ids", {})` in their place. Was: the referee's start.seed, three seat ids."""
    members = {name for kind in (GameState, Seat) for name in dir(kind)
               if not name.startswith("_")}
    found = []
    for path in python_files():
        where = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "getattr" and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value in members
                    and (where, node.args[1].value) not in NOT_A_STATE_OR_SEAT):
                found.append(f"{where}:{node.lineno}: {node.args[1].value}")
    assert not found, "\n".join(found)


# ----------------------------------------------------------------------------------------------
# Per-game knowledge stays in the game's presentation (replay/games/<game>.py)

GENERIC = ["meldref/replay/html.py", "meldref/replay/words.py", "meldref/replay/frames.py",
           "meldref/replay/show.py", "meldref/replay/viewer/viewer.js",
           "meldref/replay/viewer/list.js"]


@pytest.mark.parametrize("path", GENERIC)
def test_the_generic_tools_name_no_game(path: str) -> None:
    """Was: `FRAMES = {"phase10": ...}`, `if replay.header["game"] != "phase10"` in html.py,
    `D.game === "solitaire"` in viewer.js."""
    text = (ROOT / path).read_text(encoding="utf-8")
    named = [name for name in GAME_NAMES if f'"{name}"' in text or f"'{name}'" in text]
    assert not named, f"{path} names {named}: that belongs in replay/games/<game>.py"
    assert "D.game ===" not in text and "D.game !==" not in text


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_game_has_a_presentation_found_by_its_name(name: str) -> None:
    shown = presentation(name.upper())  # found as find_game finds the rules
    assert shown is presentation(name) and shown.look.to_json()["layout"] in ("seats", "piles")
