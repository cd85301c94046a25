"""The meldref bot SDK for Python: the protocol done once, so a bot is only its decisions.

Standard library only: import it as `meldref.bots.sdk`, or copy this one file next to your bot
and `import sdk`. It does what spec/PROTOCOL.md asks of every bot (section 14):

- the handshake (`id` lines, `ready`), `ping`/`pong` at any time (also while the bot thinks),
  `quit` and end of input, unknown messages and keys ignored, several games per process;
- every line written whole and flushed (section 2), from one writer, so nothing sits in a
  buffer; logs go to standard error (`log`);
- each request parsed into typed values: `Request` (id, decision, clocks, `legal` hints) and its
  `View` (`Card`, `Group`, `TableGroup`, `Seat`, `Pile`), with `View.data` holding the view in
  the engine's JSON form (`to_json()` of the engine's views, exactly);
- one method per decision kind (`draw`, `play`, `discard`, `place`) on `Bot`; each may return the
  action (a string, or any value whose `str()` is the action), or yield better and better
  actions (anytime): the SDK answers with the last one when the bot finishes or when its time is
  up, whichever comes first, and a bot that has yielded nothing by then gets `Bot.fallback`,
  a legal action built from the hints or the view. The SDK never misses a deadline because the
  bot thinks too long: the decision runs on a worker thread and the SDK keeps the clock;
- helpers that reuse the engine when meldref is installed (`engine_view`, `lay_options`,
  `hit_options`, `go_out`, `best_discard`, `legal_actions`): imported on first use, with a clear
  message when it is not.

A bot:

    from meldref.bots.sdk import Bot, run

    class MyBot(Bot):
        name = "mybot"

        def draw(self, request):
            return "draw pile"

    run(MyBot())

Decisions without a method of their own go to `Bot.choose`, whose default is `Bot.fallback`.
"""

from __future__ import annotations

import importlib
import os
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import GeneratorType, ModuleType
from typing import IO, TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # for the type checker only: the SDK runs on the standard library alone
    from meldref.engine.game import JSON, GameInfo
    from meldref.engine.game import Bot as InProcessBot

PROTOCOL_VERSION = "1"
DECISIONS = ("draw", "play", "discard", "place")

# Keys whose values are lists (an empty list is `-`) and keys that stay text (never numbers,
# never None): what the wire form of section 1 cannot say by itself.
LIST_KEYS = frozenset({"hand", "phases_left", "victims", "completed", "cards", "discarded"})
TEXT_KEYS = frozenset({"needs", "natural", "wild_rank", "decision", "group"})
TABLE_KEYS = frozenset({"table", "seats", "piles"})

# A value of one `key value` pair as decoded (a list for LIST_KEYS).
WireValue = str | int | bool | None | list[int | str]

# How much of a decision's clock the SDK gives the bot (the rest covers pipes and scheduling).
TIME_SHARE = 0.85
SAFETY_MS = 40
MIN_THINK_MS = 5
# Starts the stderr line the SDK writes when a decision raised (a traceback follows it):
# `meldref bot check` counts these and fails the bot.
SDK_RAISED = "meldref-sdk: decision raised"


def log(*parts: object) -> None:
    """Debugging output: standard error, never standard output (section 8)."""
    print(*parts, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True, slots=True)
class Card:
    """A card token (section 9): `R7`, `W`, `S` (Phase 10); `QH`, `10*`, `X` (Five Crowns)."""

    text: str
    kind: str  # "number", "wild" (Phase 10 W), "skip" (S), "joker" (X)
    rank: int  # 1..12 or 3..13; 0 for W, S, X
    suit: str  # colour R/B/Y/G or suit */H/C/S/D; "" for W, S, X

    @staticmethod
    def parse(text: str) -> Card:
        """The card written as `text` (case-insensitive); ValueError if it is none."""
        t = text.strip().upper()
        special = {"W": "wild", "S": "skip", "X": "joker"}
        if t in special:
            return Card(t, special[t], 0, "")
        if t[:1] in "RBYG" and t[1:].isdigit() and 1 <= int(t[1:]) <= 12:
            return Card(t, "number", int(t[1:]), t[0])
        ranks = {"J": 11, "Q": 12, "K": 13, **{str(r): r for r in range(3, 11)}}
        if t[-1:] in "*HCSD" and t[:-1] in ranks:
            return Card(t, "number", ranks[t[:-1]], t[-1])
        raise ValueError(f"not a card: {text!r}")

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Group:
    """A group token (section 9): `run:R3,R4,W=5,G6`; `declared` is what each card stands for
    (its `=` value, or None)."""

    kind: str  # set, run, colour, book
    cards: tuple[Card, ...]
    declared: tuple[str | None, ...]

    @staticmethod
    def parse(token: str) -> Group:
        kind, _, body = token.partition(":")
        cards, declared = [], []
        for part in body.split(","):
            text, eq, value = part.partition("=")
            cards.append(Card.parse(text))
            declared.append(value if eq else None)
        return Group(kind, tuple(cards), tuple(declared))

    def __str__(self) -> str:
        pairs = zip(self.cards, self.declared, strict=True)
        body = ",".join(c.text if d is None else f"{c.text}={d}" for c, d in pairs)
        return f"{self.kind}:{body}"


@dataclass(frozen=True, slots=True)
class TableGroup:
    """A group on the table: Phase 10's `id` (to name in `hit`) and `owner`; Five Crowns' `owner`
    is the seat that laid it (`id` None)."""

    id: int | None
    owner: int
    group: Group


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat's public record (`item seats`); the game's other keys are in `data`."""

    seat: int
    playing: bool
    score: int
    hand_size: int
    data: Mapping[str, JSON]


@dataclass(frozen=True, slots=True)
class Pile:
    """A Solitaire pile (`item piles`): its name (dealt size), wild rank, state and cards."""

    size: int
    wild_rank: str
    closed: bool
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class View:
    """A seat's view (the `view` line and its `item` lines), typed; `data` is the whole view as
    the engine's `to_json()` writes it (every key, also those this class does not name)."""

    data: Mapping[str, JSON]
    seat: int
    decision: str
    hand: tuple[Card, ...]
    discard_top: Card | None  # Phase 10, Five Crowns
    draw_top: Card | None  # Solitaire
    table: tuple[TableGroup, ...]
    seats: tuple[Seat, ...]
    piles: tuple[Pile, ...]

    def __getitem__(self, key: str) -> JSON:
        return self.data[key]

    def get(self, key: str, default: JSON = None) -> JSON:
        return self.data.get(key, default)

    def is_wild(self, card: Card | str | None) -> bool:
        """Whether `card` is wild here: a Wild, a Joker, or (Five Crowns) the round's wild
        rank; False for None."""
        if card is None:
            return False
        card = Card.parse(card) if isinstance(card, str) else card
        if card.kind in ("wild", "joker"):
            return True
        rank = self.data.get("wild_rank")
        return card.kind == "number" and rank is not None and card.text[:-1] == str(rank)

    @property
    def victims(self) -> tuple[int, ...]:
        """Phase 10: the seats a Skip discarded now may skip."""
        return tuple(self.data.get("victims") or ())

    @property
    def open_piles(self) -> tuple[Pile, ...]:
        return tuple(p for p in self.piles if not p.closed)

    @staticmethod
    def from_json(data: Mapping[str, JSON]) -> View:
        """The typed view of a view in the engine's JSON form."""

        def card(text: str | None) -> Card | None:
            return None if text is None else Card.parse(text)

        table = tuple(
            TableGroup(t.get("id"), t.get("owner", t.get("seat", -1)), Group.parse(t["group"]))
            for t in data.get("table") or ()
        )
        seats = tuple(
            Seat(s["seat"], bool(s.get("playing", True)), s.get("score", 0),
                 s.get("hand_size", 0), s)
            for s in data.get("seats") or ()
        )
        piles = tuple(
            Pile(p["size"], str(p["wild_rank"]), bool(p["closed"]),
                 tuple(Card.parse(c) for c in p["cards"]))
            for p in data.get("piles") or ()
        )
        return View(
            data=data,
            seat=data.get("seat", 0),
            decision=data.get("decision", ""),
            hand=tuple(Card.parse(c) for c in data.get("hand") or ()),
            discard_top=card(data.get("discard_top")),
            draw_top=card(data.get("draw_top")),
            table=table,
            seats=seats,
            piles=piles,
        )


@dataclass(frozen=True, slots=True)
class Game:
    """The game being played (`game`, `rule` and `player` lines)."""

    name: str
    players: int
    seat: int
    rules: Mapping[str, str]  # option -> value, as the `rule` lines write them
    names: Mapping[int, str]


@dataclass(slots=True)
class Request:
    """One decision request: `go <id> decision <d> time <ms> bank <ms>` and what came with it."""

    id: int
    decision: str
    time_ms: int
    bank_ms: int
    view: View
    legal: tuple[str, ...]
    game: Game
    received: float = field(default_factory=time.monotonic)  # when the `go` line was read
    answer_by: float = 0.0  # monotonic time at which the SDK answers, finished or not
    cancelled: bool = False  # set when the SDK has answered without the bot

    def time_left(self) -> float:
        """Seconds until the SDK answers for the bot."""
        return self.answer_by - time.monotonic()

    @property
    def out_of_time(self) -> bool:
        return self.cancelled or time.monotonic() >= self.answer_by


# ----------------------------------------------------------------------------------------------
# The wire form (section 1) back to JSON values


def decode_value(key: str, token: str) -> WireValue:
    """One `key value` pair's value, as the engine's JSON holds it."""
    if key in LIST_KEYS:
        if token in ("-", "none"):
            return []
        parts = token.split(";") if ";" in token or ":" in token else token.split(",")
        return [int(p) if _is_int(p) else p for p in parts]
    if key in TEXT_KEYS:
        return "" if token == "-" else token.replace("_", " ") if key == "needs" else token
    if token == "none":
        return None
    if token in ("true", "false"):
        return token == "true"
    if _is_int(token):
        return int(token)
    if key in TABLE_KEYS and token == "-":
        return []
    return token


def _is_int(token: str) -> bool:
    return token.lstrip("-").isdigit() and token != "-"


def decode_pairs(words: Sequence[str]) -> dict[str, WireValue]:
    """`key value key value ...` into a dict of JSON values (an odd last word is dropped)."""
    return {words[i]: decode_value(words[i], words[i + 1]) for i in range(0, len(words) - 1, 2)}


def raw_pairs(words: Sequence[str]) -> dict[str, str]:
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}


# ----------------------------------------------------------------------------------------------
# The bot


Answer = object  # an action: a string, a value whose str() is one, or a generator of them


class Bot:
    """Subclass it and write the decisions you want; every other one gets `choose`."""

    name = "sdk-bot"
    author = ""
    version = ""
    games: tuple[str, ...] = ()  # the games it plays (`id games`); empty: every game
    time_share = TIME_SHARE  # of each decision's own time; the bank is never spent

    def __init__(self) -> None:
        self.game: Game | None = None
        self._out: Callable[[str], None] = _stdout_writer(sys.stdout)

    # -- decisions (override) ------------------------------------------------------------------

    def draw(self, request: Request) -> Answer:
        """Phase 10 and Five Crowns: `draw pile` or `draw discard`."""
        return self.choose(request)

    def play(self, request: Request) -> Answer:
        """Phase 10: `lay ...`, `hit <id> <card>` or `discard <card> [<seat>]`."""
        return self.choose(request)

    def discard(self, request: Request) -> Answer:
        """Five Crowns: `discard <card> [<group>...]` (groups go out, or lay on a last turn)."""
        return self.choose(request)

    def place(self, request: Request) -> Answer:
        """Solitaire: `place <pile> <card>`."""
        return self.choose(request)

    def choose(self, request: Request) -> Answer:
        """Any decision without its own method (and new kinds): `fallback`."""
        return self.fallback(request)

    # -- what happens around the decisions (override if needed) --------------------------------

    def new_game(self, game: Game) -> None:
        """A game starts (after its `rule` and `player` lines)."""

    def event(self, kind: str, fields: Mapping[str, WireValue]) -> None:
        """Something happened (`event <kind> ...`), in the order it happened."""

    def error(self, request_id: int | None, reason: str) -> None:
        """An answer was refused; a new request follows if the match allows one."""
        log(f"{self.name}: error {request_id}: {reason}")

    def game_over(self, result: Mapping[str, WireValue]) -> None:
        """The game is over (`gameover`)."""

    # -- tools ---------------------------------------------------------------------------------

    def fallback(self, request: Request) -> str:
        """A legal action: the first `legal` hint, else a plain one built from the view (draw
        from the pile; discard the first card, a Skip naming the first victim; put the drawn
        card into the first open pile and take it out again)."""
        if request.legal:
            return request.legal[0]
        view = request.view
        if request.decision == "draw":
            return "draw discard" if view.get("draw_pile_size") == 0 else "draw pile"
        if request.decision == "place":
            pile = view.open_piles[0]
            return f"place {pile.size} {view.draw_top}"
        plain = [c for c in view.hand if c.kind != "skip"]
        if plain:
            return f"discard {plain[0]}"
        victims = view.victims
        return f"discard S {victims[0]}" if victims else "discard S"

    def info(self, text: str) -> None:
        """An `info` line: free text the referee logs (your evaluation, your plan)."""
        self._out("info " + " ".join(text.split()))


def _stdout_writer(stream: IO[str]) -> Callable[[str], None]:
    """One writer for every line: whole lines, flushed at once, one thread at a time; a closed
    pipe ends the bot (the referee is gone)."""
    lock = threading.Lock()

    def write(line: str) -> None:
        with lock:
            try:
                stream.write(line + "\n")
                stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                os._exit(0)

    return write


# ----------------------------------------------------------------------------------------------
# Running a bot


class _Thinking:
    """One decision on a worker thread, keeping the best answer it has given so far."""

    def __init__(self, bot: Bot, request: Request) -> None:
        self.request = request
        self.best: Answer = None
        self.done = threading.Event()
        self.failure: BaseException | None = None
        method = getattr(bot, request.decision, None) if request.decision in DECISIONS else None
        self.method = method or bot.choose
        threading.Thread(target=self._run, daemon=True, name=f"decision-{request.id}").start()

    def _run(self) -> None:
        try:
            answer = self.method(self.request)
            if isinstance(answer, GeneratorType | Iterator) and not isinstance(answer, str):
                for better in answer:
                    if self.request.cancelled:
                        break
                    self.best = better
            else:
                self.best = answer
        except Exception as exc:  # a bug in the bot: answer with the fallback, say why
            self.failure = exc
        finally:
            self.done.set()


# The `info` line by which a bot says it answered a request with its fallback (spec 5).
FALLBACK_NOTE: Final = "fallback"


def report_failure(bot: Bot, request: Request, failure: BaseException, count: int,
                   fallback: bool) -> None:
    """A decision raised: one `SDK_RAISED` line and the whole traceback, on stderr. The bot
    still answers (its best yielded answer, else `Bot.fallback`), so only this tells."""
    instead = "the fallback" if fallback else "its last yielded answer"
    log(f"{SDK_RAISED}: {bot.name}: {request.decision} (request {request.id}) raised "
        f"{type(failure).__name__}: {failure} (exception {count} of this process); answered "
        f"with {instead}")
    traceback.print_exception(failure, file=sys.stderr)
    sys.stderr.flush()


class Runner:
    """Reads the referee's lines, keeps the session's state, and asks the bot."""

    def __init__(self, bot: Bot, infile: IO[str], outfile: IO[str]) -> None:
        self.bot = bot
        self.send = bot._out = _stdout_writer(outfile)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(infile,), daemon=True).start()
        self.game: Game | None = None
        self.rules: dict[str, str] = {}
        self.names: dict[int, str] = {}
        self.failures = 0  # decisions that raised in this process (each logged with its traceback)
        self._reset_request()

    def _read(self, infile: IO[str]) -> None:
        for line in infile:
            self.lines.put(line)
        self.lines.put(None)

    def _reset_request(self) -> None:
        self.view: dict[str, WireValue] = {}
        self.items: dict[str, list[dict[str, WireValue]]] = {}
        self.legal: list[str] = []

    def run(self) -> None:
        """Until `quit` or the end of input."""
        while True:
            line = self.lines.get()
            if line is None or not self.handle(line):
                return

    def handle(self, line: str) -> bool:
        """One line; False when the session is over."""
        words = line.split()
        if not words:
            return True
        kind, args = words[0].lower(), words[1:]
        handler = _HANDLERS.get(kind)
        return True if handler is None else handler(self, args)

    # -- messages ------------------------------------------------------------------------------

    def _hello(self, args: list[str]) -> bool:
        if args[:1] != [PROTOCOL_VERSION]:
            log(f"{self.bot.name}: protocol version {args[:1]} is not {PROTOCOL_VERSION}")
            return False
        bot = self.bot
        self.send(f"id name {bot.name}")
        for key in ("author", "version"):
            if getattr(bot, key):
                self.send(f"id {key} {getattr(bot, key)}")
        if bot.games:
            self.send(f"id games {','.join(bot.games)}")
        self.send("ready")
        return True

    def _game(self, args: list[str]) -> bool:
        pairs = raw_pairs(args[1:])
        self.game = Game(args[0] if args else "-", int(pairs.get("players", 0)),
                         int(pairs.get("seat", 0)), {}, {})
        self.rules, self.names = {}, {}
        return True

    def _rule(self, args: list[str]) -> bool:
        if len(args) >= 2:
            self.rules[args[0]] = args[1]
        return True

    def _player(self, args: list[str]) -> bool:
        if args and args[0].isdigit():
            self.names[int(args[0])] = " ".join(args[1:])
        return True

    def _started(self) -> Game:
        """The game with its rules and names (told to the bot before its first event)."""
        game = self.game or Game("-", 0, 0, {}, {})
        if game.rules is not self.rules:
            game = Game(game.name, game.players, game.seat, self.rules, self.names)
            self.game = self.bot.game = game
            self.bot.new_game(game)
        return game

    def _event(self, args: list[str]) -> bool:
        self._started()
        if args:
            self.bot.event(args[0], decode_pairs(args[1:]))
        return True

    def _view(self, args: list[str]) -> bool:
        self._reset_request()
        self.view = decode_pairs(args)
        return True

    def _item(self, args: list[str]) -> bool:
        if args:
            self.items.setdefault(args[0], []).append(decode_pairs(args[1:]))
        return True

    def _legal(self, args: list[str]) -> bool:
        self.legal.append(" ".join(args))
        return True

    def _go(self, args: list[str]) -> bool:
        received = time.monotonic()
        if not args or not args[0].isdigit():
            return True
        pairs = raw_pairs(args[1:])
        data: dict[str, WireValue | list[dict[str, WireValue]]] = dict(self.view)
        for name, records in self.items.items():
            data[name] = records
        request = Request(
            id=int(args[0]),
            decision=pairs.get("decision", ""),
            time_ms=int(pairs.get("time", "1000")),
            bank_ms=int(pairs.get("bank", "0")),
            view=View.from_json(data),
            legal=tuple(self.legal),
            game=self._started(),
            received=received,
        )
        think_ms = min(request.time_ms * self.bot.time_share,
                       request.time_ms + request.bank_ms - SAFETY_MS)
        request.answer_by = received + max(MIN_THINK_MS, think_ms) / 1000
        return self._decide(request)

    def _decide(self, request: Request) -> bool:
        """Think on a worker; meanwhile answer pings; answer at the latest at `answer_by`."""
        thinking = _Thinking(self.bot, request)
        while not thinking.done.is_set():
            wait = request.answer_by - time.monotonic()
            if wait <= 0:
                break
            try:
                line = self.lines.get(timeout=min(wait, 0.005))
            except queue.Empty:
                continue
            if line is None:
                return False
            words = line.split()
            if words[:1] == ["quit"]:
                return False
            if words[:1] == ["ping"] and len(words) > 1:
                self.send(f"pong {words[1]}")
            elif words:  # nothing else comes during a request; keep it for later
                self.handle(line)
        request.cancelled = True
        answer = thinking.best
        if thinking.failure is not None:
            self.failures += 1
            report_failure(self.bot, request, thinking.failure, self.failures, answer is None)
        if answer is None:
            answer = self.bot.fallback(request)
            # Said, so that the referee counts it (a `fallback` note, spec/PROTOCOL.md 5): a bot
            # whose thinking raised or ran out of time never plays the fallback unseen.
            why = ("no answer in time" if thinking.failure is None
                   else f"{type(thinking.failure).__name__}: {thinking.failure}")
            self.send(f"info {FALLBACK_NOTE} {request.id} {' '.join(why.split())}")
        self.send(f"action {request.id} {' '.join(str(answer).split())}")
        return True

    def _ping(self, args: list[str]) -> bool:
        if args:
            self.send(f"pong {args[0]}")
        return True

    def _error(self, args: list[str]) -> bool:
        rid = int(args[0]) if args and args[0].isdigit() else None
        self.bot.error(rid, " ".join(args[1:]))
        return True

    def _gameover(self, args: list[str]) -> bool:
        self.bot.game_over(decode_pairs(args))
        return True

    def _quit(self, args: list[str]) -> bool:
        return False


_HANDLERS: dict[str, Callable[[Runner, list[str]], bool]] = {
    "meldref": Runner._hello,
    "game": Runner._game,
    "rule": Runner._rule,
    "player": Runner._player,
    "event": Runner._event,
    "view": Runner._view,
    "item": Runner._item,
    "legal": Runner._legal,
    "go": Runner._go,
    "ping": Runner._ping,
    "error": Runner._error,
    "gameover": Runner._gameover,
    "quit": Runner._quit,
}


def run(bot: Bot, infile: IO[str] | None = None, outfile: IO[str] | None = None) -> None:
    """Play a session on standard input and output (or the streams given) until `quit`."""
    Runner(bot, infile or sys.stdin, outfile or sys.stdout).run()


# ----------------------------------------------------------------------------------------------
# Helpers that reuse the engine (meldref installed)


class EngineMissingError(ImportError):
    """The engine helpers need the meldref package; the rest of the SDK does not."""


def _engine(module: str) -> ModuleType:
    """The engine's module `module`, imported here, on first use: the rest of the SDK runs
    without meldref installed."""
    try:
        return importlib.import_module(f"meldref.engine.{module}")
    except ImportError as exc:
        raise _engine_missing(exc) from None


def _engine_game(name: str) -> GameInfo:
    """The engine's `GameInfo` of the game `name` (its package imported on first use)."""
    found = _engine("game")
    try:
        info: GameInfo = found.find_game(name)
        return info
    except ImportError as exc:
        raise _engine_missing(exc) from None


def _engine_missing(exc: ImportError) -> EngineMissingError:
    return EngineMissingError(
        "this helper reuses meldref's engine, which is not installed here "
        f"({exc}); install it (pip install meldref, or pip install -e . in its checkout) "
        "or do without the helper: the rest of the SDK needs only the standard library")


def engine_view(request: Request, view: View | None = None) -> Any:  # its game's own class
    """The engine's view object of this request (engine.*_view `from_json`): the one in-process
    bots decide from, with its legal-action and solver methods. With `view` (a view of the
    forward model: `after_draw`...), that view under the request's game and rules."""
    info = _engine_game(request.game.name)
    if info.view_from_json is None:
        raise ValueError(f"no engine view for game {info.name!r}")
    values = {k: decode_value(k, str(v)) for k, v in request.game.rules.items()}
    rules = _engine("game").rules_from_json(info.rules_type, values)
    return info.view_from_json((view or request.view).data, rules)


def legal_actions(request: Request) -> list[str]:
    """Every legal action the engine lists (one way per lay-down or going out)."""
    return [str(a) for a in engine_view(request).legal_actions()]


def lay_options(request: Request) -> list[str]:
    """Phase 10: the ways the engine finds to lay a phase now (one per phase it may lay)."""
    return [str(a) for a in engine_view(request).lay_options()]


def hit_options(request: Request) -> list[str]:
    """Phase 10: every single-card hit open now."""
    return [str(a) for a in engine_view(request).hit_options()]


def go_out(request: Request, view: View | None = None) -> str | None:
    """Five Crowns: a discard that goes out, with the groups of every other card, or None;
    with `view` (`after_draw(request.view, "QH")`), what would go out in that view."""
    found = engine_view(request, view).solver().go_out()
    if found is None:
        return None
    card, split = found  # as the game writes a discard laying groups (spec/PROTOCOL.md)
    return " ".join(("discard", card.text, *(str(group) for group in split.groups)))


def best_discard(request: Request) -> str:
    """Five Crowns: the discard leaving the fewest points (going out, or laying on a last
    turn, when that is what it does)."""
    return str(engine_view(request).best_discard())


# ----------------------------------------------------------------------------------------------
# A forward model over the seat's view: what-ifs on a copy (standard library only)


def after_draw(view: View, card: Card | str | None = None) -> View:
    """A copy of `view` after this seat draws: `card` from the draw pile (the pile is face down:
    the card you want to try), or the discard pile's top when `card` is None. The decision
    becomes the one after a draw (Phase 10 `play`, Five Crowns `discard`)."""
    data = dict(view.data)
    if card is None:
        if view.discard_top is None:
            raise ValueError("no discard pile top to draw")
        drawn = view.discard_top
        data["discard_top"] = None
        data["discard_pile_size"] = max(0, int(data.get("discard_pile_size", 1)) - 1)
    else:
        drawn = Card.parse(card) if isinstance(card, str) else card
        data["draw_pile_size"] = max(0, int(data.get("draw_pile_size", 1)) - 1)
    data["hand"] = [*(c.text for c in view.hand), drawn.text]
    data["decision"] = "play" if "phase" in data else "discard"
    return View.from_json(data)


def after_discard(view: View, card: Card | str) -> View:
    """A copy of `view` after this seat discards `card` (one of its hand): it is the discard
    pile's top, and the turn has passed (decision `draw`, for the next time it is asked)."""
    thrown = Card.parse(card) if isinstance(card, str) else card
    hand = [c.text for c in view.hand]
    if thrown.text not in hand:
        raise ValueError(f"{thrown} is not in the hand {' '.join(hand) or '-'}")
    hand.remove(thrown.text)
    data = dict(view.data, hand=hand, discard_top=thrown.text, decision="draw")
    data["discard_pile_size"] = int(data.get("discard_pile_size", 0)) + 1
    return View.from_json(data)


# ----------------------------------------------------------------------------------------------
# Solitaire helpers


SOLITAIRE_WILDS = {3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9", 10: "10", 11: "J",
                   12: "Q", 13: "K"}


def pile_wild(size: int) -> str:
    """The wild rank of the Solitaire pile of `size` cards (3 -> "3", 11 -> "J", 13 -> "K")."""
    return SOLITAIRE_WILDS[size]


def after_place(view: View, pile: int, card: Card | str) -> View:
    """A copy of a Solitaire `view` after `place <pile> <card>`: the drawn card joins the pile
    and `card` (the drawn one, or one of the pile) leaves it; the next card is not known yet
    (`draw_top` None)."""
    out = Card.parse(card) if isinstance(card, str) else card
    piles = []
    for p in view.piles:
        cards = [c.text for c in p.cards]
        if p.size == pile:
            if view.draw_top is None:
                raise ValueError("no drawn card to place")
            cards.append(view.draw_top.text)
            if out.text not in cards:
                raise ValueError(f"{out} is neither the drawn card nor in pile {pile}")
            cards.remove(out.text)
        piles.append({"size": p.size, "wild_rank": p.wild_rank, "closed": p.closed,
                      "cards": cards})
    data = dict(view.data, piles=piles, draw_top=None,
                draw_pile_size=max(0, int(view.data.get("draw_pile_size", 1)) - 1),
                out_of_play=int(view.data.get("out_of_play", 0)) + 1,
                moves=int(view.data.get("moves", 0)) + 1)
    return View.from_json(data)


def pile_points(request: Request, pile: int, view: View | None = None) -> int:
    """Solitaire: the fewest points pile `pile` leaves as it is (0: it closes), in the
    request's view or in `view` (engine): the solver's points, as the game scores a pile left
    open at its end."""
    return int(engine_view(request, view).solver(pile).points())


def closing_places(request: Request) -> list[str]:
    """Solitaire: every `place` that closes a pile now, the largest pile first (engine)."""
    engine = engine_view(request)
    top = engine.draw_top
    out = []
    for size in sorted(engine.open_piles(), reverse=True):
        card, points = engine.solver(size, top).best_discard()
        if points == 0:
            out.append(f"place {size} {card}")
    return out


class EngineBot(Bot):
    """A protocol bot made of in-process bots (`name` and `act(view) -> action`, one factory
    per game, called with a seed for each game): the SDK turns each request into the engine's
    view and the action back into its text."""

    def __init__(self, factories: Mapping[str, Callable[[int], InProcessBot]], name: str,
                 seed: int = 0) -> None:
        super().__init__()
        self.factories = dict(factories)
        self.name = name
        self.games = tuple(self.factories)
        self.seed = seed
        self.played = 0
        self.inner: InProcessBot | None = None

    def new_game(self, game: Game) -> None:
        self.played += 1
        factory = self.factories.get(game.name)
        self.inner = None if factory is None else factory(self.seed + self.played)

    def choose(self, request: Request) -> Answer:
        if self.inner is None:
            return self.fallback(request)
        think_within = getattr(self.inner, "think_within", None)
        if callable(think_within):  # a bot that plans by the clock: what the SDK gives it
            think_within(max(0.0, request.time_left()), 0.0)
        return str(self.inner.act(engine_view(request)))


__all__ = [
    "SDK_RAISED",
    "Bot",
    "Card",
    "EngineBot",
    "EngineMissingError",
    "Game",
    "Group",
    "Pile",
    "Request",
    "Seat",
    "TableGroup",
    "View",
    "after_discard",
    "after_draw",
    "after_place",
    "best_discard",
    "closing_places",
    "decode_pairs",
    "engine_view",
    "go_out",
    "hit_options",
    "lay_options",
    "legal_actions",
    "log",
    "pile_points",
    "pile_wild",
    "run",
]
