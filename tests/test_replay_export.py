"""`meldref replay export`: one row per decision, what the seat saw, in three formats, in
bounded memory."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

from meldref.envs.codec import find_codec
from meldref.replay.export import ExportPlaceError, export, read_rows, save_replay
from meldref.replay.files import load_replay, simulate

pytest.importorskip("pyarrow", reason="pyarrow is in the test extra")


def meldref(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meldref", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "t"
    done = meldref("tournament", "--bot", "builtin:greedy", "--bot", "builtin:random",
                   "--game", "fivecrowns", "--games", "4", "--rules", "turn-cap=8",
                   "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_every_decision_is_a_row_with_what_its_seat_saw(tournament: Path, tmp_path: Path
                                                         ) -> None:
    target = tmp_path / "rows.jsonl"
    done = export([tournament / "replays"], target, "jsonl")
    rows = list(read_rows(target))
    files = sorted((tournament / "replays").glob("*.jsonl"))
    assert (done.files, done.rows, done.skipped) == (len(files), len(rows), ())
    codec = find_codec("fivecrowns")
    replay = load_replay(files[0])
    first = [r for r in rows if r["file"] == str(files[0])]
    seen: list[list[float]] = []
    simulate(replay, before=lambda record, state: seen.append(
        codec.encode(state.observation(record["seat"]).to_json(), 2).tolist()))
    assert [r["observation"] for r in first] == seen
    assert [r["action"] for r in first] == [r["action"] for _, r in replay.actions()]
    result = replay.result
    assert result is not None
    for row in first:
        assert row["place"] == result["outcome"]["places"][row["seat"]]
        assert row["action"] in row["legal_actions"] or row["auto"]
        assert row["deal"] == int(str(row["game_id"]).split("-d")[1][:4])


def test_the_three_formats_hold_the_same_rows(tournament: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    for fmt in ("jsonl", "csv", "parquet"):
        done = meldref("replay", "export", str(tournament / "replays"), "-o",
                       str(tmp_path / f"rows.{fmt}"), "--format", fmt)
        assert done.returncode == 0, done.stderr
    jsonl = list(read_rows(tmp_path / "rows.jsonl"))
    with (tmp_path / "rows.csv").open() as f:
        table = list(csv.DictReader(f))
    parquet = pq.read_table(tmp_path / "rows.parquet").to_pylist()
    assert len(jsonl) == len(table) == len(parquet) > 0
    assert [r["action"] for r in jsonl] == [r["action"] for r in table] == [
        r["action"] for r in parquet]
    assert json.loads(table[0]["observation"]) == jsonl[0]["observation"]
    assert parquet[5]["observation"] == pytest.approx(jsonl[5]["observation"])


def test_a_damaged_replay_is_skipped_and_named_and_the_rest_export(tournament: Path,
                                                                  tmp_path: Path) -> None:
    folder = tmp_path / "replays"
    shutil.copytree(tournament / "replays", folder)
    victim = sorted(folder.glob("*.jsonl"))[0]
    lines = victim.read_text().splitlines(keepends=True)
    damaged = lines[3].replace('"type":"action","n":1', '"type":"action","n":7')
    assert damaged != lines[3]
    victim.write_text("".join(lines[:3]) + damaged + "".join(lines[4:]))
    (tmp_path / "out").mkdir()
    done = meldref("replay", "export", str(folder), "-o", str(tmp_path / "out" / "x.jsonl"),
                   "--format", "jsonl")
    assert done.returncode == 1
    assert f"skipped {victim}" in done.stderr
    assert "from 3 games" in done.stdout  # 4 played, 1 damaged


def test_the_output_may_not_be_one_of_the_replays(tournament: Path, tmp_path: Path) -> None:
    replay = tmp_path / "g.jsonl"
    shutil.copy(sorted((tournament / "replays").glob("*.jsonl"))[0], replay)
    before = replay.read_bytes()
    done = meldref("replay", "export", str(replay), "-o", str(replay), "--format", "jsonl")
    assert done.returncode == 2 and "one of the replays read" in done.stderr
    assert replay.read_bytes() == before


def test_memory_does_not_grow_with_the_number_of_games(tmp_path: Path) -> None:
    """The same replay 150 and 600 times: the peak RSS of the export stays within a few MB
    (bench/bench_export.py measures 1,000 and 10,000 games). Both past the first full batch
    (2,000 rows): 60 games (1,680 rows) never filled one, so pyarrow's first row group, a
    one-time 10-25 MB, fell between the two and read as growth (pyarrow 26: 155 and 182 MB)."""
    done = meldref("match", "solitaire", "--seed", "5", "--replay", str(tmp_path / "one.jsonl"))
    assert done.returncode == 0, done.stderr
    peaks = []
    for count in (150, 600):
        folder = tmp_path / f"n{count}"
        folder.mkdir()
        for i in range(count):
            shutil.copy(tmp_path / "one.jsonl", folder / f"g{i:05d}.jsonl")
        probe = subprocess.run(
            [sys.executable, str(ROOT / "bench" / "bench_export.py"), "--measure", str(folder),
             str(tmp_path / f"n{count}.parquet")],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert probe.returncode == 0, probe.stderr
        peaks.append(json.loads(probe.stdout)["max_rss_mb"])
    assert peaks[1] - peaks[0] < 15, peaks


# -- rewards, legal indices and masks; where an export may go; an environment's game as a replay --

def play_aec(tmp_path: Path, players: int = 3, seed: int = 5
             ) -> tuple[Path, dict[str, list[float]], dict[str, list[list[int]]]]:
    """A random Five Crowns game through the PettingZoo environment, saved as a replay; per
    agent, the reward `last()` gave at each of its turns and the legal indices it was shown."""
    import numpy as np

    from meldref.envs import fivecrowns_v0

    env = fivecrowns_v0.env(players=players, rules={"turn-cap": 6})
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    given: dict[str, list[float]] = {a: [] for a in env.possible_agents}
    shown: dict[str, list[list[int]]] = {a: [] for a in env.possible_agents}
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        given[agent].append(reward)
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        shown[agent].append(legal.tolist())
        env.step(int(rng.choice(legal)))
    return save_replay(env, tmp_path / "replays" / "env.jsonl"), given, shown


def test_the_reward_column_is_what_the_environment_gave_each_seat(tmp_path: Path) -> None:
    """A seat's row holds the rewards from its action up to its next decision: what `last()`
    gives it at its next turn (its first row also what came before its first decision), so a
    seat's rewards add up to its return; legal_indices and the mask are its action_mask."""
    replay, given, shown = play_aec(tmp_path)
    out = tmp_path / "rows.ndjson"  # beside the replay folder: not a name replays have
    export([replay], out, "jsonl", mask=True)
    rows = list(read_rows(out))
    for seat, agent in enumerate(given):
        mine = [r for r in rows if r["seat"] == seat]
        expected = [given[agent][0] + given[agent][1], *given[agent][2:]]
        assert [r["reward"] for r in mine] == pytest.approx(expected)
        assert sum(r["reward"] for r in mine) == pytest.approx(-mine[0]["score"])
        assert [r["legal_indices"] for r in mine] == shown[agent]
        assert [[i for i, m in enumerate(r["mask"]) if m] for r in mine] == shown[agent]


def test_place_rewards_come_at_the_end(tmp_path: Path) -> None:
    replay, _, _ = play_aec(tmp_path, players=2, seed=8)
    out = tmp_path / "rows.csv"
    export([replay], out, "csv", reward="place")
    with out.open() as f:
        rows = list(csv.DictReader(f))
    last = []
    for seat in ("0", "1"):
        mine = [float(r["reward"]) for r in rows if r["seat"] == seat]
        assert set(mine[:-1]) == {0.0}
        last.append(mine[-1])
    assert sorted(last) == [-1.0, 1.0]
    assert "mask" not in rows[0]


def test_an_environments_game_is_a_replay_the_replay_tools_accept(tmp_path: Path) -> None:
    replay, _, _ = play_aec(tmp_path)
    done = meldref("replay", "verify", str(replay))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok" in done.stdout and "0 faults" in done.stdout
    page = tmp_path / "env.html"
    done = meldref("replay", "html", str(replay), "-o", str(page))
    assert done.returncode == 0, done.stderr
    assert "player_2" in page.read_text()


def test_a_seat_environments_game_is_a_replay_too(tmp_path: Path) -> None:
    import numpy as np

    from meldref.envs import SeatEnv

    env = SeatEnv("phase10", ["greedy"], rules={"phases-to-win": 1, "turn-cap": 30})
    _, info = env.reset(seed=3)
    done = False
    while not done:
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = term or trunc
    replay = save_replay(env, tmp_path / "seat.jsonl")
    checked = meldref("replay", "verify", str(replay))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "greedy" in checked.stdout


def test_an_export_is_never_written_where_it_would_be_read_as_a_replay(tournament: Path,
                                                                      tmp_path: Path) -> None:
    """Written into the replay folder, a JSON-lines export made `replay stats` of that folder
    exit 1 (it read the export as a damaged replay); so does one in a folder above it."""
    folder = tmp_path / "t"
    shutil.copytree(tournament, folder)
    target = folder / "replays" / "rows.jsonl"
    done = meldref("replay", "export", str(folder / "replays"), "-o", str(target),
                   "--format", "jsonl")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "would read this file as a replay" in done.stderr and not target.exists()
    for name in ("rows.jsonl", "rows.jsonl.gz"):  # the replay tools read gzipped replays too
        with pytest.raises(ExportPlaceError):
            export([folder / "replays"], folder / name, "jsonl")
        assert not (folder / name).exists()
    export([folder / "replays"], folder / "rows.ndjson", "jsonl")  # the name it suggests
    stats = meldref("replay", "stats", str(folder))
    assert stats.returncode == 0, stats.stdout + stats.stderr


def test_a_game_the_forfeits_ended_exports_with_its_result(tmp_path: Path) -> None:
    """`replay verify` accepted it and the export skipped it as cut short (exit 1): when
    forfeits end a game the state has no outcome; the result record has it."""
    policy = tmp_path / "crash.py"
    policy.write_text("import numpy as np\n\nn = [0]\n\ndef policy(obs, mask):\n"
                      "    n[0] += 1\n    if n[0] > 3:\n        raise RuntimeError('boom')\n"
                      "    return int(np.flatnonzero(mask)[0])\n")
    replay = tmp_path / "r" / "g.jsonl"
    done = meldref("match", "fivecrowns", "--bot",
                   f"{sys.executable} -m meldref.envs.policy {policy}:policy",
                   "--bot", "builtin:greedy", "--seed", "1", "--rules", "turn-cap=5",
                   "--replay", str(replay))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "rows.ndjson"
    exported = export([replay], out, "jsonl", reward="place")
    assert (exported.files, exported.skipped) == (1, ())
    rows = list(read_rows(out))
    assert {(r["seat"], r["place"]) for r in rows} == {(0, 2), (1, 1)}
    returns = [sum(r["reward"] for r in rows if r["seat"] == seat) for seat in (0, 1)]
    assert returns == [-1.0, 1.0]
