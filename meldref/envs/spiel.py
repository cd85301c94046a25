"""meldref's games registered with OpenSpiel, so its algorithms (MCTS, ISMCTS, CFR's
samplers, random simulation tests) run on exactly the rules the referee judges by.

    from meldref.envs import register_openspiel
    register_openspiel()
    game = pyspiel.load_game("meldref_phase10", {"players": 3, "rules": "phases-to-win=2"})

Names: `meldref_<game>` for every registered game (`meldref_phase10`...). Parameters: `players`,
`rules` (options as `-r` takes them, comma-separated: "phases-to-win=2,turn-cap=50") and `seed`
(the engine's seed: the first dealer where the rules draw one).

Chance is where the cards are drawn (meldref.envs.chance), as in OpenSpiel's own card games:
each card of every deal, each draw from the face-down pile and each shown top of the pile
turned up is a chance node over the cards not yet seen (an outcome is a card kind, with its
share of those cards), so a cloned state holds no card a seat could not know, and a search
that copies states (MCTS, expectimax) meets the draws as chance, not as a known future.
`resample_from_infostate` deals the cards hidden from a seat again (meldref.envs.hidden), which
is what OpenSpiel's ISMCTSBot calls.

Returns: +1 for first place down to -1 for last, linear in the place (equal places share);
Solitaire: the piles closed. Observations and information states are the environments'
vectors (meldref.envs.codec) of the seat's view, and the view as JSON text.
"""

from __future__ import annotations

import copyreg
import functools
import json
import random
import re
import typing
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np
import pyspiel

from ..engine.common import DRAW_PILE
from ..engine.game import JSON, GameInfo, GameState, Rules, find_game
from ..engine.registry import GAMES
from ..settings import parse_rules
from .chance import (
    Deal,
    deals_in,
    deck_kinds,
    draw_pile,
    is_pile_draw,
    outcomes,
    put_on_top,
    shows_top,
)
from .codec import Codec, find_codec, legal_indices
from .hidden import resampled_state

# An OpenSpiel game parameter's value (meldref's games take ints and texts)
Param = int | float | str | bool
MAX_LENGTH: Final = 200_000  # turn and hand caps bound every game well below this
_registered: set[str] = set()


def _game_by_name(info: GameInfo) -> tuple[Callable[[str], GameInfo], tuple[str]]:
    return find_game, (info.name,)


def _state_by_snapshot(state: GameState) -> tuple[Callable[[dict[str, JSON]], GameState],
                                                   tuple[dict[str, JSON]]]:
    return _restored, (state.snapshot(),)


def _restored(snapshot: dict[str, JSON]) -> GameState:
    return find_game(snapshot["game"]).from_snapshot(snapshot)


# A serialized state (OpenSpiel's `serialize` pickles the state's `__dict__`) names its game
# rather than copying it, and holds the engine's state as its snapshot: compiled (setup.py), a
# game could not be rebuilt field by field (FrozenInstanceError) nor a Phase 10 group on the
# table (its __init__ takes arguments). The engine's own contract: a copy is the snapshot read
# back. (Better as GameInfo's and the states' own __reduce__, in the engine.)
copyreg.pickle(GameInfo, _game_by_name)


def short_name(game: str) -> str:
    return f"meldref_{game}"


def _game_type(info: GameInfo) -> pyspiel.GameType:
    solo = info.max_players == 1
    return pyspiel.GameType(
        short_name=short_name(info.name),
        long_name=f"meldref {info.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=info.max_players,
        min_num_players=info.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={
            "players": 1 if solo else 2, "rules": "", "seed": 0,
        },
    )


def register_openspiel() -> None:
    """Register meldref's games with OpenSpiel (once; later calls do nothing)."""
    for game in GAMES:
        if game not in _registered:
            info = find_game(game)
            state = info.new_game(info.rules(), info.min_players, 0)
            copyreg.pickle(type(state), _state_by_snapshot)
            pyspiel.register_game(_game_type(info), _factory(info))
            _registered.add(game)


@dataclass(frozen=True)
class Setup:
    """A loaded game's settings, read from its OpenSpiel parameters."""

    info: GameInfo
    players: int
    rules: Rules
    codec: Codec
    seed: int
    kinds: tuple[str, ...]  # the chance outcomes: the deck's card kinds
    deals_again: bool  # deals after the first (hands, rounds): an action may deal


    @staticmethod
    def of(info: GameInfo, params: Mapping[str, Param]) -> Setup:
        players = int(params["players"])
        rules = parse_rules(info.rules_type, _options(str(params["rules"])), where="rules")
        info.check_setup(rules, players)
        first = info.new_game(rules, players, 0).snapshot()
        return Setup(info, players, rules, find_codec(info.name), int(params["seed"]),
                     deck_kinds(info, rules, players), "hands" in first)


@functools.cache
def _setup(name: str, params: tuple[tuple[str, Param], ...]) -> Setup:
    return Setup.of(find_game(name.removeprefix("meldref_")), dict(params))


def setup_of(game: pyspiel.Game) -> Setup:
    """The settings of `game`, by its name and parameters: a Python object that OpenSpiel's
    C++ side hands back may be a new wrapper without the attributes set on the first."""
    return _setup(game.get_type().short_name, tuple(sorted(game.get_parameters().items())))


def _factory(info: GameInfo) -> type[pyspiel.Game]:
    game_type = _game_type(info)

    class MeldrefGame(pyspiel.Game):  # type: ignore[misc]
        """One of meldref's games for OpenSpiel."""

        def __init__(self, params: Mapping[str, Param] | None = None) -> None:
            params = {**game_type.parameter_specification, **(params or {})}
            params["rules"] = _game_string_rules(str(params["rules"]))
            setup = Setup.of(info, params)
            solo = setup.players == 1
            game_info = pyspiel.GameInfo(
                num_distinct_actions=setup.codec.action_size,
                max_chance_outcomes=len(setup.kinds),
                num_players=setup.players,
                min_utility=0.0 if solo else -1.0,
                max_utility=11.0 if solo else 1.0,
                utility_sum=None,
                max_game_length=MAX_LENGTH,
            )
            super().__init__(game_type, game_info, params)

        def new_initial_state(self) -> MeldrefState:
            return MeldrefState(self)

        def make_py_observer(self, iig_obs_type: object = None, params: object = None
                             ) -> SeatObserver:
            return SeatObserver(setup_of(self))

    return MeldrefGame


def _options(text: str) -> dict[str, str]:
    """The rule options of a `rules` parameter: `option=value` or `option:value`, separated
    by commas or semicolons."""
    pairs = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    return dict(re.split("[=:]", p, maxsplit=1) for p in pairs)


def _game_string_rules(text: str) -> str:
    """A `rules` parameter as OpenSpiel's game string can hold it (`option:value;...`): its
    parser splits parameters at commas and a name from its value at `=`, so a serialized
    state's game would not load again ("phases-to-win=1,turn-cap=6" ->
    "phases-to-win:1;turn-cap:6")."""
    return ";".join(f"{k.strip()}:{v.strip()}" for k, v in _options(text).items())


class MeldrefState(pyspiel.State):  # type: ignore[misc]
    """A game in progress. Chance nodes: each card of a deal, each draw from the face-down
    pile, each shown top of the pile turned up (meldref.envs.chance)."""

    def __init__(self, game: pyspiel.Game, inner: GameState | None = None) -> None:
        super().__init__(game)
        self.setup = setup_of(game)
        g = self.setup
        self.deal: Deal | None = None
        self.drawing = False  # a seat chose `draw pile`: the card drawn is chance's
        self.top_open = False  # the shown top of the pile is not fixed yet
        self._legal: dict[int, str] = {}
        if inner is None:
            dealt = g.info.new_game(g.rules, g.players, g.seed)
            self.deal = Deal.of(g.info, g.rules, g.players, dealt, None, None)
            inner = dealt
        self.inner = inner
        if self.deal is None:  # a state given as it is (a resampled one): its top is fixed
            self._legal = self._list_legal()

    def _settle(self) -> None:
        """After the cards are fixed: the shown top, then the legal actions."""
        self.top_open = shows_top(self.inner)
        self._legal = {} if self.top_open else self._list_legal()

    def _list_legal(self) -> dict[int, str]:
        seat = self.inner.to_move
        if seat is None:
            return {}
        view = self.inner.observation(seat).to_json()
        texts = [str(a) for a in self.inner.legal_actions()]
        return legal_indices(self.setup.codec, texts, view)

    def current_player(self) -> int:
        if self.is_chance_node():
            return int(pyspiel.PlayerId.CHANCE)
        seat = self.inner.to_move
        return int(pyspiel.PlayerId.TERMINAL) if seat is None else seat

    def is_chance_node(self) -> bool:
        return self.deal is not None or self.drawing or self.top_open

    def _unseen(self) -> Counter[str]:
        """The cards chance picks from now."""
        if self.deal is not None:
            return self.deal.left
        return Counter(c.text for c in draw_pile(self.inner))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return outcomes(self._unseen(), self.setup.kinds)

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self._legal)

    def _apply_action(self, action: int) -> None:
        if self.is_chance_node():
            self._apply_chance(self.setup.kinds[action])
            return
        text = self._legal[action]
        move = self.inner.parse_action(text)
        if is_pile_draw(move):
            self.drawing, self._legal = True, {}
            return
        before = self.inner.snapshot() if self.setup.deals_again else None
        events = self.inner.apply(move)
        if before is not None and deals_in(events):
            g = self.setup
            self.deal = Deal.of(g.info, g.rules, g.players, self.inner, before, text)
            self._legal = {}
            return
        self._settle()

    def _apply_chance(self, token: str) -> None:
        if self.deal is not None:
            dealt = self.deal.pick(token)
            if dealt is not None:
                self.inner, self.deal = dealt, None
                self._settle()
            return
        put_on_top(self.inner, token)
        if self.drawing:
            self.drawing = False
            self.inner.apply(DRAW_PILE)
        self.top_open = False
        self._legal = self._list_legal()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            card = self.setup.kinds[action]
            if self.deal is None:
                return f"draw {card}" if self.drawing else f"turn up {card}"
            where, at = self.deal.where()
            return f"deal {card} to " + (f"seat {at}" if where == "hand" else
                                           f"pile {at}" if where == "pile" else "the discard")
        return self._legal.get(action) or self.setup.codec.describe(action)

    def is_terminal(self) -> bool:
        return not self.is_chance_node() and self.inner.outcome is not None

    def returns(self) -> list[float]:
        players = self.setup.players
        outcome = None if self.is_chance_node() else self.inner.outcome
        if outcome is None:
            return [0.0] * players
        if players == 1:
            return [float(outcome.scores[0])]
        return [1.0 - 2.0 * (p - 1) / (players - 1) for p in outcome.places]

    def resample_from_infostate(self, player: int, sampler: Callable[[], float]
                                ) -> MeldrefState:
        """A state `player` cannot tell from this one (hidden cards dealt again)."""
        if self.is_chance_node():
            return typing.cast(MeldrefState, self.clone())
        rng = random.Random(int(sampler() * 2**31))  # the sampler draws uniformly in [0, 1)
        return MeldrefState(self.get_game(), resampled_state(self.inner, player, rng))

    def __str__(self) -> str:
        if self.deal is not None:
            return "dealing"
        # The referee's view, but the face-down pile as the cards it holds: its order is not
        # fixed (each draw is chance's).
        view = self.inner.public_view()
        view["draw_pile"] = sorted(view["draw_pile"])
        return json.dumps(view, sort_keys=True)


class SeatObserver:
    """The PyObserver of a seat, for observations and information states alike: the
    environments' vector of the seat's view, and the view as JSON text. (The view is what the
    seat knows now, not its whole history: not perfect recall.)"""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.tensor = np.zeros(setup.codec.observation_size(setup.players), np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: MeldrefState, player: int) -> None:
        view = _view(state, player)
        if view is None:
            self.tensor[:] = 0.0
            return
        self.tensor[:] = self.setup.codec.encode(view, self.setup.players)

    def string_from(self, state: MeldrefState, player: int) -> str:
        view = _view(state, player)
        return "dealing" if view is None else json.dumps(view, sort_keys=True)


def _view(state: MeldrefState, player: int) -> dict[str, JSON] | None:
    """What `player` sees in `state`; None while cards are dealt. A top of the pile that chance
    has not turned up yet is not shown (the engine's card there is a placeholder)."""
    if state.deal is not None:
        return None
    view = state.inner.observation(player).to_json()
    if state.top_open:
        view["draw_top"] = None
    return view
