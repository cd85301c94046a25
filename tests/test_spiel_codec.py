"""The encoder's cheap paths give exactly what the plain ones gave: the packed vector is numpy's
float32 conversion to the bit, and an action's remembered index is the codec's own at every
decision of random games of every game (the indices a view decides, Phase 10's `lay` without
its phase, are never remembered)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from meldref.engine.game import find_game
from meldref.engine.registry import GAMES
from meldref.envs.codec import find_codec, index_of, vector


def test_the_packed_vector_is_numpys_float32_to_the_bit() -> None:
    rng = random.Random(1)
    values = [0.0, 1.0, -1.0, 1 / 3, 1e-40, 999.9, *(rng.uniform(-1000, 1000) for _ in range(500))]
    packed = vector(values)
    assert packed.dtype == np.float32 and packed.shape == (len(values),)
    assert packed.tobytes() == np.asarray(values, dtype=np.float32).tobytes()
    packed[0] = 5.0  # a vector the caller may write into (an observation buffer)
    assert vector([]).shape == (0,)


@pytest.mark.parametrize("game", GAMES)
def test_a_remembered_index_is_the_codecs_own(game: str) -> None:
    info, codec = find_game(game), find_codec(game)
    players = info.min_players if info.max_players == 1 else 3
    rng, checked = random.Random(2), 0
    for seed in range(3):
        state = info.new_game(info.rules(), players, seed)
        for _ in range(400):
            if state.to_move is None:
                break
            view = state.observation(state.to_move).to_json()
            actions = state.legal_actions()
            for action in actions:
                text = str(action)
                assert index_of(codec, text, view) == codec.action_index(text, view)
                checked += 1
            state.apply(actions[rng.randrange(len(actions))])
    assert checked > 500


def test_an_index_the_view_decides_is_read_from_the_view() -> None:
    codec = find_codec("phase10")
    first = {"phase": 1}
    assert index_of(codec, "lay set:R1,B1,Y1 set:R2,B2,G2", first) == 2
    assert index_of(codec, "lay set:R1,B1,Y1 set:R2,B2,G2", {"phase": 4}) == 5
