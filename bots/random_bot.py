#!/usr/bin/env python3
"""A minimal meldref bot, and a starting point for yours: standard library only, protocol v1.

It plays Phase 10, Five Crowns and Five Crowns Solitaire legally (the protocol is in
spec/PROTOCOL.md; the section numbers below point into it). It is stateless, as the protocol
allows: every request brings the seat's whole view, so each decision is made from the current
request alone.

How it chooses: among the referee's `legal` hints it lays down (or goes out) whenever a hint
offers it, often hits, draws from the pile most of the time, and otherwise discards at random.
A match may switch the hints off; then it still plays legally (see `fallback`).

To write your own bot, copy this file and replace `choose` (and `fallback`) with your strategy:
the view is in `self.view` (the `view` line's keys), the tables in `self.items` (`item` lines
by name: `table`, `seats`, `piles`), and the legal actions in `self.legal`.

Usage: python3 random_bot.py [--seed N] [--name NAME]   (--seed: every game starts from it)
"""

from __future__ import annotations

import random
import sys

PROTOCOL_VERSION = "1"


def send(line: str) -> None:
    """Write one protocol line and FLUSH it (section 2): a line left in the buffer never
    reaches the referee, and the bot is judged stalled."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def log(text: str) -> None:
    """Debugging output goes to standard error, never to standard output (section 8)."""
    print(f"random_bot: {text}", file=sys.stderr, flush=True)


def fields(words: list[str]) -> dict[str, str]:
    """`key value key value ...` into a dict; every value is one token (section 1)."""
    return {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}


def tokens(value: str) -> list[str]:
    """A list value: `-` is empty, group lists are split on `;`, others on `,` (section 1)."""
    if value in ("-", "none", ""):
        return []
    return value.split(";") if ";" in value or ":" in value else value.split(",")


class RandomBot:
    def __init__(self, seed: int | None, name: str) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.name = name
        # The current request (section 4): forgotten on every `view` line.
        self.view: dict[str, str] = {}
        self.items: dict[str, list[dict[str, str]]] = {}
        self.legal: list[str] = []

    def on_line(self, line: str) -> bool:
        """Handle one line from the referee; False when it is time to exit."""
        words = line.split()  # any run of spaces or tabs separates words; blank lines are empty
        if not words:
            return True
        kind, args = words[0], words[1:]
        if kind == "meldref":  # the handshake (section 3): answer within the startup time
            if args[:1] != [PROTOCOL_VERSION]:
                log(f"protocol version {args[:1]} is not {PROTOCOL_VERSION}: leaving")
                return False
            send(f"id name {self.name}")
            send("id author meldref")
            send("id version 1")
            send("ready")
        elif kind == "game" and self.seed is not None:
            # A game begins (section 3). Seeded, every game is played as it would be in a
            # process of its own, whatever games this process played before.
            self.rng = random.Random(self.seed)
        elif kind == "view":  # a new request starts: forget the previous one
            self.view, self.items, self.legal = fields(args), {}, []
        elif kind == "item" and args:  # one record of a table in the view
            self.items.setdefault(args[0], []).append(fields(args[1:]))
        elif kind == "legal":  # one legal action, exactly as it may be sent back
            self.legal.append(" ".join(args))
        elif kind == "go" and args:  # answer now, repeating the request id (section 6)
            decision = fields(args[1:]).get("decision", "")
            send(f"action {args[0]} {self.choose(decision)}")
        elif kind == "ping" and args:  # answer at once, whatever else is going on
            send(f"pong {args[0]}")
        elif kind == "error":  # an answer was refused: a new request follows if allowed
            log(line)
        elif kind == "quit":
            return False
        # Everything else (rule, player, event, gameover, and message types of later
        # protocol versions) is information this bot does not need: ignore it (section 14).
        return True

    def choose(self, decision: str) -> str:
        """The action for this request, picked among the `legal` hints."""
        if not self.legal:
            return self.fallback(decision)
        by_verb: dict[str, list[str]] = {}
        for text in self.legal:
            by_verb.setdefault(text.split()[0], []).append(text)
        if "lay" in by_verb:  # Phase 10: lay the phase as soon as the referee finds a way
            return self.rng.choice(by_verb["lay"])
        if "hit" in by_verb and self.rng.random() < 0.7:  # Phase 10: add a card to a group
            return self.rng.choice(by_verb["hit"])
        if "draw" in by_verb:  # Phase 10 and Five Crowns: mostly from the pile
            pile = [t for t in by_verb["draw"] if t == "draw pile"]
            if pile and (self.rng.random() < 0.8 or len(by_verb["draw"]) == 1):
                return pile[0]
            return self.rng.choice(by_verb["draw"])
        discards = by_verb.get("discard", [])
        melding = [t for t in discards if ":" in t]  # Five Crowns: discard + groups goes out
        if melding:
            return max(melding, key=lambda t: len(t.split()))
        return self.rng.choice(discards or self.legal)  # Solitaire's `place` lands here

    def fallback(self, decision: str) -> str:
        """Without hints: draw from the pile, discard a random card (a Skip names a random
        victim in Phase 10), or put the drawn card on a random open pile (Solitaire)."""
        if decision == "draw":  # Phase 10, Five Crowns
            return "draw pile"
        if decision == "place":  # Solitaire: the drawn card goes in, then one card goes out
            piles = [p for p in self.items.get("piles", []) if p.get("closed") != "true"]
            pile = self.rng.choice(piles)
            return f"place {pile['size']} {self.rng.choice(tokens(pile['cards']))}"
        # Phase 10 `play` and Five Crowns `discard`: a discard alone is always legal.
        card = self.rng.choice(tokens(self.view.get("hand", "-")))
        victims = tokens(self.view.get("victims", "-"))
        if card == "S" and victims:  # Phase 10: a Skip names its victim (rule skip-victim)
            return f"discard S {self.rng.choice(victims)}"
        return f"discard {card}"


def option(argv: list[str], name: str, default: str | None) -> str | None:
    return argv[argv.index(name) + 1] if name in argv[:-1] else default


def main(argv: list[str]) -> int:
    seed = option(argv, "--seed", None)
    bot = RandomBot(None if seed is None else int(seed), option(argv, "--name", "random_bot")
                    or "random_bot")
    # Python 3 hands over each line as soon as it arrives; the loop ends when stdin closes.
    for raw in sys.stdin:
        if not bot.on_line(raw.rstrip("\r\n")):
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
