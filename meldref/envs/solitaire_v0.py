"""Five Crowns Solitaire as a PettingZoo environment, version 0 of its spaces (PettingZoo's naming).

    from meldref.envs import solitaire_v0
    env = solitaire_v0.env()

`env()` checks as PettingZoo's classic wrappers do (an illegal action ends the game with -1
for its seat; `ClassicAEC`), `raw_env()` is the bare `MeldrefAEC`; keyword arguments as
`meldref.envs.pettingzoo_env` takes them. Version 0 of the spaces, which a change of either
would raise to `_v1` (tests/test_envs.py holds the sizes):

- actions: Discrete(616): place into pile p (3-13) taking out card kind k (0-55): (p - 3) x 56 +
  k;
- observations: a dict, `observation` a float32 vector of 687 features and
  `action_mask` (616 int8); docs/research.md lists the features.
"""

from __future__ import annotations

from typing import Final

from .aec import versioned

ACTIONS: Final = 616


def observation_size(players: int) -> int:
    """The vector's length at a table of `players` seats in version 0."""
    return 687


env, raw_env = versioned("solitaire")

__all__ = ["ACTIONS", "env", "observation_size", "raw_env"]
