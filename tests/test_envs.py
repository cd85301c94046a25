"""The research environments (meldref.envs): their libraries' own API tests, seeds, the fixed
action spaces, the hidden-information guarantee on the vectors, OpenSpiel's algorithms, and a
policy entered as a protocol bot."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import warnings
from collections.abc import Iterator

import numpy as np
import pytest
from support import ROOT

from meldref.engine.game import GameState, find_game
from meldref.envs.codec import find_codec, legal_indices
from meldref.envs.hidden import resample, resampled_state

pettingzoo = pytest.importorskip("pettingzoo", reason="pettingzoo is in the test extra")
gymnasium = pytest.importorskip("gymnasium", reason="gymnasium is in the test extra")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from meldref.envs.aec import pettingzoo_env  # noqa: E402
from meldref.envs.gym import SeatEnv  # noqa: E402
from meldref.envs.solitaire_gym import SolitaireEnv  # noqa: E402

# Short games keep the API tests' cycles inside a game and its end.
SHORT = {"phase10": {"phases-to-win": 1, "turn-cap": 40}, "fivecrowns": {"turn-cap": 8},
         "solitaire": {}}
TABLES = [("phase10", 2), ("phase10", 4), ("phase10", 6), ("fivecrowns", 2),
          ("fivecrowns", 4), ("fivecrowns", 6), ("solitaire", 1)]


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        # Both API tests warn that a Dict observation (vector + mask) is unusual: PettingZoo's
        # own classic games use it.
        warnings.simplefilter("ignore", UserWarning)
        yield


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_the_pettingzoo_api_test_passes(game: str, players: int) -> None:
    api_test(pettingzoo_env(game, players, SHORT[game]), num_cycles=400,
             verbose_progress=False)


@pytest.mark.parametrize(("game", "players"), [("phase10", 3), ("fivecrowns", 4),
                                               ("solitaire", 1)])
def test_the_pettingzoo_seed_test_passes(game: str, players: int) -> None:
    seed_test(lambda: pettingzoo_env(game, players, SHORT[game]), num_cycles=200)


def test_text_observations_are_the_view_lines_a_bot_is_sent() -> None:
    from meldref.protocol.viewtext import observation_lines

    env = pettingzoo_env("fivecrowns", 2)
    env.reset(seed=3)
    state = env.unwrapped.state
    for agent, seat in (("player_0", 0), ("player_1", 1)):
        text = env.unwrapped.observe_text(agent)
        assert text == "\n".join(observation_lines(state.observation(seat)))
        assert text.splitlines()[0].startswith("view ")


@pytest.mark.parametrize("reward", ["score", "place", "shaped"])
def test_a_games_returns_are_its_scores_or_places(reward: str) -> None:
    env = pettingzoo_env("fivecrowns", 3, {"turn-cap": 10}, reward=reward)
    env.reset(seed=11)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        obs, rew, term, trunc, _ = env.last()
        returns[agent] += rew
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    outcome = env.unwrapped.state.outcome
    if reward == "score":
        assert [returns[a] for a in env.possible_agents] == [-s for s in outcome.scores]
    elif reward == "place":
        assert [returns[a] for a in env.possible_agents] == [
            1.0 - (p - 1) for p in outcome.places]


def test_gymnasiums_env_checker_passes() -> None:
    from gymnasium.utils.env_checker import check_env

    check_env(gymnasium.make("meldref/Solitaire-v0").unwrapped)
    check_env(SeatEnv("fivecrowns", ["greedy"], rules=SHORT["fivecrowns"]))
    check_env(SeatEnv("phase10", ["greedy", "random"], rules=SHORT["phase10"]))


def test_the_same_seed_plays_the_same_solitaire_game() -> None:
    def play(seed: int) -> list[int]:
        env = SolitaireEnv()
        _, info = env.reset(seed=seed)
        actions, done = [], False
        while not done:
            action = int(np.flatnonzero(info["action_mask"])[0])
            actions.append(action)
            _, _, term, trunc, info = env.step(action)
            done = term or trunc
        return actions

    assert play(5) == play(5)
    assert play(5) != play(6)


def test_an_illegal_action_ends_the_episode_with_the_illegal_reward() -> None:
    env = SolitaireEnv(illegal_reward=-2.0)
    _, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert (reward, terminated, info["illegal"]) == (-2.0, True, True)


def random_states(game: str, players: int, seed: int, rules: dict[str, object] | None = None
                  ) -> Iterator[GameState]:
    info = find_game(game)
    from meldref.settings import parse_rules

    state = info.new_game(parse_rules(info.rules_type, rules or {}), players, seed)
    rng = random.Random(seed)
    while state.to_move is not None:
        yield state
        state.apply(rng.choice(state.legal_actions()))


@pytest.mark.parametrize(("game", "players"), [("phase10", 3), ("fivecrowns", 4),
                                               ("solitaire", 1)])
def test_every_legal_action_has_an_index_that_names_it(game: str, players: int) -> None:
    codec = find_codec(game)
    for seen, state in enumerate(random_states(game, players, 4)):
        view = state.observation(state.to_move).to_json()
        texts = [str(a) for a in state.legal_actions()]
        legal = legal_indices(codec, texts, view)
        assert legal, texts
        for text in texts:
            index = codec.action_index(text, view)
            assert index is not None and 0 <= index < codec.action_size, text
            assert legal[index].split()[0] == text.split()[0]
            assert codec.describe(index).split()[0] == text.split()[0]
        if seen > 600:
            break


@pytest.mark.parametrize(("game", "players"), [("phase10", 3), ("fivecrowns", 4),
                                               ("fivecrowns", 9), ("solitaire", 1)])
def test_no_observation_vector_depends_on_a_card_the_seat_may_not_see(
        game: str, players: int) -> None:
    """The protocol's leak test on the vectors: the cards hidden from a seat (the other hands,
    the draw pile) dealt again leave its vector as it was, and change another seat's."""
    codec = find_codec(game)
    rng = random.Random(9)
    moved = changed = 0
    for n, state in enumerate(random_states(game, players, 7)):
        if n > 400:
            break
        seat = state.to_move
        other = resampled_state(state, seat, rng)
        assert other.snapshot() != state.snapshot() or n == 0 or game == "solitaire"
        mine = codec.encode(state.observation(seat).to_json(), players)
        assert np.array_equal(mine, codec.encode(other.observation(seat).to_json(), players))
        if players > 1:
            nxt = (seat + 1) % players
            moved += 1
            changed += not np.array_equal(
                codec.encode(state.observation(nxt).to_json(), players),
                codec.encode(other.observation(nxt).to_json(), players))
    # The check has teeth: what another seat sees (its own hand) did change.
    assert players == 1 or changed > moved // 2


def test_solitaire_resampling_keeps_the_shown_top_and_deals_the_rest_again() -> None:
    info = find_game("solitaire")
    snapshot = info.new_game(info.rules(), 1, 3).snapshot()
    other = resample(snapshot, 0, random.Random(1))
    assert other["draw_pile"][-1] == snapshot["draw_pile"][-1]
    assert sorted(other["draw_pile"]) == sorted(snapshot["draw_pile"])
    assert other["draw_pile"] != snapshot["draw_pile"]
    assert other["piles"] == snapshot["piles"]


@pytest.mark.long  # tens of seconds; tests/test_spiel_chance.py covers each part in the default run
def test_openspiel_runs_its_own_checks_and_ismcts_on_the_games() -> None:
    pyspiel = pytest.importorskip("pyspiel", reason="open-spiel is in the test extra")
    from open_spiel.python.algorithms import ismcts, mcts

    from meldref.envs.spiel import register_openspiel

    register_openspiel()
    for name, params in (("meldref_solitaire", {}),
                         ("meldref_phase10", {"players": 2, "rules": "phases-to-win=1"}),
                         ("meldref_fivecrowns", {"players": 2, "rules": "turn-cap=6"})):
        pyspiel.random_sim_test(pyspiel.load_game(name, params), num_sims=1, serialize=False,
                                verbose=False)
    game = pyspiel.load_game("meldref_solitaire", {"seed": 4})
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=8,
                           random_state=np.random.RandomState(2))
    for deal in (0, 1):
        state = game.new_initial_state()
        rng = random.Random(deal)
        while not state.is_terminal():
            if state.is_chance_node():  # every card dealt or drawn (meldref.envs.chance)
                outcomes, weights = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, weights)[0])
            else:
                state.apply_action(bot.step(state))
        assert 0 <= state.returns()[0] <= 11


def test_a_policy_plays_a_match_as_a_protocol_bot(tmp_path) -> None:
    policy = tmp_path / "last_legal.py"
    policy.write_text("import numpy as np\n\ndef policy(obs, mask):\n"
                      "    return int(np.flatnonzero(mask)[-1])\n")
    bot = f"{sys.executable} -m meldref.envs.policy {policy}:policy"
    done = subprocess.run(
        [sys.executable, "-m", "meldref", "match", "fivecrowns", "--bot", bot,
         "--bot", "builtin:greedy", "--seed", "3", "--json", "--rules", "turn-cap=10"],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    game = json.loads(done.stdout)["games"][0]
    assert game["status"] == "ok" and game["faults"] == [[], []], game


def test_a_policy_that_leaves_its_mask_is_logged_and_falls_back(tmp_path) -> None:
    policy = tmp_path / "outside.py"
    policy.write_text("import numpy as np\n\ndef policy(obs, mask):\n"
                      "    return int(np.flatnonzero(mask == 0)[0])\n")
    bot = f"{sys.executable} -m meldref.envs.policy {policy}:policy"
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "meldref", "tournament", "--bot", bot, "--game", "solitaire",
         "--games", "1", "--keep-logs", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    logs = "".join(p.read_text() for p in (out / "logs").rglob("*") if p.is_file())
    assert "not in the mask: fallback" in logs


# -- conventions: Gymnasium ids on `import meldref.envs`, PettingZoo-style modules ----------------

def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("imports", ["import gymnasium, meldref.envs",
                                     "import meldref.envs, gymnasium"])
def test_importing_meldref_envs_registers_the_gymnasium_ids_in_either_order(imports: str
                                                                             ) -> None:
    """The issue's first snippet (NamespaceNotFound before): Gymnasium 1.x reads no entry
    points, so the ids are registered by `import meldref.envs`, before or after Gymnasium."""
    done = python(f"{imports}\nenv = gymnasium.make('meldref/Solitaire-v0')\n"
                  "print(type(env.unwrapped).__name__, env.reset(seed=1)[0].shape)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["SolitaireEnv", "(687,)"]


def test_importing_meldref_envs_imports_no_library() -> None:
    done = python("import sys, meldref.envs\n"
                  "print([m for m in ('gymnasium', 'pettingzoo', 'numpy', 'pyspiel') "
                  "if m in sys.modules])")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_entry_point_function_registers_the_ids() -> None:
    """What `[project.entry-points."gymnasium.envs"]` names, loaded as Gymnasium 0.26-0.29
    load it (by its entry point's text)."""
    done = python("import gymnasium\nfrom importlib.metadata import EntryPoint\n"
                  "EntryPoint('meldref', 'meldref.envs:register_gymnasium', "
                  "'gymnasium.envs').load()()\n"
                  "print(gymnasium.make('meldref/Seat-v0', game='fivecrowns', "
                  "opponents=['greedy']).unwrapped.players)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


def test_the_pettingzoo_style_module_of_the_issue_runs() -> None:
    done = python("from meldref.envs import phase10_v0\nenv = phase10_v0.env()\n"
                  "env.reset(seed=1)\nprint(env.agent_selection, env.metadata['name'])")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["player_0", "meldref_phase10_v0"]


@pytest.mark.parametrize("module", ["phase10_v0", "fivecrowns_v0", "solitaire_v0"])
def test_the_versioned_modules_pass_pettingzoos_api_test(module: str) -> None:
    import importlib

    versioned = importlib.import_module(f"meldref.envs.{module}")
    game = module.removesuffix("_v0")
    players = 1 if game == "solitaire" else 3
    api_test(versioned.env(players=players, rules=SHORT[game]), num_cycles=300,
             verbose_progress=False)
    raw = versioned.raw_env(players=players, rules=SHORT[game])
    assert type(raw).__name__ == "MeldrefAEC" and raw.info.name == game


@pytest.mark.parametrize("module", ["phase10_v0", "fivecrowns_v0", "solitaire_v0"])
def test_version_0_spaces_are_the_codecs(module: str) -> None:
    """A codec change that alters a space fails here: it must come as a `_v1` module."""
    import importlib

    versioned = importlib.import_module(f"meldref.envs.{module}")
    game = module.removesuffix("_v0")
    codec = find_codec(game)
    env = versioned.raw_env(players=1 if game == "solitaire" else 2)
    assert codec.action_size == versioned.ACTIONS == env.action_space("player_0").n
    for players in ((1,) if game == "solitaire" else (2, 3, 6)):
        assert codec.observation_size(players) == versioned.observation_size(players)


def test_ansi_rendering_is_words_a_person_reads_not_protocol_lines() -> None:
    """render_mode="ansi" returned the `view`/`item` lines a bot is sent."""
    from meldref.envs import fivecrowns_v0

    env = fivecrowns_v0.env(players=2, render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    hand = env.unwrapped.state.observation(0).to_json()["hand"]
    assert not text.startswith("view ") and "\nitem " not in text
    assert "player_0 (seat 0) to draw" in text and f"hand: {' '.join(hand)}" in text
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert env.render().startswith("last: player_0 (seat 0) draw ")
    seat = SeatEnv("fivecrowns", ["greedy"], render_mode="ansi")
    seat.reset(seed=1)
    assert "what agent (seat 0) sees:" in seat.render()


# -- the policy bridge: declared games, the table size checked, no fallback play -----------------

TRAINED_AT_TWO_SEATS = """import numpy as np

WEIGHTS = np.ones(204)  # Five Crowns at two seats: 192 + 6 x 2 features


def policy(obs, mask):
    return int(np.flatnonzero(mask)[int(WEIGHTS @ obs) % int(mask.sum())])


declared = lambda obs, mask: policy(obs, mask)
declared.games = ("fivecrowns",)
declared.observation_size = {"fivecrowns": 204}
"""


def test_a_policy_declares_its_games_in_the_handshake(tmp_path) -> None:
    (tmp_path / "trained.py").write_text(TRAINED_AT_TWO_SEATS)
    for target, extra, games in (("declared", [], "fivecrowns"),
                                 ("policy", ["--games", "phase10,solitaire"],
                                  "phase10,solitaire")):
        done = subprocess.run(
            [sys.executable, "-m", "meldref.envs.policy", f"{tmp_path / 'trained.py'}:{target}",
             *extra], input="meldref 1\nquit\n", cwd=ROOT, capture_output=True, text=True,
            timeout=60)
        assert done.returncode == 0, done.stderr
        assert f"id games {games}" in done.stdout.splitlines(), done.stdout


@pytest.mark.parametrize("target", ["declared", "policy"])
def test_a_policy_at_a_table_it_was_not_trained_for_is_refused_not_fallback(
        tmp_path, target: str) -> None:
    """Trained at two seats, seated at three: it raised on every decision and the SDK's
    fallback played them all, the match showing no fault. Now the bot ends with the sizes on
    its stderr (at the game's start when it declares its size) and the match shows the fault."""
    (tmp_path / "trained.py").write_text(TRAINED_AT_TWO_SEATS)
    bot = f"{sys.executable} -m meldref.envs.policy {tmp_path / 'trained.py'}:{target}"
    done = subprocess.run(
        [sys.executable, "-m", "meldref", "match", "fivecrowns", "--bot", bot,
         "--bot", "builtin:greedy", "--bot", "builtin:random", "--seed", "2", "--json",
         "--rules", "turn-cap=3", "--logs", str(tmp_path / "logs")],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    game = json.loads(done.stdout)["games"][0]
    assert [f["outcome"] for f in game["faults"][0]] == ["crashed"], game
    assert "exited with code 3" in game["faults"][0][0]["detail"]
    logs = "".join(p.read_text() for p in (tmp_path / "logs").rglob("*") if p.is_file())
    why = ("takes 204 features, and fivecrowns at 3 seats gives 210" if target == "declared"
           else "on a vector of 210 features (fivecrowns at 3 seats)")
    assert "refused" in logs and why in logs, logs


def test_a_policy_refuses_games_it_does_not_declare() -> None:
    from meldref.envs.policy import PolicyBot

    bot = PolicyBot(lambda obs, mask: 0, games=["fivecrowns"], observation_size=204)
    assert bot.misfit("fivecrowns", 2) is None
    assert bot.misfit("phase10", 2) == "the policy plays fivecrowns, not phase10"
    assert "takes 204 features, and fivecrowns at 4 seats gives 216" in str(
        bot.misfit("fivecrowns", 4))


# -- the batched environment ----------------------------------------------------------------------

def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


@pytest.mark.parametrize(("game", "players"), [("phase10", 2), ("fivecrowns", 3),
                                               ("solitaire", 1)])
def test_a_batched_row_is_the_single_environment_step_for_step(game: str, players: int
                                                               ) -> None:
    """Row 0 of the batch and the PettingZoo environment dealt the same game: the same
    observations, masks and rewards at every step, across an auto-reset."""
    from meldref.envs.batch import BatchEnv

    rules = {"phase10": {"phases-to-win": 1, "turn-cap": 6}, "fivecrowns": {"turn-cap": 3},
             "solitaire": {}}[game]
    envs = BatchEnv(game, 3, players, rules, seed=11)
    obs, info = envs.reset()
    single = pettingzoo_env(game, players, rules).unwrapped
    single.reset(seed=envs.game_seeds[0])
    rng = np.random.default_rng(1)
    ends = steps = 0
    while ends < 1 or steps < 100:  # across the end of row 0's first game
        steps += 1
        agent = single.agent_selection
        seen = single.observe(agent)
        assert np.array_equal(obs[0], seen["observation"])
        assert np.array_equal(info["action_mask"][0], seen["action_mask"])
        assert info["to_play"][0] == int(agent.removeprefix("player_"))
        actions = random_legal(info["action_mask"], rng)
        single.step(int(actions[0]))
        obs, rewards, terminated, truncated, info = envs.step(actions)
        assert rewards[0].tolist() == [single.rewards[a] for a in single.possible_agents]
        if terminated[0] or truncated[0]:
            ends += 1
            assert info["final_outcome"][0] == single.state.outcome
            single.reset(seed=envs.game_seeds[0])  # the row is dealt its next game at once


def test_the_batched_environment_is_seeded_and_resets_itself() -> None:
    from meldref.envs.batch import BatchEnv

    def run(seed: int) -> tuple[list[np.ndarray], int]:
        envs = BatchEnv("fivecrowns", 8, 2, {"turn-cap": 2}, seed=seed)
        obs, info = envs.reset()
        rng = np.random.default_rng(0)
        seen, ends = [obs], 0
        returns = np.zeros((8, 2))
        for _ in range(120):
            obs, rewards, terminated, truncated, info = envs.step(
                random_legal(info["action_mask"], rng))
            returns += rewards
            for i in np.flatnonzero(terminated | truncated):
                outcome = info["final_outcome"][i]
                assert returns[i].tolist() == [-s for s in outcome.scores]
                returns[i] = 0
                ends += 1
            seen.append(obs)
        assert obs.shape == (8, 204) and obs.dtype == np.float32
        assert info["action_mask"].shape == (8, 114) and info["action_mask"].dtype == np.int8
        return seen, ends

    first, ends = run(4)
    again, _ = run(4)
    other, _ = run(5)
    assert ends > 0
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))


def test_the_batched_environment_refuses_an_illegal_action() -> None:
    from meldref.envs import BatchEnv

    envs = BatchEnv("solitaire", 2, seed=1)
    _, info = envs.reset()
    illegal = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    with pytest.raises(ValueError, match="game 1: action"):
        envs.step([int(np.flatnonzero(info["action_mask"][0])[0]), illegal])


def test_every_seat_observes_the_end_of_a_phase10_game() -> None:
    """A seat whose game is over has no phase left (its view's `phases_left` holds None): the
    vector of that last observation raised TypeError, so `last()` of the seats stepped out
    after a Phase 10 game ended failed."""
    env = pettingzoo_env("phase10", 3, SHORT["phase10"])
    env.reset(seed=0)  # seat 1 wins by phase 1 (phases-to-win=1): its phase is None after
    rng = random.Random(0)
    ended = 0
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        ended += term or trunc
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(
            obs["action_mask"]))))
    assert ended == 3 and env.unwrapped.state is not None
    assert env.unwrapped.state.outcome is not None


def test_a_policy_that_is_not_a_function_is_refused_when_loaded(tmp_path) -> None:
    """`policy.load` says what is wrong with a name that is not a function of the observation
    and the mask (it was handed on as one, and failed at the first decision)."""
    from meldref.envs.policy import load

    module = tmp_path / "notpolicy.py"
    module.write_text("WEIGHTS = [1, 2, 3]\ndef make():\n    return 7\n")
    with pytest.raises(SystemExit, match="WEIGHTS is not a function"):
        load(f"{module}:WEIGHTS")
    with pytest.raises(SystemExit, match="what it makes is not a function"):
        load(f"{module}:make", factory=True)
