"""The environments' rewards (documented in meldref.envs.aec and docs/research.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from ..engine.game import GameInfo, Outcome

Reward = Literal["score", "place", "shaped"]
REWARDS: Final = ("score", "place", "shaped")
SHAPING: Final = 100.0  # "shaped": the score's rewards divided by this, beside the place's


def check_reward(kind: str) -> Reward:
    if kind not in REWARDS:
        raise ValueError(f"reward={kind!r}: one of {', '.join(REWARDS)}")
    return kind  # type: ignore[return-value]


def place_rewards(outcome: Outcome, players: int) -> list[float]:
    """+1 for first place down to -1 for last, linear in the place; alone: piles closed / 11."""
    if players == 1:
        return [outcome.scores[0] / 11]
    return [1.0 - 2.0 * (place - 1) / (players - 1) for place in outcome.places]


def end_rewards(kind: Reward, outcome: Outcome, players: int) -> list[float]:
    """What a game's end adds to each seat's reward: its place ("place", "shaped")."""
    return [0.0] * players if kind == "score" else place_rewards(outcome, players)


def step_rewards(kind: Reward, info: GameInfo, before: Sequence[int], after: Sequence[int],
                 outcome: Outcome | None) -> list[float]:
    """Each seat's reward for one action that took the scores from `before` to `after`."""
    sign = 1.0 if info.higher_scores_win else -1.0
    score = [sign * (a - b) for a, b in zip(after, before, strict=True)]
    end = [0.0] * len(score) if outcome is None else end_rewards(kind, outcome, len(score))
    if kind == "score":
        return score
    if kind == "place":
        return end
    return [e + s / SHAPING for e, s in zip(end, score, strict=True)]
