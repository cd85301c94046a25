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
policy, or a factory called with no arguments that returns one when `--factory` is given.

A policy may say what it was trained for, as attributes of the function (or object):

- `games`: the games it plays (`policy.games = ("fivecrowns",)`); the bot declares them in
  its handshake (`id games`), so `meldref bot check` checks only those, and refuses a game
  outside them;
- `observation_size`: the length of vector it takes, an int or a mapping game -> int
  (`policy.observation_size = 204`: Five Crowns at two seats). A vector's length depends on the
  number of seats, so a policy seated at a table it was not trained for is refused when the
  game starts, naming both sizes (`--games` and `--observation-size` say the same from the
  command line).

A refusal, like a policy that raises, ends the bot with the reason on stderr: the match shows
the seat's fault, where playing the SDK's fallback would have hidden it. An index the mask
does not allow is a bug in the policy: the bot logs it to stderr and plays the SDK's fallback,
and `meldref bot check` reports it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import traceback
import typing
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final, NoReturn

from ..bots.sdk import Bot, Game, Request, legal_actions, log, run
from .codec import Mask, Vector, find_codec, legal_indices, mask_of

Policy = Callable[[Vector, Mask], int]


# The bot's exit status when it refuses a table or its policy raises (the referee shows it).
REFUSED: Final = 3


class PolicyRefusal(SystemExit):
    """The policy cannot play this game (raised on the thread that reads the referee)."""


class PolicyBot(Bot):
    """`policy` as an SDK bot (module docstring); `games` and `observation_size` override what
    the policy declares."""

    def __init__(self, policy: Policy, name: str = "policy",
                 games: Sequence[str] | None = None,
                 observation_size: int | Mapping[str, int] | None = None) -> None:
        super().__init__()
        self.policy = policy
        self.name = name
        declared = games if games is not None else getattr(policy, "games", ())
        self.games = tuple(find_codec(g).game for g in declared)  # an unknown name fails here
        self.observation_size = (observation_size if observation_size is not None
                                 else getattr(policy, "observation_size", None))
        self.illegal = 0  # indices the mask did not allow (each logged)

    def new_game(self, game: Game) -> None:
        problem = self.misfit(game.name, game.players)
        if problem is not None:
            log(f"{self.name}: refused: {problem}")
            raise PolicyRefusal(REFUSED)

    def misfit(self, game: str, players: int) -> str | None:
        """Why the policy cannot play `game` at a table of `players` seats (None: it can)."""
        if self.games and game not in self.games:
            return f"the policy plays {', '.join(self.games)}, not {game}"
        wanted = self.observation_size
        if isinstance(wanted, Mapping):
            wanted = wanted.get(game)
        given = find_codec(game).observation_size(players)
        if wanted is not None and int(wanted) != given:
            return (f"the policy takes {int(wanted)} features, and {game} at {players} seats "
                    f"gives {given} (the vector's length depends on the number of seats): "
                    "seat it at the table size it was trained for")
        return None

    def choose(self, request: Request) -> str:
        codec = find_codec(request.game.name)
        view = request.view.data
        legal = legal_indices(codec, legal_actions(request), view)
        observation = codec.encode(view, request.game.players)
        try:
            index = int(self.policy(observation, mask_of(codec, legal)))
        except Exception as exc:  # any failure of the policy ends the bot
            self.refuse(f"the policy raised {type(exc).__name__}: {exc} on a vector of "
                        f"{observation.size} features ({request.game.name} at "
                        f"{request.game.players} seats); it plays no fallback moves")
        text = legal.get(index)
        if text is None:
            self.illegal += 1
            log(f"policy chose {index} ({codec.describe(index)}), not in the mask: fallback")
            return self.fallback(request)
        return text

    def refuse(self, reason: str) -> NoReturn:
        """End the process with `reason` on stderr: on the SDK's worker thread an exception
        would be answered with the fallback, which is what this refuses."""
        log(f"{self.name}: refused: {reason}")
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        os._exit(REFUSED)


def policy_bot(policy: Policy, name: str = "policy", games: Sequence[str] | None = None,
               observation_size: int | Mapping[str, int] | None = None) -> PolicyBot:
    """`policy` (observation, mask) -> index as a protocol bot; `run(policy_bot(p))` plays."""
    return PolicyBot(policy, name, games, observation_size)


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
    found: object = getattr(module, name, None)
    if found is None:
        raise SystemExit(f"policy {target!r}: {where} has no {name}")
    if factory and callable(found):
        found = found()
    if not callable(found):
        made = "what it makes" if factory else name
        raise SystemExit(f"policy {target!r}: {made} is not a function of the observation and "
                         "the mask")
    return typing.cast(Policy, found)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m meldref.envs.policy",
                                     description="Play a policy as a meldref protocol bot.")
    parser.add_argument("policy", help="MODULE:NAME or path/to/file.py:NAME")
    parser.add_argument("--factory", action="store_true",
                        help="NAME is called with no arguments and returns the policy")
    parser.add_argument("--name", default="policy", help="the bot's name in the handshake")
    parser.add_argument("--games", type=lambda text: text.split(","),
                        help="the games it plays, joined by ',' (default: the policy's "
                             "`games`, else all)")
    parser.add_argument("--observation-size", type=int,
                        help="the vector length it takes (default: the policy's "
                             "`observation_size`, else unchecked)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path.cwd()))
    run(policy_bot(load(args.policy, args.factory), args.name, args.games,
                   args.observation_size))


if __name__ == "__main__":
    main()
