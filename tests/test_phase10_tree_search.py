"""Phase 10's tree search (issue 49, research: bots/phase10/tree_search.py on
bots/tree_search.py): every legal action searched, anytime, deterministic without a clock, its
leaf values in the game's terms, and as a program a referee seats."""

from __future__ import annotations

import subprocess
import sys

import pytest

from meldref.bots import builtin_bot
from meldref.bots.phase10.tree_search import Phase10TreeBot, root_actions
from meldref.engine.cards import WILD
from meldref.engine.game import JSON, find_game
from meldref.engine.phase10.actions import Discard
from meldref.engine.phase10.state import Phase10State
from meldref.engine.phase10.view import Phase10View


def expert_views(count: int, deal: str = "tree:1") -> list[Phase10View]:
    """Seat 0's first `count` views of a heads-up Phase 10 game that two experts play."""
    info = find_game("phase10")
    state = info.new_game(info.rules(), 2, deal)
    bots = [builtin_bot("phase10", "expert", k) for k in (1, 2)]
    views: list[Phase10View] = []
    while len(views) < count and (seat := state.to_move) is not None:
        view = state.observation(seat)
        assert isinstance(view, Phase10View)
        if seat == 0:
            views.append(view)
        state.apply(bots[seat].act(view))
    return views


def tree_bot(iterations: int) -> Phase10TreeBot:
    bot = Phase10TreeBot(7)
    bot.iterations = iterations
    return bot


@pytest.mark.parametrize("expert_prior", [False, True])
def test_the_tree_search_tries_every_legal_draw_and_discard(expert_prior: bool) -> None:
    # The shipped search compares the expert's move with at most two discards its guard lets go
    # and the other draw; the tree search expands every legal action at the root, with the
    # expert's ranking as its prior too.
    bot = tree_bot(40)
    bot.expert_prior = expert_prior
    searched = {"draw": 0, "play": 0}
    for view in expert_views(16):
        bot.act(view)
        legal = {str(a) for a in view.legal_actions()}
        if len(legal) == 1:  # one legal action: nothing to search
            assert not bot.last.visits
            continue
        assert legal <= set(bot.last.visits), view.decision
        assert set(bot.last.visits) == {str(a) for a in root_actions(view, None)} | {
            bot.last.prior}
        searched[view.decision] += len(legal) > 1
    assert searched["draw"] and searched["play"]


def position(hand: str, decision: str = "play", **fields: JSON) -> Phase10View:
    """Seat 0's view of hand 1 of a heads-up game, holding `hand` (tokens), to decide; the
    snapshot's other `fields` as given."""
    info = find_game("phase10")
    snapshot = info.new_game(info.rules(), 2, "tree:1").snapshot()
    hands = snapshot["hands"]
    assert isinstance(hands, list)
    hands[0] = hand.split()
    snapshot.update(to_move=0, decision=decision, **fields)
    return Phase10State.from_snapshot(snapshot).observation(0)


def test_a_lay_down_is_searched_as_the_finder_and_as_the_expert_lays_it() -> None:
    # Phase 1 (two sets of 3) with a card to spare for each set: the finder lays the sets
    # alone, the expert with its extras; both are root actions, and the expert's is searched.
    view = position("R3 G3 B3 Y3 Y7 G7 R7 B7 B11 Y12 G1")
    texts = {str(a) for a in root_actions(view, None)}
    lays = [t for t in texts if t.startswith("lay")]
    assert {str(a) for a in view.lay_options()} < texts and len(lays) == 2, lays
    bot = tree_bot(30)
    bot.act(view)
    assert set(lays) <= set(bot.last.visits)


def test_more_iterations_change_more_of_the_experts_decisions() -> None:
    # A few iterations play the prior (the expert's move, expanded first and credited
    # `PRIOR_VISITS`); more, anytime, depart from it where the leaves say so. Iterations stand
    # for time: a clock only bounds them.
    views = expert_views(30)

    def changed(iterations: int) -> int:
        bot = tree_bot(iterations)
        return sum(str(bot.act(view)) != bot.last.prior for view in views)

    few, more = changed(5), changed(120)
    assert few == 0 and more > few


def test_the_tree_search_is_deterministic_without_a_clock_and_bounded_by_one() -> None:
    views = expert_views(4)
    first, again = tree_bot(20), tree_bot(20)
    assert [str(first.act(v)) for v in views] == [str(again.act(v)) for v in views]
    clocked = tree_bot(20)
    clocked.think_within(0.0)  # no time at all: one iteration, the prior
    clocked.act(views[1])
    assert clocked.last.iterations == 1


def test_a_wild_is_not_thrown_to_shed_its_points() -> None:
    # Was (points held counted at face value against a card lacking at 12): the Wild's 25
    # points outweighed the card it stands for, and the search threw it (and took a Wild
    # from the discard pile last). Points only break ties of phases.
    view = position("R3 G3 Y7 G7 W B1 B2 R4 Y5 G8 B9")
    bot = tree_bot(100)
    move = bot.act(view)
    assert isinstance(move, Discard) and move.card is not WILD, bot.last.visits


def test_the_tree_lays_its_phase_when_it_can() -> None:
    # Was (a hand able to lay valued as if laid): laying only cost the cards it leaves in hand
    # against a discard, and the search kept its phase in hand.
    # The lay is the expert's move, credited visits in the final choice: it must earn the most
    # visits itself.
    view = position("R3 G3 B3 Y7 G7 R7 B11 Y12 G1 B5 R10")
    bot = tree_bot(100)
    move = bot.act(view)
    assert str(move).startswith("lay"), move
    assert bot.last.visits[str(move)] == max(bot.last.visits.values()), bot.last.visits


def test_the_tree_goes_out_when_it_can() -> None:
    # Was (a laid rival's held cards counted against it only while the hand went on): ending
    # the hand looked like a gift to the rival, and the search discarded instead of hitting
    # its last card but one and going out.
    table: JSON = [{"id": 1, "owner": 0, "group": "set:R1,G1,Y1"},
                   {"id": 2, "owner": 0, "group": "set:G7,B7,R7"},
                   {"id": 3, "owner": 1, "group": "set:R4,G4,Y4"},
                   {"id": 4, "owner": 1, "group": "set:G9,B9,R9"}]
    view = position("B2 Y7", table=table, laid=[1, 1], completed=[[1], [1]])
    bot = tree_bot(100)
    assert str(bot.act(view)) == "hit 2 Y7", bot.last.visits


@pytest.mark.long
def test_the_tree_bot_plays_a_match_as_a_program() -> None:
    # How a tournament seats it: the program through the referee, its clock from each `go`.
    done = subprocess.run(
        ["meldref", "match", "phase10", "--bot", f"{sys.executable} -m meldref.bots.phase10."
         "tree_search", "--bot", "builtin:expert", "--seed", "3", "--move-time", "0.2",
         "--rules", "phases-to-win=1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("game-0001"))
    assert row.split()[-1] == "-", done.stdout  # the faults column: none
    assert "phase10-tree" in done.stdout
