"""A policy as a protocol bot: a trained agent enters `meldref match`, `tournament` and `contest`
without a rewrite.

A policy is a function of what an environment gives an agent, the observation vector and the
action mask (meldref.envs.codec), returning an action index:

    def policy(observation: numpy.ndarray, mask: numpy.ndarray) -> int: ...

`policy_bot(policy)` makes it an SDK bot (meldref.bots.sdk: the handshake, pings, clocks and
flushing done for it), which encodes each request's view exactly as the environments do, so
what the agent learnt on is what it plays on. From the command line:

    meldref match phase10 --bot "python -m meldref.envs.policy mypolicy.py:policy" \\
        --bot builtin:greedy

`MODULE:NAME` is a module on the path or a file (`path/to/file.py:NAME`); NAME is the
policy, or a factory called with no arguments that returns one when `--factory` is given. An
index the mask does not allow is a bug in the policy: the bot logs it to stderr and plays the
SDK's fallback, and `meldref bot check` reports it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..bots.sdk import Bot, Request, legal_actions, log, run
from .codec import Mask, Vector, find_codec, legal_indices, mask_of

Policy = Callable[[Vector, Mask], int]


class PolicyBot(Bot):
    """`policy` as an SDK bot (module docstring)."""

    def __init__(self, policy: Policy, name: str = "policy") -> None:
        super().__init__()
        self.policy = policy
        self.name = name
        self.illegal = 0  # indices the mask did not allow (each logged)

    def choose(self, request: Request) -> str:
        codec = find_codec(request.game.name)
        view = request.view.data
        legal = legal_indices(codec, legal_actions(request), view)
        observation = codec.encode(view, request.game.players)
        index = int(self.policy(observation, mask_of(codec, legal)))
        text = legal.get(index)
        if text is None:
            self.illegal += 1
            log(f"policy chose {index} ({codec.describe(index)}), not in the mask: fallback")
            return self.fallback(request)
        return text


def policy_bot(policy: Policy, name: str = "policy") -> PolicyBot:
    """`policy` (observation, mask) -> index as a protocol bot; `run(policy_bot(p))` plays."""
    return PolicyBot(policy, name)


def load(target: str, factory: bool = False) -> Policy:
    """The policy named `MODULE:NAME` or `path/file.py:NAME` (a factory's result with
    `factory`)."""
    where, _, name = target.rpartition(":")
    if not where or not name:
        raise SystemExit(f"policy {target!r}: write MODULE:NAME or path/to/file.py:NAME")
    if where.endswith(".py"):
        spec = importlib.util.spec_from_file_location(Path(where).stem, where)
        if spec is None or spec.loader is None:
            raise SystemExit(f"policy {target!r}: cannot load {where}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    found: Any = getattr(module, name, None)
    if found is None:
        raise SystemExit(f"policy {target!r}: {where} has no {name}")
    policy: Policy = found() if factory else found
    return policy


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m meldref.envs.policy",
                                     description="Play a policy as a meldref protocol bot.")
    parser.add_argument("policy", help="MODULE:NAME or path/to/file.py:NAME")
    parser.add_argument("--factory", action="store_true",
                        help="NAME is called with no arguments and returns the policy")
    parser.add_argument("--name", default="policy", help="the bot's name in the handshake")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path.cwd()))
    run(policy_bot(load(args.policy, args.factory), args.name))


if __name__ == "__main__":
    main()
