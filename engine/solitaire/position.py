"""Five Crowns Solitaire positions (spec/POSITION.md): the piles as a person writes them, and back.

Keys: `seed`, `draw_pile` (top card first), `out_of_play` (the cards discarded, first first),
and the table `[piles]` with one key per pile, named by its dealt size (`3` .. `13`). Whether a
pile is closed follows from its cards (every pile is checked after the deal and each move to
it), and the number of moves from the cards out of play, so neither is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..cards import fivecrowns_deck
from ..common import tokens
from ..fivecrowns.solver import groups_all
from ..game import JSON, Rules, rules_of, rules_to_json
from ..position import Codec, Fields, PositionError, account, fill_draw_pile, seed_of, top_first
from . import GAME
from .rules import DECKS, PILE_SIZES, SolitaireRules


def read(fields: Fields, options: Rules) -> dict[str, JSON]:
    """A checked Solitaire position as a snapshot (`SolitaireState.from_snapshot`)."""
    rules = rules_of(SolitaireRules, options)
    seed = seed_of(fields)
    fields.whole("to_move", 0, high=0)
    fields.word("decision", ("place",), "place")
    piles_fields = Fields(fields.value("piles"), "piles: ")
    piles = [piles_fields.cards(str(size), None) for size in PILE_SIZES]
    piles_fields.done()
    for size, pile in zip(PILE_SIZES, piles, strict=True):
        if len(pile) != size:
            raise piles_fields.fail(str(size), f"pile {size} always holds {size} cards, not "
                                    f"{len(pile)}")
    out_of_play = fields.cards("out_of_play")
    named, rest_wanted = fields.draw_pile("draw_pile")
    zones = [(f"pile {s}", p) for s, p in zip(PILE_SIZES, piles, strict=True)]
    zones += [("out_of_play", out_of_play), ("draw_pile", named)]
    draw = fill_draw_pile(named, rest_wanted, account(fivecrowns_deck(DECKS), zones), seed)
    # The state's own test of a closed pile.
    closed = [groups_all(p, s, rules.natural) for s, p in zip(PILE_SIZES, piles, strict=True)]
    if all(closed) or not draw:
        raise PositionError("the game is over in this position (every pile closed, or the draw "
                            "pile empty)")
    return {
        "game": GAME.name, "rules": rules_to_json(rules), "players": 1, "seed": seed,
        "piles": [tokens(p) for p in piles], "closed": closed, "draw_pile": tokens(draw),
        "out_of_play": tokens(out_of_play), "moves": len(out_of_play), "outcome": None,
    }


def write(snapshot: Mapping[str, JSON]) -> dict[str, JSON]:
    """The position of a Solitaire snapshot."""
    return {
        "seed": snapshot["seed"],
        "to_move": 0,
        "decision": "place",
        "draw_pile": top_first(snapshot["draw_pile"]),
        "out_of_play": " ".join(snapshot["out_of_play"]),
        "piles": {str(s): " ".join(p) for s, p in zip(PILE_SIZES, snapshot["piles"],
                                                       strict=True)},
    }


CODEC: Final = Codec(read, write)
