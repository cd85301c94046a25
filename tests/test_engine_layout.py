"""The engine's layout shows its architecture (issue 9): every game is the same four modules,
the shared meld core is three modules layered one on the other and names no game, nothing
public in the engine is there for the tests alone, and a game's own setup check is named by its
`GameInfo`, not guessed from its rules' methods."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import io
import os
import re
import tokenize
from collections import Counter
from pathlib import Path

import pytest
from support import ROOT

from meldref.engine.game import GAME_NAMES, GameInfo, RuleOptionError, find_game

ENGINE = ROOT / "engine"
# Where the engine's real callers live (meldref/engine, protocol and bots are links: skipped).
CALLERS = ("engine", "bots", "protocol", "meldref", "bench")
LINKS = {"engine", "protocol", "bots"}
MELD_CORE = ("melds", "meld_check", "meld_search")  # each may import only those before it


def python_files(folder: str) -> list[Path]:
    out = []
    for here, dirs, files in os.walk(ROOT / folder):
        if folder == "meldref" and Path(here) == ROOT / "meldref":
            dirs[:] = [d for d in dirs if d not in LINKS]
        out += [Path(here) / f for f in files if f.endswith(".py")]
    return out


def imported(path: Path) -> set[str]:
    """What a top-level engine module imports of the engine (`from .x.y import z`: x.y, x.y.z)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            base = f"{node.module}." if node.module else ""
            out |= {base.rstrip(".")} | {base + a.name for a in node.names}
    return out - {""}


def public_names(path: Path) -> list[str]:
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("_")]


@pytest.mark.parametrize("name", GAME_NAMES)
def test_every_game_is_rules_actions_view_state(name: str) -> None:
    game = find_game(name)
    package = f"meldref.engine.{name}"
    assert game.rules_type.__module__ == f"{package}.rules"
    assert importlib.import_module(package).parse_action.__module__ == f"{package}.actions"
    state = game.new_game(game.rules(), game.min_players, 1)
    assert type(state).__module__ == game.new_game.__module__ == f"{package}.state"
    assert type(state.observation(0)).__module__ == f"{package}.view"
    for part in ("rules", "actions", "view", "state"):
        assert (ENGINE / name / f"{part}.py").is_file()


def test_the_meld_core_is_layered_and_names_no_game() -> None:
    for i, module in enumerate(MELD_CORE):
        path = ENGINE / f"{module}.py"
        uses = imported(path)
        later = {m for m in MELD_CORE[i + 1:] if m in uses}
        assert not later, f"{module} imports {later}: values, then checks, then the search"
        games = {m for m in uses if m.split(".")[0] in GAME_NAMES}
        assert not games, f"the shared {module} imports {games}"
        assert not re.search(r"PHASE10|FIVECROWNS|phase10|fivecrowns", " ".join(
            public_names(path))), f"the shared {module} defines a game's own value"


def test_no_public_name_of_the_engine_is_for_the_tests_alone() -> None:
    # A public name that no code but the tests uses is a helper only tests need (the solver's
    # best_split was): the tests ask what real callers ask instead, and a name meant for bot
    # authors is exported by its package. Uses are names in code (not in strings or comments,
    # not attributes, not definitions), so a name that code also gives to something else (a
    # local variable, a method) escapes this check.
    uses = {path: names_used(path) for folder in CALLERS for path in python_files(folder)}
    unused = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in python_files("engine")
        for name in public_names(path)
        if not any(names[name] for names in uses.values())
    ]
    assert not unused


def names_used(path: Path) -> Counter[str]:
    out: Counter[str] = Counter()
    before = ""
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type == tokenize.NAME and before not in (".", "def", "class"):
            out[token.string] += 1
        if token.type not in SPACING:
            before = token.string
    return out


SPACING = {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}


@dataclasses.dataclass(frozen=True)
class TwoSeatRules:
    # Rules with a method called as Five Crowns' check once was, but no check of their own.
    def for_players(self, players: int) -> None:
        raise AssertionError("check_setup guessed a check from a method's name")


def refuse_three(rules: object, players: int) -> None:
    if players == 3:
        raise RuleOptionError("this table game seats 2 or 4 players")


def test_a_games_setup_check_is_named_by_its_game_info() -> None:
    fivecrowns = find_game("fivecrowns")
    fake = dataclasses.replace(fivecrowns, rules_type=TwoSeatRules, check_rules=refuse_three)
    fake.check_setup(TwoSeatRules(), 4)
    with pytest.raises(RuleOptionError, match="seats 2 or 4"):
        fake.check_setup(TwoSeatRules(), 3)
    unchecked = GameInfo("fake", "Fake", 2, 4, TwoSeatRules, fivecrowns.new_game,
                         fivecrowns.from_snapshot)
    unchecked.check_setup(TwoSeatRules(), 3)  # no check of its own: for_players is not called
    with pytest.raises(RuleOptionError, match="party=off"):
        fivecrowns.check_setup(fivecrowns.rules(party="off"), 8)


def _assigns_game(path: Path) -> bool:
    return any(isinstance(node, ast.AnnAssign | ast.Assign) and "GAME" in {
        t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)} for node in ast.parse(path.read_text()).body)


@pytest.mark.parametrize("name", GAME_NAMES)
def test_a_games_info_stands_in_its_package_front(name: str) -> None:
    # Was: at the bottom of state.py, after the play, away from the facts it names (issue 25).
    # In the package's __init__ it imports the facts (rules) and the state without a cycle.
    assert _assigns_game(ENGINE / name / "__init__.py")
    assert not _assigns_game(ENGINE / name / "state.py")
    assert find_game(name) is importlib.import_module(f"meldref.engine.{name}").GAME
