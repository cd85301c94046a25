"""Five Crowns' built-in bots, seated as ``builtin:NAME``: `BOTS`, found by the registry
(engine/registry.py `find_part("meldref.bots", "fivecrowns", "BOTS")`).

One module a rung: `greedy` the random and greedy bots, `expert` the hand-written strategy,
`search` the determinized search over the expert's moves; `tree_search` the information-set tree
search (seated by the strength bench, not a built-in). The expert and the search are bot
programs too (`python3 bots/fivecrowns/expert.py`, `python3 bots/fivecrowns/search.py`). Each
module builds on the ones before it and none imports this one, so this one imports them all, at
its top.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from ...engine.game import Bot
from .expert import FiveCrownsExpertBot
from .greedy import FiveCrownsGreedyBot, FiveCrownsRandomBot
from .search import FiveCrownsSearchBot

BOTS: Final[Mapping[str, Callable[[int], Bot]]] = {
    "random": FiveCrownsRandomBot,
    "greedy": FiveCrownsGreedyBot,
    "expert": FiveCrownsExpertBot,
    "search": FiveCrownsSearchBot,
}

__all__ = [
    "BOTS",
    "FiveCrownsExpertBot",
    "FiveCrownsGreedyBot",
    "FiveCrownsRandomBot",
    "FiveCrownsSearchBot",
]
