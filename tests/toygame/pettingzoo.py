"""Toy Rummy as a PettingZoo environment, version 0 of its spaces (this becomes
`meldref/envs/toyrummy_v0.py`; PettingZoo's naming).

    from meldref.envs import toyrummy_v0
    env = toyrummy_v0.env(players=3)

`env()` has PettingZoo's classic wrappers, `raw_env()` is the bare `MeldrefAEC`. Version 0 of
the spaces, pinned here so that a change to the codec shows as a `_v1`:

- actions: Discrete(50), as `meldref.envs.toyrummy` numbers them;
- observations: a float32 vector of 53 + players features and the action mask.
"""

from __future__ import annotations

from typing import Final

from meldref.engine.toyrummy import NAME
from meldref.envs.aec import versioned

ACTIONS: Final = 50


def observation_size(players: int) -> int:
    """The vector's length at a table of `players` seats in version 0."""
    return 53 + players


env, raw_env = versioned(NAME)

__all__ = ["ACTIONS", "env", "observation_size", "raw_env"]
