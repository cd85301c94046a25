"""Phase 10's built-in bots, seated as ``builtin:NAME``: `BOTS`, found by the registry
(engine/registry.py `find_part("meldref.bots", "phase10", "BOTS")`).

One module a rung: `greedy` the random and greedy bots, `expert` the hand-written strategy,
`search` the determinized search over the expert's moves. The expert and the search are bot
programs too (`python3 bots/phase10/expert.py`, `python3 bots/phase10/search.py`). Each module
builds on the ones before it and none imports this one, so this one imports them all, at its
top.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from ...engine.game import Bot
from .expert import Phase10ExpertBot
from .greedy import GreedyBot, RandomBot
from .search import Phase10SearchBot

BOTS: Final[Mapping[str, Callable[[int], Bot]]] = {
    "random": RandomBot,
    "greedy": GreedyBot,
    "expert": Phase10ExpertBot,
    "search": Phase10SearchBot,
}

__all__ = ["BOTS", "GreedyBot", "Phase10ExpertBot", "Phase10SearchBot", "RandomBot"]
