"""docs/adding-a-game.md, followed: the toy game of tests/toygame/ added by the page's steps to a
copy of meldref's source, then played as users play a game, in real processes: `meldref match`
seating a built-in bot and a sandboxed bot program, a tournament of three seats with a bot
program in its workers (replays written, checked by `replay verify`), the
replay's page (`replay html`, its data loaded), and the research environments (PettingZoo's
`api_test`, Gymnasium's checker).

The steps are read from the page's table, so a step the page leaves out (or a module put where
the page does not say) fails here. The copy is the source tree without the compiled modules,
first on PYTHONPATH (the editable install's finder comes after it); the checkout is untouched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from meldref.engine.registry import GAMES
from meldref.protocol import sandbox

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "adding-a-game.md"
NAME = "toyrummy"
# A row of the steps' table: | 1. the rules | `engine/<game>/__init__.py` | ... | `tests/...` |
STEP = re.compile(r"^\| \d\. [^|]+\| `([^`]+)` \|[^|]+\| `(tests/toygame/[^`]+)` \|$", re.M)
# The registration: the step's code block, the whole line of the registry after the edit.
REGISTERED = re.compile(r"^GAMES: Final = \(.*\)$", re.M)


def steps() -> list[tuple[str, str]]:
    """(where the module goes, with `<game>`; the toy game's module) per step of the page."""
    return STEP.findall(GUIDE.read_text(encoding="utf-8"))


def register(registry: Path) -> str:
    """Add the toy game's name to `GAMES`, as step 6 says; the line as it then reads."""
    text = registry.read_text(encoding="utf-8")
    line = REGISTERED.search(text)
    assert line is not None, "engine/registry.py has no `GAMES: Final = (...)` line"
    new = line.group(0).removesuffix(")") + f', "{NAME}")'
    registry.write_text(text.replace(line.group(0), new), encoding="utf-8")
    return new


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the source with the toy game added by the page's steps."""
    home = tmp_path_factory.mktemp("house")
    for top in ("engine", "protocol", "bots", "meldref"):
        shutil.copytree(ROOT / top, home / top, symlinks=True,
                        ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for where, module in steps():
        target = home / where.replace("<game>", NAME)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / module, target)
    register(home / "engine" / "registry.py")
    (home / "runs").mkdir()
    return home


def run(house: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(house), "MELDREF_PURE": "1"}
    return subprocess.run([sys.executable, *args], cwd=house, env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_page_has_a_step_per_part_and_the_toy_game_each_module() -> None:
    found = steps()
    assert [where for where, _ in found] == [
        "engine/<game>/__init__.py", "bots/<game>.py", "meldref/replay/games/<game>.py",
        "meldref/envs/<game>.py", "meldref/envs/<game>_v0.py"]
    assert all((ROOT / module).is_file() for _, module in found)


def test_the_pages_registration_is_the_line_the_step_makes(tmp_path: Path) -> None:
    registry = tmp_path / "registry.py"
    shutil.copyfile(ROOT / "engine" / "registry.py", registry)
    line = register(registry)
    assert line in REGISTERED.findall(GUIDE.read_text(encoding="utf-8")), (
        f"docs/adding-a-game.md's step 6 should show {line}")
    assert NAME not in GAMES  # the checkout itself is untouched


def test_the_toy_game_is_found_in_every_layer_of_the_copy(house: Path) -> None:
    done = run(house, "-c", f"""
import meldref
from meldref.bots import builtin_table
from meldref.engine.game import find_game
from meldref.envs.codec import find_codec
from meldref.replay.games import presentation
assert meldref.__file__.startswith({str(house)!r}), meldref.__file__
print(find_game("{NAME}").title, list(builtin_table("{NAME}")), find_codec("{NAME}").action_size,
      presentation("{NAME}").look.layout)
""")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Toy", "Rummy", "['random',", "'greedy']", "50", "seats"]
    helped = run(house, "-m", "meldref", "match", "--help")
    assert NAME in helped.stdout, helped.stdout + helped.stderr


@pytest.mark.skipif(sandbox.sandbox_problem() is not None, reason="no sandbox here")
def test_a_sandboxed_match_seats_a_bot_program_in_the_toy_game(house: Path) -> None:
    done = run(house, "-m", "meldref", "match", NAME, "--bot", "builtin:greedy", "--bot",
               "python3 bots/random_bot.py", "--games", "2", "--seed", "3", "--sandbox",
               "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["game"] == NAME and result["rules"] == {"turn-cap": 40, "runs": True}
    games = result["games"]
    assert [g["status"] for g in games] == ["ok", "ok"]
    assert all(g["seat_status"] == ["ok", "ok"] for g in games)
    # Seat 0 moves first, and the seats rotate: the program sat there once and made its moves.
    assert [g["seats"][0] for g in games] == ["greedy", "random_bot"]
    assert all(g["decisions"] >= 2 for g in games)


@pytest.fixture(scope="module")
def tournament(house: Path) -> Path:
    """A tournament of the toy game (worker processes, a bot program, replays written)."""
    done = run(house, "-m", "meldref", "tournament", NAME, "--bot", "builtin:greedy", "--bot",
               "python3 bots/random_bot.py", "--bot", "builtin:random", "--players", "3",
               "--games", "2", "--seed", "5", "-r", "turn-cap=30", "--no-progress",
               "--out", "runs/t")
    assert done.returncode == 0, done.stdout + done.stderr
    return house / "runs" / "t"


def test_the_toy_games_tournament_replays_verify(house: Path, tournament: Path) -> None:
    replays = sorted((tournament / "replays").glob("*.jsonl"))
    assert len(replays) >= 2
    header = json.loads(replays[0].read_text(encoding="utf-8").splitlines()[0])
    assert header["game"] == NAME
    checked = run(house, "-m", "meldref", "replay", "verify", str(tournament / "replays"))
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_toy_games_replay_has_a_page(house: Path, tournament: Path) -> None:
    replay = sorted((tournament / "replays").glob("*.jsonl"))[0]
    done = run(house, "-m", "meldref", "replay", "html", str(replay))
    assert done.returncode == 0, done.stdout + done.stderr
    page = replay.with_suffix(".html").read_text(encoding="utf-8")
    payload = page.split('<script id="meldref-data" type="application/json">')[1]
    data = json.loads(payload.split("</script>")[0])
    assert data["game"] == NAME and data["title"] == "Toy Rummy"
    assert data["look"]["layout"] == "seats"
    assert len([step for step in data["steps"] if step.get("L")]) > 3


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                "--disable-background-networking", "--disable-component-update"]
# Every step of the page, shown: each seat panel's hand size as the page draws it.
HAND_SIZES = """() => {
  const v = window.meldrefViewer, out = [];
  for (let i = 0; i < v.count(); i++) {
    v.go(i);
    out.push([...document.querySelectorAll('#seats .seat .hand')].map((h) => +h.dataset.size));
  }
  return out;
}"""


@pytest.mark.browser
def test_the_toy_games_page_steps_through_in_a_browser(house: Path, tournament: Path,
                                                       tmp_path: Path) -> None:
    """The generic viewer draws the toy game from its presentation alone: every step shown,
    a panel per seat with 3 or 4 cards, no script error (Debian's chromium, headless)."""
    if not Path(CHROMIUM).exists():
        pytest.skip("no chromium at /usr/bin/chromium: the browser check needs it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    replay = sorted((tournament / "replays").glob("*.jsonl"))[0]
    page_path = tmp_path / "toy.html"
    done = run(house, "-m", "meldref", "replay", "html", str(replay), "-o", str(page_path))
    assert done.returncode == 0, done.stdout + done.stderr
    errors: list[str] = []
    with sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True,
            args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(page_path.as_uri())
            page.wait_for_selector("html[data-ready='1']", timeout=10_000)
            shown = page.evaluate(HAND_SIZES)
        finally:
            browser.close()
    assert errors == []
    assert len(shown) > 3 and all(len(sizes) == 3 for sizes in shown)
    assert {size for sizes in shown for size in sizes} <= {0, 3, 4}


def test_the_toy_game_passes_the_environments_checks(house: Path) -> None:
    pytest.importorskip("pettingzoo", reason="pettingzoo is in the test extra")
    pytest.importorskip("gymnasium", reason="gymnasium is in the test extra")
    done = run(house, "-c", f"""
import warnings
warnings.simplefilter("ignore")
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test
from meldref.envs import {NAME}_v0
from meldref.envs.gym import SeatEnv
env = {NAME}_v0.env(players=3)
api_test(env, num_cycles=300)
env.reset(seed=1)
assert env.action_space("player_0").n == {NAME}_v0.ACTIONS
size = env.observation_space("player_0")["observation"].shape
assert size == ({NAME}_v0.observation_size(3),), size
check_env(SeatEnv("{NAME}", ["greedy"]))
print("checked")
""")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split()[-1] == "checked"


def test_the_toy_game_is_an_openspiel_game_with_information_set_search(house: Path) -> None:
    """register_openspiel registers every registered game (it kept its own list of three), and
    ISMCTS resamples the toy game's hidden cards (meldref.envs.hidden, from its snapshot's
    `hands` and `draw_pile`) into states its player cannot tell apart."""
    pytest.importorskip("pyspiel", reason="open-spiel is in the test extra")
    done = run(house, "-c", f"""
import random
import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts
from meldref.engine.game import find_game
from meldref.envs.hidden import resampled_state
from meldref.envs.spiel import register_openspiel
register_openspiel()
game = pyspiel.load_game("meldref_{NAME}", {{"players": 2}})
pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)
evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(1))
bot = ismcts.ISMCTSBot(game, evaluator, uct_c=2.0, max_simulations=8,
                       random_state=np.random.RandomState(2))
state = game.new_initial_state()
rng = random.Random(0)
while not state.is_terminal():
    if state.is_chance_node():  # every card dealt or drawn (meldref.envs.chance)
        outcomes, weights = zip(*state.chance_outcomes())
        state.apply_action(rng.choices(outcomes, weights)[0])
    else:
        state.apply_action(bot.step(state))
info = find_game("{NAME}")
table = info.new_game(info.rules(), 3, 7)
table.opening_events()
other = resampled_state(table, 1, random.Random(1))
assert other.observation(1).to_json() == table.observation(1).to_json()
assert other.snapshot()["hands"][0] != table.snapshot()["hands"][0]
print("searched")
""")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split()[-1] == "searched"
