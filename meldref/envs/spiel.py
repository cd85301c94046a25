"""meldref's games registered with OpenSpiel, so its algorithms (MCTS, ISMCTS, CFR's
samplers, random simulation tests) run on exactly the rules the referee judges by.

    from meldref.envs import register_openspiel
    register_openspiel()
    game = pyspiel.load_game("meldref_phase10", {"players": 3, "rules": "phases-to-win=2"})

Names: `meldref_<game>` for every registered game (`meldref_phase10`...). Parameters: `players`,
`rules` (options as `-r` takes them, comma-separated: "phases-to-win=2,turn-cap=50"), `seed`
and `deals`. The deal is the one chance node, at the root: `deals` equally likely outcomes,
deal k dealt from the engine's seed derived from (`seed`, k), so chance is part of the
history and a game is its actions. Everything after the deal is decided by the shuffled piles
the deal made, so a search that clones a state sees the future draws: use information-set
search with `resample_from_infostate` (implemented: the cards hidden from the player dealt
again, meldref.envs.hidden), as OpenSpiel's ISMCTSBot does.

Returns: +1 for first place down to -1 for last, linear in the place (equal places share);
Solitaire: the piles closed. Observations are the environments' vectors (meldref.envs.codec)
and the seat's view as JSON text.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyspiel

from ..engine.cards import rng_for
from ..engine.game import GameInfo, GameState, find_game
from ..engine.registry import GAMES
from ..settings import parse_rules
from .codec import Codec, find_codec, legal_indices
from .hidden import resampled_state

MAX_LENGTH: Final = 200_000  # turn and hand caps bound every game well below this
_registered: set[str] = set()


def short_name(game: str) -> str:
    return f"meldref_{game}"


def _game_type(info: GameInfo) -> Any:
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
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={
            "players": 1 if solo else 2, "rules": "", "seed": 0, "deals": 10_000,
        },
    )


def register_openspiel() -> None:
    """Register meldref's games with OpenSpiel (once; later calls do nothing)."""
    for game in GAMES:
        if game not in _registered:
            info = find_game(game)
            pyspiel.register_game(_game_type(info), _factory(info))
            _registered.add(game)


@dataclass(frozen=True)
class Setup:
    """A loaded game's settings, read from its OpenSpiel parameters."""

    info: GameInfo
    players: int
    rules: Any
    codec: Codec
    seed: int
    deals: int

    @staticmethod
    def of(info: GameInfo, params: Mapping[str, Any]) -> Setup:
        players = int(params["players"])
        rules = parse_rules(info.rules_type, _options(str(params["rules"])), where="rules")
        info.check_setup(rules, players)
        return Setup(info, players, rules, find_codec(info.name), int(params["seed"]),
                     int(params["deals"]))


@functools.cache
def _setup(name: str, params: tuple[tuple[str, Any], ...]) -> Setup:
    return Setup.of(find_game(name.removeprefix("meldref_")), dict(params))


def setup_of(game: Any) -> Setup:
    """The settings of `game`, by its name and parameters: a Python object that OpenSpiel's
    C++ side hands back may be a new wrapper without the attributes set on the first."""
    return _setup(game.get_type().short_name, tuple(sorted(game.get_parameters().items())))


def _factory(info: GameInfo) -> type[pyspiel.Game]:
    game_type = _game_type(info)

    class MeldrefGame(pyspiel.Game):  # type: ignore[misc]
        """One of meldref's games for OpenSpiel."""

        def __init__(self, params: Mapping[str, Any] | None = None) -> None:
            params = {**game_type.parameter_specification, **(params or {})}
            setup = Setup.of(info, params)
            solo = setup.players == 1
            game_info = pyspiel.GameInfo(
                num_distinct_actions=setup.codec.action_size,
                max_chance_outcomes=setup.deals,
                num_players=setup.players,
                min_utility=0.0 if solo else -1.0,
                max_utility=11.0 if solo else 1.0,
                utility_sum=None,
                max_game_length=MAX_LENGTH,
            )
            super().__init__(game_type, game_info, params)

        def new_initial_state(self) -> MeldrefState:
            return MeldrefState(self)

        def make_py_observer(self, iig_obs_type: Any = None, params: Any = None
                             ) -> SeatObserver:
            return SeatObserver(setup_of(self))

    return MeldrefGame


def _options(text: str) -> dict[str, str]:
    pairs = [p for p in text.replace(";", ",").split(",") if p.strip()]
    return dict(p.split("=", 1) for p in pairs)


class MeldrefState(pyspiel.State):  # type: ignore[misc]
    """A game in progress; before the deal, the chance node."""

    def __init__(self, game: Any, state: GameState | None = None) -> None:
        super().__init__(game)
        self.setup = setup_of(game)
        self.inner = state
        self._legal: dict[int, str] = {}
        if state is not None:
            self._list_legal()

    def _list_legal(self) -> None:
        assert self.inner is not None
        seat = self.inner.to_move
        if seat is None:
            self._legal = {}
            return
        view = self.inner.observation(seat).to_json()
        texts = [str(a) for a in self.inner.legal_actions()]
        self._legal = legal_indices(self.setup.codec, texts, view)

    def current_player(self) -> int:
        if self.inner is None:
            return int(pyspiel.PlayerId.CHANCE)
        seat = self.inner.to_move
        return int(pyspiel.PlayerId.TERMINAL) if seat is None else seat

    def is_chance_node(self) -> bool:
        return self.inner is None

    def chance_outcomes(self) -> list[tuple[int, float]]:
        deals = self.setup.deals
        return [(k, 1.0 / deals) for k in range(deals)]

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self._legal)

    def _apply_action(self, action: int) -> None:
        g = self.setup
        if self.inner is None:
            seed = rng_for(g.seed, "openspiel-deal", action).getrandbits(31)
            self.inner = g.info.new_game(g.rules, g.players, seed)
        else:
            self.inner.apply(self.inner.parse_action(self._legal[action]))
        self._list_legal()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {action}"
        return self._legal.get(action) or self.setup.codec.describe(action)

    def is_terminal(self) -> bool:
        return self.inner is not None and self.inner.outcome is not None

    def returns(self) -> list[float]:
        players = self.setup.players
        outcome = None if self.inner is None else self.inner.outcome
        if outcome is None:
            return [0.0] * players
        if players == 1:
            return [float(outcome.scores[0])]
        return [1.0 - 2.0 * (p - 1) / (players - 1) for p in outcome.places]

    def resample_from_infostate(self, player: int, sampler: Any) -> MeldrefState:
        """A state `player` cannot tell from this one (hidden cards dealt again)."""
        if self.inner is None:
            return self.clone()
        rng = random.Random(int(sampler() * 2**31))  # the sampler draws uniformly in [0, 1)
        return MeldrefState(self.get_game(), resampled_state(self.inner, player, rng))

    def __deepcopy__(self, memo: dict[int, object]) -> MeldrefState:
        # OpenSpiel's searches deep-copy states: a copy through the engine's snapshot, as
        # `clone` (the compiled build's frozen values cannot be copied field by field).
        return self.clone()

    def clone(self) -> MeldrefState:
        inner = None
        if self.inner is not None:
            inner = self.setup.info.from_snapshot(self.inner.snapshot())
        return MeldrefState(self.get_game(), inner)

    def __str__(self) -> str:
        if self.inner is None:
            return "before the deal"
        return json.dumps(self.inner.public_view(), sort_keys=True)


class SeatObserver:
    """The PyObserver of a seat: the environments' vector, and the view as JSON text."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.tensor = np.zeros(setup.codec.observation_size(setup.players), np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: MeldrefState, player: int) -> None:
        if state.inner is None:
            self.tensor[:] = 0.0
            return
        view = state.inner.observation(player).to_json()
        self.tensor[:] = self.setup.codec.encode(view, self.setup.players)

    def string_from(self, state: MeldrefState, player: int) -> str:
        if state.inner is None:
            return "before the deal"
        return json.dumps(state.inner.observation(player).to_json(), sort_keys=True)
