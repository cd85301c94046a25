#!/usr/bin/env python3
"""A minimal meldref bot: standard library only, speaks protocol v1 (spec/PROTOCOL.md).

Plays Phase 10, Five Crowns and Five Crowns Solitaire legally by choosing among the referee's
`legal` hints: it lays down (or goes out) whenever a hint offers it, sometimes hits, draws from
the pile most of the time, and otherwise discards at random. Without hints it still plays legally
by drawing from the pile and discarding a card that is never a problem (see `fallback`).

Usage: python3 random_bot.py [--seed N] [--name NAME]
"""

from __future__ import annotations

import random
import sys


def send(line: str) -> None:
    # Flush every line: a bot whose output sits in a buffer looks dead to the referee.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def fields(words: list[str]) -> dict[str, str]:
    """`key value key value ...` into a dict; every value is one token."""
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}


def tokens(value: str) -> list[str]:
    """A list value: `-` is empty, group lists are split on `;`, others on `,`."""
    if value in ("-", "none", ""):
        return []
    return value.split(";") if ";" in value or ":" in value else value.split(",")


class RandomBot:
    def __init__(self, seed: int | None) -> None:
        self.rng = random.Random(seed)
        self.view: dict[str, str] = {}
        self.items: dict[str, list[dict[str, str]]] = {}
        self.legal: list[str] = []

    def on_line(self, line: str) -> bool:
        """Handle one referee line; False when it is time to exit."""
        words = line.split()
        if not words:
            return True
        kind, args = words[0], words[1:]
        if kind == "meldref":
            send("id name random_bot")
            send("id author meldref")
            send("id version 1")
            send("ready")
        elif kind == "view":  # a new request starts: forget the previous one
            self.view, self.items, self.legal = fields(args), {}, []
        elif kind == "item" and args:
            self.items.setdefault(args[0], []).append(fields(args[1:]))
        elif kind == "legal":
            self.legal.append(" ".join(args))
        elif kind == "go" and args:
            decision = fields(args[1:]).get("decision", "")
            send(f"action {args[0]} {self.choose(decision)}")
        elif kind == "ping" and args:
            send(f"pong {args[0]}")
        elif kind == "quit":
            return False
        # Everything else (game, rule, player, event, error, gameover, unknown types) is
        # information this bot does not need.
        return True

    def choose(self, decision: str) -> str:
        if not self.legal:
            return self.fallback(decision)
        by_verb: dict[str, list[str]] = {}
        for text in self.legal:
            by_verb.setdefault(text.split()[0], []).append(text)
        if "lay" in by_verb:  # Phase 10: lay the phase as soon as the referee finds a way
            return self.rng.choice(by_verb["lay"])
        if "hit" in by_verb and self.rng.random() < 0.7:
            return self.rng.choice(by_verb["hit"])
        if "draw" in by_verb:
            pile = [t for t in by_verb["draw"] if t == "draw pile"]
            if pile and (self.rng.random() < 0.8 or len(by_verb["draw"]) == 1):
                return pile[0]
            return self.rng.choice(by_verb["draw"])
        discards = by_verb.get("discard", [])
        melding = [t for t in discards if ":" in t]  # Five Crowns: discard + groups
        if melding:
            return max(melding, key=lambda t: len(t.split()))
        return self.rng.choice(discards or self.legal)

    def fallback(self, decision: str) -> str:
        """Without hints: draw from the pile, discard a random card (a Skip goes to a random
        other seat in Phase 10), or put the drawn card on a random open pile (Solitaire)."""
        if decision == "draw":
            return "draw pile"
        hand = tokens(self.view.get("hand", "-"))
        if decision == "place":
            piles = [p for p in self.items.get("piles", []) if p.get("closed") != "true"]
            pile = self.rng.choice(piles)
            return f"place {pile['size']} {self.rng.choice(tokens(pile['cards']))}"
        card = self.rng.choice(hand)
        victims = tokens(self.view.get("victims", "-"))
        if card == "S" and victims:  # Phase 10: a Skip names its victim (rule skip-victim)
            return f"discard S {self.rng.choice(victims)}"
        return f"discard {card}"


def main(argv: list[str]) -> int:
    seed = None
    if "--seed" in argv:
        seed = int(argv[argv.index("--seed") + 1])
    bot = RandomBot(seed)
    for raw in sys.stdin:
        if not bot.on_line(raw.rstrip("\r\n")):
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
