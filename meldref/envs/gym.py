"""One seat as a Gymnasium environment: any game against built-in bots, or a game for one
alone (Solitaire's `SolitaireEnv`, meldref.envs.solitaire_gym, is this with no opponents).

    from meldref.envs import SeatEnv
    env = SeatEnv("fivecrowns", opponents=["greedy"])   # seat 0 against builtin:greedy
    obs, info = env.reset(seed=7)
    while True:
        action = policy(obs, info["action_mask"])        # or env.action_masks()
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break

The agent holds seat 0; the opponents (built-in bots by name, each seeded from the game's seed
and its seat) play the other seats between the agent's decisions. The observation is the game's
vector (meldref.envs.codec), the action an index of its fixed space; rewards as
meldref.envs.aec says ("score" by default: Solitaire's piles closed as they close, the others'
penalty points as minus). An illegal action ends the episode with `illegal_reward` (default -1)
and `info["illegal"]` True, as the referee forfeits a bot for it; mask with
`info["action_mask"]` or `action_masks()` (the name sb3-contrib's MaskablePPO calls). A game
ended by a turn or hand cap is truncated; every other end terminates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..bots import builtin_bot
from ..engine.cards import rng_for
from ..engine.game import Action, Bot, GameState, Termination, find_game
from ..settings import parse_rules
from . import register_gymnasium
from .codec import FEATURE_MAX, Mask, Vector, find_codec, legal_indices, mask_of
from .record import GameLog, view_text
from .rewards import Reward, check_reward, step_rewards

# A step's `info`: the mask, the legal actions' texts, and `illegal` after an illegal action.
Info = dict[str, object]


class SeatEnv(gym.Env[Vector, np.int64]):
    """Seat 0 of `game` under `rules` (option names as the command line writes them), the
    other seats played by the built-in bots named in `opponents`."""

    metadata: dict[str, object] = {"render_modes": ["ansi"]}  # noqa: RUF012 (gymnasium's name)

    def __init__(self, game: str, opponents: Sequence[str] = (),
                 rules: Mapping[str, object] | None = None, reward: Reward = "score",
                 illegal_reward: float = -1.0, render_mode: str | None = None) -> None:
        self.game = find_game(game)
        self.players = 1 + len(opponents)
        self.rules = parse_rules(self.game.rules_type, dict(rules or {}), where="rules")
        self.game.check_setup(self.rules, self.players)
        self.opponents = [o.removeprefix("builtin:") for o in opponents]
        for name in self.opponents:
            builtin_bot(self.game.name, name, 0)  # an unknown name fails here, not mid-game
        self.codec = find_codec(game)
        self.reward_kind = check_reward(reward)
        self.illegal_reward = illegal_reward
        self.render_mode = render_mode
        size = (self.codec.observation_size(self.players),)
        self.observation_space = spaces.Box(0.0, FEATURE_MAX, shape=size, dtype=np.float32)
        self.action_space = spaces.Discrete(self.codec.action_size)
        self.state: GameState | None = None
        self.log: GameLog  # the game so far, for `save_replay` (made by reset)
        self.bots: list[Bot] = []
        self._legal: dict[int, Action] = {}  # the engine's own actions, applied as they are

    def reset(self, *, seed: int | None = None, options: dict[str, object] | None = None
              ) -> tuple[Vector, Info]:
        super().reset(seed=seed)
        game_seed = int(self.np_random.integers(2**31))
        self.state = self.game.new_game(self.rules, self.players, game_seed)
        self.log = GameLog(self.game, game_seed, ["agent", *self.opponents], self.state,
                           ["environment", *(f"builtin:{o}" for o in self.opponents)])
        self.bots = [builtin_bot(self.game.name, name, rng_for(game_seed, "seat", s + 1)
                                 .getrandbits(31))
                     for s, name in enumerate(self.opponents)]
        self._opponents_play()
        return self._observe(), self._info()

    def _opponents_play(self) -> list[float]:
        """The opponents' moves until seat 0 must act or the game ends; seat 0's rewards."""
        assert self.state is not None
        total = 0.0
        while self.state.to_move not in (None, 0):
            seat = self.state.to_move
            before = list(self.state.scores)
            self.log.apply(self.bots[seat - 1].act(self.state.observation(seat)))
            total += self._reward(before)
        return [total]

    def _reward(self, before: list[int]) -> float:
        assert self.state is not None
        kind, info = self.reward_kind, self.game
        return step_rewards(kind, info, before, self.state.scores, self.state.outcome)[0]

    def _observe(self) -> Vector:
        assert self.state is not None
        view = self.state.observation(0).to_json()
        actions = self.state.legal_actions() if self.state.to_move == 0 else []
        self._legal = legal_indices(self.codec, actions, view)
        return self.codec.encode(view, self.players)

    def _info(self, **extra: bool) -> Info:
        return {"action_mask": self.action_masks(),
                "legal_actions": [str(a) for a in self._legal.values()], **extra}

    def action_masks(self) -> Mask:
        return mask_of(self.codec, self._legal)

    def step(self, action: np.int64 | int) -> tuple[Vector, float, bool, bool, Info]:
        assert self.state is not None, "call reset() first"
        chosen = self._legal.get(int(action))
        if chosen is None:
            obs = self.codec.encode(self.state.observation(0).to_json(), self.players)
            self._legal = {}
            return obs, self.illegal_reward, True, False, self._info(illegal=True)
        before = list(self.state.scores)
        self.log.apply(chosen)
        reward = self._reward(before) + self._opponents_play()[0]
        obs = self._observe()
        outcome = self.state.outcome
        capped = outcome is not None and outcome.termination is Termination.TURN_CAP
        return obs, reward, outcome is not None and not capped, capped, self._info()

    def render(self) -> str | None:
        """With render_mode="ansi": the last action and what the agent sees, in words."""
        if self.render_mode != "ansi" or self.state is None:
            return None
        return view_text(self.log, 0)


register_gymnasium()  # already done unless Gymnasium was found apart from meldref.envs
