"""Chance where the cards are drawn in the OpenSpiel games (meldref.envs.spiel, envs.chance):
a copied state holds no card a seat could not know, the deals follow the real deal
distribution and the engine's own rulings, and searches that copy states gain nothing from the
engine's order of the face-down pile.

Was (issue 48): the deal was the only chance node (one of 10,000 seeded deals) and the shuffled
pile then decided every draw, so a cloned state's next draw was fixed and MCTS saw the future.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from meldref.engine.game import find_game
from meldref.engine.registry import GAMES

pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is in the test extra")

from meldref.envs.chance import draw_pile, shows_top  # noqa: E402
from meldref.envs.spiel import MeldrefState, register_openspiel  # noqa: E402

register_openspiel()

SHORT = {"phase10": {"players": 2, "rules": "phases-to-win=1"},
         "fivecrowns": {"players": 2, "rules": "turn-cap=4"}}


def load(game: str, **params: Any) -> Any:
    return pyspiel.load_game(f"meldref_{game}", {**SHORT.get(game, {}), **params})


def play_until(state: MeldrefState, rng: random.Random, stop: Any) -> MeldrefState:
    """Random play (chance by its outcomes' weights) until `stop(state)`."""
    while not stop(state):
        assert not state.is_terminal()
        if state.is_chance_node():
            actions, weights = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(actions, weights)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


def a_draw(game: str, seed: int) -> MeldrefState:
    """A state where the seat to move has chosen `draw pile` (or a top is to be turned up)."""
    state = load(game).new_initial_state()
    rng = random.Random(seed)
    play_until(state, rng, lambda s: not s.is_chance_node() and s.inner.to_move is not None
               and rng.random() < 0.2)
    return play_until(state, rng, lambda s: s.drawing or s.top_open)


def views(state: MeldrefState) -> list[str]:
    """Everything a seat or an observer is shown of `state`."""
    seats = range(state.get_game().num_players())
    return ([state.observation_string(p) for p in seats] + [str(state)]
            + [state.information_state_tensor(p) for p in seats]
            + [state.chance_outcomes() if state.is_chance_node() else state.legal_actions()])


def other_pile_order(state: MeldrefState, seed: int) -> MeldrefState:
    """A copy of `state` differing only in the engine's order of the face-down pile."""
    copy = state.clone()
    pile = draw_pile(copy.inner)
    shown = 1 if shows_top(copy.inner) and not copy.top_open else 0  # a top turned up stays
    under = pile[:len(pile) - shown]
    random.Random(seed).shuffle(under)
    pile[:len(under)] = under
    assert pile != draw_pile(state.inner)
    return copy


@pytest.mark.parametrize("game", GAMES)
def test_a_draw_is_chance_over_the_face_down_pile(game: str) -> None:
    state = a_draw(game, 1)
    assert state.is_chance_node()
    pile = Counter(c.text for c in draw_pile(state.inner))
    kinds = state.setup.kinds
    assert {kinds[o]: p for o, p in state.chance_outcomes()} == pytest.approx(
        {k: n / sum(pile.values()) for k, n in pile.items()})
    # Two samples of chance from one cloned state: two different cards, each one of the pile's.
    seen = set()
    for outcome, _ in state.chance_outcomes()[:2]:
        child = state.clone()
        child.apply_action(outcome)
        assert not child.is_chance_node()
        seen.add(child.observation_string(child.current_player()))
    assert len(seen) == 2


@pytest.mark.parametrize("game", GAMES)
def test_the_pile_order_decides_nothing(game: str) -> None:
    # Before the chance node and after the same outcome, states differing only in the engine's
    # pile order look the same to everyone and offer the same actions and outcomes (before the
    # fix the drawn card was the pile's top: the two draws differed).
    state = a_draw(game, 2)
    other = other_pile_order(state, 3)
    assert views(state) == views(other)
    rng, rng2 = random.Random(4), random.Random(4)
    for _ in range(30):
        if state.is_terminal():
            break
        a = rng.choice([o for o, _ in state.chance_outcomes()] if state.is_chance_node()
                       else state.legal_actions())
        b = rng2.choice([o for o, _ in other.chance_outcomes()] if other.is_chance_node()
                        else other.legal_actions())
        assert a == b
        state.apply_action(a)
        other.apply_action(b)
        assert views(state) == views(other)


@pytest.mark.parametrize("game", GAMES)
def test_the_deal_is_chance_card_by_card_over_the_deck(game: str) -> None:
    state = load(game).new_initial_state()
    assert state.is_chance_node() and str(state) == "dealing"
    g = state.setup
    deck = Counter(t for t in _cards(g.info.new_game(g.rules, g.players, 0).snapshot()))
    first = {g.kinds[o]: p for o, p in state.chance_outcomes()}
    assert first == pytest.approx({k: n / sum(deck.values()) for k, n in deck.items()})
    assert state.get_game().max_chance_outcomes() == len(deck)
    assert state.get_game().get_type().chance_mode == (
        pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC)


def _cards(snapshot: dict[str, Any]) -> list[str]:
    return ([t for h in snapshot.get("hands", []) for t in h]
            + [t for p in snapshot.get("piles", []) for t in p]
            + snapshot["draw_pile"] + snapshot.get("discard_pile", []))


def deal_as_engine(game: str, seed: int, **params: Any) -> tuple[dict[str, Any], MeldrefState]:
    """The engine's own first deal of `seed`, and the OpenSpiel state whose chance picked the
    same cards."""
    state = load(game, seed=seed, **params).new_initial_state()
    g = state.setup
    engine = g.info.new_game(g.rules, g.players, seed).snapshot()
    index = {k: i for i, k in enumerate(g.kinds)}
    while state.deal is not None:
        where, at = state.deal.where()
        card = (engine["hands"][at][sum(1 for w, s in state.deal.slots[:len(state.deal.picked)]
                                         if (w, s) == (where, at))] if where == "hand" else
                engine["piles"][at][sum(1 for w, s in state.deal.slots[:len(state.deal.picked)]
                                        if (w, s) == (where, at))] if where == "pile" else
                engine["discard_pile"][at])
        state.apply_action(index[card])
    return engine, state


def _same(engine: dict[str, Any], state: MeldrefState) -> None:
    mine = state.inner.snapshot()
    for snapshot in (engine, mine):
        snapshot.pop("seed")
        snapshot["draw_pile"] = sorted(snapshot["draw_pile"])
    assert mine == engine


@pytest.mark.parametrize("first_skip", ["skip-first-player", "twist"])
def test_a_turned_up_skip_is_ruled_as_the_engine_rules_it(first_skip: str) -> None:
    # Chance picking the engine's own cards gives the engine's state: the turned-up Skip
    # (the first seat skipped, or more cards turned up) is the rules' ruling, not a relabelling.
    info = find_game("phase10")
    rules = info.rules(first_skip=first_skip)
    seed = next(s for s in range(2000)
                if info.new_game(rules, 3, s).snapshot()["discard_pile"][0] == "S")
    engine, state = deal_as_engine("phase10", seed, players=3,
                                   rules=f"phases-to-win=1,first-skip={first_skip}")
    assert engine["discard_pile"][0] == "S"
    _same(engine, state)


@pytest.mark.parametrize("game", GAMES)
def test_chance_picking_the_engines_deal_gives_the_engines_state(game: str) -> None:
    for seed in (1, 2):
        engine, state = deal_as_engine(game, seed)
        if state.top_open:  # a shown top: chance turns it up next
            top = engine["draw_pile"][-1]
            state.apply_action(state.setup.kinds.index(top))
        _same(engine, state)


@pytest.mark.parametrize("game", [
    "solitaire", pytest.param("fivecrowns", marks=pytest.mark.long)])  # rollouts of 11 rounds
def test_perfect_information_mcts_gains_nothing_from_the_pile_order(game: str) -> None:
    # The same search (same seeds) from two states that differ only in the engine's order of the
    # face-down pile: the same statistics at every child, so the same decision. (Before, each
    # rollout drew the pile's real next cards.)
    from open_spiel.python.algorithms import mcts

    state = a_draw(game, 5)
    state = play_until(state, random.Random(6), lambda s: not s.is_chance_node())
    other = other_pile_order(state, 7)
    stats = []
    for s in (state, other):
        bot = mcts.MCTSBot(s.get_game(), 2.0, 16, mcts.RandomRolloutEvaluator(
            1, np.random.RandomState(8)), random_state=np.random.RandomState(9))
        root = bot.mcts_search(s)
        stats.append([(c.action, c.explore_count, c.total_reward) for c in root.children])
    assert stats[0] == stats[1]


def test_the_information_state_is_the_seats_observation() -> None:
    game = load("fivecrowns")
    state = play_until(game.new_initial_state(), random.Random(1),
                       lambda s: not s.is_chance_node())
    seat = state.current_player()
    assert game.information_state_tensor_shape() == game.observation_tensor_shape()
    assert state.information_state_tensor(seat) == state.observation_tensor(seat)
    assert any(state.information_state_tensor(seat))


@pytest.mark.long
@pytest.mark.parametrize("game", GAMES)
def test_openspiels_random_sim_test(game: str) -> None:
    # Serialized too (a state's pickled dict): compiled, a game and a Phase 10 group on the
    # table could not be unpickled.
    pyspiel.random_sim_test(load(game), num_sims=2, serialize=True, verbose=False)


@pytest.mark.parametrize("game", GAMES)
def test_ismcts_plays_through_the_chance_nodes(game: str) -> None:
    # A resampled state keeps the top already turned up (it was a chance node again: ISMCTS
    # failed on Solitaire's resampled root).
    from open_spiel.python.algorithms import ismcts, mcts

    loaded = load(game, **({"rules": "turn-cap=1"} if game == "fivecrowns" else {}))
    bot = ismcts.ISMCTSBot(loaded, mcts.RandomRolloutEvaluator(1, np.random.RandomState(1)),
                           uct_c=2.0, max_simulations=2, random_state=np.random.RandomState(2))
    state, rng, decisions = loaded.new_initial_state(), random.Random(3), 0
    while not state.is_terminal() and decisions < 3:
        if state.is_chance_node():
            actions, weights = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(actions, weights)[0])
            continue
        seat = state.current_player()
        again = state.resample_from_infostate(seat, rng.random)
        assert not again.is_chance_node()
        assert again.information_state_string(seat) == state.information_state_string(seat)
        state.apply_action(bot.step(state))
        decisions += 1
    assert decisions == 3 or state.is_terminal()


def test_a_serialized_state_loads_again_with_its_rules() -> None:
    # OpenSpiel's game string split "rules=phases-to-win=1,turn-cap=9" at its commas and equals
    # signs: a serialized state's game did not load ("Unknown parameter 'rules=phases-to-win'").
    game = load("phase10", rules="phases-to-win=1,turn-cap=9")
    assert pyspiel.load_game(str(game)).get_parameters() == game.get_parameters()
    state = play_until(game.new_initial_state(), random.Random(1), lambda s: len(s.history()) > 30)
    again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))[1]
    assert again.history() == state.history() and str(again) == str(state)
    assert again.setup.rules == state.setup.rules and state.setup.rules.turn_cap == 9
