"""Phase 10 as a PettingZoo environment, version 0 of its spaces (PettingZoo's naming).

    from meldref.envs import phase10_v0
    env = phase10_v0.env()            # or env(players=4, rules={...})

`env()` checks as PettingZoo's classic wrappers do (an illegal action ends the game with -1
for its seat; `ClassicAEC`), `raw_env()` is the bare `MeldrefAEC`; keyword arguments as
`meldref.envs.pettingzoo_env` takes them. Version 0 of the spaces, which a change of either
would raise to `_v1` (tests/test_envs.py holds the sizes):

- actions: Discrete(1,244): 0-1 draw pile / discard; 2-11 lay phase 1-10; 12-1187 hit group g
  (1-24) with card kind k (0-48: R1..R12, B1.., Y1.., G1.., W): 12 + (g-1) x 49 + k; 1188-1236
  discard kind k; 1237 discard a Skip naming no seat; 1238-1243 a Skip at seat 0-5;
- observations: a dict, `observation` a float32 vector of 1401 + 32 x players features and
  `action_mask` (1,244 int8); docs/research.md lists the features.
"""

from __future__ import annotations

from typing import Final

from .aec import versioned

ACTIONS: Final = 1244


def observation_size(players: int) -> int:
    """The vector's length at a table of `players` seats in version 0."""
    return 1401 + 32 * players


env, raw_env = versioned("phase10")

__all__ = ["ACTIONS", "env", "observation_size", "raw_env"]
