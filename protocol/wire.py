"""The protocol's text form: referee messages built from JSON-like values, bot lines parsed.

Pure functions, no I/O (spec/PROTOCOL.md is the reference). Every message is one line whose first
word is its type. After positional arguments come `key value` pairs in which every value is ONE
token, so a bot in any language can skip a key it does not know:

- int: decimal; bool: ``true``/``false``; None: ``none``; empty string or empty list: ``-``;
- str: itself, any whitespace inside replaced by ``_``;
- list of scalars: the elements joined by ``,``; by ``;`` when the elements are group tokens
  such as ``run:R3,R4,W=5`` (an element holds ``,`` or ``:``);
- anything else (never sent by the v1 games): compact JSON.

A top-level list of dicts (tables, players, piles) is sent as one `item <key> k v ...` line per
element, a dict as one such line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ..engine.game import JSON, Rebuilt, by_init

PROTOCOL_VERSION: Final = 1
MAX_LINE: Final = 16384  # bytes in a line, without its newline; longer lines are malformed
BOT_MESSAGES: Final = ("id", "ready", "action", "pong", "info")



# ----------------------------------------------------------------------------------------------
# Values to tokens


def encode_value(value: JSON) -> str:
    """The one-token text of `value` (see the module docstring)."""
    # The plain types by their exact type (a subclass goes the long way): compiled tests and
    # direct calls, where a table of functions would call each through the interpreter.
    kind = type(value)
    if kind is str:
        return encode_text(value)
    if kind is int:
        return str(value)
    if value is None:
        return "none"
    if kind is bool:
        return "true" if value else "false"
    if kind is list or kind is tuple:
        return encode_list(value)
    if kind is float:
        return str(value)
    return _encode_any(value)


def _encode_any(value: JSON) -> str:
    # Every type, subclasses included; `encode_value` takes a shortcut for the plain types.
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return "_".join(value.split()) or "-"
    if isinstance(value, list | tuple) and all(_is_scalar(v) for v in value):
        parts = [encode_value(v) for v in value]
        if not parts:
            return "-"
        grouped = any("," in p or ":" in p for p in parts)
        return (";" if grouped else ",").join(parts)
    return "_".join(json.dumps(value, separators=(",", ":"), sort_keys=True).split())


def _is_scalar(value: JSON) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def encode_text(text: str) -> str:
    """A text as one token: whitespace runs as `_`, empty as `-`."""
    # The texts sent are mostly the same few hundred (cards, words): one lookup, where the
    # test below is a method call through the interpreter (no compiled `isprintable`).
    token = _TOKENS.get(text)
    if token is None:
        token = _token(text)
        if len(_TOKENS) >= 4096:  # a bounded memory
            _TOKENS.clear()
        _TOKENS[text] = token
    return token


_TOKENS: Final[dict[str, str]] = {}


def _token(text: str) -> str:
    # Every whitespace character but the ASCII space is unprintable: one C-speed test
    # finds the common case, a word that needs no change.
    if text.isprintable() and " " not in text:
        return text or "-"
    return "_".join(text.split()) or "-"


def encode_list(values: list[JSON] | tuple[JSON, ...]) -> str:
    """A list of scalars as one token: joined by `,`, or by `;` when an element holds `,` or
    `:` (group tokens); `-` when empty."""
    parts = []
    for v in values:
        kind = type(v)
        if kind is str:
            parts.append(encode_text(v))
        elif kind is int or kind is float:
            parts.append(str(v))
        elif v is None:
            parts.append("none")
        elif kind is bool:
            parts.append("true" if v else "false")
        else:  # not a plain scalar: the definition's own way
            return _encode_any(values)
    if not parts:
        return "-"
    text = ",".join(parts)
    if ":" in text or text.count(",") != len(parts) - 1:
        return ";".join(parts)
    return text


def encode_fields(fields: Mapping[str, JSON]) -> str:
    """`key value key value ...` for a flat mapping."""
    return " ".join([f"{encode_key(k)} {encode_value(v)}" for k, v in fields.items()])


def encode_key(key: str) -> str:
    text = _KEYS.get(key)
    if text is None:
        text = "_".join(str(key).split()) or "-"
        if len(_KEYS) < 1024 and type(key) is str:
            _KEYS[key] = text
    return text


_KEYS: dict[str, str] = {}


def _is_item_list(value: JSON) -> bool:
    return isinstance(value, list | tuple) and bool(value) and all(
        isinstance(v, Mapping) for v in value
    )


def join(*words: str) -> str:
    return " ".join(w for w in words if w)


# ----------------------------------------------------------------------------------------------
# Referee -> bot messages


def hello_line(game: str) -> str:
    return f"meldref {PROTOCOL_VERSION} {game}"


def setup_lines(
    game: str, seat: int, rules: Mapping[str, JSON], names: Sequence[str]
) -> list[str]:
    """`game`, one `rule` per option, one `player` per seat (name: rest of the line)."""
    lines = [f"game {game} players {len(names)} seat {seat}"]
    lines += [f"rule {encode_key(k)} {encode_value(v)}" for k, v in rules.items()]
    lines += [f"player {i} {' '.join(name.split()) or '-'}" for i, name in enumerate(names)]
    return lines


def event_line(event: Mapping[str, JSON]) -> str:
    """`event <kind> key value ...` from an `Event.for_seat` dict (written once for an
    `EventFields` that several seats are told)."""
    if type(event) is EventFields:
        if event.line is None:
            event.line = _event_line(event)
        return event.line
    return _event_line(event)


def _event_line(event: Mapping[str, JSON]) -> str:
    # `join("event", kind, encode_fields(the other fields))`, in one pass over the fields.
    # Read as a dict (compiled dict operations, no method calls); any other mapping, rare, is
    # copied into one first.
    return _dict_event_line(event if isinstance(event, dict) else dict(event))


def _dict_event_line(event: dict[str, JSON]) -> str:
    words = ["event", encode_value(event.get("event", "unknown"))]
    for key, value in event.items():
        if key != "event":
            words.append(encode_key(key))
            words.append(encode_value(value))
    return " ".join(words)


class EventFields(dict[str, JSON]):
    """An event as some seats see it (`Event.for_seat`), the same object for all of them, which
    keeps its line once written: an event every seat may see alike is encoded once."""

    __slots__ = ("line",)

    def __init__(self, fields: Mapping[str, JSON] | None = None) -> None:
        # `update`, not `super().__init__`: the same copy (the dict is new and empty), one
        # compiled call where the other goes through the interpreter. The referee passes none
        # and has `Event.for_seat` fill it: no copy at all.
        if fields is not None:
            self.update(fields)
        self.line: str | None = None


def view_lines(view: Mapping[str, JSON]) -> list[str]:
    """One `view` line with every scalar and list field, then one `item` line per dict."""
    flat = {k: v for k, v in view.items() if not (_is_item_list(v) or isinstance(v, Mapping))}
    lines = [join("view", encode_fields(flat))]
    for key, value in view.items():
        if isinstance(value, Mapping):
            lines.append(join("item", encode_key(key), encode_fields(value)))
        elif _is_item_list(value):
            lines += [join("item", encode_key(key), encode_fields(v)) for v in value]
    return lines


def legal_line(action: str) -> str:
    """`legal <action>`, its words joined by single spaces."""
    line = _LEGAL.get(action)
    if line is None:
        line = f"legal {' '.join(action.split())}"
        if len(_LEGAL) >= 1024:  # a bounded memory: the texts of a few games
            _LEGAL.clear()
        _LEGAL[action] = line
    return line


_LEGAL: dict[str, str] = {}


def go_line(request_id: int, decision: str, time_ms: int, bank_ms: int) -> str:
    return f"go {request_id} decision {encode_value(decision)} time {time_ms} bank {bank_ms}"


def error_line(request_id: int | None, reason: str) -> str:
    shown = "-" if request_id is None else str(request_id)
    return f"error {shown} {' '.join(reason.split()) or '-'}"


def gameover_line(result: Mapping[str, JSON]) -> str:
    return join("gameover", encode_fields(result))


def fit_line(line: str, limit: int = MAX_LINE) -> str:
    """`line`, or if its UTF-8 form is over `limit` bytes, its start ending in ``...`` within
    `limit`: the one place that keeps the promise of section 1 for every line sent."""
    data = line.encode("utf-8")
    if len(data) <= limit:
        return line
    return data[: limit - 3].decode("utf-8", "ignore") + "..."


QUOTE: Final = 200  # characters of a bot's own text quoted back in a reason or a fault


def quote(text: str, size: int = QUOTE) -> str:
    """A bot's text as a reason quotes it: whitespace runs as one space, cut to `size`."""
    return _clip(" ".join(text.split()), size)


# ----------------------------------------------------------------------------------------------
# Bot -> referee lines


@dataclass(frozen=True, slots=True)
class BotLine:
    """One parsed line from a bot: `kind` is a message type of BOT_MESSAGES or "malformed"."""

    kind: str
    request_id: int | None = None
    text: str = ""  # action text, pong token, id value, info text, or the malformed reason
    key: str = ""  # for `id`: name / author / version / ...

    def __init__(self, kind: str, request_id: int | None = None, text: str = "",
                 key: str = "") -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "request_id", request_id)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "key", key)

    def __reduce__(self) -> Rebuilt:
        return by_init(self)

    @property
    def malformed(self) -> bool:
        return self.kind == "malformed"


def bad(reason: str) -> BotLine:
    return BotLine("malformed", text=reason)


def parse_bot_line(raw: bytes | str) -> BotLine | None:
    """The message in one line from a bot (no newline), None for a blank line; never raises."""
    if isinstance(raw, bytes):
        if raw.startswith(b"action "):  # nearly every line
            answer = _plain_action(raw)
            if answer is not None:
                return answer
        if len(raw) > MAX_LINE:
            return bad(f"line longer than {MAX_LINE} bytes")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return bad(f"not UTF-8 ({exc.reason} at byte {exc.start})")
    if len(raw) > MAX_LINE and len(raw.encode("utf-8", "replace")) > MAX_LINE:
        return bad(f"line longer than {MAX_LINE} bytes")
    # Printable text has no control character: one C-speed test for the common case.
    if not raw.isprintable() and any(ord(c) < 32 and c not in "\t\r" for c in raw):
        return bad("control character in line")
    words = raw.split()
    if not words:
        return None
    kind, args = words[0].lower(), words[1:]
    if kind == "action":  # nearly every line: a direct compiled call, not one through the table
        return _parse_action(args)
    parser = _PARSERS.get(kind)
    if parser is None:
        return bad(f"unknown message type {_clip(words[0])!r} (expected one of "
                   f"{', '.join(BOT_MESSAGES)})")
    return parser(args)


def _plain_action(raw: bytes) -> BotLine | None:
    """`action <id> <text>` as the general parse reads it, for a line written plainly (its
    words parted by single spaces, no control or other whitespace character, UTF-8, within
    the length): the words are then the line's own slices, not split and joined again. None
    for any other line (the general parse decides it)."""
    if len(raw) > MAX_LINE:
        return None
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Printable: no control character and no whitespace but the ASCII space (`_token`).
    if not line.isprintable() or "  " in line or line[-1] == " ":
        return None
    space = line.find(" ", 7)
    if space < 0:
        return None
    request_id = _request_id(line[7:space])
    if request_id is None:
        return None
    return BotLine("action", request_id=request_id, text=line[space + 1:])


def _clip(text: str, size: int = 40) -> str:
    return text if len(text) <= size else text[:size] + "..."


def _parse_id(args: list[str]) -> BotLine:
    if not args:
        return bad("`id` needs a key and a value, e.g. `id name mybot`")
    return BotLine("id", key=args[0].lower(), text=" ".join(args[1:]))


def _parse_ready(args: list[str]) -> BotLine:
    return BotLine("ready", text=" ".join(args))


def _parse_action(args: list[str]) -> BotLine:
    if len(args) < 2:
        return bad("`action` needs the request id and the action, e.g. `action 7 draw pile`")
    request_id = _request_id(args[0])
    if request_id is None:
        return bad(f"`action` id {_clip(args[0])!r} is not a request id (a whole number)")
    return BotLine("action", request_id=request_id, text=" ".join(args[1:]))


def _request_id(word: str) -> int | None:
    if not (word.isascii() and word.isdigit()) or len(word) > 18:
        return None
    return int(word)


def _parse_pong(args: list[str]) -> BotLine:
    if len(args) != 1:
        return bad("`pong` needs exactly the token of the ping, e.g. `pong 3`")
    return BotLine("pong", text=args[0])


def _parse_info(args: list[str]) -> BotLine:
    return BotLine("info", text=" ".join(args))


_PARSERS: Final = {
    "id": _parse_id,
    "ready": _parse_ready,
    "action": _parse_action,
    "pong": _parse_pong,
    "info": _parse_info,
}


# ----------------------------------------------------------------------------------------------
# Reading referee lines back (tests, transcripts, Python bots)


def split_fields(words: Sequence[str]) -> dict[str, str]:
    """`key value key value ...` words into a dict of raw tokens."""
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}


def decode_list(token: str) -> list[str]:
    """The elements of a list token (``-`` is the empty list; group lists split on ``;``)."""
    if token == "-":
        return []
    return token.split(";") if ";" in token or ":" in token else token.split(",")
