"""The three games for researchers: PettingZoo and Gymnasium environments, OpenSpiel games, a
policy as a protocol bot, on exactly the rules the referee judges by (`pip install
'meldref[envs]'`; docs/research.md).

- `pettingzoo_env(game, players, rules)`: a PettingZoo AEC environment (meldref.envs.aec);
- `SolitaireEnv`, `SeatEnv`: Solitaire, or one seat against built-in bots, as Gymnasium
  environments (meldref.envs.gym);
- `register_openspiel()`: the games registered with OpenSpiel (meldref.envs.spiel);
- `policy_bot(policy)`: a function of the observation and mask as a protocol bot
  (meldref.envs.policy);
- `find_codec(game)`: each game's fixed action space and observation vector
  (meldref.envs.codec, one module per game).

Each is imported when first used, so `import meldref.envs` needs none of the libraries.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "pettingzoo_env": "aec", "MeldrefAEC": "aec", "SolitaireEnv": "gym", "SeatEnv": "gym",
    "register_openspiel": "spiel", "policy_bot": "policy", "PolicyBot": "policy",
    "find_codec": "codec",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(name)
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
