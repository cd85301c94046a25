"""Replays for the viewer's tests, played in-process through the referee with fixed seeds, and
what the engine says the table was after each action (to check the pages against)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support import BAD_BOT

from meldref.replay.files import ReplayWriter, Step, load_replay, simulate
from meldref.replay.words import sorted_hand
from meldref.tournament.runner import play_one


def play(folder: Path, name: str, game: str, specs: list[str], rules: Mapping[str, str],
         seed: int, limits: Mapping[str, Any] | None = None) -> Path:
    """Play one game and return its replay (folder/name.jsonl)."""
    names = [f"{spec.split(':')[-1].split()[-1]}#{k}" for k, spec in enumerate(specs)]
    path = folder / f"{name}.jsonl"
    line = play_one(game, specs, seed, rules=rules, limits=limits, names=names, replay=path,
                    game_id=name)
    assert line.ok, line
    return path


def phase10_four(folder: Path) -> Path:
    return play(folder, "phase10-4", "phase10",
                ["builtin:greedy", "builtin:random", "builtin:greedy", "builtin:greedy"], {}, 3)


def phase10_short(folder: Path) -> Path:
    """Phase 10 at 4 seats to two phases: a few hands, with Skips, lay-downs and hits."""
    return play(folder, "phase10-short", "phase10",
                ["builtin:greedy", "builtin:greedy", "builtin:random", "builtin:greedy"],
                {"phases-to-win": "2"}, 5)


def fivecrowns_nine(folder: Path) -> Path:
    return play(folder, "fivecrowns-9", "fivecrowns",
                ["builtin:greedy"] * 6 + ["builtin:random"] * 3, {"party": "on"}, 4)


def fivecrowns_fourteen(folder: Path) -> Path:
    return play(folder, "fivecrowns-14", "fivecrowns", ["builtin:greedy"] * 14,
                {"party": "on"}, 9)


def solitaire(folder: Path) -> Path:
    return play(folder, "solitaire", "solitaire", ["builtin:greedy"], {}, 5)


def with_faults(folder: Path) -> Path:
    """Phase 10 where seat 1 answers every decision illegally once (then legally) and seat 2
    answers too slowly, times out at its first decision and forfeits."""
    return play(folder, "faults", "phase10",
                ["builtin:greedy", f"{BAD_BOT} retry_once", f"{BAD_BOT} slow"],
                {"phases-to-win": "1"}, 7,
                {"move-time": 0.25, "first-move-time": 0.25, "time-bank": 0.0})


def forfeited(folder: Path) -> Path:
    """Phase 10 at 2 seats where seat 1 times out at its first decision: the game ends by
    forfeit."""
    return play(folder, "forfeit", "phase10", ["builtin:greedy", f"{BAD_BOT} slow"],
                {"phases-to-win": "1"}, 7,
                {"move-time": 0.25, "first-move-time": 0.25, "time-bank": 0.0})


def renamed(source: Path, target: Path, names: Mapping[int, str]) -> Path:
    """A copy of a replay whose seats carry other names (sums recomputed, so it verifies)."""
    replay = load_replay(source)
    header = {k: v for k, v in replay.header.items()
              if k not in ("type", "format", "version", "meldref")}
    header["seats"] = [{**s, "name": names.get(i, s["name"])}
                       for i, s in enumerate(header["seats"])]
    with ReplayWriter(target, header) as writer:
        for _, record in replay.records:
            writer.write(record)
    return target




@dataclass
class Expected:
    """What the engine says after each action: every seat's observation, and for an action
    that ends a hand its `hand_end` (or `round_end`) event instead."""

    players: int
    after: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    hand_end: dict[int, dict[str, Any]] = field(default_factory=dict)
    kinds: dict[int, list[str]] = field(default_factory=dict)

    def on_step(self, step: Step, state: Any) -> None:
        n = int(step.record["n"])
        self.kinds[n] = [e.kind for e in step.events]
        ends = [e for e in step.events if e.kind in ("hand_end", "round_end")]
        if ends:
            self.hand_end[n] = ends[0].for_seat(None)
        else:
            self.after[n] = [state.observation(s).to_json() for s in range(self.players)]

    def scores(self, n: int) -> list[int]:
        if n in self.hand_end:
            return list(self.hand_end[n]["totals"])
        view = self.after[n][0]
        return [s["score"] for s in view["seats"]] if "seats" in view else [view["piles_closed"]]

    def hand_sizes(self, n: int) -> list[int]:
        if n in self.hand_end:
            return [len(str(h).split()) for h in self.hand_end[n]["hands"]]
        return [s["hand_size"] for s in self.after[n][0]["seats"]]

    def hands(self, n: int) -> list[list[str]]:
        if n in self.hand_end:
            return [sorted_hand(str(h).split()) for h in self.hand_end[n]["hands"]]
        return [sorted_hand(v["hand"]) for v in self.after[n]]

    def groups(self, n: int) -> list[tuple[int, str]]:
        """The laid groups (owner, token) after action `n` (not for hand-ending actions)."""
        return [(g.get("owner", g.get("seat")), g["group"]) for g in self.after[n][0]["table"]]


def expected(path: Path) -> Expected:
    replay = load_replay(path)
    facts = Expected(int(replay.header["players"]))
    simulate(replay, on_step=facts.on_step)
    return facts
