"""The three games as PettingZoo AEC environments, on exactly the rules the referee judges by.

    from meldref.envs import pettingzoo_env
    env = pettingzoo_env("phase10", players=4, rules={"phases-to-win": 3})
    env.reset(seed=42)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else policy(obs["observation"],
                                                               obs["action_mask"])
        env.step(action)

Agents are "player_0" .. "player_{n-1}", seat numbers of the engine; the agent to move is the
seat the engine says must act (a skipped seat is passed over). Each observation is a dict: the
seat's vector (`observation`) and `action_mask` over the game's fixed action space
(meldref.envs.codec; the numbering is in docs/research.md). `observe_text(agent)` is the same
seat's view as text: the `view` lines a protocol bot is sent. Rewards (`reward=`):

- "score" (default): the game's own scoring as it happens: minus the penalty points each hand
  adds to a seat (Phase 10, Five Crowns), plus each pile closed (Solitaire); a game's return is
  minus its final total (plus the piles closed).
- "place": 0 until the end, then +1 for first place down to -1 for last, linear in the place
  (equal places share); Solitaire: piles closed / 11 at the end.
- "shaped": "place" plus the "score" rewards divided by 100, a dense signal whose sum the
  place dominates.

A game ended by a turn or hand cap (`Termination.TURN_CAP`) is a truncation; every other end a
termination. `env()`-style wrappers: an illegal action ends the game with -1 for its seat (the
referee forfeits a bot for it), actions out of range are refused, and the AEC order is enforced.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar, Final, TypedDict

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger

from ..engine.game import Action, GameState, Outcome, Termination, find_game
from ..engine.registry import DEFAULT_GAME
from ..protocol.viewtext import observation_lines
from ..settings import parse_rules
from .codec import FEATURE_MAX, Codec, LazyView, Mask, Vector, find_codec, legal_indices, mask_of
from .record import GameLog, view_text
from .rewards import Reward, check_reward, step_rewards


def agent_name(seat: int) -> str:
    return f"player_{seat}"


class Observed(TypedDict):
    """An agent's observation: its vector and the mask of its legal actions."""

    observation: Vector
    action_mask: Mask


# A turn's `info`: the legal actions' texts (under "legal_actions") for the seat to move.
Info = dict[str, list[str]]


class MeldrefAEC(AECEnv[str, Observed, int | None]):  # type: ignore[misc]
    """One game of `game` for `players` seats under `rules` (option names as the command line
    writes them: {"phases-to-win": 3}), as a PettingZoo AEC environment."""

    metadata: ClassVar[dict[str, object]] = {"render_modes": ["ansi"], "name": "meldref_v0",
                                          "is_parallelizable": False}

    def __init__(self, game: str = DEFAULT_GAME, players: int | None = None,
                 rules: Mapping[str, object] | None = None, reward: Reward = "score",
                 render_mode: str | None = None) -> None:
        super().__init__()
        self.info = find_game(game)
        self.players = players or (1 if self.info.max_players == 1 else 2)
        self.rules = parse_rules(self.info.rules_type, dict(rules or {}), where="rules")
        self.info.check_setup(self.rules, self.players)
        self.reward_kind = check_reward(reward)
        self.render_mode = render_mode
        self.codec: Codec = find_codec(game)
        self.metadata = {**MeldrefAEC.metadata, "name": f"meldref_{self.info.name}_v0"}  # type: ignore[misc]
        self.possible_agents = [agent_name(s) for s in range(self.players)]
        self.agents: list[str] = []
        size = self.codec.action_size
        self._observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, FEATURE_MAX, dtype=np.float32,
                                      shape=(self.codec.observation_size(self.players),)),
            "action_mask": spaces.Box(0, 1, shape=(size,), dtype=np.int8),
        })
        self._action_space = spaces.Discrete(size)
        self.state: GameState | None = None
        self.log: GameLog | None = None  # the game so far, for `save_replay`
        self._legal: dict[int, Action] = {}
        self._seen: tuple[int, LazyView] | None = None  # the view the mask was made from

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_space

    # -- the game ------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict[str, object] | None = None) -> None:
        if seed is None:
            seed = int(np.random.default_rng().integers(2**31))
        self.state = self.info.new_game(self.rules, self.players, seed)
        self.log = GameLog(self.info, seed, self.possible_agents[:], self.state)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, Info] = {a: {} for a in self.agents}
        self._turn()

    def _turn(self) -> None:
        assert self.state is not None
        seat = self.state.to_move
        if seat is None:
            return
        self.agent_selection = agent_name(seat)
        seen = LazyView(self.state.observation(seat))
        self._seen = (seat, seen)  # observe() reuses it
        # The engine's actions themselves: applied as they are, never parsed from their text;
        # their texts (the info's) kept as they are numbered
        texts: list[str] = []
        self._legal = legal_indices(self.codec, self.state.legal_actions(), seen, texts)
        self.infos[self.agent_selection] = {"legal_actions": texts}

    def _view(self, seat: int) -> LazyView:
        assert self.state is not None
        if self._seen is not None and self._seen[0] == seat:
            return self._seen[1]
        return LazyView(self.state.observation(seat))

    def observe(self, agent: str) -> Observed:
        assert self.state is not None
        seat = self.possible_agents.index(agent)
        view = self._view(seat)
        obs = (self.codec.encode_observation(view.observation, self.players)
               if self.codec.reads_typed_view else self.codec.encode(view.json(), self.players))
        mask = (mask_of(self.codec, self._legal) if agent == self.agent_selection
                and self.state.to_move is not None
                else np.zeros(self.codec.action_size, dtype=np.int8))
        return Observed(observation=obs, action_mask=mask)

    def observe_text(self, agent: str) -> str:
        """`agent`'s view as the `view` lines a protocol bot is sent."""
        assert self.state is not None
        seat = self.possible_agents.index(agent)
        return "\n".join(observation_lines(self.state.observation(seat)))

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self.state is not None and self.log is not None and action is not None
        chosen = self._legal.get(int(action))
        if chosen is None:
            raise ValueError(f"{agent}: action {action} ({self.codec.describe(int(action))}) "
                             "is not legal now; see the action_mask")
        before = list(self.state.scores)
        self._seen = None
        self.log.apply(chosen)
        self._cumulative_rewards[agent] = 0.0
        self._reward(before, self.state.scores, self.state.outcome)
        if self.state.outcome is not None:
            capped = self.state.outcome.termination is Termination.TURN_CAP
            for a in self.agents:
                (self.truncations if capped else self.terminations)[a] = True
        else:
            self._turn()
        self._accumulate_rewards()

    def _reward(self, before: list[int], after: Sequence[int], outcome: Outcome | None) -> None:
        rewards = step_rewards(self.reward_kind, self.info, before, after, outcome)
        for agent, reward in zip(self.agents, rewards, strict=True):
            self.rewards[agent] = reward

    def render(self) -> str | None:
        """With render_mode="ansi": the seat to move's view in words (`view_text`); the
        whole table is never shown, as no seat sees it."""
        if self.render_mode != "ansi" or self.state is None or self.log is None:
            return None
        return view_text(self.log, self.state.to_move)

    def close(self) -> None:
        self.state = None


def pettingzoo_env(game: str = DEFAULT_GAME, players: int | None = None,
                   rules: Mapping[str, object] | None = None, reward: Reward = "score",
                   render_mode: str | None = None) -> ClassicAEC:
    """The game as PettingZoo's classic environments come (`env()`): an illegal action ends
    the game with -1 for its seat, actions out of range refused, the AEC order enforced
    (`ClassicAEC`, what PettingZoo's three classic wrappers do, in one layer)."""
    return ClassicAEC(game, players, rules, reward, render_mode)


def versioned(game: str) -> tuple[Callable[..., ClassicAEC], Callable[..., MeldrefAEC]]:
    """A game's PettingZoo-style `env` and `raw_env` (the `<game>_v0` modules): keyword
    arguments as `pettingzoo_env` takes them, the game fixed."""

    def env(players: int | None = None, rules: Mapping[str, object] | None = None,
            reward: Reward = "score", render_mode: str | None = None) -> ClassicAEC:
        return pettingzoo_env(game, players, rules, reward, render_mode)

    def raw_env(players: int | None = None, rules: Mapping[str, object] | None = None,
                reward: Reward = "score", render_mode: str | None = None) -> MeldrefAEC:
        return MeldrefAEC(game, players, rules, reward, render_mode)

    env.__doc__ = f"{game} with PettingZoo's classic wrappers (`pettingzoo_env`)."
    raw_env.__doc__ = f"{game} unwrapped (`MeldrefAEC`)."
    return env, raw_env


# What PettingZoo's OrderEnforcingWrapper refuses to read before the first reset.
_AFTER_RESET: Final = frozenset({"rewards", "terminations", "truncations", "infos",
                                 "agent_selection", "num_agents", "agents"})


class ClassicAEC(MeldrefAEC):
    """`MeldrefAEC` with the checks of PettingZoo's classic wrappers (OrderEnforcingWrapper,
    AssertOutOfBoundsWrapper, TerminateIllegalWrapper with -1), made in one layer: the same
    errors, warnings, rewards and ends, without three wrappers' delegation at every call
    (40-50% of a step's time). `unwrapped` is the environment itself."""

    def __init__(self, game: str = DEFAULT_GAME, players: int | None = None,
                 rules: Mapping[str, object] | None = None, reward: Reward = "score",
                 render_mode: str | None = None, illegal_reward: float = -1.0) -> None:
        super().__init__(game, players, rules, reward, render_mode)
        del self.agents  # read before reset, it raises, as the order-enforcing wrapper's
        self.illegal_reward = illegal_reward
        self._has_reset = False
        self._has_updated = False  # a step or reset since the last `agent_iter` turn

    if not TYPE_CHECKING:  # (a __getattr__ mypy saw would let it pass any attribute's name)

        def __getattr__(self, name: str) -> object:
            # Reached only for a missing attribute: before reset, the wrapper's own message.
            if name in _AFTER_RESET:
                raise AttributeError(f"{name} cannot be accessed before reset")
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def reset(self, seed: int | None = None, options: dict[str, object] | None = None) -> None:
        self._has_reset = self._has_updated = True
        super().reset(seed, options)

    def observe(self, agent: str) -> Observed:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return super().observe(agent)

    def render(self) -> str | None:
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        return super().render()

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _Turns(self, max_iter)

    def step(self, action: int | None) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        dead = self.terminations[agent] or self.truncations[agent]
        assert (action is None and dead) or in_range(action, self.codec.action_size), (
            "action is not in action space")
        if dead or (action is not None and int(action) in self._legal):
            super().step(action)
            return
        # An illegal action: the game ends here, -1 for its seat (the referee forfeits a bot)
        EnvLogger.warn_on_illegal_move()
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = float(self.illegal_reward)
        self._accumulate_rewards()
        self._deads_step_first()


def in_range(action: object, size: int) -> bool:
    """Whether `action` is in `spaces.Discrete(size)` (its `contains`, without numpy's
    conversions for a plain int)."""
    if isinstance(action, int):
        return 0 <= action < size
    if isinstance(action, np.generic | np.ndarray) and action.shape == () and np.issubdtype(
            action.dtype, np.integer):
        return 0 <= int(action) < size
    return False


class _Turns(Iterator[str]):
    """`agent_iter`'s iterator, which asserts a step between turns (as the order-enforcing
    wrapper's does)."""

    def __init__(self, env: ClassicAEC, max_iter: int) -> None:
        self.env = env
        self.left = max_iter

    def __next__(self) -> str:
        env = self.env
        if not env.agents or self.left <= 0:
            raise StopIteration
        self.left -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return env.agent_selection
