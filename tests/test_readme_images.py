"""Every picture README.md shows exists, and every viewer screenshot that
docs/make_screenshots.py makes is shown (was: three of six, Solitaire's not among them)."""

from __future__ import annotations

import re

from support import ROOT


def shown() -> set[str]:
    return set(re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (ROOT / "README.md").read_text()))


def test_every_picture_in_the_readme_exists() -> None:
    assert shown()
    for path in shown():
        assert (ROOT / path).is_file(), path


def test_every_viewer_screenshot_is_in_the_readme() -> None:
    made = {f"docs/{p.name}" for p in (ROOT / "docs").glob("viewer-*.png")}
    # viewer-fivecrowns-8.png: the eight-seat table, kept for the docs but one Five Crowns
    # table (fourteen seats) is enough on the front page.
    assert made - shown() <= {"docs/viewer-fivecrowns-8.png"}
