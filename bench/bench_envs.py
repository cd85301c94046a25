"""Environment steps a CPU second: meldref's PettingZoo environments and its batched
environment (meldref.envs.batch, N games a call) against the gin rummy of RLCard and of
OpenSpiel, in one run, as ratios.

    python bench/bench_envs.py [--steps 20000] [--batch 64] [--only meldref|rlcard|openspiel]

Random play with observations, as an agent trains: each step reads the acting seat's
observation and mask (meldref: `env.last()`, the vector and the mask; RLCard: the state its
`step` returns, already holding both; OpenSpiel: `observation_tensor` and `legal_actions`),
then takes a uniformly random legal action. Games restart until --steps steps are taken. The
batched rows step --batch games a call (`BatchEnv.step`: observations and masks out as
arrays, random legal actions drawn for all games at once with numpy, auto-reset), a step
being one game's action. Time is the process's CPU time (time.process_time), so other work on
a shared machine slows no row.
The `raw_env()` rows step the same environment without the checks of PettingZoo's classic
wrappers (`env()` makes them in one layer, `ClassicAEC`), as a training loop that keeps to the
mask may.
PettingZoo no longer ships a gin rummy (it left with 1.25); its own AEC loop is what the
meldref rows run, so that row is the comparison with PettingZoo. A library that is not
installed gets a row saying so. The ratio column is meldref's figure over the row's.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

TABLES = (("phase10", 2, {"phases-to-win": 3}), ("fivecrowns", 2, {}), ("solitaire", 1, {}))


def meldref_steps(game: str, players: int, rules: dict[str, object], steps: int,
                  raw: bool = False) -> float:
    from meldref.envs.aec import MeldrefAEC, pettingzoo_env

    env = MeldrefAEC(game, players, rules) if raw else pettingzoo_env(game, players, rules)
    env.reset(seed=0)  # the first game's imports and caches before the clock starts
    rng = np.random.default_rng(0)
    done, seed, start = 0, 0, time.process_time()
    while done < steps:
        env.reset(seed=seed)
        seed += 1
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            done += 1
    return done / (time.process_time() - start)


def batch_steps(game: str, players: int, rules: dict[str, object], steps: int,
                games: int) -> float:
    from meldref.envs.batch import BatchEnv

    envs = BatchEnv(game, games, players, rules, seed=0)
    _, info = envs.reset()
    rng = np.random.default_rng(0)
    done, start = 0, time.process_time()
    while done < steps:
        mask = info["action_mask"]
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)  # uniform among legal
        _, _, _, _, info = envs.step(actions)
        done += games
    return done / (time.process_time() - start)


def rlcard_steps(steps: int) -> float:
    import rlcard

    env = rlcard.make("gin-rummy", config={"seed": 0})
    env.reset()
    rng = np.random.default_rng(0)
    done, start = 0, time.process_time()
    while done < steps:
        state, _ = env.reset()
        while not env.is_over():
            state, _ = env.step(int(rng.choice(list(state["legal_actions"]))))
            done += 1
    return done / (time.process_time() - start)


def openspiel_steps(steps: int) -> float:
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = np.random.default_rng(0)
    done, start = 0, time.process_time()
    while done < steps:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = [o for o, _ in state.chance_outcomes()]
                state.apply_action(int(rng.choice(outcomes)))
                continue
            state.observation_tensor(state.current_player())
            state.apply_action(int(rng.choice(state.legal_actions())))
            done += 1
    return done / (time.process_time() - start)


def attempt(run: Callable[[], float]) -> float | str:
    try:
        return run()
    except ImportError as exc:
        return f"not installed ({exc.name})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=64, help="games a batched step (0: none)")
    parser.add_argument("--only", choices=("meldref", "rlcard", "openspiel"))
    args = parser.parse_args()
    rows: list[tuple[str, float | str]] = []
    if args.only in (None, "meldref"):
        for game, players, rules in TABLES:
            rows.append((f"meldref {game}",
                         meldref_steps(game, players, rules, args.steps)))
            rows.append((f"meldref {game} raw_env()",
                         meldref_steps(game, players, rules, args.steps, raw=True)))
            if args.batch:
                rows.append((f"meldref {game} batched x{args.batch}",
                             batch_steps(game, players, rules, args.steps, args.batch)))
    if args.only in (None, "rlcard"):
        rows.append(("RLCard gin rummy", attempt(lambda: rlcard_steps(args.steps))))
    if args.only in (None, "openspiel"):
        rows.append(("OpenSpiel gin rummy", attempt(lambda: openspiel_steps(args.steps))))
    others = [(n, v) for n, v in rows if not n.startswith("meldref") and isinstance(v, float)]
    print("| environment | steps/CPU s | " + " | ".join(f"x {n}" for n, _ in others) + " |")
    print("|---|---|" + "---|" * len(others))
    for name, value in rows:
        if isinstance(value, str):
            print(f"| {name} | {value} |" + " |" * len(others))
            continue
        ratios = " | ".join(f"{value / v:.2f}" for _, v in others)
        print(f"| {name} | {value:,.0f} | {ratios} |")


if __name__ == "__main__":
    main()
