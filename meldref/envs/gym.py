"""Five Crowns Solitaire as a Gymnasium environment (one agent, so no AEC needed).

    from meldref.envs import SolitaireEnv
    env = SolitaireEnv()
    obs, info = env.reset(seed=7)
    while True:
        action = policy(obs, info["action_mask"])     # or env.action_masks()
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break

The observation is Solitaire's vector (meldref.envs.solitaire), the action an index of its
616 places. Reward: +1 for each pile closed (the game's score), as it closes. An illegal action
ends the episode with `illegal_reward` (default -1) and `info["illegal"]` True, as the referee
forfeits a bot for it; mask with `info["action_mask"]` or `action_masks()` (the name
sb3-contrib's MaskablePPO calls).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..engine.game import GameState, find_game
from ..settings import parse_rules
from .codec import FEATURE_MAX, Mask, Vector, find_codec, legal_indices, mask_of


class SolitaireEnv(gym.Env[Vector, int]):
    """Five Crowns Solitaire under `rules` (option names as the command line writes them)."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}

    def __init__(self, rules: Mapping[str, object] | None = None, illegal_reward: float = -1.0,
                 render_mode: str | None = None) -> None:
        self.info = find_game("solitaire")
        self.rules = parse_rules(self.info.rules_type, dict(rules or {}), where="rules")
        self.codec = find_codec("solitaire")
        self.illegal_reward = illegal_reward
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, FEATURE_MAX, shape=(self.codec.observation_size(1),),
                                            dtype=np.float32)
        self.action_space = spaces.Discrete(self.codec.action_size)
        self.state: GameState | None = None
        self._legal: dict[int, str] = {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Vector, dict[str, Any]]:
        super().reset(seed=seed)
        game_seed = int(self.np_random.integers(2**31))
        self.state = self.info.new_game(self.rules, 1, game_seed)
        return self._observe(), self._info()

    def _observe(self) -> Vector:
        assert self.state is not None
        view = self.state.observation(0).to_json()
        texts = [str(a) for a in self.state.legal_actions()]
        self._legal = legal_indices(self.codec, texts, view)
        return self.codec.encode(view, 1)

    def _info(self, **extra: Any) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "legal_actions": list(self._legal.values()),
                **extra}

    def action_masks(self) -> Mask:
        return mask_of(self.codec, self._legal)

    def step(self, action: int) -> tuple[Vector, float, bool, bool, dict[str, Any]]:
        assert self.state is not None, "call reset() first"
        text = self._legal.get(int(action))
        if text is None:
            obs = self.codec.encode(self.state.observation(0).to_json(), 1)
            self._legal = {}
            return obs, self.illegal_reward, True, False, self._info(illegal=True)
        before = self.state.scores[0]
        self.state.apply(self.state.parse_action(text))
        reward = float(self.state.scores[0] - before)
        obs = self._observe()
        return obs, reward, self.state.outcome is not None, False, self._info()

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.state is None:
            return None
        from ..protocol.viewtext import observation_lines

        return "\n".join(observation_lines(self.state.observation(0)))
