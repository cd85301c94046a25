"""Where an environment step's time goes, per game, against OpenSpiel's gin rummy steps in the
same run (CPU seconds, so other work on the machine slows no row).

    python bench/bench_spiel.py [--steps 5000]

Random play, each step split into its parts as the environments take them: the engine's legal
actions and the seat's view (`observation(seat)`, and its JSON where the codec reads JSON), the
observation vector (`codec.encode`, or `encode_observation` of the typed view), the mask
(`legal_indices` of the engine's legal actions, with their texts), and the action applied. Each
part is reported a step in microseconds and as a share; `steps/CPU s` is the sum's inverse, and
the last column its ratio to OpenSpiel's gin rummy (observation tensor and legal actions every
step, as bench/bench_envs.py measures it).
"""

from __future__ import annotations

import argparse
import random
import time

from meldref.engine.game import find_game
from meldref.engine.registry import GAMES
from meldref.envs.codec import LazyView, find_codec, legal_indices, mask_of

PARTS = ("legal", "view", "encode", "mask", "apply")


def parts(game: str, steps: int) -> dict[str, float]:
    """CPU seconds a step in each part, over `steps` random steps."""
    info, codec = find_game(game), find_codec(game)
    players = info.min_players if info.max_players == 1 else 2
    spent = dict.fromkeys(PARTS, 0.0)
    rng, done, seed = random.Random(0), 0, 0
    clock = time.process_time
    while done < steps:
        state = info.new_game(info.rules(), players, seed)
        seed += 1
        while state.to_move is not None and done < steps:
            t0 = clock()
            actions = state.legal_actions()
            t1 = clock()
            # As the environments take them: the JSON only where the codec reads it
            observation = state.observation(state.to_move)
            view = LazyView(observation)
            if not codec.reads_typed_view:
                view.json()
            t2 = clock()
            if codec.reads_typed_view:
                codec.encode_observation(observation, players)
            else:
                codec.encode(view.json(), players)
            t3 = clock()
            legal = legal_indices(codec, actions, view, [])  # with the info's texts
            mask_of(codec, legal)
            t4 = clock()
            state.apply(actions[rng.randrange(len(actions))])
            t5 = clock()
            for part, spent_now in zip(PARTS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4),
                                       strict=True):
                spent[part] += spent_now
            done += 1
    return {part: total / steps for part, total in spent.items()}


def gin_rummy_steps(steps: int) -> float | None:
    from bench_envs import openspiel_steps  # this folder, on the path as the script runs

    try:
        return openspiel_steps(steps)
    except ImportError:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000)
    args = parser.parse_args()
    gin = gin_rummy_steps(args.steps)
    print("| game | " + " | ".join(f"{p} us (share)" for p in PARTS)
          + " | steps/CPU s | x OpenSpiel gin rummy |")
    print("|---|" + "---|" * (len(PARTS) + 2))
    for game in GAMES:
        spent = parts(game, args.steps)
        total = sum(spent.values())
        cells = " | ".join(f"{spent[p] * 1e6:.1f} ({spent[p] / total:.0%})" for p in PARTS)
        ratio = f"{1 / total / gin:.2f}" if gin else "-"
        print(f"| {game} | {cells} | {1 / total:,.0f} | {ratio} |")
    if gin:
        print(f"| OpenSpiel gin rummy | | | | | | {gin:,.0f} | 1.00 |")


if __name__ == "__main__":
    main()
