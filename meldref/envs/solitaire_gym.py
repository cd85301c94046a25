"""Five Crowns Solitaire as a Gymnasium environment: one player, no opponents.

    from meldref.envs import SolitaireEnv
    env = SolitaireEnv()                      # or gymnasium.make("meldref/Solitaire-v0")

`SeatEnv` (meldref.envs.gym) for the one seat there is; what it observes and how it steps are
documented there and in docs/research.md.
"""

from __future__ import annotations

from collections.abc import Mapping

from .gym import SeatEnv
from .rewards import Reward


class SolitaireEnv(SeatEnv):
    """Five Crowns Solitaire (one agent, no opponents) under `rules`."""

    def __init__(self, rules: Mapping[str, object] | None = None, reward: Reward = "score",
                 illegal_reward: float = -1.0, render_mode: str | None = None) -> None:
        super().__init__("solitaire", (), rules, reward, illegal_reward, render_mode)
