"""Whole numbers in action texts: ASCII digits only, a few of them.

`str.isdigit()` accepts "²" and "٣" (which `int()` then rejects or reads), and `int()` refuses
texts of more than 4300 digits; both would escape a parser as a plain ValueError. Every number an
action holds (a seat, a group id, a pile, a phase, a declared value) is small.
"""

from __future__ import annotations

from typing import Final

from .game import InvalidActionError

MAX_DIGITS: Final = 6


def is_count(text: str) -> bool:
    """Whether `text` is a whole number as actions write them: 1..6 ASCII digits."""
    return 0 < len(text) <= MAX_DIGITS and text.isascii() and text.isdigit()


def quoted(text: str, limit: int = 60) -> str:
    """`text` for an error message: stripped, cut to `limit` characters, repr-quoted."""
    text = text.strip()
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def parse_count(text: str, what: str) -> int:
    """`text` as a whole number; `InvalidActionError` naming `what` if it is not one."""
    if not is_count(text):
        raise InvalidActionError(f"{what} {quoted(text, 20)} is not a whole number "
                                 f"(digits 0-9, at most {MAX_DIGITS})")
    return int(text)
