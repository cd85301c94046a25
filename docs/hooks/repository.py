"""mkdocs hook: the repository files the guide links to, made part of the site.

The pages are written for reading in the repository: docs/tournaments.md links
`../spec/PROTOCOL.md`, README.md links `docs/tournaments.md`. On the site docs/ is the root, so
each page's links are rewritten to where their targets land: README.md as `readme.md`, docs/X
as X, any other repository file at its own path (spec/PROTOCOL.md, bots/examples/c/meldbot.c),
added to the site. A link whose target does not exist is left as written, for mkdocs to
report (a warning: an error under --strict).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any, Final

from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT: Final = Path(__file__).resolve().parents[2]
_LINK: Final = re.compile(r"(\]\()([^)\s#]+)([^)]*\))")
_ADDED: Final = ("README.md", "CONTRIBUTING.md", "CHANGELOG.md", "spec/*.md",
                 "bots/examples/**/*", "bots/random_bot.py", "bots/sdk.py")


def site_path(repository_path: str) -> str:
    """Where a repository file is on the site."""
    if repository_path == "README.md":
        return "readme.md"
    if repository_path.startswith("docs/"):
        return repository_path[len("docs/"):]
    return repository_path


def on_files(files: Files, config: Any) -> Files:
    for pattern in _ADDED:
        for path in sorted(ROOT.glob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                where = site_path(path.relative_to(ROOT).as_posix())
                files.append(File.generated(config, where, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    source = Path(page.file.abs_src_path or "").resolve()
    if not source.is_relative_to(ROOT):
        return markdown
    here = source.parent

    def rewrite(found: re.Match[str]) -> str:
        target = found[2]
        if "://" in target or target.startswith(("mailto:", "/")):
            return found[0]
        path = (here / target).resolve()
        if not path.exists() or not path.is_relative_to(ROOT):
            return found[0]
        new = posixpath.relpath(site_path(path.relative_to(ROOT).as_posix()),
                                posixpath.dirname(page.file.src_uri) or ".")
        return f"{found[1]}{new}{found[3]}"

    return _LINK.sub(rewrite, markdown)
