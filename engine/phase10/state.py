"""Phase 10 (digest section 1): the hand-by-hand state machine, snapshots and `GAME`.

A game is a series of hands. In each hand every seat tries to lay down its current phase (the
whole phase at once), then to get rid of its cards by hitting laid groups and discarding; the
first seat with no cards left goes out and ends the hand. Laying a phase earns the credit at once;
the game ends at the end of a hand in which a seat completed the last phase of the sequence.

The game's facts and rule options live in `rules`, the actions in `actions`, what a seat sees
in `view`; the package (`meldref.engine.phase10`) exports what other code needs of them.

Shuffles come from `cards.rng_for(seed, ...)`: the deal of hand h from ("deal", h), the k-th
reshuffle of hand h from ("reshuffle", h, k), the first dealer from ("dealer",). A snapshot thus
holds no generator state. Piles are lists whose *end* is the top.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, NamedTuple, TypeVar

from ..cards import SKIP, WILD, Card, format_cards, phase10_deck
from ..common import (
    DRAW_DISCARD,
    DRAW_PILE,
    Checks,
    Draw,
    DrawDiscardState,
    Moves,
    blank_state,
    first_dealer,
    restore_outcome,
    snapshot_outcome,
    tokens,
)
from ..game import (
    JSON,
    Event,
    EventKind,
    Outcome,
    Rules,
    Termination,
    check_players,
    rules_from_json,
    rules_of,
)
from ..meld_check import build_meld, extend, parse_meld
from ..melds import Meld, MeldError, format_meld
from .actions import Action, Discard, Group, Hit, LayDown, parse_action
from .rules import (
    HAND_SIZE,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Phase10Rules,
    card_points,
    why_not_phase,
)
from .view import Phase10View, TableGroup, skip_victims

T = TypeVar("T")


class LayPlan(NamedTuple):
    """What a legal lay-down's check built, for playing it: its melds, and the phase laid."""

    melds: tuple[Meld, ...]
    phase: int


class Phase10State(DrawDiscardState[Phase10Rules]):
    """A Phase 10 game in progress (implements `engine.game.GameState`).

    Hands, piles, seats and turns are `DrawDiscardState`'s (tie-break hands leave the others'
    hands empty); deal number d is hand d.
    """

    game_name = "phase10"
    title = "Phase 10"
    after_draw = "play"
    # The hand in play, set by `_deal` (and `_restore`).
    table: tuple[TableGroup, ...]  # group id i is table[i - 1]
    phase_now: tuple[int | None, ...]  # per seat: the phase made this hand (any-order: once laid)
    laid: tuple[int | None, ...]  # per seat: the phase laid this hand
    skips: tuple[int, ...]  # per seat: Skips pending against it
    laid_this_turn: bool

    def __init__(self, rules: Phase10Rules, players: int, seed: int | str) -> None:
        check_players(self.game_name, MIN_PLAYERS, MAX_PLAYERS, players)
        self._setup(rules, players, seed)
        self.dealer = first_dealer(rules.dealer, players, seed)
        self._opening = self._deal(tuple(range(players)))

    def _setup(self, rules: Phase10Rules, players: int, seed: int | str) -> None:
        self.rules, self.players, self.seed = rules, players, seed
        self._melds = rules.melds
        # Per-seat values are tuples, replaced on the rare writes, so views share them.
        self.scores: tuple[int, ...] = (0,) * players
        self.completed: tuple[tuple[int, ...], ...] = ((),) * players
        self.hand_number = 0
        self.dealer = 0
        self.history: list[dict[str, JSON]] = []  # one entry per finished hand
        self.tied: tuple[int, ...] | None = None  # seats of the tie-break hands
        self._outcome: Outcome | None = None
        self._opening: list[Event] = []

    # -- GameState: questions (the others are `CardGameState`'s) --------------------------------

    def parse_action(self, text: str) -> Action:
        return parse_action(text)

    def observation(self, seat: int) -> Phase10View:
        return Phase10View(
            seat=seat,
            rules=self.rules,
            players=self.players,
            hand_number=self.hand_number,
            dealer=self.dealer,
            to_move=self.to_move,
            decision=self.decision,
            turn=self.turns,
            tiebreak=self.tied is not None,
            hand=tuple(self.hands[seat]),
            discard_top=self.discard_pile[-1] if self.discard_pile else None,
            draw_pile_size=len(self.draw_pile),
            table=self.table,
            laid_this_turn=self.laid_this_turn and self._to_move == seat,
            playing=self.playing,
            phases=self.phase_now,
            laid=self.laid,
            scores=self.scores,
            hand_sizes=tuple(map(len, self.hands)),
            skips=self.skips,
            completed=self.completed,
        )

    def autoplay_action(self) -> Action:
        """Draw from the pile (else the discard); discard the dearest card, Skips last."""
        if self._decision == "draw":
            return DRAW_PILE if self.draw_pile else DRAW_DISCARD
        hand = self.hands[self._to_move]
        plain = [c for c in hand if c is not SKIP]
        if plain:
            return Discard(max(plain, key=card_points))
        victims = skip_victims(self.rules, self._to_move, self.playing, self.skips)
        return Discard(SKIP, victims[0] if victims else None)

    def _why_draw(self, action: Draw) -> str | None:
        if self._decision != "draw":
            return "you have drawn already: lay, hit or discard"
        if action.source == "pile":
            return None if self.draw_pile else "the draw pile is empty: draw discard"
        if not self.discard_pile:
            return "the discard pile is empty"
        top = self.discard_pile[-1]
        return f"{top.text} cannot be drawn from the discard pile" if top is SKIP else None

    def _why_discard(self, action: Discard) -> str | None:
        if self._decision != "play":
            return "draw first: draw pile or draw discard"
        seat = self._to_move
        if action.card not in self.hands[seat]:
            return f"you do not hold {action.card.text}"
        if action.card is not SKIP:
            return None if action.victim is None else "only a Skip names a victim"
        victims = skip_victims(self.rules, seat, self.playing, self.skips)
        if action.victim is None:
            if len(victims) > 1:
                return f"say whom the Skip skips: discard S <seat>, one of {_seats(victims)}"
            return None
        if action.victim in victims:
            return None
        return self._why_not_victim(seat, action.victim, victims)

    def _why_not_victim(self, seat: int, victim: int, victims: tuple[int, ...]) -> str:
        allowed = f"; victims now: {_seats(victims)}" if victims else "; nobody can be skipped now"
        if victim == seat:
            return "you cannot skip yourself" + allowed
        if not 0 <= victim < self.players or not self.playing[victim]:
            return f"seat {victim} is not playing this hand" + allowed
        if self.rules.skip_victim == "next" and victim != self._next[seat]:
            return f"skip-victim=next: the Skip skips the next seat, {self._next[seat]}"
        return f"seat {victim} already has a Skip pending (once per orbit)" + allowed

    def _why_hit(self, action: Hit) -> str | Meld:
        if self._decision != "play":
            return "draw first: draw pile or draw discard"
        seat = self._to_move
        hand = self.hands[seat]
        if self.laid[seat] is None:
            return "you have not laid your phase yet: hits come after your own phase is down"
        if not 1 <= action.group_id <= len(self.table):
            ids = ", ".join(str(g.id) for g in self.table) or "none yet"
            return f"no group {action.group_id} on the table; groups: {ids}"
        group = self.table[action.group_id - 1]
        if self.laid_this_turn and self.rules.hit_on_lay_turn == "own" and group.owner != seat:
            return ("hit-on-lay-turn=own: in the turn you lay your phase you may hit only your "
                    "own groups")
        if action.card not in hand:
            return f"you do not hold {action.card.text}"
        if action.declared is not None and action.card is not WILD:
            return f"{action.card.text} is not wild: write it without ={action.declared}"
        if len(hand) == 1 and self.rules.going_out == "must-discard":
            return "going-out=must-discard: keep your last card to discard"
        try:  # the grown group is the plan: `_hit` plays it without extending again
            return extend(group.meld, action.card, action.declared, self._melds)
        except MeldError as exc:
            return str(exc)

    def _why_lay(self, action: LayDown) -> str | LayPlan:
        """Why the lay-down is illegal, or the melds it builds and the phase it lays."""
        if self._decision != "play":
            return "draw first: draw pile or draw discard"
        seat = self._to_move
        if self.laid[seat] is not None:
            return f"you have laid phase {self.laid[seat]} already this hand"
        phase, reason = self._lay_phase(seat, action.phase)
        if reason is None:
            reason = _held(self.hands[seat], [c for _, placed in action.groups for c, _ in placed])
        melds: list[Meld] = []
        if reason is None:
            melds, reason = self._build_groups(action.groups)
        if reason is None:
            reason = why_not_phase(phase, melds) or self.rules.why_not_natural(melds)
        if (reason is None and self.rules.going_out == "must-discard"
                and sum(map(len, melds)) == len(self.hands[seat])):
            reason = "going-out=must-discard: keep a card to discard"
        return reason if reason is not None else LayPlan(tuple(melds), phase)

    def _lay_phase(self, seat: int, asked: int | None) -> tuple[int, str | None]:
        phase = self.phase_now[seat]
        if phase is not None:  # set at the deal but in any-order (see `_phase_for`)
            if asked is not None and asked != phase:
                return phase, f"you are on phase {phase} this hand, not phase {asked}"
            return phase, None
        left = [p for p in self.rules.sequence if p not in self.completed[seat]]
        if asked is None:
            return 0, f"any-order: say which phase you lay, e.g. lay phase={left[0]} ..."
        if asked not in left:
            return 0, f"phase {asked} is not one you may lay; phases left: {_seats(left)}"
        return asked, None

    def _build_groups(self, groups: Sequence[Group]) -> tuple[list[Meld], str | None]:
        melds = []
        for kind, placed in groups:
            try:
                melds.append(build_meld(kind, placed, self._melds))
            except MeldError as exc:
                return [], str(exc)
        return melds, None

    # -- GameState: playing --------------------------------------------------------------------

    def _lay(self, action: LayDown, plan: LayPlan) -> list[Event]:
        melds, phase = plan
        seat = self._to_move
        hand = self.hands[seat]
        ids = []
        for meld in melds:
            for card in meld.cards:
                hand.remove(card)
            ids.append(len(self.table) + 1)
            self.table = (*self.table, TableGroup(ids[-1], seat, meld, self.rules.run_wrap))
        self.laid = _put(self.laid, seat, phase)
        self.phase_now = _put(self.phase_now, seat, phase)
        self.laid_this_turn = True
        events = [Event(EventKind.LAY_DOWN, seat, {
            "phase": phase, "groups": [format_meld(m) for m in melds], "group_ids": ids,
        })]
        if self.tied is None:
            if self.rules.completes(len(self.completed[seat])):
                self.completed = _put(self.completed, seat, (*self.completed[seat], phase))
        elif self.rules.tiebreak == "first-to-lay" and seat in self.tied:
            self._end_hand(None, "tiebreak-lay", events)
            self._finish((seat,), "tiebreak-first-to-lay", Termination.NORMAL, events)
            return events
        if not hand:
            self._end_hand(seat, "out", events)
        return events

    def _hit(self, action: Hit, meld: Meld) -> list[Event]:
        seat = self._to_move
        index = action.group_id - 1
        old = self.table[index]
        group = TableGroup(old.id, old.owner, meld, self.rules.run_wrap)
        self.table = (*self.table[:index], group, *self.table[index + 1:])
        self.hands[seat].remove(action.card)
        events = [Event(EventKind.HIT, seat, {
            "group_id": old.id, "card": action.card.text, "group": format_meld(meld),
        })]
        if not self.hands[seat]:
            self._end_hand(seat, "out", events)
        return events

    def _discard(self, action: Discard, plan: None = None) -> list[Event]:
        seat = self._to_move
        hand = self.hands[seat]
        hand.remove(action.card)
        self.discard_pile.append(action.card)
        self.laid_this_turn = False
        events = [Event(EventKind.DISCARD, seat, {"card": action.card.text})]
        if not hand:
            self._end_hand(seat, "out", events)
            return events
        victim = action.victim
        if action.card is SKIP and victim is None:
            victims = skip_victims(self.rules, seat, self.playing, self.skips)
            victim = victims[0] if victims else None
        if action.card is SKIP and victim is not None:
            self.skips = _put(self.skips, victim, self.skips[victim] + 1)
            events.append(Event(EventKind.SKIP, seat, {"victim": victim}))
        self._start_turn(self._next[seat], events)
        return events

    # Each action type's check and move (`CardGameState.why_illegal` and `apply`): the tables
    # after the class.
    def _checks(self) -> Checks:
        return _CHECKS

    def _moves(self) -> Moves:
        return _MOVES

    # -- the flow of a hand --------------------------------------------------------------------

    def _deal(self, seats: tuple[int, ...]) -> list[Event]:
        """Start the next hand among `seats` (all, or the tied seats of a tie-break hand)."""
        self.hand_number += 1
        n = self.players
        order = self._seat(tuple(s in seats for s in range(n)))
        self._deal_hands(phase10_deck(), self.hand_number, HAND_SIZE, order)
        self.table = ()
        self.phase_now = tuple(self._phase_for(s) if self.playing[s] else None for s in range(n))
        self.laid = (None,) * n
        self.skips = (0,) * n
        self.laid_this_turn = False
        events = [
            Event(EventKind.DEAL, s, {"hand_number": self.hand_number, "dealer": self.dealer,
                              "phase": self.phase_now[s], "hand_size": HAND_SIZE},
                  {"hand": tokens(self.hands[s])})
            for s in order
        ]
        events.append(Event(EventKind.TURN_UP, None, {"card": self.discard_pile[-1].text}))
        while self.discard_pile[-1] is SKIP and self.rules.first_skip == "twist":
            self.discard_pile.append(self.draw_pile.pop())
            events.append(Event(EventKind.TURN_UP, None, {"card": self.discard_pile[-1].text}))
        if self.discard_pile[-1] is SKIP:
            self.skips = _put(self.skips, order[0], 1)
        self._start_turn(order[0], events)
        return events

    def _phase_for(self, seat: int) -> int | None:
        return self.rules.phase_to_make(self.tied is not None, self.hand_number,
                                        len(self.completed[seat]))

    def _start_turn(self, seat: int, events: list[Event]) -> None:
        while self.skips[seat]:
            self.skips = _put(self.skips, seat, self.skips[seat] - 1)
            events.append(Event(EventKind.SKIPPED, seat))
            seat = self._next[seat]
        if self.turns >= self.rules.turn_cap:
            self._end_hand(None, "turn-cap", events)
            return
        self._reshuffle_if_out(self.hand_number, events)
        if not self.draw_pile and (not self.discard_pile or self.discard_pile[-1] is SKIP):
            self._end_hand(None, "no-cards", events)
            return
        self.turns += 1
        self._to_move = seat
        self._decision = "draw"

    def _end_hand(self, went_out: int | None, ended: str, events: list[Event]) -> None:
        points = [0 if s == went_out else sum(map(card_points, h))
                  for s, h in enumerate(self.hands)]
        if self.tied is None:  # tie-break hands decide the tie only; they score nothing
            self.scores = tuple(map(sum, zip(self.scores, points, strict=True)))
        self.history.append({"hand": self.hand_number, "ended": ended, "went_out": went_out,
                             "tiebreak": self.tied is not None})
        self._to_move, self._decision = 0, "over"
        events.append(Event(EventKind.HAND_END, None, {
            "hand_number": self.hand_number,
            "tiebreak": self.tied is not None,
            "ended": ended,
            "went_out": went_out,
            "hands": [format_cards(h) for h in self.hands],
            "points": points,
            "totals": list(self.scores),
            "laid": list(self.laid),
            "completed": [" ".join(map(str, c)) for c in self.completed],
        }))
        if ended != "tiebreak-lay":
            self._after_hand(went_out, events)

    def _after_hand(self, went_out: int | None, events: list[Event]) -> None:
        if self.tied is not None:
            # Only a tied seat wins a tie-break hand; with tiebreak-players=everyone another
            # seat may end it by going out, and another tie-break hand is dealt.
            if went_out is not None and went_out in self.tied:
                self._finish((went_out,), "tiebreak-first-out", Termination.NORMAL, events)
                return
            contenders: tuple[int, ...] | None = self.tied
        else:
            contenders = self._contenders(went_out)
        if contenders is not None and self.tied is None:
            best = min(self.scores[s] for s in contenders)
            tied = tuple(s for s in contenders if self.scores[s] == best)
            if len(tied) == 1 or self.rules.tiebreak == "shared":
                self._finish(tied, self._decided_by(contenders, tied), Termination.NORMAL,
                             events)
                return
            self.tied = tied
        if self.rules.hand_cap is not None and self.hand_number >= self.rules.hand_cap:
            self._finish(self.tied or self._leaders(), "hand-cap", Termination.TURN_CAP, events)
            return
        if self.rules.deal_rotation == "left":
            self.dealer = (self.dealer + 1) % self.players
        events.extend(self._deal(self._dealt_in()))

    def _contenders(self, went_out: int | None) -> tuple[int, ...] | None:
        """The seats among which the game ends after this hand, or None: it goes on."""
        if self.rules.fixed_hands:
            over = self.hand_number == len(self.rules.sequence)
            return tuple(range(self.players)) if over else None
        done = [s for s in range(self.players) if len(self.completed[s]) >= self.rules.target]
        if self.rules.win == "last-phase-and-out":
            return (went_out,) if went_out is not None and went_out in done else None
        return tuple(done) or None

    def _decided_by(self, contenders: tuple[int, ...], winners: tuple[int, ...]) -> str:
        if len(winners) > 1:
            return "shared"
        if self.rules.win == "last-phase-and-out":
            return "phase-and-out"
        return "phase" if len(contenders) == 1 else "score"

    def _dealt_in(self) -> tuple[int, ...]:
        """The seats dealt into the next hand: all, or in tie-break hands the tied ones
        (tiebreak-players=tied)."""
        if self.tied is not None and self.rules.tiebreak_players == "tied":
            return self.tied
        return tuple(range(self.players))

    def _leaders(self) -> tuple[int, ...]:
        keys = [self._rank_key(s) for s in range(self.players)]
        return tuple(s for s in range(self.players) if keys[s] == min(keys))

    def _rank_key(self, seat: int) -> tuple[int, int]:
        if self.rules.fixed_hands:
            return (0, self.scores[seat])
        return (-len(self.completed[seat]), self.scores[seat])

    def _finish(
        self, winners: tuple[int, ...], decided_by: str, termination: Termination,
        events: list[Event],
    ) -> None:
        places = []
        for s in range(self.players):
            if s in winners:
                places.append(1)
            else:
                key = self._rank_key(s)
                ahead = sum(1 for t in range(self.players) if t not in winners
                            and self._rank_key(t) < key)
                places.append(len(winners) + ahead + 1)
        endings = [str(h["ended"]) for h in self.history]
        self._end_game(Outcome(termination, tuple(places), self.scores, {
            "decided_by": decided_by,
            "hands": self.hand_number,
            "hand_endings": endings,
            "hands_without_winner": sum(1 for e in endings if e in ("turn-cap", "no-cards")),
            "tiebreak_hands": sum(1 for h in self.history if h["tiebreak"]),
            "phases_completed": [len(c) for c in self.completed],
        }), events)

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, JSON]:
        return {
            **self._snapshot_head(),
            "scores": list(self.scores),
            "completed": [list(c) for c in self.completed],
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "history": [dict(h) for h in self.history],
            "tied": None if self.tied is None else list(self.tied),
            "outcome": snapshot_outcome(self._outcome),
            **self._piles_to_json(),
            "table": [g.to_json() for g in self.table],
            "phase_now": list(self.phase_now),
            "laid": list(self.laid),
            "skips": list(self.skips),
            "turns": self.turns,
            "reshuffles": self.reshuffles,
            "to_move": self._to_move,
            "decision": self._decision,
            "laid_this_turn": self.laid_this_turn,
        }

    @classmethod
    def _restore(cls, data: Mapping[str, JSON]) -> Phase10State:
        state = blank_state(cls)
        rules = rules_from_json(Phase10Rules, data["rules"])
        n = int(data["players"])
        state._setup(rules, n, data["seed"])
        state.scores = tuple(data["scores"])
        state.completed = tuple(tuple(c) for c in data["completed"])
        state.hand_number, state.dealer = data["hand_number"], data["dealer"]
        state.history = [dict(h) for h in data["history"]]
        state.tied = None if data["tied"] is None else tuple(data["tied"])
        state._outcome = restore_outcome(data["outcome"])
        state._restore_piles(data)
        state.table = tuple(
            TableGroup(g["id"], g["owner"], parse_meld(g["group"], rules.melds), rules.run_wrap)
            for g in data["table"]
        )
        state.phase_now, state.laid = tuple(data["phase_now"]), tuple(data["laid"])
        state.skips, state.turns = tuple(data["skips"]), data["turns"]
        state.reshuffles = data["reshuffles"]
        state._to_move, state._decision = data["to_move"], data["decision"]
        state.laid_this_turn = data["laid_this_turn"]
        return state


def _held(hand: list[Card], used: list[Card]) -> str | None:
    have = Counter(hand)
    for card, count in Counter(used).items():
        if have[card] < count:
            held = f"only {have[card]}" if have[card] else "no"
            return f"you hold {held} {card.text}, the lay uses {count}"
    return None


def _put(values: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return (*values[:index], value, *values[index + 1:])


def _seats(seats: Iterable[int]) -> str:
    return ", ".join(map(str, seats))


def new_game(rules: Rules, players: int, seed: int | str) -> Phase10State:
    """A new game: the first hand is dealt and the first player is to draw."""
    return Phase10State(rules_of(Phase10Rules, rules), players, seed)


# Each action type's check and move, read by `_checks` and `_moves`.
_CHECKS: Final[Checks] = {
    Draw: Phase10State._why_draw, LayDown: Phase10State._why_lay, Hit: Phase10State._why_hit,
    Discard: Phase10State._why_discard,
}
_MOVES: Final[Moves] = {
    Draw: Phase10State._draw, LayDown: Phase10State._lay, Hit: Phase10State._hit,
    Discard: Phase10State._discard,
}
