"""Five Crowns (digest section 2): the round-by-round state machine, snapshots and `GAME`.

Eleven rounds deal 3..13 cards; the rank equal to the deal size is wild that round, with the
Jokers. Combinations (books and runs) stay in the hand until a seat goes out: after drawing it
lays every card but the one it discards. Then each other seat has one last turn, lays what it
can, and scores the cards left. Lowest total after round 11 wins.

The game's facts and rule options live in `rules`, the actions in `actions`, what a seat sees
in `view`; the package (`meldref.engine.fivecrowns`) exports what other code needs of them.

Shuffles come from `cards.rng_for(seed, ...)`: the deal of round r from ("deal", r), the k-th
reshuffle of round r from ("reshuffle", r, k), the first dealer from ("dealer",). The tie-break
round is round 12. Piles are lists whose *end* is the top.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

from ..cards import Card, CardError, fivecrowns_deck, format_cards, sort_key, sorted_cards
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
from ..meld_check import build_meld
from ..melds import Meld, MeldError, MeldRules, parse_group
from .actions import Action, Discard, parse_action
from .rules import (
    COMBINATIONS,
    MAX_PLAYERS,
    MIN_GROUP,
    MIN_PLAYERS,
    ROUNDS,
    TIEBREAK_ROUND,
    FiveCrownsRules,
    deal_size,
    fivecrowns_melds,
    rank_text,
    wild_rank,
)
from .solver import hand_points
from .view import FiveCrownsView, discard_options, draw_options, is_last_turn


def build_group(token: str, melds: MeldRules, natural: str) -> Meld:
    """The book or run `token` writes, as a Five Crowns group under the `natural` option;
    `MeldError` (or `CardError`) saying why it is not one."""
    kind, placed = parse_group(token, melds)
    if kind not in COMBINATIONS:
        raise MeldError(f"{token}: Five Crowns combinations are book and run")
    meld = build_meld(kind, placed, melds, MIN_GROUP)
    if natural == "group" and not meld.naturals(melds):
        raise MeldError(f"natural=group: {meld} needs a natural (not wild) card")
    return meld


class FiveCrownsState(DrawDiscardState[FiveCrownsRules]):
    """A Five Crowns game in progress (implements `engine.game.GameState`).

    Hands, piles, seats and turns are `DrawDiscardState`'s; deal number d is round d.
    """

    game_name = "fivecrowns"
    title = "Five Crowns"
    after_draw = "discard"
    # The round in play, set by `_deal` (and `_restore`).
    table: list[tuple[int, Meld]]  # (seat, group) laid this round
    went_out: int | None
    had_last_turn: list[bool]  # per seat, once someone went out

    def __init__(self, rules: FiveCrownsRules, players: int, seed: int | str) -> None:
        check_players(self.game_name, MIN_PLAYERS, MAX_PLAYERS, players)
        self._setup(rules.for_players(players), players, seed)
        self.dealer = first_dealer(rules.dealer, players, seed)
        self._opening = self._deal(tuple(range(players)))

    def _setup(self, rules: FiveCrownsRules, players: int, seed: int | str) -> None:
        self.rules, self.players, self.seed = rules, players, seed
        self.scores = [0] * players
        self.round = 0
        self.dealer = 0
        self.history: list[dict[str, JSON]] = []  # one entry per finished round
        self.tied: tuple[int, ...] | None = None  # seats of the tie-break round
        self.tiebreak_points: list[int] | None = None
        self._outcome: Outcome | None = None
        self._opening: list[Event] = []

    # -- GameState: questions (the others are `CardGameState`'s) --------------------------------

    @property
    def melds(self) -> MeldRules:
        """The meld rules of this round (its wild rank)."""
        return fivecrowns_melds(wild_rank(self.round))

    def parse_action(self, text: str) -> Action:
        return parse_action(text)

    def observation(self, seat: int) -> FiveCrownsView:
        return FiveCrownsView(
            seat=seat,
            players=self.players,
            round=self.round,
            dealer=self.dealer,
            to_move=self.to_move,
            decision=self.decision,
            turn=self.turns,
            turn_cap=self.rules.turn_cap,
            natural=self.rules.natural,
            decks=self.rules.decks,
            hand=tuple(sorted_cards(self.hands[seat])),
            discard_top=self.discard_pile[-1] if self.discard_pile else None,
            discard_pile_size=len(self.discard_pile),
            draw_pile_size=len(self.draw_pile),
            went_out=self.went_out,
            table=tuple(self.table),
            playing=self.playing,
            scores=tuple(self.scores),
            hand_sizes=tuple(map(len, self.hands)),
            had_last_turn=tuple(self.had_last_turn),
        )

    def legal_actions(self) -> list[Action]:
        # The view's legal actions (the same functions), without building the whole view.
        if self._outcome is not None:
            return []
        if self._decision == "draw":
            return list(draw_options(bool(self.draw_pile), bool(self.discard_pile)))
        seat = self._to_move
        last_turn = is_last_turn(self.went_out, seat, self.playing, self.had_last_turn)
        return list(discard_options(sorted_cards(self.hands[seat]), wild_rank(self.round),
                                    self.rules.natural, last_turn))

    def autoplay_action(self) -> Action:
        """Draw from the pile (else the discard), then the greedy bot's discard."""
        if self._decision == "draw":
            return DRAW_PILE if self.draw_pile else DRAW_DISCARD
        return self.observation(self._to_move).best_discard()

    def _why_draw(self, action: Draw) -> str | None:
        if self._decision != "draw":
            return "you have drawn already: discard (with groups to go out)"
        if action.source == "pile":
            return None if self.draw_pile else "the draw pile is empty: draw discard"
        return None if self.discard_pile else "the discard pile is empty: draw pile"

    def _why_discard(self, action: Discard) -> str | list[Meld]:
        # Legal: the groups built, the plan `_discard` lays (so it builds them only once).
        reason, melds = self._check_discard(action)
        return melds if reason is None else reason

    def _check_discard(self, action: Discard) -> tuple[str | None, list[Meld]]:
        if self._decision != "discard":
            return "draw first: draw pile or draw discard", []
        hand = self.hands[self._to_move]
        if action.card not in hand:
            return f"you do not hold {action.card.text}", []
        if not action.groups:  # a plain discard of a card held: nothing more to check
            return None, []
        melds, reason = self._build_groups(action.groups)
        if reason is None:
            reason = _held(hand, [action.card, *(c for m in melds for c in m.cards)])
        if reason is None and melds and self.went_out is None:
            reason = _covers_rest(hand, action.card, melds)
        return reason, melds

    def _build_groups(self, groups: Sequence[str]) -> tuple[list[Meld], str | None]:
        try:
            return [build_group(t, self.melds, self.rules.natural) for t in groups], None
        except (MeldError, CardError) as exc:
            return [], str(exc)

    # -- GameState: playing --------------------------------------------------------------------

    def _discard(self, action: Discard, plan: list[Meld]) -> list[Event]:
        melds = plan
        seat = self._to_move
        hand = self.hands[seat]
        for card in (action.card, *(c for m in melds for c in m.cards)):
            hand.remove(card)
        self.discard_pile.append(action.card)
        self.table += [(seat, m) for m in melds]
        events = [Event(EventKind.DISCARD, seat, {"card": action.card.text})]
        laid = {"groups": [str(m) for m in melds], "left": len(hand)}
        if self.went_out is None:
            if melds:
                self.went_out = seat
                events.append(Event(EventKind.GO_OUT, seat, laid))
        else:
            self.had_last_turn[seat] = True
            events.append(Event(EventKind.LAST_TURN, seat, laid))
        following = self._next[seat]
        if following == self.went_out:
            self._end_round("out", events)
        else:
            self._start_turn(following, events)
        return events

    # Each action type's check and move (`CardGameState.why_illegal` and `apply`): the tables
    # after the class.
    def _checks(self) -> Checks:
        return _CHECKS

    def _moves(self) -> Moves:
        return _MOVES

    # -- the flow of a round -------------------------------------------------------------------

    def _deal(self, seats: tuple[int, ...]) -> list[Event]:
        """Start the next round among `seats` (all, or the tied seats of the tie-break round)."""
        self.round = TIEBREAK_ROUND if self.tied is not None else self.round + 1
        n = self.players
        order = self._seat(tuple(s in seats for s in range(n)))
        deck = fivecrowns_deck(self.rules.decks)
        self._deal_hands(deck, self.round, deal_size(self.round), order)
        self.table = []
        self.went_out = None
        self.had_last_turn = [False] * n
        public = {"round": self.round, "dealer": self.dealer, "deal_size": deal_size(self.round),
                  "wild_rank": rank_text(wild_rank(self.round)), "decks": self.rules.decks}
        events = [Event(EventKind.DEAL, s, public, {"hand": tokens(self.hands[s])})
                  for s in order]
        events.append(Event(EventKind.TURN_UP, None, {"card": self.discard_pile[-1].text}))
        self._start_turn(order[0], events)
        return events

    def _start_turn(self, seat: int, events: list[Event]) -> None:
        cap = self.rules.turn_cap
        if self.went_out is None and cap is not None and self.turns >= cap * sum(self.playing):
            self._end_round("turn-cap", events)
            return
        self._reshuffle_if_out(self.round, events)
        self.turns += 1
        self._to_move = seat
        self._decision = "draw"

    def _end_round(self, ended: str, events: list[Event]) -> None:
        wild = wild_rank(self.round)
        points = [
            0 if s == self.went_out or not self.playing[s] else hand_points(self.hands[s], wild)
            for s in range(self.players)
        ]
        tiebreak = self.round == TIEBREAK_ROUND
        if tiebreak:
            self.tiebreak_points = points
        else:
            self.scores = [t + p for t, p in zip(self.scores, points, strict=True)]
        self.history.append({"round": self.round, "ended": ended, "went_out": self.went_out})
        self._to_move, self._decision = 0, "over"
        events.append(Event(EventKind.ROUND_END, None, {
            "round": self.round,
            "tiebreak": tiebreak,
            "ended": ended,
            "went_out": self.went_out,
            "hands": [format_cards(h) for h in self.hands],
            "points": points,
            "totals": list(self.scores),
        }))
        self._after_round(events)

    def _after_round(self, events: list[Event]) -> None:
        if self.round == TIEBREAK_ROUND:
            self._finish("tiebreak-round", events)
            return
        if self.round == ROUNDS:
            best = min(self.scores)
            tied = tuple(s for s in range(self.players) if self.scores[s] == best)
            if len(tied) == 1 or self.rules.tiebreak == "shared":
                self._finish("score" if len(tied) == 1 else "shared", events)
                return
            self.tied = tied
        self.dealer = (self.dealer + 1) % self.players
        events.extend(self._deal(self.tied or tuple(range(self.players))))

    def _rank_key(self, seat: int) -> tuple[int, int]:
        extra = self.tiebreak_points[seat] if self.tiebreak_points is not None else 0
        return (self.scores[seat], extra)

    def _finish(self, decided_by: str, events: list[Event]) -> None:
        keys = [self._rank_key(s) for s in range(self.players)]
        places = tuple(1 + sum(1 for k in keys if k < mine) for mine in keys)
        endings = [str(h["ended"]) for h in self.history]
        capped = endings.count("turn-cap")
        termination = Termination.TURN_CAP if capped else Termination.NORMAL
        self._end_game(Outcome(termination, places, tuple(self.scores), {
            "decided_by": decided_by,
            "rounds": len(endings),
            "round_endings": endings,
            "capped_rounds": capped,
            "tiebreak_points": self.tiebreak_points,
            "decks": self.rules.decks,
        }), events)

    # -- snapshots -----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, JSON]:
        return {
            **self._snapshot_head(),
            "scores": list(self.scores),
            "round": self.round,
            "dealer": self.dealer,
            "history": [dict(h) for h in self.history],
            "tied": None if self.tied is None else list(self.tied),
            "tiebreak_points": self.tiebreak_points,
            "outcome": snapshot_outcome(self._outcome),
            **self._piles_to_json(),
            "table": [{"seat": s, "group": str(m)} for s, m in self.table],
            "went_out": self.went_out,
            "had_last_turn": list(self.had_last_turn),
            "turns": self.turns,
            "reshuffles": self.reshuffles,
            "to_move": self._to_move,
            "decision": self._decision,
        }

    @classmethod
    def _restore(cls, data: Mapping[str, JSON]) -> FiveCrownsState:
        state = blank_state(cls)
        n = int(data["players"])
        state._setup(rules_from_json(FiveCrownsRules, data["rules"]), n, data["seed"])
        state.scores, state.round = list(data["scores"]), data["round"]
        state.dealer, state.history = data["dealer"], [dict(h) for h in data["history"]]
        state.tied = None if data["tied"] is None else tuple(data["tied"])
        tb = data["tiebreak_points"]
        state.tiebreak_points = None if tb is None else list(tb)
        state._outcome = restore_outcome(data["outcome"])
        state._restore_piles(data)
        melds = state.melds
        state.table = [(g["seat"], _parse_meld(g["group"], melds)) for g in data["table"]]
        state.went_out, state.had_last_turn = data["went_out"], list(data["had_last_turn"])
        state.turns, state.reshuffles = data["turns"], data["reshuffles"]
        state._to_move, state._decision = data["to_move"], data["decision"]
        return state


def _parse_meld(token: str, rules: MeldRules) -> Meld:
    kind, placed = parse_group(token, rules)
    return build_meld(kind, placed, rules, MIN_GROUP)


def _held(hand: list[Card], used: list[Card]) -> str | None:
    lacking = Counter(used) - Counter(hand)
    if not lacking:
        return None
    shown = format_cards(sorted(lacking.elements(), key=sort_key))
    return f"the discard and groups use cards you do not hold: {shown}"


def _covers_rest(hand: list[Card], discard: Card, melds: list[Meld]) -> str | None:
    rest = list(hand)
    rest.remove(discard)
    for meld in melds:
        for card in meld.cards:
            rest.remove(card)
    if not rest:
        return None
    left = format_cards(sorted(rest, key=sort_key))
    return ("combinations stay in your hand until you go out: to go out the groups must hold "
            f"every card but the discard, and {left} are left")


def new_game(rules: Rules, players: int, seed: int | str) -> FiveCrownsState:
    """A new game: round 1 is dealt and the seat left of the dealer is to draw."""
    return FiveCrownsState(rules_of(FiveCrownsRules, rules), players, seed)


# Each action type's check and move, read by `_checks` and `_moves`.
_CHECKS: Final[Checks] = {Draw: FiveCrownsState._why_draw, Discard: FiveCrownsState._why_discard}
_MOVES: Final[Moves] = {Draw: FiveCrownsState._draw, Discard: FiveCrownsState._discard}
