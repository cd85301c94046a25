"""Five Crowns as a PettingZoo environment, version 0 of its spaces (PettingZoo's naming).

    from meldref.envs import fivecrowns_v0
    env = fivecrowns_v0.env()            # or env(players=4, rules={...})

`env()` checks as PettingZoo's classic wrappers do (an illegal action ends the game with -1
for its seat; `ClassicAEC`), `raw_env()` is the bare `MeldrefAEC`; keyword arguments as
`meldref.envs.pettingzoo_env` takes them. Version 0 of the spaces, which a change of either
would raise to `_v1` (tests/test_envs.py holds the sizes):

- actions: Discrete(114): 0-1 draw pile / discard; 2-57 discard card kind k (0-55: 3* .. K*, 3H
  .. KH, 3C.., 3S.., 3D.., X); 58-113 discard kind k and go out with the rest;
- observations: a dict, `observation` a float32 vector of 192 + 6 x players features and
  `action_mask` (114 int8); docs/research.md lists the features.
"""

from __future__ import annotations

from typing import Final

from .aec import versioned

ACTIONS: Final = 114


def observation_size(players: int) -> int:
    """The vector's length at a table of `players` seats in version 0."""
    return 192 + 6 * players


env, raw_env = versioned("fivecrowns")

__all__ = ["ACTIONS", "env", "observation_size", "raw_env"]
