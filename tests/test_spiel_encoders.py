"""The fast encoders (each part written at its offset into one list, Phase 10's groups
remembered by token; Solitaire's typed-view encoder, its piles' parts remembered) give the
vectors of the plain ones, bit for bit, and the batched
environment's rows and masks are the single encoders' and `legal_indices`' own, on random games
of every game at several table sizes.

The plain encoders are the codec modules as they were before (commit `PLAIN`), read from git:
the reference is the code that defined the vectors, not a copy kept beside the new one.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from meldref.engine.game import find_game
from meldref.engine.registry import GAMES
from meldref.envs.batch import BatchEnv
from meldref.envs.codec import find_codec, legal_indices, mask_of

PLAIN = "3805b6f"  # the last commit with the list-concatenating encoders
ROOT = Path(__file__).resolve().parents[1]


def plain_codec(game: str) -> Any:
    """The game's CODEC as commit PLAIN wrote it (skips where git or the commit is missing,
    as in an unpacked sdist)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("no git checkout: the plain encoders are read from git")
    shown = subprocess.run(["git", "show", f"{PLAIN}:meldref/envs/{game}.py"], cwd=ROOT,
                           capture_output=True, text=True, check=False)
    if shown.returncode != 0:
        pytest.skip(f"commit {PLAIN} not in this clone: {shown.stderr.strip()}")
    module = types.ModuleType(f"meldref.envs._plain_{game}")
    module.__package__ = "meldref.envs"
    exec(compile(shown.stdout, f"{PLAIN}:{game}.py", "exec"), module.__dict__)
    return module.CODEC


def tables(game: str) -> list[int]:
    info = find_game(game)
    return sorted({info.min_players, min(info.max_players, 3), info.max_players})


@pytest.mark.parametrize("game", GAMES)
def test_the_fast_encoding_is_the_plain_one_to_the_bit(game: str) -> None:
    info, codec, plain = find_game(game), find_codec(game), plain_codec(game)
    rng, checked = random.Random(3), 0
    for players in tables(game):
        for seed in range(12):
            state = info.new_game(info.rules(), players, seed)
            for _ in range(300):
                seat = state.to_move
                if seat is None:
                    break
                for looker in {seat, (seat + 1) % players}:  # the mover, and a seat waiting
                    observation = state.observation(looker)
                    view = observation.to_json()
                    old = plain.encode(view, players)
                    # The JSON's encoder and the typed view's (an environment's step)
                    for new in (codec.encode(view, players),
                                codec.encode_observation(observation, players)):
                        assert new.dtype == old.dtype and new.tobytes() == old.tobytes(), (
                            game, players, seed, looker, np.flatnonzero(new != old))
                    checked += 1
                actions = state.legal_actions()
                state.apply(actions[rng.randrange(len(actions))])
    assert checked > 300


@pytest.mark.parametrize("game", GAMES)
def test_the_batched_rows_are_the_single_encodings(game: str) -> None:
    info = find_game(game)
    players = 1 if info.max_players == 1 else 3
    codec = find_codec(game)
    envs = BatchEnv(game, 5, players, seed=7)
    obs, batch_info = envs.reset()
    rng = np.random.default_rng(0)
    for _ in range(150):
        for i, state in enumerate(envs.states):
            seat = state.to_move
            assert seat is not None
            view = state.observation(seat).to_json()
            assert obs[i].tobytes() == codec.encode(view, players).tobytes()
            texts = [str(a) for a in state.legal_actions()]
            expected = mask_of(codec, legal_indices(codec, texts, view))
            assert (batch_info["action_mask"][i] == expected).all()
            assert batch_info["to_play"][i] == seat
        mask = batch_info["action_mask"]
        chosen = np.argmax(rng.random(mask.shape) * mask, axis=1)
        obs, _, _, _, batch_info = envs.step(chosen)


def test_the_build_compiles_every_registered_games_codec() -> None:
    # The vectors and indices an environment builds every step run compiled, as the engine
    # does; setup.py takes the games from engine/registry.py (test_build's `load_setup`)
    from test_build import load_setup

    hot = set(load_setup().HOT)
    assert {"meldref/envs/codec.py", *(f"meldref/envs/{game}.py" for game in GAMES)} <= hot
