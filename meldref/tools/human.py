"""`meldref play`: a person plays one seat in the terminal against bots, through the referee.

`HumanSeat` is a `Seat` like any bot, and knows only what its seat may know: the observation
and the events as that seat sees them. The referee's request answers the rest: `hint` lists the
request's legal actions, and a mistake is explained with the engine's own reason (the
request's `check`) before anything is answered, so a person's slips are not bot faults.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..engine.cards import Card, CardError, Kind, sort_key
from ..engine.game import JSON, EventKind, GameInfo, Rules
from ..protocol.errors import BotCrashedError, Fault, FaultOutcome
from ..protocol.referee import MatchPolicy, close_all
from ..protocol.seats import BotSpec, Reply, Request, Seat, Setup
from ..replay.games import presentation
from ..replay.words import describe_event
from ..tournament.runner import make_seats, play_recorded
from ..tournament.schedule import BotEntry

SHORTCUTS = {"p": "draw pile", "d": "draw discard", "dp": "draw pile", "dd": "draw discard"}
COMMANDS_HELP: Final = """\
Other commands: hint (the legal actions, numbered, grouped by kind and target; then type a
number), table (everything again, in full), help, quit."""

# How each card prints in a terminal (rich styles; none off a terminal or with NO_COLOR):
# Phase 10 by its colour, Five Crowns by the suit colours of the deck.
CARD_STYLES: Final = {"R": "bold red", "B": "bold blue", "Y": "bold yellow", "G": "bold green",
                      "*": "yellow", "H": "red", "C": "green", "S": "bold", "D": "blue"}
SPECIAL_STYLES: Final = {Kind.WILD: "bold magenta", Kind.SKIP: "bold reverse",
                         Kind.JOKER: "bold magenta"}
TOKEN: Final = re.compile(r"[A-Za-z0-9*]+")


def help_text(info: GameInfo) -> str:
    """`help` in a game: its actions as the protocol writes them, with what each does (the
    game's presentation says them), then the other commands."""
    examples = presentation(info.name).examples
    width = max((len(action) for action, _ in examples), default=0) + 2
    lines = [f"  {action.ljust(width)}({what})" for action, what in examples]
    return "\n".join(["Type an action as the protocol writes it, for example:", *lines,
                      COMMANDS_HELP])


class QuitGame(Exception):
    """The person typed quit (or closed the input)."""


class HumanSeat(Seat):
    """A seat played from the terminal; mistakes are explained and asked again."""

    def __init__(self, info: GameInfo, seat: int, console: Console,
                 read: Callable[[str], str] = input, names: Sequence[str] = ()) -> None:
        self.info = info
        self.seat = seat
        self.name = "you"
        self.console = console
        self.read = read
        self.names = list(names)
        self.legal: list[str] = []
        self.request: Request | None = None
        self.shown: dict[str, list[dict[str, JSON]]] = {}  # each table as last printed
        self.hand_shown: object = None  # the hand (round) those tables belong to

    # -- Seat ----------------------------------------------------------------------------------

    def start(self, setup: Setup) -> None:
        self.names = list(setup.names)
        self.say(f"[bold]{self.info.title}[/bold]: you are seat {self.seat} of "
                 f"{setup.players}. Type [bold]help[/bold] for the action forms, "
                 "[bold]hint[/bold] for the legal actions.")

    def notify(self, events: Sequence[Mapping[str, JSON]]) -> None:
        for event in events:
            if event.get("event") == EventKind.GAME_OVER:
                continue
            self.say("  " + describe_event(event, self._names(), self.info.name), markup=False)

    def decide(self, request: Request) -> Reply:
        began = time.perf_counter()
        self.request = request
        self.show_table(request.observation.to_json())
        self.legal = []
        while True:
            try:
                text = self.read(f"{request.decision}> ").strip()
            except EOFError:
                closed = Fault(FaultOutcome.CLOSED, "the player closed the input", None, True)
                raise BotCrashedError(closed, time.perf_counter() - began) from None
            action = self.interpret(text, request)
            if action is not None:
                return Reply(action, time.perf_counter() - began)

    def reject(self, request_id: int | None, reason: str) -> None:
        self.say(f"[red]refused:[/red] {escape(reason)}")

    def finish(self, result: Mapping[str, JSON]) -> None:
        winners = ", ".join(self._who(s) for s in result.get("winners", [])) or "the deck"
        seats = [f"{self._who(s)} {score} (place {place})" for s, (score, place) in
                 enumerate(zip(result.get("scores", []), result.get("places", []), strict=False))]
        self.say(f"[bold]game over[/bold] ({result.get('termination')}): {winners} won; "
                 f"{escape(', '.join(seats))}")

    # -- input ---------------------------------------------------------------------------------

    def interpret(self, text: str, request: Request) -> str | None:
        """The action text if `text` is a legal action (or a shortcut), else None after
        explaining why."""
        word = text.lower()
        if not word:
            return None
        if word in ("quit", "exit", "q"):
            raise QuitGame()
        if word in ("help", "?", "h"):
            self.say(help_text(self.info), markup=False)
            return None
        if word in ("hint", "hints", "legal"):
            self.show_hints()
            return None
        if word in ("table", "t", "show"):
            self.show_table(request.observation.to_json(), full=True)
            return None
        if word.isdigit():
            return self.pick(int(word))
        return self.check(SHORTCUTS.get(word, text))

    def pick(self, number: int) -> str | None:
        legal = self.legal or self.legal_texts()
        if not 1 <= number <= len(legal):
            self.say(f"no legal action number {number} (type hint to list them)")
            return None
        return legal[number - 1]

    def check(self, text: str) -> str | None:
        """`text` if the referee would take it now, else None after saying why."""
        judge = self.request.check if self.request is not None else None
        reason = judge(text) if judge is not None else None
        if reason is not None:
            self.say(f"[red]not allowed:[/red] {escape(reason)}")
            return None
        return text

    def legal_texts(self) -> list[str]:
        hints = self.request.hints if self.request is not None else None
        return list(hints()) if hints is not None else []

    def show_hints(self) -> None:
        """The legal actions numbered, one line per kind and target (`place 7: [1] QH [2] 9S`),
        so that Solitaire's ninety-odd fit on a screen."""
        self.legal = self.legal_texts()
        for key, items in group_actions(self.legal):
            cells = "  ".join(f"[dim]{number})[/dim] {coloured(rest)}"
                              for number, rest in items)
            self.say(f"  [bold]{escape(key)}[/bold]: {cells}")
        self.say("type a number to play that action")

    # -- output --------------------------------------------------------------------------------

    def say(self, text: str, markup: bool = True) -> None:
        self.console.print(text, markup=markup, highlight=False, soft_wrap=True)

    def show_table(self, view: Mapping[str, JSON], full: bool = False) -> None:
        """The seat's view: its hand sorted and grouped, the piles, the table, every seat. A
        table already printed this hand is told by what changed in it (`full`: in full)."""
        head = [f"seat {self.seat}", f"to decide: {view.get('decision')}"]
        for key in ("hand_number", "round", "phase", "needs", "wild_rank", "wild"):
            if view.get(key) not in (None, "", []):
                head.append(f"{key.replace('_', ' ')}: {view[key]}")
        self.say(" | ".join(str(h) for h in head), markup=False)
        if isinstance(view.get("hand"), list):
            self.say(f"your hand: {coloured(group_hand(view['hand']))}")
        shown = ("draw_top", "discard_top", "draw_pile_size", "piles_closed", "moves",
                 "went_out", "last_turn", "laid_this_turn", "victims")
        piles = [f"{k.replace('_', ' ')}: {_cell(view[k])}" for k in shown
                 if view.get(k) not in (None, False, [])]
        if piles:
            self.say(coloured("  ".join(piles)))
        hand = (view.get("hand_number"), view.get("round"))
        if hand != self.hand_shown:  # a new hand: every table afresh
            self.shown, self.hand_shown = {}, hand
        for key, value in view.items():
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                rows = [dict(v) for v in value]
                if full or key not in self.shown:
                    self.console.print(records_table(key, rows))
                else:
                    for line in changes(key, self.shown[key], rows):
                        self.say(coloured(line))
                self.shown[key] = rows

    def _names(self) -> list[str]:
        names = list(self.names)
        if 0 <= self.seat < len(names):
            names[self.seat] = "you"
        return names

    def _who(self, seat: int) -> str:
        return "you" if seat == self.seat else f"seat {seat}"


def group_hand(tokens: Sequence[str]) -> str:
    """Cards sorted, numbers grouped: `R1 B1 | G3 | Y7 Y7 | W W | S`."""
    cards: list[Card] = []
    for token in tokens:
        try:
            cards.append(Card.parse(token))
        except CardError:
            continue
    cards.sort(key=sort_key)
    groups: list[list[str]] = []
    last: tuple[Kind, int] | None = None
    for card in cards:
        key = (card.kind, card.rank)
        if key != last:
            groups.append([])
            last = key
        groups[-1].append(card.text)
    return " | ".join(" ".join(g) for g in groups) or "(empty)"


def records_table(title: str, rows: Sequence[Mapping[str, JSON]]) -> Table:
    table = Table(title=title.replace("_", " "), title_justify="left")
    columns = list(dict.fromkeys(k for row in rows for k in row))
    for column in columns:
        table.add_column(column.replace("_", " "))
    for row in rows:
        table.add_row(*(coloured(_cell(row.get(c))) for c in columns))
    return table


def changes(title: str, before: Sequence[Mapping[str, JSON]],
            after: Sequence[Mapping[str, JSON]]) -> list[str]:
    """What changed in a table since it was printed, a line per row (rows by their first
    column, `seat 1` or `id 3`): `seats: seat 0 hand size 10 -> 11`."""
    name = title.replace("_", " ")

    def label(row: Mapping[str, JSON]) -> str:
        key = next(iter(row), "")
        return f"{key.replace('_', ' ')} {_cell(row.get(key))}"

    old = {label(row): row for row in before}
    lines = []
    for row in after:
        was = old.pop(label(row), None)
        if was is None:
            fields = ", ".join(f"{k.replace('_', ' ')} {_cell(v)}" for k, v in row.items())
            lines.append(f"  {name}: new: {fields}")
            continue
        moved = [f"{k.replace('_', ' ')} {_cell(was.get(k))} -> {_cell(v)}"
                 for k, v in row.items() if was.get(k) != v]
        if moved:
            lines.append(f"  {name}: {label(row)} {', '.join(moved)}")
    lines.extend(f"  {name}: {gone} gone" for gone in old)
    return lines


def group_actions(actions: Sequence[str]) -> list[tuple[str, list[tuple[int, str]]]]:
    """The actions numbered from 1, grouped by kind and target: the first word, and the second
    too when it is a number (a pile, a group): `place 7` -> [(17, "QH"), ...]."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for number, text in enumerate(actions, start=1):
        words = text.split()
        cut = 2 if len(words) > 2 and words[1].isdigit() else 1
        key, rest = " ".join(words[:cut]), " ".join(words[cut:])
        groups.setdefault(key, []).append((number, rest or key))
    return list(groups.items())


def coloured(text: str) -> str:
    """`text` as rich markup with each card token in its colour (other text escaped)."""
    out, last = [], 0
    for match in TOKEN.finditer(text):
        out.append(escape(text[last:match.start()]))
        out.append(_styled(match.group()))
        last = match.end()
    out.append(escape(text[last:]))
    return "".join(out)


def _styled(token: str) -> str:
    try:
        card = Card.parse(token)
    except CardError:
        return escape(token)
    style = SPECIAL_STYLES.get(card.kind) or CARD_STYLES.get(card.suit)
    return f"[{style}]{escape(token)}[/]" if style else escape(token)


def _cell(value: JSON) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return " ".join(map(str, value))
    return str(value)


# A person has all the time they want, and their slips are explained before they reach the
# referee; a bot program's seat is refereed as in any match.
PERSON_POLICY: Final = MatchPolicy(move_time=24 * 3600.0, first_move_time=24 * 3600.0,
                                   startup_time=30.0, illegal_retries=5)


def play_person(info: GameInfo, rules: Rules, bots: Sequence[BotEntry], seat: int, seed: int,
                replay: Path | None, console: Console,
                read: Callable[[str], str] = input) -> None:
    """A game in which a person plays `seat` from the terminal and `bots` the others.
    `QuitGame` or `KeyboardInterrupt` when the person leaves; the bots are closed either way."""
    human = HumanSeat(info, seat, console, read)
    me = BotEntry("you", BotSpec("human"))
    entries = [*bots[:seat], me, *bots[seat:]]
    seats: list[Seat] = []
    try:
        others = make_seats(info, bots, seed, "play", [None] * len(bots))
        seats = [*others[:seat], human, *others[seat:]]
        play_recorded(info, rules, entries, seats, seed, PERSON_POLICY, replay)
    finally:
        close_all([s for s in seats if s is not human])
