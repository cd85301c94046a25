"""A game in one place: every layer takes its games from engine/registry.py, every registered game
has each part, and a game's name is spelled only in the registry and in the game's own modules.

Was (issue 45): the names listed in six places (engine/game.py, envs/codec.py, envs/spiel.py,
bots/sdk.py, envs/hidden.py, setup.py), each a copy to keep in step by hand.
"""

from __future__ import annotations

import ast
import re
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from meldref.bots import BUILTIN_BOTS, builtin_table
from meldref.engine.game import GAME_NAMES, GameInfo, UnknownGameError, find_game
from meldref.engine.registry import GAMES, MissingPartError, find_part, registered
from meldref.envs.codec import find_codec
from meldref.replay.games import Presentation, presentation

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ["engine", "protocol", "bots", "meldref"]  # meldref/ links the first three: skipped
LINKS = {ROOT / "meldref" / name for name in ("engine", "protocol", "bots")}
REGISTRY = ROOT / "engine" / "registry.py"
WORD = re.compile(r"[^A-Za-z0-9]+")  # what separates words in a string (case kept: prose's
                                     # "Solitaire" is the game's title, not its name)


# ----------------------------------------------------------------------------------------------
# Each registered game has each part, found by its layer


def test_the_registry_is_the_engines_list() -> None:
    assert GAME_NAMES == GAMES and len(set(GAMES)) == len(GAMES)
    assert registered(" Phase-10 ") == "phase10" and registered("five_crowns") == "fivecrowns"
    assert registered("chess") is None
    with pytest.raises(UnknownGameError, match="games: " + ", ".join(GAMES)):
        find_game("chess")


@pytest.mark.parametrize("name", GAMES)
def test_every_registered_game_has_each_part(name: str) -> None:
    rules = find_game(name)
    assert isinstance(rules, GameInfo) and rules.name == name
    assert list(builtin_table(name)) == list(BUILTIN_BOTS)
    assert isinstance(presentation(name), Presentation)
    codec = find_codec(name)
    assert codec.game == name and codec.action_size > 0
    assert find_part("meldref.envs", f"{name}_v0", "ACTIONS") == codec.action_size
    size = typing.cast(Callable[[int], int],
                       find_part("meldref.envs", f"{name}_v0", "observation_size"))
    seats = range(rules.min_players, rules.max_players + 1)
    assert [size(n) for n in seats] == [codec.observation_size(n) for n in seats]
    state = rules.new_game(rules.rules(), rules.min_players, 1)
    state.opening_events()
    assert codec.encode(state.observation(0).to_json(), rules.min_players).size == (
        codec.observation_size(rules.min_players))


def test_a_missing_part_says_which_module_and_where_to_read() -> None:
    with pytest.raises(MissingPartError, match=r"meldref\.bots\.nosuchgame does not exist.*"
                                               r"adding-a-game"):
        find_part("meldref.bots", "nosuchgame", "BOTS")
    with pytest.raises(MissingPartError, match=r"meldref\.envs\.codec exports no CODEC"):
        find_part("meldref.envs", "codec", "CODEC")


def test_a_part_that_fails_to_import_is_not_called_missing(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "brokenparts").mkdir()
    (tmp_path / "brokenparts" / "__init__.py").write_text("")
    (tmp_path / "brokenparts" / "game.py").write_text("import nosuchlibrary\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="nosuchlibrary"):
        find_part("brokenparts", "game", "GAME")


# ----------------------------------------------------------------------------------------------
# Each name spelled once: in the registry, and in the game's own modules


def python_files() -> Iterator[Path]:
    yield ROOT / "setup.py"
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*.py")):
            if not any(path.is_relative_to(link) for link in LINKS):
                yield path


def own(path: Path, game: str) -> bool:
    """Whether `path` is one of `game`'s own modules: in its package (engine/phase10/...) or
    named after it in a layer (bots/phase10/expert.py, replay/games/phase10.py)."""
    return game in path.parent.parts or path.stem.split("_")[0] == game


def docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def spellings(path: Path, names: tuple[str, ...] = GAMES) -> Iterator[tuple[int, str]]:
    """(line, name) of each game's name in a string of `path`'s code: the whole string or a
    word of it (`"phase10"`, `"phase10_v0"`, `"fivecrowns.view"`, `"(default phase10)"`).
    Docstrings document, and are not counted."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            words = set(WORD.split(node.value))
            yield from ((node.lineno, name) for name in names if name in words)


def spelled_elsewhere() -> list[tuple[str, int, str]]:
    return [(str(path.relative_to(ROOT)), line, name)
            for path in python_files() if path != REGISTRY
            for line, name in spellings(path) if not own(path, name)]


def test_each_game_name_is_spelled_in_the_registry_and_its_own_modules_only() -> None:
    new = [f"{path}:{line}: {name!r}" for path, line, name in spelled_elsewhere()]
    assert not new, ("a game's name spelled outside engine/registry.py and the game's own "
                     "modules (take it from registry.GAMES, or move the code into the game's "
                     "module):\n" + "\n".join(new))


def test_the_registry_spells_each_name_once() -> None:
    assert sorted(name for _, name in spellings(REGISTRY)) == sorted(GAMES)


@pytest.mark.parametrize(("code", "found"), [
    ('GAMES = ("phase10", "fivecrowns")', 2), ('if game == "solitaire": pass', 1),
    ('def f(game="phase10"): pass', 1),
    ('x = ("phase10_v0", "meldref.engine.fivecrowns.view", "(default solitaire)")', 3),
    ('"""Phase 10: "phase10" in a docstring."""\nx = "Five Crowns Solitaire, phase100"', 0),
])
def test_the_walk_finds_each_spelling(code: str, found: int, tmp_path: Path) -> None:
    path = tmp_path / "sample.py"
    path.write_text(code + "\n", encoding="utf-8")
    assert len(list(spellings(path))) == found


def test_the_registry_reads_without_meldref() -> None:
    """setup.py runs before meldref can be imported: the registry imports only the standard
    library, and `GAMES` is a literal the build can read as data."""
    tree = ast.parse(REGISTRY.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {str(node.module).split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "importlib", "typing"}, imported
    games = next(node.value for node in tree.body if isinstance(node, ast.AnnAssign)
                 and isinstance(node.target, ast.Name) and node.target.id == "GAMES")
    assert ast.literal_eval(games) == GAMES


ABOVE = ("meldref.bots", "meldref.protocol", "meldref.replay", "meldref.envs", "meldref.tools",
         "meldref.tournament", "meldref.contest", "meldref.cli")


def test_the_engine_names_no_layer_above_it() -> None:
    """The registry finds parts in the package a layer passes: no module of the engine names a
    layer above it, even as text to import."""
    found = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = docstrings(tree)
        found += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value}"
                  for node in ast.walk(tree) if isinstance(node, ast.Constant)
                  and isinstance(node.value, str) and id(node) not in skip
                  and node.value.startswith(ABOVE)]
    assert not found, "\n".join(found)
