"""Every picture README.md shows exists, and every viewer screenshot that
docs/make_screenshots.py makes exists and is shown (was: three of six, Solitaire's not among
them)."""

from __future__ import annotations

import ast
import re

from support import ROOT


def shown() -> set[str]:
    return set(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (ROOT / "README.md").read_text()))


def test_every_picture_in_the_readme_exists() -> None:
    assert shown()
    for path in shown():
        assert (ROOT / path).is_file(), path


def made_by_the_script() -> set[str]:
    """The pictures docs/make_screenshots.py writes: `viewer-<name>.png` for each game of its
    GAMES table, and the ones it names outright (read from its text: importing it needs the
    browser libraries of the `docs` extra)."""
    tree = ast.parse((ROOT / "docs" / "make_screenshots.py").read_text())
    games = next(node.value for node in tree.body if isinstance(node, ast.AnnAssign)
                 and isinstance(node.target, ast.Name) and node.target.id == "GAMES")
    assert isinstance(games, ast.Dict)
    names = {f"docs/viewer-{key.value}.png" for key in games.keys
             if isinstance(key, ast.Constant)}
    named = {f"docs/{node.value}" for node in ast.walk(tree) if isinstance(node, ast.Constant)
             and isinstance(node.value, str) and re.fullmatch(r"viewer-[a-z0-9-]+\.png",
                                                              node.value)}
    return names | named


def test_every_viewer_screenshot_is_in_the_readme() -> None:
    made = made_by_the_script()
    assert {"docs/viewer-solitaire.png", "docs/viewer-list.png"} <= made
    for path in made:
        assert (ROOT / path).is_file(), f"{path}: run python docs/make_screenshots.py"
    # viewer-fivecrowns-8.png: the eight-seat table, kept for the docs but one Five Crowns
    # table (fourteen seats) is enough on the front page.
    assert made - shown() <= {"docs/viewer-fivecrowns-8.png"}
