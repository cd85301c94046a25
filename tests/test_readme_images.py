"""Every picture README.md and the docs show exists, and every viewer screenshot that
docs/make_screenshots.py makes exists and is shown in the viewer's page, docs/replays.md (was:
three of six, Solitaire's not among them)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from support import ROOT


def shown(page: Path) -> set[Path]:
    """The pictures `page` shows, as paths in the repository."""
    found = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text())
    return {(page.parent / path).resolve().relative_to(ROOT) for path in found}


def test_every_picture_of_the_readme_and_the_docs_exists() -> None:
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    assert shown(ROOT / "README.md") and shown(ROOT / "docs" / "replays.md")
    for page in pages:
        for path in shown(page):
            assert (ROOT / path).is_file(), f"{page.name}: {path}"


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


def test_every_viewer_screenshot_is_on_the_viewers_page() -> None:
    made = made_by_the_script()
    assert {"docs/viewer-solitaire.png", "docs/viewer-list.png"} <= made
    for path in made:
        assert (ROOT / path).is_file(), f"{path}: run python docs/make_screenshots.py"
    # viewer-fivecrowns-8.png: the eight-seat table, kept for the docs but one Five Crowns
    # table (fourteen seats) is enough on the viewer's page.
    on_the_page = {path.as_posix() for path in shown(ROOT / "docs" / "replays.md")}
    assert made - on_the_page <= {"docs/viewer-fivecrowns-8.png"}
