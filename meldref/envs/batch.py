"""N games stepped in one call, numpy arrays in and out: the batched environment RL libraries
and EnvPool-style runners take their throughput from.

    from meldref.envs import BatchEnv
    envs = BatchEnv("fivecrowns", 64, players=2, seed=0)
    obs, info = envs.reset()                        # obs (64, 204) float32
    while training:
        actions = policy(obs, info["action_mask"])  # (64,) ints, one legal index a game
        obs, rewards, terminated, truncated, info = envs.step(actions)

Each row is one game: `obs[i]` the vector of the seat to move in game i (`info["to_play"][i]`),
`info["action_mask"][i]` its legal actions, in the same spaces as the single environments
(meldref.envs.codec, the `_v0` modules). `rewards[i]` holds every seat's reward for the
action just taken in game i (meldref.envs.rewards' kinds, "score" by default), as the
PettingZoo environment gives them. A game that ends is reset at once (auto-reset):
`terminated[i]` (or `truncated[i]`, for a turn or hand cap) says so, `rewards[i]` holds its
last rewards and `info["final_outcome"][i]` its outcome, while `obs[i]` is already the next
game's first position. Game i's k-th game is dealt from a seed fixed by (`seed`, i, k): two
runs with one seed and the same actions play the same games, and `game_seeds[i]` is the seed
of the game now at row i, which `env.reset(seed=...)` of the single environment deals alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict

import numpy as np
import numpy.typing as npt

from ..engine.cards import rng_for
from ..engine.game import Action, GameState, Outcome, Termination, find_game
from ..settings import parse_rules
from .codec import Codec, Features, LazyView, Mask, View, find_codec, legal_indices
from .rewards import Reward, check_reward, step_rewards

Rewards = npt.NDArray[np.float32]
Flags = npt.NDArray[np.bool_]


class BatchInfo(TypedDict):
    """What `reset` and `step` return beside the observations (module docstring)."""

    action_mask: Mask
    to_play: npt.NDArray[np.int64]
    final_outcome: list[Outcome | None]


class BatchEnv:
    """`num_envs` games of `game` for `players` seats under `rules` (module docstring)."""

    def __init__(self, game: str, num_envs: int, players: int | None = None,
                 rules: Mapping[str, object] | None = None, reward: Reward = "score",
                 seed: int | None = None) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs={num_envs}: at least 1")
        self.info = find_game(game)
        self.players = players or (1 if self.info.max_players == 1 else 2)
        self.rules = parse_rules(self.info.rules_type, dict(rules or {}), where="rules")
        self.info.check_setup(self.rules, self.players)
        self.reward_kind = check_reward(reward)
        self.codec: Codec = find_codec(game)
        self.num_envs = num_envs
        self.observation_size = self.codec.observation_size(self.players)
        self.action_size = self.codec.action_size
        self.seed = seed
        self._obs = np.zeros((num_envs, self.observation_size), dtype=np.float32)
        self._mask = np.zeros((num_envs, self.action_size), dtype=np.int8)
        self._to_play = np.zeros(num_envs, dtype=np.int64)
        # A codec that gives its vector's non-zero entries (the registered games' do)
        self._features: Callable[[View, int], Features] | None = getattr(
            self.codec, "features", None)
        self.states: list[GameState] = []
        self._legal: list[dict[int, Action]] = []
        self._games = [0] * num_envs  # games dealt so far at each row
        self.game_seeds = [0] * num_envs  # the seed of the game now at each row

    def reset(self, seed: int | None = None) -> tuple[npt.NDArray[np.float32], BatchInfo]:
        """Deal a new game at every row: the first observations, and `info`."""
        if seed is not None:
            self.seed = seed
        if self.seed is None:
            self.seed = int(np.random.default_rng().integers(2**31))
        self._games = [0] * self.num_envs
        self.states = [self._deal(i) for i in range(self.num_envs)]
        self._legal = [{} for _ in range(self.num_envs)]
        self._observe()
        return self._obs.copy(), self._info([None] * self.num_envs)

    def step(self, actions: npt.ArrayLike) -> tuple[npt.NDArray[np.float32], Rewards, Flags,
                                                     Flags, BatchInfo]:
        """Apply one action index in every game; see the module docstring for what returns."""
        chosen = np.asarray(actions, dtype=np.int64).reshape(-1)
        if chosen.shape != (self.num_envs,):
            raise ValueError(f"{chosen.size} actions for {self.num_envs} games: one a game")
        rewards: list[list[float]] = []
        terminated = np.zeros(self.num_envs, dtype=np.bool_)
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        ended: list[Outcome | None] = [None] * self.num_envs
        for i, index in enumerate(chosen.tolist()):
            state = self.states[i]
            action = self._legal[i].get(index)
            if action is None:
                raise ValueError(f"game {i}: action {index} ({self.codec.describe(index)}) "
                                 "is not legal now; see info['action_mask']")
            before = list(state.scores)
            state.apply(action)
            outcome = state.outcome
            rewards.append(step_rewards(self.reward_kind, self.info, before, state.scores,
                                        outcome))
            if outcome is not None:
                ended[i] = outcome
                capped = outcome.termination is Termination.TURN_CAP
                (truncated if capped else terminated)[i] = True
                self.states[i] = self._deal(i)
        self._observe()
        return (self._obs.copy(), np.array(rewards, dtype=np.float32), terminated, truncated,
                self._info(ended))

    def _deal(self, i: int) -> GameState:
        game_seed = rng_for(str(self.seed), "batch", i, self._games[i]).getrandbits(63)
        self._games[i] += 1
        self.game_seeds[i] = game_seed
        return self.info.new_game(self.rules, self.players, game_seed)

    def _observe(self) -> None:
        """The observations and masks of every game's seat to move. Each row's non-zero
        entries are gathered and all set in one numpy call an array (a few calls a row were a
        good part of a batched step)."""
        self._obs.fill(0.0)
        self._mask.fill(0)
        obs_at: list[int] = []
        obs_values: list[float] = []
        mask_at: list[int] = []
        size, actions = self.observation_size, self.action_size
        for i, state in enumerate(self.states):
            seat = state.to_move
            assert seat is not None  # a game that ended was dealt again
            observation = state.observation(seat)
            # The JSON only where it is read: by a codec of the JSON, and for the few actions
            # whose index the view decides
            view = LazyView(observation)
            # The indices remembered by the actions' texts (`legal_indices`): no action is
            # written or parsed again, and the codec reads the view only where it decides one
            legal = self._legal[i] = legal_indices(self.codec, state.legal_actions(), view)
            mask_at += [i * actions + index for index in legal]
            if self.codec.reads_typed_view:
                self._obs[i] = self.codec.encode_observation(observation, self.players)
            elif self._features is None:  # a codec that gives only the whole vector
                self._obs[i] = self.codec.encode(view.json(), self.players)
            else:
                features = self._features(view.json(), self.players)
                obs_at += [i * size + index for index in features]
                obs_values += features.values()
            self._to_play[i] = seat
        self._obs.reshape(-1)[obs_at] = obs_values
        self._mask.reshape(-1)[mask_at] = 1

    def _info(self, ended: Sequence[Outcome | None]) -> BatchInfo:
        return BatchInfo(action_mask=self._mask.copy(), to_play=self._to_play.copy(),
                         final_outcome=list(ended))

    def action_masks(self) -> Mask:
        """The legal actions of every game's seat to move: (num_envs, action_size) int8."""
        return self._mask.copy()
