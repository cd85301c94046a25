"""A linear softmax policy trained by REINFORCE on Five Crowns against builtin:greedy, then
entered as a protocol bot (docs/research.md walks through it).

    python docs/examples/train_reinforce.py --games 2000 --out runs/reinforce
    meldref match fivecrowns --bot "python -m meldref.envs.policy --factory \\
        docs/examples/train_reinforce.py:trained" --bot builtin:greedy --games 20

Each game is an episode of `SeatEnv("fivecrowns", ["greedy"])`; the reward is minus the
penalty points of each round as it is scored, so a game's return is minus its total. The
policy's logits are a weight matrix times the observation vector, masked to the legal actions;
after each game the weights move along the return-weighted log-probability gradient, against a
running mean of returns as the baseline. The learning curve (mean points per game, every block
of games) is written to OUT/curve.svg and OUT/curve.csv; the weights to OUT/weights.npz.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from meldref.envs.gym import SeatEnv

WEIGHTS = Path(os.environ.get("MELDREF_REINFORCE", "runs/reinforce")) / "weights.npz"


def softmax_choice(weights: np.ndarray, obs: np.ndarray, mask: np.ndarray,
                   rng: np.random.Generator | None) -> tuple[int, np.ndarray]:
    """An action drawn from the masked softmax (the most likely one with no `rng`), and the
    probabilities."""
    logits = weights @ obs
    logits = np.where(mask == 1, logits, -np.inf)
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    action = int(rng.choice(len(probs), p=probs)) if rng is not None else int(probs.argmax())
    return action, probs


def train(games: int, seed: int, rate: float) -> tuple[np.ndarray, list[float]]:
    env = SeatEnv("fivecrowns", ["greedy"])
    rng = np.random.default_rng(seed)
    weights = np.zeros((env.action_space.n, env.observation_space.shape[0]))
    baseline, points = 0.0, []
    for game in range(games):
        obs, info = env.reset(seed=seed * 100_003 + game)
        grads, total, done = [], 0.0, False
        while not done:
            action, probs = softmax_choice(weights, obs, info["action_mask"], rng)
            # d log p(action) / d weights = (onehot(action) - probs) outer obs
            grads.append((action, probs, obs))
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            done = terminated or truncated
        advantage = total - baseline
        baseline += 0.02 * (total - baseline)
        for action, probs, seen in grads:
            step = -probs
            step[action] += 1.0
            weights += rate * advantage / 100.0 * np.outer(step, seen)
        points.append(-total)
    return weights, points


def curve_svg(blocks: list[float], width: int = 480, height: int = 240) -> str:
    """Mean points per block of games as a line (lower is better), a small SVG of our own."""
    top, low = max(blocks), min(blocks)
    span = (top - low) or 1.0
    step = width / max(1, len(blocks) - 1)
    points = " ".join(f"{i * step:.1f},{10 + (top - b) / span * (height - 20):.1f}"
                      for i, b in enumerate(blocks))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 30}">'
            f'<polyline fill="none" stroke="#2a6" stroke-width="2" points="{points}"/>'
            f'<text x="4" y="{height + 24}" font-size="12">mean points per game, from '
            f'{blocks[0]:.0f} to {blocks[-1]:.0f} (lower is better)</text></svg>\n')


def trained() -> object:
    """The trained policy (for `python -m meldref.envs.policy --factory`)."""
    weights = np.load(WEIGHTS)["weights"]

    def policy(obs: np.ndarray, mask: np.ndarray) -> int:
        return softmax_choice(weights, obs, mask, None)[0]

    # What it was trained for, so that a table it does not fit refuses it at the handshake
    # instead of it playing fallback moves (meldref.envs.policy).
    policy.games = ("fivecrowns",)  # type: ignore[attr-defined]
    policy.observation_size = int(weights.shape[1])  # type: ignore[attr-defined]
    return policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rate", type=float, default=0.01)
    parser.add_argument("--block", type=int, default=100, help="games per point of the curve")
    parser.add_argument("--out", type=Path, default=WEIGHTS.parent)
    args = parser.parse_args()
    weights, points = train(args.games, args.seed, args.rate)
    args.out.mkdir(parents=True, exist_ok=True)
    np.savez(args.out / "weights.npz", weights=weights)
    block = max(1, min(args.block, len(points) // 2 or 1))
    blocks = [float(np.mean(points[i:i + block])) for i in range(0, len(points), block)]
    (args.out / "curve.csv").write_text(
        "games,mean_points\n" + "".join(f"{(i + 1) * block},{b:.1f}\n"
                                        for i, b in enumerate(blocks)))
    (args.out / "curve.svg").write_text(curve_svg(blocks))
    print(f"{args.games} games: mean points {blocks[0]:.0f} in the first {block}, "
          f"{blocks[-1]:.0f} in the last; weights: {args.out / 'weights.npz'}")


if __name__ == "__main__":
    main()
