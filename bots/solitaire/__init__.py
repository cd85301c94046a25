"""Five Crowns Solitaire's built-in bots, seated as ``builtin:NAME``: `BOTS`, found by the registry
(engine/registry.py `find_part("meldref.bots", "solitaire", "BOTS")`).

One module a rung: `greedy` the random and greedy bots, `expert` the hand-written strategy,
`search` the determinized search over the expert's moves. The expert and the search are bot
programs too (`python3 bots/solitaire/expert.py`, `python3 bots/solitaire/search.py`). Each
module builds on the ones before it and none imports this one, so this one imports them all, at
its top.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from ...engine.game import Bot
from .expert import SolitaireExpertBot
from .greedy import SolitaireGreedyBot, SolitaireRandomBot
from .search import SolitaireSearchBot

BOTS: Final[Mapping[str, Callable[[int], Bot]]] = {
    "random": SolitaireRandomBot,
    "greedy": SolitaireGreedyBot,
    "expert": SolitaireExpertBot,
    "search": SolitaireSearchBot,
}

__all__ = [
    "BOTS",
    "SolitaireExpertBot",
    "SolitaireGreedyBot",
    "SolitaireRandomBot",
    "SolitaireSearchBot",
]
