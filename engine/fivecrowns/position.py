"""Five Crowns positions (spec/POSITION.md): a round in play as a person writes it, and back.

Top level: `seed`, `round` (12: the tie-break round), `wild` (derived; checked when written),
`dealer`, `to_move`, `decision`, `turn`, `reshuffles`, `went_out`, `discard_pile` and
`draw_pile` (top card first), `tiebreak` (the tied seats, in round 12), `history` (how the rounds
before ended). `[[seat]]`: `hand`, `score`. `[[table]]`: `seat` and `group`, the groups laid by
going out and on last turns.

Who has had a last turn follows from who went out and who is to move (last turns go round the
table in order), so it is not written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from ..cards import Card, CardError, fivecrowns_deck
from ..common import tokens
from ..game import JSON, RuleOptionError, Rules, rules_of, rules_to_json
from ..melds import Meld, MeldError, MeldRules
from ..position import (
    Codec,
    Fields,
    PositionError,
    account,
    check_players,
    fill_draw_pile,
    seed_of,
    top_first,
)
from . import GAME
from .rules import (
    ROUNDS,
    TIEBREAK_ROUND,
    FiveCrownsRules,
    deal_size,
    fivecrowns_melds,
    rank_text,
    wild_rank,
)
from .state import build_group

DECISIONS: Final = ("draw", "discard")
ENDINGS: Final = ("out", "turn-cap")


def read(fields: Fields, options: Rules) -> dict[str, JSON]:
    """A checked Five Crowns position as a snapshot (`FiveCrownsState.from_snapshot`)."""
    asked = rules_of(FiveCrownsRules, options)
    seed = seed_of(fields)
    seat_fields = fields.tables("seat", "seat")
    n = len(seat_fields)
    check_players(GAME, n)
    try:
        rules = asked.for_players(n)
    except RuleOptionError as exc:
        raise PositionError(str(exc)) from None
    round_ = fields.whole("round", 1, low=1, high=TIEBREAK_ROUND)
    size = deal_size(round_)
    if fields.has("wild") and str(fields.value("wild")).upper() != rank_text(wild_rank(round_)):
        raise fields.fail("wild", f"round {round_} deals {size} cards: "
                          f"{rank_text(wild_rank(round_))}s are wild")
    fields.value("wild", None)
    hands = [f.cards("hand") for f in seat_fields]
    scores = [f.whole("score", 0) for f in seat_fields]
    for f in seat_fields:
        f.done()
    tied = _read_tied(fields, rules, round_, scores)
    playing = tied or tuple(range(n))
    dealer = fields.whole("dealer", 0, high=n - 1)
    order = [s for s in ((dealer + k) % n for k in range(1, n + 1)) if s in playing]
    to_move = fields.whole("to_move", high=n - 1)
    if to_move not in playing:
        raise fields.fail("to_move", f"seat {to_move} sits the tie-break round out")
    decision = fields.word("decision", DECISIONS)
    went_out = _read_went_out(fields, playing, to_move)
    had_last_turn = _last_turns(order, went_out, to_move, n)
    table = _read_table(fields, round_, rules, went_out, had_last_turn)
    _check_hands(hands, table, size, playing, went_out, had_last_turn, to_move,
                 decision == "discard")
    turn = _read_turn(fields, rules, len(playing), went_out, sum(had_last_turn))
    discard = list(reversed(fields.cards("discard_pile")))
    named, rest_wanted = fields.draw_pile("draw_pile")
    zones: list[tuple[str, Sequence[Card]]] = [(f"seat {s} hand", h) for s, h in enumerate(hands)]
    zones += [(f"table group {i + 1}", m.cards) for i, (_, m) in enumerate(table)]
    zones += [("discard_pile", discard), ("draw_pile", named)]
    draw = fill_draw_pile(named, rest_wanted, account(fivecrowns_deck(rules.decks), zones), seed)
    if decision == "draw":
        _check_can_draw(draw, discard)
    return {
        "game": GAME.name, "rules": rules_to_json(rules), "players": n, "seed": seed,
        "scores": scores, "round": round_, "dealer": dealer,
        "history": _read_history(fields, n, round_),
        "tied": None if tied is None else list(tied),
        "tiebreak_points": None, "outcome": None,
        "playing": list(playing),
        "hands": [tokens(h) for h in hands],
        "draw_pile": tokens(draw), "discard_pile": tokens(discard),
        "table": [{"seat": s, "group": str(m)} for s, m in table],
        "went_out": went_out, "had_last_turn": had_last_turn,
        "turns": turn, "reshuffles": fields.whole("reshuffles", 0),
        "to_move": to_move, "decision": decision,
    }


def _read_tied(fields: Fields, rules: FiveCrownsRules, round_: int,
               scores: list[int]) -> tuple[int, ...] | None:
    tied = fields.wholes("tiebreak", high=len(scores) - 1)
    if round_ != TIEBREAK_ROUND:
        if tied:
            raise fields.fail("tiebreak", f"the tied seats play round {TIEBREAK_ROUND} only")
        return None
    if rules.tiebreak != "round":
        raise fields.fail("round", f"round {TIEBREAK_ROUND} is the tie-break round: rule "
                          "option tiebreak=round")
    if len(tied) < 2 or sorted(set(tied)) != tied:
        raise fields.fail("tiebreak", "two tied seats or more, in seat order")
    best = min(scores)
    if any(scores[s] != best for s in tied) or sum(s == best for s in scores) != len(tied):
        raise fields.fail("tiebreak", f"the seats tied for the lowest total ({best}) after "
                          f"round {ROUNDS}")
    return tuple(tied)


def _read_went_out(fields: Fields, playing: Sequence[int], to_move: int) -> int | None:
    went_out = fields.maybe_whole("went_out")
    if went_out is not None and (went_out not in playing or went_out == to_move):
        raise fields.fail("went_out", "a seat playing this round, not the one to move (the "
                          "round ends when play comes back to it)")
    return went_out


def _last_turns(order: list[int], went_out: int | None, to_move: int, n: int) -> list[bool]:
    """Per seat: had its last turn (the seats from the one who went out to the one to move)."""
    done = [False] * n
    if went_out is None:
        return done
    i = (order.index(went_out) + 1) % len(order)
    while order[i] != to_move:
        done[order[i]] = True
        i = (i + 1) % len(order)
    return done


def _read_turn(fields: Fields, rules: FiveCrownsRules, playing: int, went_out: int | None,
               last_turns: int) -> int:
    """This turn of the round: within the turn cap, and once a seat is out after its going-out
    turn and the last turns had since (the cap stops counting then: last turns always come)."""
    earliest = 1 if went_out is None else last_turns + 2
    turn = fields.whole("turn", earliest, low=1)
    if turn < earliest:
        raise fields.fail("turn", f"seat {went_out} went out in an earlier turn and "
                          f"{last_turns} last turn{'s' if last_turns != 1 else ''} followed: "
                          f"this is turn {earliest} or later")
    if rules.turn_cap is None:
        return turn
    cap = rules.turn_cap * playing
    if went_out is None and turn > cap:
        raise fields.fail("turn", f"turn-cap={rules.turn_cap}: at most {cap} turns before "
                          "someone goes out")
    if went_out is not None and turn > cap + last_turns + 1:
        raise fields.fail("turn", f"turn-cap={rules.turn_cap}: at most {cap} turns before "
                          f"someone goes out, then one last turn each: {cap + last_turns + 1} "
                          "by this one")
    return turn


def _read_table(fields: Fields, round_: int, rules: FiveCrownsRules, went_out: int | None,
                had_last_turn: list[bool]) -> list[tuple[int, Meld]]:
    melds = fivecrowns_melds(wild_rank(round_))
    table = []
    for f in fields.tables("table", "table group", first=1):
        seat = f.whole("seat", high=len(had_last_turn) - 1)
        if seat != went_out and not had_last_turn[seat]:
            raise f.fail("seat", "groups are laid by the seat that went out and on last turns "
                         "(the seats from it to the one to move)")
        table.append((seat, _group(f, melds, rules)))
        f.done()
    return table


def _group(f: Fields, melds: MeldRules, rules: FiveCrownsRules) -> Meld:
    text = f.value("group")
    if not isinstance(text, str):
        raise f.fail("group", "a group token, e.g. book:QH,QS,X")
    try:
        return build_group(text, melds, rules.natural)
    except (MeldError, CardError) as exc:
        raise f.fail("group", str(exc)) from None


def _check_hands(hands: list[list[Card]], table: list[tuple[int, Meld]], size: int,
                 playing: Sequence[int], went_out: int | None, had_last_turn: list[bool],
                 to_move: int, drawn: bool) -> None:
    laid = [0] * len(hands)
    for seat, meld in table:
        laid[seat] += len(meld.cards)
    for s, hand in enumerate(hands):
        held = len(hand)
        if s not in playing:
            ok, want = held == 0, "none: it sits the tie-break round out"
        elif s == went_out:
            ok, want = held == 0 and laid[s] == size, (f"none, and {size} cards in its groups "
                                                      "(it laid all but its discard)")
        elif had_last_turn[s]:
            ok, want = held + laid[s] == size, f"{size} with the cards of its groups"
        else:
            extra = int(drawn and s == to_move)
            ok, want = held == size + extra, f"{size + extra} (round deals {size})"
        if not ok:
            raise PositionError(f"seat {s}: it holds {held} cards (and {laid[s]} in groups); "
                                f"it should hold {want}")


def _check_can_draw(draw: list[Card], discard: list[Card]) -> None:
    if not draw and not discard:
        raise PositionError("nothing can be drawn: no draw pile and no discard pile")
    if not draw and len(discard) > 1:
        raise PositionError("the draw pile is empty at a draw: the discard pile but its top "
                            "would have been reshuffled into it (write those cards as the "
                            "draw_pile)")


def _read_history(fields: Fields, n: int, round_: int) -> list[dict[str, JSON]]:
    texts = fields.texts("history")
    played = min(round_ - 1, ROUNDS)
    if len(texts) > played:
        raise fields.fail("history", f"one entry per round played before this one, the last "
                          f"ones (round {round_} has {played} before it)")
    first = played + 1 - len(texts)  # a game begun from a position knows the rounds since
    out: list[dict[str, JSON]] = []
    for i, text in enumerate(texts):
        words = text.split()
        went_out = int(words[1]) if len(words) == 2 and words[1].isdigit() else None
        if not words or words[0] not in ENDINGS or (words[0] == "out") != (
                went_out is not None and went_out < n) or len(words) > 2:
            raise fields.fail("history", f"entry {text!r}: out <seat> | turn-cap")
        out.append({"round": first + i, "ended": words[0], "went_out": went_out})
    return out


def write(snapshot: Mapping[str, JSON]) -> dict[str, JSON]:
    """The position of a Five Crowns snapshot (every key written, so it reads back exactly)."""
    round_ = snapshot["round"]
    out: dict[str, JSON] = {
        "seed": snapshot["seed"], "round": round_, "wild": rank_text(wild_rank(round_)),
        "dealer": snapshot["dealer"], "to_move": snapshot["to_move"],
        "decision": snapshot["decision"], "turn": snapshot["turns"],
        "reshuffles": snapshot["reshuffles"],
    }
    if snapshot["went_out"] is not None:
        out["went_out"] = snapshot["went_out"]
    out["discard_pile"] = top_first(snapshot["discard_pile"])
    out["draw_pile"] = top_first(snapshot["draw_pile"])
    if snapshot["tied"] is not None:
        out["tiebreak"] = list(snapshot["tied"])
    if snapshot["history"]:
        out["history"] = [f"{h['ended']} {h['went_out']}" if h["went_out"] is not None
                          else str(h["ended"]) for h in snapshot["history"]]
    out["seat"] = [{"hand": " ".join(h), "score": score}
                   for h, score in zip(snapshot["hands"], snapshot["scores"], strict=True)]
    if snapshot["table"]:
        out["table"] = [{"seat": g["seat"], "group": g["group"]} for g in snapshot["table"]]
    return out


CODEC: Final = Codec(read, write)
