"""Shared deals (issue 44): every table of a contest's final, and of a tournament with
`Plan.shared_deals`, plays the same deals, so the luck of the cards is common to the room and
one program entered twice comes out tied with itself, to the last digit.

The program is `bots/random_bot.py --seed N`, which starts every game from its seed: the same
deal, seat and hand give it the same moves at whichever table it sits. Two copies of it
(`twin`, `twin2`, the same seed) meet a third program; with each table dealing its own cards
the copies' ratings differed (the outside check's +323 and +256, each "rank held 98%")."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import PYTHON, RANDOM_BOT_PATH, ROOT

from meldref.contest.final import play_final
from meldref.contest.settings import ContestSettings
from meldref.contest.store import ContestStore
from meldref.engine.game import find_game
from meldref.protocol.seats import BotSpec
from meldref.tournament.runner import run_job
from meldref.tournament.schedule import BotEntry, Plan
from meldref.tournament.standings import compute_standings

TWIN_SEED, OTHER_SEED = 11, 12


def _figures(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each bot's row without its name: rating, interval, rank and rank figures, record."""
    return {r["bot"]: {k: v for k, v in r.items() if k != "bot"} for r in rows}


def _program(seed: int) -> str:
    return f"{PYTHON} {RANDOM_BOT_PATH.name} --seed {seed}"


def test_a_program_entered_twice_ties_with_itself_in_the_final(tmp_path: Path) -> None:
    settings = ContestSettings.checked("phase10", 2, {"phases-to-win": 1}, {}, False, 2, 3,
                                       seed=5)
    folder = tmp_path / "contest"
    store = ContestStore.create(folder, settings)
    try:
        for name, seed in (("twin", TWIN_SEED), ("twin2", TWIN_SEED), ("other", OTHER_SEED)):
            staged = tmp_path / f"staged-{name}"
            staged.mkdir()
            shutil.copy(RANDOM_BOT_PATH, staged / RANDOM_BOT_PATH.name)
            store.join(name, _program(seed), staged)
    finally:
        store.close()
    result = play_final(folder, top=3, deal_sets=6).to_json()
    rows = result["final"]["standings"]
    figures = _figures(rows)
    assert figures["twin v1"] == figures["twin2 v1"], rows
    assert figures["twin v1"]["games"] == 24  # 6 deal sets x 2 seatings x 2 tables
    store = ContestStore.open(folder)
    try:  # deal m's seed is the same at every table, and no two deals share one
        seeds = store.db.execute("SELECT seed, versions FROM deal_sets WHERE kind = 'final'"
                                 ).fetchall()
    finally:
        store.close()
    by_seed: dict[int, list[str]] = {}
    for seed, versions in seeds:
        by_seed.setdefault(seed, []).append(versions)
    assert len(by_seed) == 6 and all(len(tables) == 3 for tables in by_seed.values())


def _entries(folder: Path) -> tuple[BotEntry, ...]:
    shutil.copy(RANDOM_BOT_PATH, folder / RANDOM_BOT_PATH.name)
    return tuple(BotEntry(name, BotSpec.parse(f"{PYTHON} {folder / RANDOM_BOT_PATH.name} "
                                              f"--seed {seed}"))
                 for name, seed in (("twin", TWIN_SEED), ("twin2", TWIN_SEED),
                                    ("other", OTHER_SEED)))


@pytest.mark.long  # ~6 s; the command line's shorter twin runs by default
def test_a_program_entered_twice_ties_with_itself_in_a_shared_deals_tournament(
        tmp_path: Path) -> None:
    rules = find_game("phase10").rules_type(phases_to_win=1)
    plan = Plan("phase10", _entries(tmp_path), 2, 12, seed=3, rules=rules, shared_deals=True)
    lines = [run_job(job, tmp_path) for job in plan.jobs()]
    report = compute_standings(lines, [b.name for b in plan.bots])
    figures = _figures(report.to_json()["standings"])
    assert figures["twin"] == figures["twin2"]
    seeds: dict[int, set[str]] = {}
    for job in plan.jobs():
        seeds.setdefault(job.seed, set()).add(job.game_id.split("-")[0])
    assert len(seeds) == 6 and all(len(tables) == 3 for tables in seeds.values())


def test_without_shared_deals_each_table_keeps_its_own_deals() -> None:
    """The default is unchanged: a seed's tournament plays the deals it always played."""
    bots = tuple(BotEntry(n, BotSpec.parse("builtin:random")) for n in ("a", "b", "c"))
    own = Plan("phase10", bots, 2, 4, seed=3)
    shared = Plan("phase10", bots, 2, 4, seed=3, shared_deals=True)
    assert len({j.seed for j in own.jobs()}) == 6  # 3 tables x 2 deals
    assert len({j.seed for j in shared.jobs()}) == 2
    assert own.fingerprint() != shared.fingerprint()
    assert "shared_deals" not in own.to_json()  # old plans keep their fingerprint
    pairs = {(j.game_id, j.seed) for j in own.jobs()}
    assert all(a != b for (a, _), (b, _) in itertools.combinations(pairs, 2))


def test_the_shared_deals_flag_ties_a_program_with_itself_from_the_command_line(
        tmp_path: Path) -> None:
    """`meldref tournament --shared-deals` (and `shared-deals = true`) reach the plan."""
    twin = f"{PYTHON} {RANDOM_BOT_PATH} --seed {TWIN_SEED}"
    out = tmp_path / "t"
    done = subprocess.run(
        [sys.executable, "-m", "meldref", "tournament", "phase10", "--bot", twin, "--bot", twin,
         "--bot", f"{PYTHON} {RANDOM_BOT_PATH} --seed {OTHER_SEED}", "--players", "2",
         "--games", "8", "--seed", "3", "--rules", "phases-to-win=1", "--shared-deals",
         "--out", str(out), "--no-progress"], cwd=ROOT, capture_output=True, text=True,
        timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = json.loads((out / "standings.json").read_text())["standings"]
    figures = _figures(rows)
    assert figures["random_bot#1"] == figures["random_bot#2"], figures  # the two --bot twin
    assert json.loads((out / "tournament.json").read_text())["plan"]["shared-deals"] is True
