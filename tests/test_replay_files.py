"""Replay files: written line by line, verified by re-simulation, any changed byte or cut found,
told as one seat saw it, counted, and resumed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import BAD_BOT
from support import RANDOM_BOT as RANDOM_PROGRAM
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.engine.fivecrowns import FiveCrownsRules
from meldref.engine.phase10 import Phase10Rules
from meldref.protocol.seats import BotSpec
from meldref.replay.audit import verify
from meldref.replay.files import ReplayError, ReplayWriter, load_replay
from meldref.settings import limit_settings, parse_rules
from meldref.tournament.runner import run_job
from meldref.tournament.schedule import BotEntry, GameJob

RANDOM_BOT = f"{RANDOM_PROGRAM} --seed 2"
runner = CliRunner()


def play(folder: Path, name: str, specs: list[str], limits: dict | None = None,
         rules: dict | None = None, seed: int = 5) -> Path:
    bots = tuple(BotEntry(f"b{k}", BotSpec.parse(spec)) for k, spec in enumerate(specs))
    settings = limit_settings(limits or {})
    job = GameJob(0, name, "phase10", parse_rules(Phase10Rules, rules or {"phases-to-win": "2"}),
                  seed, 0, bots, settings.policy(), settings.process_limits())
    path = folder / f"{name}.jsonl"
    line = run_job(job, None, replay=path)
    assert line.ok, line
    return path


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("replays")
    return {
        "clean": play(folder, "clean", [RANDOM_BOT, "builtin:greedy"]),
        "faults": play(folder, "faults", [f"{BAD_BOT} retry_once", "builtin:random"],
                       rules={"phases-to-win": "1"}),
        "autoplay": play(folder, "autoplay", [f"{BAD_BOT} crash", "builtin:greedy"],
                         {"on-failure": "autoplay"}),
        "forfeit": play(folder, "forfeit", ["builtin:greedy", f"{BAD_BOT} crash",
                                            "builtin:random"]),
    }


def test_every_replay_verifies(replays: dict[str, Path]) -> None:
    for name, path in replays.items():
        done = verify(path)
        assert done.actions > 0, name
    assert verify(replays["faults"]).faults > 0
    assert verify(replays["forfeit"]).result["status"][1] == "forfeit"
    header = load_replay(replays["clean"]).header
    assert header["seats"][0]["command"] == RANDOM_BOT
    assert header["seats"][0]["version"] == "1" and header["seats"][0]["bot_name"] == "random_bot"
    assert header["rules"]["phases-to-win"] == 2 and header["seed"] == 5


def test_any_one_byte_change_is_found_on_its_line(replays: dict[str, Path],
                                                  tmp_path: Path) -> None:
    data = replays["clean"].read_bytes()
    starts = [0] + [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    positions = sorted({*range(0, len(data), max(1, len(data) // 60)), len(data) - 2})
    for pos in positions:
        if data[pos] == ord("\n"):
            continue
        changed = bytearray(data)
        changed[pos] = ord("0") if data[pos] != ord("0") else ord("1")
        path = tmp_path / "changed.jsonl"
        path.write_bytes(bytes(changed))
        with pytest.raises(ReplayError) as caught:
            verify(path)
        line = sum(1 for s in starts if s <= pos)
        assert caught.value.line == line, (pos, str(caught.value))


def test_cuts_are_truncations(replays: dict[str, Path], tmp_path: Path) -> None:
    lines = replays["clean"].read_bytes().splitlines(keepends=True)
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(lines[:-1]))
    with pytest.raises(ReplayError, match="truncated: no result line"):
        verify(path)
    path.write_bytes(b"".join(lines[:10]) + lines[10][:25])
    with pytest.raises(ReplayError, match="truncated") as caught:
        verify(path)
    assert caught.value.line == 11
    path.write_bytes(b"".join(lines) + lines[3])
    with pytest.raises(ReplayError):
        verify(path)
    path.write_bytes(b"")
    with pytest.raises(ReplayError, match="empty"):
        verify(path)


def test_a_replay_is_readable_while_it_is_written(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    writer = ReplayWriter(path, {"game": "phase10", "rules": {}, "seed": 1, "players": 2})
    writer.write({"type": "start"})
    # Not closed: a killed referee leaves exactly this on disk.
    replay = load_replay(path)
    assert replay.result is None and [r["type"] for _, r in replay.records] == ["start"]
    with pytest.raises(ReplayError, match="truncated"):
        verify(path)
    writer.close()


def test_cli_verify_exit_codes(replays: dict[str, Path], tmp_path: Path) -> None:
    result = runner.invoke(app, ["replay", "verify", *map(str, replays.values())])
    assert result.exit_code == 0 and result.stdout.count("ok ") == 4
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(replays["clean"].read_bytes().replace(b'"draw pile"', b'"draw pilE"', 1))
    result = runner.invoke(app, ["replay", "verify", str(bad)])
    assert result.exit_code == 1 and "line " in result.stderr and "altered" in result.stderr
    result = runner.invoke(app, ["replay", "verify", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 2 and "none.jsonl: no such file" in result.stderr


def _dealt(path: Path, seat: int) -> str:
    start = json.loads(path.read_text().splitlines()[1])
    (event,) = [e for e in start["events"] if e["event"] == "deal" and e["seat"] == seat]
    return " ".join(event["hand"])


def test_show_as_one_seat_hides_the_other_hands(replays: dict[str, Path]) -> None:
    path = replays["clean"]
    everything = runner.invoke(app, ["replay", "show", str(path)])
    assert everything.exit_code == 0
    seat0 = runner.invoke(app, ["replay", "show", str(path), "--seat", "0"])
    assert seat0.exit_code == 0
    first_line = [line for line in seat0.stdout.splitlines() if "is dealt" in line][:2]
    assert any("is dealt 10 cards" in line for line in first_line)
    assert "seat 0 holds" in seat0.stdout and "seat 1 holds" not in seat0.stdout
    hidden_draws = [line for line in seat0.stdout.splitlines()
                    if "seat 1 (b1) draws a card from the draw pile" in line]
    assert hidden_draws
    assert "seat 1 (b1) draws a card" not in everything.stdout
    assert "result (normal)" in seat0.stdout


def test_show_one_hand(replays: dict[str, Path]) -> None:
    result = runner.invoke(app, ["replay", "show", str(replays["clean"]), "--hand", "2"])
    assert result.exit_code == 0
    assert "-- hand 2 --" in result.stdout
    assert "-- hand 1 --" not in result.stdout and "-- hand 3 --" not in result.stdout


def test_show_a_truncated_replay_says_so(replays: dict[str, Path], tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(replays["clean"].read_bytes().splitlines(keepends=True)[:30]))
    result = runner.invoke(app, ["replay", "show", str(cut)])
    assert result.exit_code == 0
    assert "truncated" in result.stdout and "#27" in result.stdout


def test_stats(replays: dict[str, Path], tmp_path: Path) -> None:
    folder = replays["clean"].parent
    result = runner.invoke(app, ["replay", "stats", str(folder), "--json"])
    data = json.loads(result.stdout)
    assert data["games"] == data["finished"] >= 4
    assert sum(w["wins"] for w in data["wins_by_seat"]) >= data["games"]
    assert data["decisions"] > 0 and data["hands"] >= data["games"]
    bots = {b["bot"]: b for b in data["bots"]}
    assert sum(b["faults_by_outcome"].get("crashed", 0) for b in bots.values()) >= 2
    table = runner.invoke(app, ["replay", "stats", str(replays["clean"])])
    assert table.exit_code == 0 and "mean score" in table.stdout
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    result = runner.invoke(app, ["replay", "stats", str(junk), str(replays["clean"])])
    assert result.exit_code == 1 and "unreadable" in result.stderr


def test_resume_with_other_bots_keeps_the_prefix(replays: dict[str, Path],
                                                 tmp_path: Path) -> None:
    original = replays["clean"]
    target = tmp_path / "resumed.jsonl"
    result = runner.invoke(app, ["replay", "resume", str(original), "--at", "40", "--bot",
                                 "builtin:random", "--bot", "builtin:random", "--replay",
                                 str(target), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["at"] == 40 and data["diverged_at"] is None and data["status"] == "ok"
    verify(target)
    old = [r for _, r in load_replay(original).actions()]
    new = [r for _, r in load_replay(target).actions()]
    assert [r["action"] for r in new[:40]] == [r["action"] for r in old[:40]]
    assert load_replay(target).header["resumed_from"]["at"] == 40


def test_resume_a_truncated_game_with_its_own_bots(replays: dict[str, Path],
                                                   tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(replays["clean"].read_bytes().splitlines(keepends=True)[:50]))
    # Its own bots: a program among them runs only when the user trusts the file.
    result = runner.invoke(app, ["replay", "resume", str(cut), "--at", "45",
                                 "--trust-replay-bots"])
    assert result.exit_code == 0, result.output
    verify(tmp_path / "cut-resumed-at-45.jsonl")


@pytest.mark.parametrize(("args", "message"), [
    (["--at", "100000"], "--at 100000"),
    (["--at", "3", "--bot", "builtin:random"], "give 2 --bot"),
])
def test_resume_errors(replays: dict[str, Path], args: list[str], message: str) -> None:
    result = runner.invoke(app, ["replay", "resume", str(replays["clean"]), *args])
    assert result.exit_code == 2 and message in result.stderr


def test_stats_with_verify_and_resume_limits(replays: dict[str, Path], tmp_path: Path) -> None:
    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(replays["clean"].read_bytes().replace(b'"seed":5', b'"seed":6', 1))
    result = runner.invoke(app, ["replay", "stats", "--verify", "--json", str(changed),
                                 str(replays["clean"])])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["games"] == 1 and len(data["unreadable"]) == 1
    result = runner.invoke(app, ["replay", "resume", str(replays["clean"]), "--at", "5",
                                 "--trust-replay-bots", "--move-time", "3", "--startup-time",
                                 "4", "--replay", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 0
    policy = load_replay(tmp_path / "r.jsonl").header["policy"]
    assert policy["move_time"] == 3 and policy["startup_time"] == 4


def test_the_header_holds_the_rules_the_game_settled(tmp_path: Path) -> None:
    # Five Crowns settles party=auto into on or off when it starts; the header must say what was
    # played, as the start record does, or verify finds them different.
    bots = tuple(BotEntry(f"b{k}", BotSpec("builtin:random")) for k in range(3))
    rules = parse_rules(FiveCrownsRules, {"party": "auto", "turn-cap": "3"})
    job = GameJob(0, "fc", "fivecrowns", rules, 4, 0, bots)
    path = tmp_path / "fc.jsonl"
    assert run_job(job, None, replay=path).ok
    replay = load_replay(path)
    start = next(r for _, r in replay.records if r["type"] == "start")
    assert replay.header["rules"]["party"] == start["rules"]["party"] == "off"
    assert replay.header["rules"] == start["rules"]
    verify(path)
    result = runner.invoke(app, ["replay", "resume", str(path), "--at", "10", "--replay",
                                 str(tmp_path / "again.jsonl")])
    assert result.exit_code == 0, result.output
    verify(tmp_path / "again.jsonl")
