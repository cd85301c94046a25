"""Five Crowns: each rule of the digest (section 2) and each rule option, on chosen positions."""

from __future__ import annotations

from collections import Counter

import pytest
from fivecrowns_positions import all_cards, play, position

from meldref.bots import builtin_bot
from meldref.engine.cards import FC_RANK_TEXT, Card, fivecrowns_deck, rng_for, shuffled
from meldref.engine.fivecrowns import (
    GAME,
    Discard,
    Draw,
    FiveCrownsRules,
    FiveCrownsState,
    FiveCrownsView,
    deal_size,
    wild_rank,
)
from meldref.engine.game import (
    IllegalActionError,
    InvalidActionError,
    RuleOptionError,
    Termination,
    rules_from_json,
    rules_to_json,
)
from meldref.engine.play import play_inprocess
from meldref.settings import parse_rules

# ----------------------------------------------------------------------------------------------
# Rule options


def test_defaults_are_the_printed_rules() -> None:
    rules = GAME.rules()
    assert rules_to_json(rules) == {
        "dealer": "random", "natural": "none", "tiebreak": "shared", "party": "auto",
        "turn-cap": 50,
    }


def test_options_by_their_kebab_names() -> None:
    rules = parse_rules(GAME.rules_type, {"dealer": "seat0", "natural": "group",
                                          "tiebreak": "round", "party": "on", "turn-cap": "none"})
    assert rules == FiveCrownsRules("seat0", "group", "round", "on", None)
    assert rules_from_json(FiveCrownsRules, rules_to_json(rules)) == rules


@pytest.mark.parametrize(("pairs", "message"), [
    ({"natural": "phase"}, "natural"),
    ({"tiebreak": "first-out"}, "tiebreak"),
    ({"party": "maybe"}, "party"),
    ({"turn-cap": "0"}, "turn-cap"),
    ({"turn-cap": "many"}, "turn-cap"),
    ({"wrap": "yes"}, "unknown rule option"),
])
def test_bad_options_are_refused(pairs: dict[str, str], message: str) -> None:
    with pytest.raises(RuleOptionError, match=message):
        parse_rules(GAME.rules_type, pairs)


def test_python_values_are_checked_too() -> None:
    with pytest.raises(RuleOptionError, match="dealer"):
        FiveCrownsRules(dealer="left")  # type: ignore[arg-type]
    with pytest.raises(RuleOptionError, match="turn-cap"):
        FiveCrownsRules(turn_cap=True)


@pytest.mark.parametrize("players", [1, 15])
def test_player_counts(players: int) -> None:
    with pytest.raises(RuleOptionError, match=r"2\.\.14"):
        GAME.new_game(GAME.rules(), players, 1)


# ----------------------------------------------------------------------------------------------
# Cards, party mode


@pytest.mark.parametrize("players", range(2, 15))
def test_party_mode_is_chosen_and_recorded(players: int) -> None:
    state = GAME.new_game(GAME.rules(), players, 3)
    party = players > 7
    snap = state.snapshot()
    assert snap["rules"]["party"] == ("on" if party else "off")
    total = sum(all_cards(snap, ["hands", "draw_pile", "discard_pile"]).values())
    assert total == (232 if party else 116)
    deal = state.opening_events()[0]
    assert deal.public["decks"] == (4 if party else 2)
    assert state.observation(0).to_json()["decks"] == (4 if party else 2)


def test_party_on_for_a_small_table_and_off_refused_for_a_large_one() -> None:
    state = GAME.new_game(parse_rules(GAME.rules_type, {"party": "on"}), 3, 1)
    assert sum(all_cards(state.snapshot(), ["hands", "draw_pile", "discard_pile"]).values()) == 232
    with pytest.raises(RuleOptionError, match="party=off"):
        GAME.new_game(parse_rules(GAME.rules_type, {"party": "off"}), 8, 1)


# ----------------------------------------------------------------------------------------------
# The deal, the rounds and their wilds


def test_deal_one_card_at_a_time_from_the_dealers_left() -> None:
    seed, n = 5, 4
    state = GAME.new_game(parse_rules(GAME.rules_type, {"dealer": "seat0"}), n, seed)
    deck = shuffled(fivecrowns_deck(2), rng_for(seed, "deal", 1))
    order = [1, 2, 3, 0]
    for i, seat in enumerate(order):
        assert state.hands[seat] == [deck[-1 - k * n - i] for k in range(3)]
    assert state.discard_pile == [deck[-1 - 3 * n]]
    assert state.draw_pile == deck[: -1 - 3 * n]
    assert state.to_move == 1 and state.decision == "draw"


def test_random_dealer_is_seeded() -> None:
    dealers = {GAME.new_game(GAME.rules(), 5, seed).dealer for seed in range(30)}
    assert len(dealers) > 1
    assert GAME.new_game(GAME.rules(), 5, 9).dealer == GAME.new_game(GAME.rules(), 5, 9).dealer


WILD_RANKS = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def test_every_round_rotates_the_wild_and_the_deal() -> None:
    bots = [builtin_bot(GAME.name, "greedy", i) for i in range(3)]
    state = GAME.new_game(GAME.rules(), 3, 21)
    deals = [e for e in state.opening_events() if e.kind == "deal"]
    while state.to_move is not None:
        events = state.apply(bots[state.to_move].act(state.observation(state.to_move)))
        deals += [e for e in events if e.kind == "deal"]
        for e in events:
            if e.kind == "deal":
                assert len(e.private["hand"]) == e.public["deal_size"]
    by_round = {e.public["round"]: e.public for e in deals}
    assert sorted(by_round) == list(range(1, 12))
    first = by_round[1]["dealer"]
    for r, public in by_round.items():
        assert public["deal_size"] == r + 2 == deal_size(r) == wild_rank(r)
        assert public["wild_rank"] == WILD_RANKS[r - 1]
        assert public["dealer"] == (first + r - 1) % 3
    assert state.outcome is not None and state.outcome.detail["rounds"] == 11


# ----------------------------------------------------------------------------------------------
# Drawing and discarding


def test_draw_from_either_pile_and_discard() -> None:
    state = position(["5H 6H 8C", "KS KD 4C", "QH 4S 5D"], discard="7H", draw="JD 9S")
    events = play(state, "draw pile")
    assert events[0].public == {"source": "pile"} and events[0].private == {"card": "9S"}
    play(state, "discard 8C")
    assert state.to_move == 1 and state.discard_pile[-1] is Card.parse("8C")
    events = play(state, "draw discard")
    assert events[0].public == {"source": "discard", "card": "8C"} and not events[0].private
    assert Card.parse("8C") in state.hands[1]


@pytest.mark.parametrize(("texts", "reason"), [
    (["discard 5H"], "draw first"),
    (["draw pile", "draw pile"], "drawn already"),
    (["draw pile", "discard KS"], "do not hold KS"),
    (["draw pile", "discard 8C set:5H,6H,X"], "book and run"),
    (["draw pile", "discard 8C run:5H,6H,7H"], "do not hold: 7H"),
    (["draw pile", "discard 8C run:5H,6H,9S"], "one suit"),
])
def test_illegal_actions_say_why(texts: list[str], reason: str) -> None:
    state = position(["5H 6H 8C", "KS KD 4C"], discard="7C", draw="JD 9S")
    play(state, *texts[:-1])
    action = state.parse_action(texts[-1])
    why = state.why_illegal(action)
    assert why is not None and reason in why
    with pytest.raises(IllegalActionError, match=reason):
        state.apply(action)


def test_an_empty_pile_cannot_be_drawn() -> None:
    state = position(["5H 6H 8C", "KS KD 4C"], discard="", draw="JD")
    assert "discard pile is empty" in str(state.why_illegal(Draw("discard")))
    state = position(["5H 6H 8C", "KS KD 4C"], discard="7C", draw="")
    assert "draw pile is empty" in str(state.why_illegal(Draw("pile")))
    assert state.legal_actions() == [Draw("discard")]


@pytest.mark.parametrize("text", ["", "draw", "draw deck", "take pile", "discard",
                                  "discard R7", "discard 5H set:R7,B7,W", "discard 5H book:",
                                  "discard 5H book:QH,QS,X=Z"])
def test_malformed_actions(text: str) -> None:
    with pytest.raises(InvalidActionError):
        GAME.new_game(GAME.rules(), 2, 1).parse_action(text)


def test_action_texts_round_trip() -> None:
    state = position(["5H 6H 8C", "KS KD 4C"], discard="7H", draw="JD 9S")
    for text in ["draw pile", "draw discard", "discard 8C run:5H,6H,7H",
                 "discard X book:QH,QS,X=Q run:3H,4H,X=5"]:
        assert str(state.parse_action(text)) == text
    play(state, "draw discard")
    for action in state.legal_actions():
        assert state.parse_action(str(action)) == action
        assert state.why_illegal(action) is None


# ----------------------------------------------------------------------------------------------
# Going out and the last turns


def test_going_out_on_the_first_turn_then_one_last_turn_each() -> None:
    state = position(["5H 6H 8C", "KS KD 3C", "QH 4S 5D"], discard="7H", draw="7C JD")
    play(state, "draw discard")
    assert Discard(Card.parse("8C"), ("run:5H,6H,7H",)) in state.legal_actions()
    events = play(state, "discard 8C run:5H,6H,7H")
    assert [e.kind for e in events] == ["discard", "go_out"]
    assert events[1].public == {"groups": ["run:5H,6H,7H"], "left": 0}
    assert state.went_out == 0 and state.to_move == 1
    assert state.observation(1).last_turn and not state.observation(0).last_turn
    # Seat 1 lays all it can (everything: it scores nothing either).
    play(state, "draw pile", "discard JD book:KS,KD,3C")
    assert state.had_last_turn == [False, True, False]
    # Seat 2 cannot lay: every card counts. Then the round ends before seat 0 plays again.
    events = play(state, "draw pile", "discard QH")
    end = next(e for e in events if e.kind == "round_end")
    assert end.public["points"] == [0, 0, 4 + 5 + 7]
    assert end.public["went_out"] == 0 and end.public["ended"] == "out"
    assert end.public["hands"] == ["", "", "4S 5D 7C"]
    assert state.round == 2 and state.dealer == 1 and state.to_move == 2


def test_combinations_stay_in_the_hand_until_going_out() -> None:
    state = position(["5H 6H 7H KS", "KD 4C 9D"], discard="QD", draw="JD")
    play(state, "draw discard")
    why = state.why_illegal(state.parse_action("discard QD run:5H,6H,7H"))
    assert why is not None and "combinations stay in your hand until you go out" in why
    assert "KS" in why
    assert state.why_illegal(state.parse_action("discard KS run:5H,6H,7H book:QD")) is not None
    assert state.why_illegal(state.parse_action("discard QD")) is None


def test_a_last_turn_lays_any_groups_and_the_rest_counts() -> None:
    state = position(["", "5H 6H 7H KS QD"], discard="JD", draw="X", to_move=1,
                     went_out=0, had_last_turn=[False, False], round=3)
    events = play(state, "draw pile", "discard QD run:5H,6H,7H")
    assert [e.kind for e in events[1:3]] == ["discard", "last_turn"]
    end = next(e for e in events if e.kind == "round_end")
    assert end.public["points"] == [0, 13 + 50]  # KS and the Joker unused


def test_a_last_turn_may_lay_nothing() -> None:
    state = position(["", "5H 6H 7H"], discard="JD", draw="KS", to_move=1, went_out=0,
                     had_last_turn=[False, False], round=2)
    events = play(state, "draw pile", "discard KS")
    end = next(e for e in events if e.kind == "round_end")
    assert end.public["points"] == [0, 18]


def test_legal_actions_offer_going_out_and_last_turn_lays() -> None:
    state = position(["5H 6H 8C", "KS KD 4C"], discard="7H", draw="9S")
    play(state, "draw discard")
    texts = [str(a) for a in state.legal_actions()]
    assert "discard 8C run:5H,6H,7H" in texts and "discard 5H" in texts
    state = position(["", "KS KD X 4C"], discard="7H", draw="9S", to_move=1, went_out=0,
                     had_last_turn=[False, False], round=3, decision="discard")
    texts = [str(a) for a in state.legal_actions()]
    assert "discard 4C book:KS,KD,X=K" in texts


# ----------------------------------------------------------------------------------------------
# Combinations


@pytest.mark.parametrize(("hand", "action", "legal"), [
    ("10H JH QH KH 5C", "discard 5C run:10H,JH,QH,KH", True),  # runs up to the King
    ("QH KH 3H 5C", "discard 5C run:QH,KH,3H", False),  # no wrap-around
    ("KS KD KH KH 5C", "discard 5C book:KS,KD,KH,KH", True),  # a book repeats a suit
    ("KS KD 5C", "discard 5C book:KS,KD", False),  # three at least
    ("X X 4H 5C", "discard 5C book:X,X,4H", True),  # round 2: 4s wild, all wild
    ("X X X 4H 5C", "discard 5C run:X=8,X,X=10,4H", True),  # wilds adjacent, any number
    ("6S X 4H 8S 5C", "discard 5C run:6S,X,8S,4H", True),  # 4H is the 9 of spades
])
def test_books_and_runs(hand: str, action: str, legal: bool) -> None:
    state = position([hand, "QD QC JS JC"], round=2, decision="discard")
    assert (state.why_illegal(state.parse_action(action)) is None) == legal


def test_natural_group_needs_a_natural_card_in_each_combination() -> None:
    rules = FiveCrownsRules(dealer="seat0", natural="group")
    state = position(["X X 4H 5C 6C 7C KD", "QD QC"], round=2, decision="discard", rules=rules)
    why = state.why_illegal(state.parse_action("discard KD book:X,X,4H run:5C,6C,7C"))
    assert why is not None and "natural=group" in why
    ok = state.parse_action("discard KD run:5C,6C,7C,X,X,4H")
    assert state.why_illegal(ok) is None


# ----------------------------------------------------------------------------------------------
# Scoring, reshuffles, the turn cap


def test_scoring_counts_face_values_jokers_and_the_rounds_wild() -> None:
    # Round 5: 7s wild.
    state = position(["", "3H 10S JC QD K* 7H X 8D"], discard="9H",
                     draw="4D", to_move=1, went_out=0, had_last_turn=[False, False], round=5)
    events = play(state, "draw pile", "discard 4D")
    end = next(e for e in events if e.kind == "round_end")
    assert end.public["points"] == [0, 3 + 10 + 11 + 12 + 13 + 20 + 50 + 8]
    assert end.public["totals"] == [0, 127]


def test_an_empty_draw_pile_is_refilled_from_the_discards() -> None:
    state = position(["5H 6H 8C", "KS KD 4C"], discard="4H 8D 9S", draw="5C")
    events = play(state, "draw pile", "discard 5C")
    assert [e.kind for e in events] == ["draw", "discard", "reshuffle"]
    assert state.discard_pile == [Card.parse("5C")]
    expected = shuffled([Card.parse(t) for t in ("4H", "8D", "9S")], rng_for(1, "reshuffle", 1, 1))
    assert state.draw_pile == expected
    assert events[2].public == {"draw_pile_size": 3}


class PassiveBot:
    """Never goes out: draws from the pile and throws the first card of its hand."""

    name = "passive"

    def act(self, view: FiveCrownsView) -> Draw | Discard:
        return Draw("pile") if view.decision == "draw" else Discard(view.hand[0])


def test_the_turn_cap_ends_rounds_with_everyone_scoring_their_hand() -> None:
    rules = parse_rules(GAME.rules_type, {"turn-cap": "2"})
    state = GAME.new_game(rules, 3, 4)
    bot = PassiveBot()
    for _ in range(12):  # 2 turns each: 6 turns of a draw and a discard
        events = state.apply(bot.act(state.observation(state.to_move)))
    end = next(e for e in events if e.kind == "round_end")
    assert end.public["ended"] == "turn-cap" and end.public["went_out"] is None
    assert all(p > 0 for p in end.public["points"])
    outcome, _ = play_inprocess(GAME, rules, [PassiveBot()] * 3, 4)
    assert outcome.termination is Termination.TURN_CAP
    assert outcome.detail["capped_rounds"] == 11


# ----------------------------------------------------------------------------------------------
# The end of the game


def last_turn_of_round_11(scores: list[int], rules: FiveCrownsRules) -> FiveCrownsState:
    """Seat 0 went out; seat 1 lays all but 8C; seat 2 draws 3S and keeps it (3 points)."""
    return position(["", "5H 6H 7H 8C", "5H 6H 7H 8C"], rules=rules, round=11, to_move=1,
                    went_out=0, scores=scores, had_last_turn=[False] * 3, decision="discard",
                    draw="4D 3S")


def test_lowest_total_wins_after_round_11() -> None:
    state = last_turn_of_round_11([40, 10, 30], FiveCrownsRules(dealer="seat0"))
    play(state, "discard 8C run:5H,6H,7H", "draw pile", "discard 8C run:5H,6H,7H")
    out = state.outcome
    assert out is not None and out.termination is Termination.NORMAL
    assert out.places == (3, 1, 2) and out.scores == (40, 10, 33)
    assert out.detail["decided_by"] == "score"


def test_ties_share_the_win_by_default() -> None:
    state = last_turn_of_round_11([10, 10, 30], FiveCrownsRules(dealer="seat0"))
    play(state, "discard 8C run:5H,6H,7H", "draw pile", "discard 8C run:5H,6H,7H")
    assert state.outcome is not None and state.outcome.places == (1, 1, 3)
    assert state.outcome.detail["decided_by"] == "shared"


def test_tiebreak_round_among_the_tied() -> None:
    rules = FiveCrownsRules(dealer="seat0", tiebreak="round")
    state = last_turn_of_round_11([10, 10, 30], rules)
    events = play(state, "discard 8C run:5H,6H,7H", "draw pile", "discard 8C run:5H,6H,7H")
    deals = [e for e in events if e.kind == "deal"]
    assert [e.seat for e in deals] == [0, 1]  # dealer 1: seat 0 first, seat 2 sits out
    assert all(e.public["deal_size"] == 6 and e.public["wild_rank"] == "6" for e in deals)
    assert state.round == 12 and state.playing == (True, True, False)
    assert state.observation(2).to_json()["tiebreak"] is True
    bots = [builtin_bot(GAME.name, "greedy", s) for s in range(3)]
    while state.to_move is not None:
        assert state.to_move != 2
        state.apply(bots[state.to_move].act(state.observation(state.to_move)))
    out = state.outcome
    assert out is not None and out.scores == (10, 10, 33)  # the tie-break round adds nothing
    tb = out.detail["tiebreak_points"]
    assert out.places[2] == 3 and tb[2] == 0
    assert (out.places[0] < out.places[1]) == (tb[0] < tb[1])
    assert out.detail["decided_by"] == "tiebreak-round"


# ----------------------------------------------------------------------------------------------
# Views and snapshots


def test_the_view_shows_the_seat_its_own_hand_only() -> None:
    state = position(["5H 6H 8C", "KS KD 4C", "QH 4S 5D"], discard="7H", draw="JD 9S")
    view = state.observation(1).to_json()
    assert view["hand"] == ["4C", "KD", "KS"]
    assert view["discard_top"] == "7H" and view["draw_pile_size"] == 2
    assert view["wild_rank"] == "3" and view["round"] == 1 and view["deal_size"] == 3
    assert [s["hand_size"] for s in view["seats"]] == [3, 3, 3]
    assert set(view["seats"][0]) == {"seat", "playing", "score", "hand_size", "gone_out",
                                     "had_last_turn"}
    shown = str(view)
    assert "5H" not in shown and "QH" not in shown and "JD" not in shown


def test_snapshots_round_trip_mid_round() -> None:
    state = position(["5H 6H 8C", "KS KD 3C", "QH 4S 5D"], discard="7H", draw="7C JD")
    play(state, "draw discard", "discard 8C run:5H,6H,7H", "draw pile")
    again = GAME.from_snapshot(state.snapshot())
    assert again.snapshot() == state.snapshot()
    assert [str(a) for a in again.legal_actions()] == [str(a) for a in state.legal_actions()]
    with pytest.raises(ValueError, match="not a Five Crowns snapshot"):
        GAME.from_snapshot({"game": "phase10"})
    with pytest.raises(ValueError, match="broken"):
        GAME.from_snapshot({"game": "fivecrowns"})


def test_wild_rank_text() -> None:
    assert [FC_RANK_TEXT[wild_rank(r)] for r in (1, 8, 9, 11, 12)] == ["3", "10", "J", "K", "6"]
    assert Counter(deal_size(r) for r in range(1, 12)) == Counter(range(3, 14))
