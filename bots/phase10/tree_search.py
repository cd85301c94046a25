"""A Phase 10 tree-search bot (research, issue 49): information-set MCTS over every legal
action (bots/tree_search.py), heads-up, not seated as a built-in bot yet.

Every decision of this seat's is searched among the engine's legal actions, none filtered: both
draws, each lay-down the finder finds (and the expert's, which lays its extras with it), every
hit, every discard (a Skip once for each seat it may skip), and so on through the turn (with
`TURNS` above 0 the rival's moves too, as the guess deals its hand). The guesses are
`Phase10SearchBot`'s (the unseen cards dealt at the known sizes, a card the rival took from the
discard pile kept in its hand).

No rollouts: the tree stops at a depth cut or where the hand ends, and the leaf is judged by
the expert's own measures (`standing`): a phase completed (the engine counts it so once laid)
is worth `PHASE_WORTH` points; a seat that has not laid holds `PHASE_WORTH` x `LAY` ** (1 + the
cards its phase still lacks, the expert's `distance`), about its chance to lay this hand, which
it loses when the hand ends; a seat that has laid loses `CARD` for each card it still holds
(going out ends the hand, and the phase of a rival that has not laid); the points held count
as scored, each worth `POINTS` (they only break ties of phases). Two depths (`TURNS`):

- 0 (as it ships): the tree holds this seat's turn (its draw, lay-down, hits and discard), and
  the leaf judges its hand as it will stand after its next draw, expected (the expert's
  outs: `after_draw`), less what its discard gives the rival: the nearer phase the rival's
  guessed hand would make with it, or a card it could hit (`fed`); a hand this seat ends
  takes the rival's chance to lay. Nearly deterministic in the guess: the rival's own turn,
  luck the seat's move does not change, is left out.
- 1 or more: the rival's moves are searched too, that many turns on, the leaf once this seat
  drew again; a leaf's value is this seat's gain in standing since the guess less the
  rival's (the rival's standing at the guess subtracted: its guessed hand's luck cancels).

The expert's move is expanded first at the root and credited with visits in the final choice
(`tree_search.PRIOR_VISITS`).

Against `expert` on duplicate deals, 100 iterations a decision (23 ms of CPU): 0.55 (0.45-0.65)
over 10 deal sets and 0.45 (0.38-0.52) over 20 others: level with it, not above. Each attempt
in docs/bots.md ("A search that searches"); `bench/bench_strength.py --game phase10 --pair
tree:expert` seats it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from meldref.bots.phase10.expert import _hit_chance, distance, outs, unseen, with_extras
from meldref.bots.phase10.search import Phase10SearchBot
from meldref.bots.sdk import EngineBot, run
from meldref.bots.search import roll_out
from meldref.bots.tree_search import SearchStats, TreeGame, iteration_budget, tree_search
from meldref.engine.cards import SKIP, Card
from meldref.engine.phase10.actions import Action, Discard, LayDown
from meldref.engine.phase10.rules import card_points
from meldref.engine.phase10.state import Phase10State
from meldref.engine.phase10.view import Phase10View

ITERATIONS: Final = 100  # a decision's iterations without a clock (with one: as many as fit)
TURNS: Final = 0  # the depth cut: turns after this one's searched (module docstring)
PHASE_WORTH: Final = 60.0  # points: a phase completed (or laid: the engine counts it then)
# A seat that has not laid holds PHASE_WORTH x LAY ** (1 + the cards its phase still lacks):
# the chance, roughly, that it lays this hand (0.8: a card lacking costs about a fifth).
LAY: Final = 0.8
# Points: a card still held by a seat that has laid (its race to go out). Well below a card
# lacking before laying, or laying leaves too many cards in hand to be worth it (at 4, the
# search laid by a margin of 1 point in 60).
CARD: Final = 1.5
# What a point scored (or held while the hand goes on) is worth: points only break ties of
# phases, so a card lacking must outweigh shedding a Wild's 25 (at 1, the search threw Wilds).
POINTS: Final = 0.2
# Points a discard loses for each step of the expert's guard against feeding the rival (its
# `_feed_risk`, 0..2: what the rival took and passed, the table it can hit), which the guessed
# rival hands, dealt at random, do not know (0: the guesses alone judge the feeding).
# At 4, on the same 20 deal sets: 0.20 (0.09-0.31) against 0.45.
FEED_POINTS: Final = 0.0
# Points a card held after laying is worth for each step of the expert's chance that it will
# fit the table (`_hit_chance`, 0..2: next to a run's end but one, or a set's number): what it
# keeps when it throws, beyond the turn the leaf sees.
HIT_POINTS: Final = 1.0
# Whether a leaf inside this seat's turn (the tree expands one action an iteration, the first
# at random) is judged after the expert plays the turn to its end: without, a blind draw's
# leaves were judged after a random first move (a Wild hit, not the discard that followed it),
# and the card on top as this seat's discard before it threw one. On the same 10 deal sets:
# 0.55 (0.45-0.65) with it (and `HIT_POINTS`), 0.45 (0.27-0.63) without either.
FINISH_TURN: Final = True
# Whether the expert's ranking is the prior at this seat's nodes (PUCT, `TreeGame.prior`):
# its move `PRIOR_SHARE`, the rest by its ranking of discards (`_prior`); no: UCB1.
# On the same 10 deal sets: 0.40 (0.20-0.60) with it, 0.55 without.
EXPERT_PRIOR: Final = False
PRIOR_SHARE: Final = 0.5
# A clear edge (`Phase10TreeBot.clear`) of 2 standard errors, on the same 10 deal sets: 0.50
# (0.35-0.65), 0.55 without.
CLEAR: Final = 0.0
SCALE: Final = 20.0  # points: about the spread of a leaf's value (UCB's exploration)


class Phase10TreeBot(Phase10SearchBot):
    """Information-set MCTS over the hand with a depth cut, heads-up (module docstring)."""

    name = "tree"
    search_seats = 2
    # The module's options as attributes, so that a copy can differ (bench_strength's --set).
    iterations: int = ITERATIONS
    turns: int = TURNS
    lay: float = LAY
    card: float = CARD
    points: float = POINTS
    feed_points: float = FEED_POINTS
    hit_points: float = HIT_POINTS
    finish_turn: bool = FINISH_TURN
    expert_prior: bool = EXPERT_PRIOR
    # A rival of the prior's move replaces it only when its mean beats the prior's by this many
    # standard errors (`tree_search`'s `clear`); 0: the most visited plays.
    clear: float = CLEAR
    rollout_expert = True  # the turn's end, as `finish_turn` plays it
    scale: float = SCALE

    def __init__(self, seed: int | str = 0) -> None:
        super().__init__(seed)
        self.last = SearchStats()  # the last decision's search

    def decide(self, view: Phase10View, prior: Action) -> Action:
        """The tree's move among every legal action (`last` keeps what the search did)."""
        self.last = SearchStats(prior=str(prior))
        judge = Judge(self, view, unseen(view, self.expert.memory), self.expert._feed_risk(view))
        game = TreeGame(judge.to_move, self._legal(view.seat), Phase10State.apply, judge.finish,
                        self.scale, self._prior if self.expert_prior else None)
        return tree_search(view.seat, root_actions(view, prior), prior, judge.guess, game,
                           iteration_budget(self.budget(), self.iterations), self.rng,
                           self.last, clear=self.clear)

    def _legal(self, me: int) -> Callable[[Phase10State], list[Action]]:
        """Every legal action of the state's; at this seat's lay-downs the expert's too."""

        def legal(state: Phase10State) -> list[Action]:
            seat = state.to_move
            if seat is None:
                return []
            view = state.observation(seat)
            actions = view.legal_actions()
            if seat == me and any(isinstance(a, LayDown) for a in actions):
                return root_actions(view, None, actions)
            return actions

        return legal

    def _prior(self, state: Phase10State, actions: Sequence[Action]) -> list[float]:
        """The expert's ranking as probabilities (`expert_prior`): its move `PRIOR_SHARE`,
        before laying the other discards by its cost (the k-th next weighing 1/k), the rest
        alike. Its memory is this seat's at the root, as true inside the turn."""
        seat = state.to_move
        assert seat is not None
        view = state.observation(seat)
        chosen = str(self.expert._choose(view))
        weights = [1.0] * len(actions)
        if view.decision == "play" and not view.has_laid:
            cost = self.expert.discard_cost(view, self.expert._feed_risk(view))
            cards = sorted({a.card for a in actions if isinstance(a, Discard)}, key=cost)
            rank = {c: k for k, c in enumerate(cards)}
            weights = [1 / (1 + rank[a.card]) if isinstance(a, Discard) else 1.0
                       for a in actions]
        texts = [str(a) for a in actions]
        rest = sum(w for w, t in zip(weights, texts, strict=True) if t != chosen) or 1.0
        others = (1 - PRIOR_SHARE) if chosen in texts else 1.0
        return [PRIOR_SHARE if t == chosen else others * w / rest
                for w, t in zip(weights, texts, strict=True)]

    def standing(self, state: Phase10State, seat: int, hand_number: int,
                 left: Counter[Card] | None = None) -> float:
        """How a seat stands in `state`, in points, while hand `hand_number` is played
        (module docstring); with `left` (the unseen cards) a seat that has not laid is judged
        as it will stand after its next draw (`after_draw`)."""
        # The engine counts a phase completed as it is laid.
        value = PHASE_WORTH * len(state.completed[seat]) - self.points * state.scores[seat]
        if state.hand_number != hand_number or not state.playing[seat]:
            return value  # the hand is over: its phases and points are counted
        hand = state.hands[seat]
        value -= self.points * sum(card_points(c) for c in hand)
        if state.laid[seat] is not None:
            view = state.observation(seat)
            kept = sum(_hit_chance(view, c) for c in hand)
            return value - self.card * len(hand) + self.hit_points * kept
        return value + self.stake(state, seat, left)

    def stake(self, state: Phase10State, seat: int, left: Counter[Card] | None = None) -> float:
        """What a seat that has not laid holds in its chance to lay this hand, in points:
        `PHASE_WORTH` x `LAY` ** (cards lacking, and the lay-down itself); with `left`, as it
        will stand after its next draw (`after_draw`). 0 once laid."""
        if state.laid[seat] is not None:
            return 0.0
        phases, wrap, hand = self._phases(state, seat), state.rules.run_wrap, state.hands[seat]
        chance = (self.lay ** distance(hand, phases, wrap) if left is None
                  else after_draw(hand, phases, wrap, left, self.lay))
        return PHASE_WORTH * self.lay * chance

    def fed(self, state: Phase10State, seat: int, card: Card) -> float:
        """What `card` on the discard pile is worth to `seat` in `state`, in points: the
        nearer phase it makes, or, laid, a card fewer if it fits the table."""
        if state.laid[seat] is not None:
            return self.card if any(g.fits(card) for g in state.table) else 0.0
        phases, wrap, hand = self._phases(state, seat), state.rules.run_wrap, state.hands[seat]
        now, taken = distance(hand, phases, wrap), distance([*hand, card], phases, wrap)
        return PHASE_WORTH * self.lay * (self.lay ** taken - self.lay ** now)

    @staticmethod
    def _phases(state: Phase10State, seat: int) -> tuple[int, ...]:
        return state.observation(seat).phases_left


@dataclass
class Judge:
    """One decision's tree, as the search walks it: the guesses, where the tree stops and what
    a leaf is worth for the deciding seat (module docstring). `left`: the cards it has not
    seen; `risk`: the expert's guard against feeding the rival; `base`: the current guess's
    standings, the seat's and its rival's."""

    bot: Phase10TreeBot
    view: Phase10View
    left: Counter[Card]
    risk: Callable[[Card], int]  # the expert's guard against feeding the rival (0..2)
    base: tuple[float, float] = (0.0, 0.0)
    stake: float = 0.0  # the rival's chance to lay at the guess (`Phase10TreeBot.stake`)

    def guess(self, rng: random.Random) -> Phase10State:
        state = Phase10State.from_snapshot(self.bot.guess(self.view, rng))
        self.base = (self._standing(state, self.view.seat), self._standing(state, self._rival))
        self.stake = self.bot.stake(state, self._rival)
        return state

    def to_move(self, state: Phase10State) -> int | None:
        """The seat to act in the tree; None where the hand ended or at the depth cut."""
        view = self.view
        if state.hand_number != view.hand_number or state.outcome is not None:
            return None
        if self.bot.turns == 0:  # this seat's turn alone
            mine = state.turns == view.turn and state.to_move == view.seat
            return view.seat if mine else None
        last = view.turn + self.bot.turns
        if state.turns > last or (state.turns == last and state.decision != "draw"):
            return None
        return state.to_move

    def finish(self, state: Phase10State) -> float:
        """The leaf's value for the deciding seat (module docstring); with `TURNS` 0, the
        seat's turn played to its end by the expert first (`finish_turn`)."""
        if not self.bot.turns and self.bot.finish_turn:
            view = self.view
            roll_out(state, self.bot.rollout_policies(view.players), lambda s: (
                s.hand_number != view.hand_number or s.turns != view.turn
                or s.to_move != view.seat))
        gain = self._standing(state, self.view.seat) - self.base[0]
        if self.bot.turns:
            return gain - (self._standing(state, self._rival) - self.base[1])
        if state.hand_number != self.view.hand_number:
            return gain + self.stake  # this seat went out: the rival's chance to lay is gone
        top = state.discard_pile[-1] if state.discard_pile else None
        if top is None or top is SKIP:
            return gain
        return gain - self.bot.fed(state, self._rival, top) - self.bot.feed_points * self.risk(top)

    @property
    def _rival(self) -> int:
        return 1 - self.view.seat

    def _standing(self, state: Phase10State, seat: int) -> float:
        left = self.left if seat == self.view.seat and not self.bot.turns else None
        return self.bot.standing(state, seat, self.view.hand_number, left)


def after_draw(hand: list[Card], phases: tuple[int, ...], wrap: bool, left: Counter[Card],
               lay: float) -> float:
    """The chance `lay` ** lacking of a hand that lacks cards for its phase, expected after its
    next draw: a card fewer by the chance that a card drawn blind brings it closer (the
    expert's outs among the `left` unseen cards)."""
    now = distance(hand, phases, wrap)
    if now == 0:
        return 1.0
    closer = outs(hand, phases, wrap, left, now) / max(1, sum(left.values()))
    return lay ** now * (1 - closer + closer / lay)


def root_actions(view: Phase10View, prior: Action | None,
                 actions: list[Action] | None = None) -> list[Action]:
    """Every legal action of `view` (the engine's list, or `actions`), each lay-down also as
    the expert lays it (with its extras), and `prior` if it is none of them."""
    out = list(view.legal_actions() if actions is None else actions)
    texts = {str(a) for a in out}
    extra: list[Action] = [with_extras(view, a) for a in out if isinstance(a, LayDown)]
    if prior is not None:
        extra.append(prior)
    for action in extra:
        if str(action) not in texts:
            texts.add(str(action))
            out.append(action)
    return out


def main() -> None:
    """Play as a protocol bot (`python3 -m meldref.bots.phase10.tree_search`), its clock from
    each `go` line: how a tournament seats it (`--shared-deals` for duplicate deals)."""
    run(EngineBot({"phase10": Phase10TreeBot}, name="phase10-tree"))


if __name__ == "__main__":
    main()


__all__ = ["Phase10TreeBot", "root_actions"]
