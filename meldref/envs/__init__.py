"""The three games for researchers: PettingZoo and Gymnasium environments, OpenSpiel games, a
policy as a protocol bot, on exactly the rules the referee judges by (`pip install
'meldref[envs]'`; docs/research.md).

- `phase10_v0`, `fivecrowns_v0`, `solitaire_v0`: PettingZoo-style modules, `env()` and
  `raw_env()` (version 0 of each game's spaces);
- `pettingzoo_env(game, players, rules)`: a PettingZoo AEC environment (meldref.envs.aec);
- `SolitaireEnv`, `SeatEnv`: Solitaire, or one seat against built-in bots, as Gymnasium
  environments (meldref.envs.solitaire_gym, meldref.envs.gym), registered as
  "meldref/Solitaire-v0" and "meldref/Seat-v0";
- `BatchEnv`: N games stepped in one call, numpy arrays in and out (meldref.envs.batch);
- `register_openspiel()`: the games registered with OpenSpiel (meldref.envs.spiel);
- `policy_bot(policy)`: a function of the observation and mask as a protocol bot
  (meldref.envs.policy);
- `find_codec(game)`: each game's fixed action space and observation vector
  (meldref.envs.codec, one module per game).

Each is imported when first used, so `import meldref.envs` needs none of the libraries: it
costs under a millisecond, where importing Gymnasium costs about 80. The Gymnasium ids are
registered whichever is imported first: at once if Gymnasium is loaded, else the moment it
loads (Gymnasium 1.0 dropped the entry-point plugins that 0.26-0.29 read; for those,
`register_gymnasium` is the `gymnasium.envs` entry point).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Final

from ..engine.registry import GAMES

_WHERE = {
    "pettingzoo_env": "aec", "MeldrefAEC": "aec", "ClassicAEC": "aec", "SeatEnv": "gym",
    "register_openspiel": "spiel", "policy_bot": "policy", "PolicyBot": "policy",
    "find_codec": "codec", "BatchEnv": "batch",
}
_MODULES: Final = tuple(f"{game}_v0" for game in GAMES)  # PettingZoo-style, one per game
# A game's own Gymnasium environments (`<game>_gym`, where the game has one: Solitaire's
# `SolitaireEnv`), found by the names they export.
_GYM_MODULES: Final = tuple(f"{game}_gym" for game in GAMES)
_GYM_NAMES: Final = ("SolitaireEnv",)

GYMNASIUM_IDS: Final = {
    "meldref/Solitaire-v0": "meldref.envs:SolitaireEnv",
    "meldref/Seat-v0": "meldref.envs.gym:SeatEnv",
}

__all__ = sorted([*_WHERE, *_MODULES, *_GYM_NAMES, "register_gymnasium", "GYMNASIUM_IDS"])


def __getattr__(name: str) -> object:
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    module = _WHERE.get(name)
    if module is not None:
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)
    if name in _GYM_NAMES:
        for gym_module in _GYM_MODULES:
            if importlib.util.find_spec(f"{__name__}.{gym_module}") is not None:
                found = importlib.import_module(f"{__name__}.{gym_module}")
                if hasattr(found, name):
                    return getattr(found, name)
    raise AttributeError(name)


def register_gymnasium() -> None:
    """Register the Gymnasium ids (again is harmless). The `gymnasium.envs` entry point."""
    # Imported here: `import meldref.envs` must not import Gymnasium (80 ms), only register
    # once it is loaded. The compiled build type-checks this package without Gymnasium
    # (setup.py's isolated build environment): there the import is unknown, here it is not.
    from gymnasium.envs.registration import (  # type: ignore[import-not-found, unused-ignore]  # noqa: PLC0415 start-up: Gymnasium, an extra
        register,
        registry,
    )

    for env_id, entry_point in GYMNASIUM_IDS.items():
        if env_id not in registry:
            register(id=env_id, entry_point=entry_point)


class _RegisterWhenLoaded:
    """A finder that lets Gymnasium load as usual, then registers the ids: importing meldref
    before Gymnasium must not cost Gymnasium's import, nor leave the ids unknown to it."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        if name != "gymnasium":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_then_register(module: ModuleType) -> None:
            run(module)
            self.leave()
            register_gymnasium()

        spec.loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec

    def leave(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def _register_now_or_when_loaded() -> None:
    if "gymnasium" in sys.modules:
        register_gymnasium()
    elif not any(isinstance(f, _RegisterWhenLoaded) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterWhenLoaded())


_register_now_or_when_loaded()
