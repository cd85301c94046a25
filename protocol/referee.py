"""The referee's game loop: ask the seat to move, check with the game, apply, tell everyone.

`play_game` plays one game between seats and returns a `GameRecord`. It never trusts a bot:
an illegal or malformed answer may be retried (`MatchPolicy.illegal_retries`), and a bot that
keeps failing, times out, stalls, crashes or closes its pipes is either out of the game
("forfeit": ranked last) or played by the referee from then on ("autoplay": ranked normally).
Whoever fails, the game goes on with `state.autoplay_action()` for that seat.

Records passed to `on_record`, in order (JSON-able dicts; a replay file is these, one a line):

- ``{"type": "start", "protocol": 1, "game": name, "rules": {option: value}, "players": n,
  "seed": seed, "names": [...], "policy": {...}, "events": [...]}``; the rules are those really
  played, as the game settled them at the start (`state.rules`: Five Crowns' `party=auto`
  becomes on or off), and the seats are told the same; the events are those of the first deal
  (`state.opening_events()`)
- ``{"type": "action", "n": i, "seat": s, "decision": d, "action": text, "auto": bool,
  "elapsed": seconds or None, "events": [...]}`` per applied action, i = 0, 1, ... Each event is
  ``Event.for_seat(None)`` (everything, private parts included) plus ``"private": [keys]``
  naming the keys only ``event["seat"]`` may see; dropping them gives what the others saw.
  ``auto`` is true when the referee chose the action (a failed seat).
- ``{"type": "fault", "seat": s, "outcome": o, "detail": text, "request": id or None,
  "fatal": bool}`` for each bot failure, where o is one of illegal, malformed, timeout, stalled,
  crashed, closed, late. A fatal fault ended the seat's play (forfeit or autoplay follows).
  At most `NOTES_PER_KIND` non-fatal faults of one outcome are recorded per seat and game;
  after the last action, one more non-fatal fault of that outcome with ``"suppressed": n``
  counts the others.
- ``{"type": "result", "outcome": Outcome.to_json(), "status": [per seat: "ok" | "forfeit" |
  "autoplay"], "faults": [per seat count], "actions": n, "decisions": n, "wall_time": seconds}``

Re-simulation: ``find_game(game).new_game(rules_from_json(...), players, seed)``, then apply each
action record's text with ``state.parse_action``.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Final, TypeVar

from ..engine.game import (
    JSON,
    Action,
    Event,
    GameInfo,
    GameState,
    InvalidActionError,
    Outcome,
    Rules,
    Ruling,
    Termination,
    rules_to_json,
)
from .errors import BotError, BotProtocolError, Fault, FaultOutcome, SeatStatus
from .policy import MatchPolicy
from .records import GameRecord, action_record, result_record, start_record
from .seats import Reply, Request, Seat, Setup
from .wire import PROTOCOL_VERSION, EventFields, quote

T = TypeVar("T")

# Non-fatal faults (late answers, stray lines) recorded per seat, outcome and game; the rest
# are counted in one summary fault at the end of the game.
NOTES_PER_KIND = 20
RecordHook = Callable[[dict[str, JSON]], None]
NOBODY = -1  # a seat no event belongs to: `Event.for_seat(NOBODY)` is its public part
# A seat still playing, held here: compiled, a module constant is read straight, where
# `SeatStatus.OK` asks the enum class by name on every action of every game.
OK: Final = SeatStatus.OK


class _Clock:
    """One seat's clock under a policy."""

    def __init__(self, policy: MatchPolicy) -> None:
        self.policy = policy
        self.bank = policy.time_bank
        self.first = True
        self.used = 0.0
        # The policy's times, read once: it is a Python class (policy.py), whose fields this
        # compiled code would look up by name twice a decision.
        self.move_time = policy.move_time
        self.first_time = max(policy.first_move_time, policy.move_time)
        self.increment = policy.increment
        self.max_bank = policy.max_bank

    def allowance(self) -> float:
        return self.first_time if self.first else self.move_time

    def charge(self, elapsed: float) -> None:
        """The decision took `elapsed` seconds: update the bank (see `MatchPolicy`)."""
        over = max(0.0, elapsed - self.allowance())
        bank = max(0.0, self.bank - over) + self.increment
        cap = self.max_bank
        self.bank = bank if cap is None else min(bank, cap)
        self.first = False
        self.used += elapsed


class _Referee:
    """One game in progress between seats."""

    def __init__(self, game: GameInfo, rules: Rules, seats: Sequence[Seat], seed: int,
                 policy: MatchPolicy, on_record: RecordHook | None,
                 start: GameState | None = None) -> None:
        self.game, self.rules, self.seats, self.seed = game, rules, list(seats), seed
        self.policy, self.on_record = policy, on_record
        # Read on every decision: kept here, as `_Clock` keeps the times.
        self.retries, self.hints = policy.illegal_retries, policy.legal_hints
        self.max_actions = policy.max_actions
        n = len(self.seats)
        self.status = [OK] * n
        self.failures = 0  # fatal faults so far (`fail`): none, the usual case, is one test
        self.faults: list[list[Fault]] = [[] for _ in range(n)]
        self.noted: list[dict[FaultOutcome, int]] = [{} for _ in range(n)]  # non-fatal, by outcome
        self.clocks = [_Clock(policy) for _ in range(n)]
        self.actions: list[str] = []
        self.decisions = 0
        self.state: GameState = start if start is not None else game.new_game(rules, n, seed)
        # What is really played: a game may settle options when it starts (Five Crowns turns
        # `party=auto` into on or off by the number of players). Seats and replays get these.
        self.rules = self.state.rules
        # The first deal happens in new_game: its events go to the seats and the start record.
        self.opening: list[Event] = self.state.opening_events()

    # -- records and faults ----------------------------------------------------------------

    def emit(self, record: dict[str, JSON]) -> None:
        if self.on_record is not None:
            self.on_record(record)

    def note(self, seat: int, fault: Fault) -> None:
        if not fault.fatal:  # a bot must not fill the replay with its notes
            seen = self.noted[seat][fault.outcome] = self.noted[seat].get(fault.outcome, 0) + 1
            if seen > NOTES_PER_KIND:
                return
        self.faults[seat].append(fault)
        self.emit(fault.to_record(seat))

    def summarise_notes(self) -> None:
        """One fault per seat and outcome whose notes went over `NOTES_PER_KIND`."""
        for seat, counts in enumerate(self.noted):
            for outcome, seen in counts.items():
                if seen > NOTES_PER_KIND:
                    hidden = seen - NOTES_PER_KIND
                    faults = "fault" if hidden == 1 else "faults"
                    fault = Fault(outcome, f"{hidden} more {outcome} {faults} not recorded (at "
                                  f"most {NOTES_PER_KIND} of each kind per game)",
                                  suppressed=hidden)
                    self.faults[seat].append(fault)
                    self.emit(fault.to_record(seat))

    def collect_notes(self, seat: int) -> None:
        for fault in self.seats[seat].take_notes():
            self.note(seat, fault)

    def active(self, seat: int) -> bool:
        return self.status[seat] is OK

    def fail(self, seat: int, fault: Fault) -> None:
        """A fatal fault: the seat is out (forfeit) or autoplayed, and its bot is stopped."""
        self.collect_notes(seat)
        self.note(seat, dataclasses.replace(fault, fatal=True))
        self.status[seat] = SeatStatus(self.policy.on_failure)
        self.failures += 1
        self.seats[seat].reject(fault.request_id, f"{fault.outcome}: {fault.detail}")
        self.seats[seat].close()

    def guarded(self, seat: int, call: Callable[[], None]) -> None:
        if not self.active(seat):
            return
        try:
            call()
        except BotError as exc:
            self.fail(seat, exc.fault)

    # -- the game --------------------------------------------------------------------------

    def play(self) -> GameRecord:
        began = time.perf_counter()
        failed = {}
        for i, seat in enumerate(self.seats):  # handshakes first: names come from them
            try:
                seat.connect(self.policy.startup_time)
            except BotError as exc:
                failed[i] = exc.fault
        names = [s.name for s in self.seats]
        rules = rules_to_json(self.rules)
        self.emit(start_record(PROTOCOL_VERSION, self.game.name, rules, names, self.seed,
                               self.policy.to_json(), self.opening))
        for i in range(len(self.seats)):
            if i in failed:
                self.fail(i, failed[i])
            self.collect_notes(i)
        for i, seat in enumerate(self.seats):
            setup = Setup(self.game.name, rules, i, tuple(names))
            self.guarded(i, functools.partial(seat.start, setup))
        self.tell(self.opening)
        outcome = self.loop()
        outcome = self.rank(outcome)
        for i, seat in enumerate(self.seats):
            self.guarded(i, functools.partial(seat.finish, outcome.to_json()))
            self.collect_notes(i)
        self.summarise_notes()
        record = GameRecord(
            self.game.name, self.seed, rules, names, outcome, self.status, self.faults,
            self.actions, self.decisions, time.perf_counter() - began,
            [c.used for c in self.clocks],
        )
        self.emit(result_record(record))
        return record

    def loop(self) -> Outcome:
        state = self.state
        while (seat := state.to_move) is not None:
            if self.forfeits_decide():
                return self.forfeit_outcome()
            if len(self.actions) >= self.max_actions:
                raise RuntimeError(f"{self.game.name} did not end within "
                                   f"{self.policy.max_actions} actions (seed {self.seed})")
            action, reply = self.choose(seat)
            if reply is None and self.forfeits_decide():  # this failure just ended the game
                return self.forfeit_outcome()
            self.advance(seat, action, reply)
            if state.to_move != seat:  # the turn passed: deliver the events it made
                self.flush(skip=state.to_move)
        assert state.outcome is not None
        return state.outcome

    def choose(self, seat: int) -> tuple[Action | Ruling, Reply | None]:
        """The action for `seat`: its bot's, or the referee's if the bot failed."""
        if self.active(seat):
            chosen = self.ask(seat)
            if chosen is not None:
                return chosen
        return self.state.autoplay_action(), None

    def ask(self, seat: int) -> tuple[Action | Ruling, Reply] | None:
        bot, clock = self.seats[seat], self.clocks[seat]
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            self.decisions += 1
            reply: Reply | None = None
            try:
                reply = bot.decide(self.request(seat))
            except BotProtocolError as exc:
                clock.charge(exc.elapsed)
                if not self.refuse(seat, exc.fault, last):
                    return None
            except BotError as exc:
                clock.charge(exc.elapsed)
                self.fail(seat, exc.fault)
                return None
            finally:
                self.collect_notes(seat)
            if reply is None:  # refused, and it may try again (no `continue` in the `try`:
                continue  # mypyc compiles none)
            clock.charge(reply.elapsed)
            action, why = self.judge(reply.text, reply.action)
            if why is None:
                return action, reply
            if not self.refuse(seat, Fault(FaultOutcome.ILLEGAL, why, reply.request_id), last):
                return None
        return None

    def refuse(self, seat: int, fault: Fault, last: bool) -> bool:
        """Record a rejected answer; True if the bot may try again."""
        if last:
            self.fail(seat, fault)
            return False
        self.note(seat, fault)
        self.seats[seat].reject(fault.request_id, f"{fault.outcome}: {fault.detail}")
        return True

    def request(self, seat: int) -> Request:
        state, clock = self.state, self.clocks[seat]
        hints = None
        if self.hints:
            hints = lambda: [str(a) for a in state.legal_actions()]  # noqa: E731
        return Request(state.decision, state.observation(seat), clock.allowance(), clock.bank,
                       hints, lambda text: self.judge(text)[1])

    def judge(self, text: str, action: Action | None = None,
              ) -> tuple[Ruling | None, str | None]:
        """The legal ruling and None, else None and the reason (syntax or rules); `action` is
        the value an in-process bot answered with, else the text is parsed. The ruling is
        what `advance` plays: the action is judged once."""
        state = self.state
        try:
            if action is None:
                action = state.parse_action(text)
            ruling = state.judge(action)
        except InvalidActionError as exc:  # the engine's words name what is wrong in the text
            return None, f"not an action: {quote(str(exc), 400)}"
        except ValueError as exc:  # bad values inside the text
            return None, f"{quote(text)!r}: {quote(str(exc))}"
        except Exception as exc:  # an engine that chokes on odd input still must not stop us
            return None, f"{quote(text)!r}: not understood ({quote(repr(exc))})"
        if ruling.reason is not None:
            return None, f"{quote(str(action))}: {quote(ruling.reason, 400)}"
        return ruling, None

    def advance(self, seat: int, action: Action | Ruling, reply: Reply | None) -> None:
        """Play `action` (the bot's legal `Ruling`, or the referee's own action)."""
        state = self.state
        decision = state.decision
        events = state.apply(action)
        text = str(action.action if isinstance(action, Ruling) else action)
        self.actions.append(text)
        if self.on_record is not None:
            elapsed = None if reply is None else reply.elapsed
            self.emit(action_record(len(self.actions) - 1, seat, decision, text, elapsed, events))
        self.tell(events)

    def flush(self, skip: int | None = None) -> None:
        """Deliver queued events to every seat still playing (`skip`: its request will)."""
        for i, seat in enumerate(self.seats):
            if i != skip and self.active(i):
                self.guarded(i, seat.flush)

    def tell(self, events: Sequence[Event]) -> None:
        """Send `events` to every seat still playing, as that seat may see them."""
        if not events:
            return
        # One public form per event for all the seats, and its owner's when it has a private
        # part: the seats get the same objects, so each is written to text once.
        seen = []
        for e in events:
            public = EventFields()
            e.for_seat(NOBODY, public)
            own = public
            if e.private:
                own = EventFields()
                e.for_seat(e.seat, own)
            seen.append((e.seat, public, own))
        for i, seat in enumerate(self.seats):
            if self.status[i] is OK:  # `guarded`, written out: runs for every action
                try:
                    seat.notify([own if owner == i else public for owner, public, own in seen])
                except BotError as exc:
                    self.fail(i, exc.fault)

    # -- ending ----------------------------------------------------------------------------

    def forfeits_decide(self) -> bool:
        # Asked before every decision: while every seat plays, no forfeit can decide.
        return self.failures > 0 and forfeits_decide(self.status, self.policy.on_failure)

    def forfeit_outcome(self) -> Outcome:
        return forfeit_outcome(self.status, self.state.scores)

    def rank(self, outcome: Outcome) -> Outcome:
        return rank(outcome, self.status)


# The referee's endings as functions of the seats' statuses: `replay verify` derives a replay's
# result with these same three from the statuses its fault records give.


def forfeits_decide(status: Sequence[SeatStatus], on_failure: str) -> bool:
    """True once forfeits leave at most one seat playing (no one left to play against)."""
    if on_failure != SeatStatus.FORFEIT or SeatStatus.FORFEIT not in status:
        return False
    playing = status.count(SeatStatus.OK)
    return playing <= 1 if len(status) > 1 else playing == 0


def forfeit_outcome(status: Sequence[SeatStatus], scores: Sequence[int]) -> Outcome:
    """The game the forfeits ended: the seats still playing first, the others after."""
    n = len(status)
    playing = status.count(SeatStatus.OK)
    # A lone seat (Solitaire) that forfeits has lost to the game: place 2, as a lost game.
    last = playing + 1 if n > 1 else 2
    places = tuple(1 if st is SeatStatus.OK else last for st in status)
    return Outcome(Termination.FORFEIT, places, tuple(scores))


def rank(outcome: Outcome, status: Sequence[SeatStatus]) -> Outcome:
    """Forfeited seats share the last place; the others keep their order."""
    n = len(status)
    out = [s for s in range(n) if status[s] is SeatStatus.FORFEIT]
    detail = dict(outcome.detail)
    detail["forfeited"] = out
    detail["autoplayed"] = [s for s, st in enumerate(status) if st is SeatStatus.AUTOPLAY]
    if not out or len(out) == n:
        return dataclasses.replace(outcome, detail=detail)
    kept = [s for s in range(n) if s not in out]
    places = list(outcome.places)
    for s in kept:  # competition ranking among the seats still in
        places[s] = 1 + sum(1 for t in kept if outcome.places[t] < outcome.places[s])
    for s in out:
        places[s] = len(kept) + 1
    return dataclasses.replace(outcome, places=tuple(places), detail=detail)


def play_game(
    game: GameInfo,
    rules: Rules,
    seats: Sequence[Seat],
    seed: int,
    policy: MatchPolicy | None = None,
    on_record: RecordHook | None = None,
    start: GameState | None = None,
) -> GameRecord:
    """Play one game of `game` under `rules` between `seats` (seat i plays seat i).

    The game is `game.new_game(rules, len(seats), seed)`, or `start`, a game already under way
    (a position: `engine.position`), whose rules and seed must be `rules` and `seed`; it has no
    opening events, so the seats learn the position from their first view. Seats are started
    (`connect`, `start`) here but not closed, so they can play again; seats whose bot failed
    are closed. See the module docstring for the records.
    """
    game.check_players(len(seats))
    if start is not None:
        held = len(start.scores)
        if held != len(seats) or start.seed != seed:
            raise ValueError(f"the start position is of {held} seats and seed "
                             f"{start.seed!r}, not {len(seats)} and {seed!r}")
    return _Referee(game, rules, seats, seed, policy or MatchPolicy(), on_record, start).play()


def each_seat(seats: Iterable[T], act: Callable[[T], object]) -> None:
    """`act` on every seat, each even if acting on another failed or was interrupted: a seat
    that fails while closing is as closed as it will get, and the first interruption (Ctrl-C,
    a signal) goes on once all are done."""
    interrupted: BaseException | None = None
    for seat in seats:
        try:
            act(seat)
        except Exception:
            pass
        except BaseException as exc:
            interrupted = interrupted or exc
    if interrupted is not None:
        raise interrupted


def close_all(seats: Iterable[Seat]) -> None:
    """Close every seat (quit, then SIGTERM/SIGKILL for programs that linger), each even if
    closing another failed or was interrupted (`each_seat`)."""
    each_seat(seats, lambda seat: seat.close())


__all__ = ["MatchPolicy", "close_all", "each_seat", "play_game"]
