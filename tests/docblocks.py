"""The fenced blocks of a Markdown page, with what the docs' conventions attach to them.

- The line `<!-- docs-test: skip (reason) -->` just before a block: the docs test does not run
  it, and prints the reason.
- The line `<!-- docs-test: needs sandbox -->` just before a block: run where the bot sandbox
  can (a contest's commands, the sandbox on by default), else skipped with why it cannot.
- The line `<!-- docs-file: NAME -->` just before a block: the docs test writes the block to
  NAME in its scratch folder before it runs the blocks after it (a configuration file that a
  later command reads).
- A ```text block right after a ```sh block (nothing but blank lines between them): what the
  commands print, compared with what they do print (tests/test_docs.py says how).
- The line `<!-- docs-output: why it varies -->` just before a ```console or ```text block
  further down (prose between): a sample of what the last ```sh block above printed, whose
  figures vary from run to run (a secret seed, pids, times); compared with the numbers
  normalised (tests/test_docs.py), so a sample whose words or columns went stale fails.

Blocks may be indented (inside a list item); their text is given without the indent.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

_FENCE: Final = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)\s*$")
_MARKER: Final = re.compile(
    r"^\s*<!--\s*docs-(?P<kind>test: skip|test: needs|file:|output:)\s*(?P<arg>.*?)\s*-->"
    r"\s*$")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced block: the page and line of its opening fence, its language and text."""

    page: Path
    line: int
    lang: str
    text: str
    skip: str | None = None  # the reason given in a `docs-test: skip (...)` line
    file: str | None = None  # the name given in a `docs-file: NAME` line
    needs: str | None = None  # what a `docs-test: needs WHAT` line names ("sandbox")
    output: str | None = None  # the ```text block right after a ```sh block
    sample: str | None = None  # a `docs-output` block further down: its output, numbers vary

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of `page`, in order, a ```text block that shows a ```sh block's output
    folded into that block (as `output`) rather than listed on its own."""
    lines = page.read_text().splitlines()
    found: list[tuple[int, int, str, str]] = []  # opening line, closing line, lang, text
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent = len(opening["indent"])
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            j += 1
        text = "".join(line[indent:] + "\n" for line in lines[i + 1:j])
        found.append((i, j, opening["lang"], text))
        i = j + 1
    out: list[Block] = []
    for k, (start, _, lang, text) in enumerate(found):
        follows_sh = bool(out) and out[-1].lang == "sh" and out[-1].output is None
        if lang == "text" and follows_sh and _only_blank(lines, found[k - 1][1], start):
            out.append(dataclasses.replace(out.pop(), output=text))
            continue
        if lang in ("console", "text") and _is_sample(lines, start):
            shell = next((i for i in range(len(out) - 1, -1, -1) if out[i].lang == "sh"), None)
            if shell is None:
                raise ValueError(f"{page.name}:{start + 1}: a docs-output block with no ```sh "
                                 "block above it")
            out[shell] = dataclasses.replace(out[shell], sample=text)
            continue
        skip, file, needs = _marker(lines, start)
        out.append(Block(page, start + 1, lang, text, skip, file, needs=needs))
    return out


def _only_blank(lines: list[str], after: int, before: int) -> bool:
    return all(not line.strip() for line in lines[after + 1:before])


def _marker_line(lines: list[str], fence: int) -> re.Match[str] | None:
    """The docs- line just before the block at `fence` (blank lines between allowed)."""
    k = fence - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    return _MARKER.match(lines[k]) if k >= 0 else None


def _is_sample(lines: list[str], fence: int) -> bool:
    found = _marker_line(lines, fence)
    return found is not None and found["kind"] == "output:"


def _marker(lines: list[str], fence: int) -> tuple[str | None, str | None, str | None]:
    """The docs-test or docs-file line just before the block at `fence` (blank lines between
    allowed), as (skip reason, file name, what it needs)."""
    found = _marker_line(lines, fence)
    if found is None or found["kind"] == "output:":
        return None, None, None
    if found["kind"] == "file:":
        return None, found["arg"], None
    if found["kind"] == "test: needs":
        return None, None, found["arg"]
    return found["arg"].strip("()") or "no reason given", None, None
