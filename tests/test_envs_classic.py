"""`env()` (meldref.envs.aec.ClassicAEC): what PettingZoo's three classic wrappers do, in one
layer. Driven side by side with the wrappers themselves around `raw_env()`, it gives the same
observations, rewards, ends, errors and warnings, an illegal action and the order's errors
included."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="pettingzoo is in the test extra")

from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from meldref.envs.aec import ClassicAEC, MeldrefAEC, pettingzoo_env

SHORT = {"phase10": {"phases-to-win": 1, "turn-cap": 40}, "fivecrowns": {"turn-cap": 8},
         "solitaire": {}}


def wrapped(game: str, players: int) -> Any:
    """The environment as PettingZoo's own wrappers made `env()` before (the reference)."""
    env: Any = wrappers.TerminateIllegalWrapper(MeldrefAEC(game, players, SHORT[game]), -1)
    env = wrappers.AssertOutOfBoundsWrapper(env)
    return wrappers.OrderEnforcingWrapper(env)


def outcome(call: Callable[[], object]) -> object:
    """What a call returns, or the type and text of what it raises."""
    try:
        return call()
    except (AssertionError, AttributeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


def same(a: object, b: object) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list) and isinstance(b, tuple | list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))  # type: ignore[arg-type]
    return a == b


def test_env_is_one_layer() -> None:
    """No wrapper around the environment: `unwrapped` is `env()` itself (three layers of
    PettingZoo's wrappers before, 40-50% of a step's time)."""
    env = pettingzoo_env("fivecrowns", 2)
    assert type(env) is ClassicAEC and env.unwrapped is env


@pytest.mark.parametrize(("game", "players", "seed"), [("phase10", 3, 1), ("fivecrowns", 2, 2),
                                                      ("fivecrowns", 4, 3), ("solitaire", 1, 4)])
def test_env_plays_as_the_classic_wrappers_do(game: str, players: int, seed: int) -> None:
    """Same actions into both, every answer compared: random legal play, an action out of
    range now and then (refused by both), and one game ended by an illegal action, its dead
    seats then stepped out with None."""
    EnvLogger.suppress_output()
    try:
        new, old = pettingzoo_env(game, players, SHORT[game]), wrapped(game, players)
        rng = random.Random(seed)
        # The order's errors before any reset
        assert same(outcome(lambda: new.agents), outcome(lambda: old.agents))
        assert same(outcome(lambda: new.step(0)), outcome(lambda: old.step(0)))
        assert same(outcome(lambda: new.observe("player_0")),
                    outcome(lambda: old.observe("player_0")))
        for game_seed in range(seed, seed + 3):
            new.reset(seed=game_seed)
            old.reset(seed=game_seed)
            illegal_at = rng.randrange(20) if game_seed == seed + 1 else -1
            for turn, (a, b) in enumerate(zip(new.agent_iter(5000), old.agent_iter(5000),
                                              strict=True)):
                assert a == b
                last = new.last()
                assert same(last, old.last())
                assert same((new.rewards, new.terminations, new.truncations, new.agents),
                            (old.rewards, old.terminations, old.truncations, old.agents))
                obs, _, term, trunc, _ = last
                if term or trunc:
                    action = None
                else:
                    mask = obs["action_mask"]  # type: ignore[index]
                    if rng.random() < 0.1:
                        too_big = int(mask.size)
                        assert same(outcome(functools.partial(new.step, too_big)),
                                    outcome(functools.partial(old.step, too_big)))
                    legal = np.flatnonzero(mask)
                    action = int(rng.choice(legal)) if turn != illegal_at else int(
                        np.flatnonzero(mask == 0)[0])
                new.step(action)
                old.step(action)
            assert not new.agents and not old.agents
        assert same(outcome(lambda: new.step(None)), outcome(lambda: old.step(None)))
    finally:
        EnvLogger.unsuppress_output()


def test_agent_iter_asks_for_a_step_between_turns() -> None:
    env = pettingzoo_env("solitaire")
    env.reset(seed=1)
    turns = env.agent_iter()
    next(turns)
    with pytest.raises(AssertionError, match="need to call step"):
        next(turns)
