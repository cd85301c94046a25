"""What the command line writes is owner-only (files 0600, folders 0700) whatever the umask, and
a tournament's seed need never be on a command line (another user's bot could read it in /proc)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import BAD_BOT
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.private import open_private, private_dir
from meldref.protocol.seats import BotSpec
from meldref.replay.audit import verify
from meldref.replay.files import ReplayWriter
from meldref.tournament.schedule import BotEntry, deal_seed

SHORT = ["--rules", "phases-to-win=1", "--no-progress", "--json"]
runner = CliRunner()


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    old = os.umask(0o022)  # what most systems use: new files readable by everyone
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def all_private(folder: Path) -> dict[str, int]:
    """Every path under `folder` (and itself) that is not owner-only, with its mode."""
    paths = [folder, *folder.rglob("*")]
    return {str(p.relative_to(folder)): oct(mode(p)) for p in paths
            if mode(p) != (0o700 if p.is_dir() else 0o600)}


def test_tournament_folder_is_owner_only_with_logs_of_a_failed_game(tmp_path: Path) -> None:
    out = tmp_path / "new" / "t"
    code, stdout, _ = invoke("tournament", "--bot", f"{BAD_BOT} segv", "--bot",
                             "builtin:greedy", "--games", "2", "--out", str(out), *SHORT)
    assert code == 0, stdout  # a seat's crash is a fault, and its game keeps its logs
    names = {p.name for p in out.rglob("*")}
    assert {"tournament.json", "results.jsonl", "failures.txt", "standings.json", "replays",
            "logs"} <= names
    assert list((out / "logs").rglob("*.stderr")) and list((out / "replays").glob("*.jsonl"))
    assert all_private(out) == {}
    assert mode(tmp_path / "new") == 0o700  # a parent we created too


def test_an_older_readable_folder_is_tightened_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "t"
    args = ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "2",
            "--out", str(out), *SHORT]
    code, _, _ = invoke(*args, "--stop-after", "1")
    assert code == 0
    for path in [out, *out.rglob("*")]:  # as an older meldref (or a cp -r) left it
        path.chmod(0o755 if path.is_dir() else 0o644)
    code, stdout, _ = invoke(*args)
    assert code == 0 and json.loads(stdout)["found_done"] == 1
    # Folders are closed and files written again tightened; a replay not rewritten keeps its
    # mode, but no one else can reach it.
    assert all_private(out) == {"replays/t00-d0000-s00.jsonl": "0o644"}


def test_match_replays_are_owner_only(tmp_path: Path) -> None:
    one = tmp_path / "sub" / "game.jsonl"
    code, _, _ = invoke("match", "--seed", "3", "--players", "2", "--rules",
                        "phases-to-win=1", "--replay", str(one), "--json")
    assert code == 0 and mode(one) == 0o600 and mode(one.parent) == 0o700
    several = tmp_path / "many"
    code, _, _ = invoke("match", "--seed", "3", "--players", "2", "--games", "2", "--rules",
                        "phases-to-win=1", "--replay", str(several), "--json")
    assert code == 0 and all_private(several) == {}
    assert len(list(several.glob("*.jsonl"))) == 2


def test_rewriting_a_readable_file_makes_it_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("old\n")
    path.chmod(0o644)
    with ReplayWriter(path, {"game": "phase10"}):
        assert mode(path) == 0o600
    path.chmod(0o666)
    with open_private(path, "a", encoding="utf-8") as f:
        f.write("more\n")
    assert mode(path) == 0o600


def test_private_dir_leaves_a_shared_folder_it_was_only_given(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    private_dir(shared, tighten=False)
    assert mode(shared) == 0o755
    private_dir(shared / "a" / "b", tighten=False)
    assert mode(shared / "a") == 0o700 and mode(shared / "a" / "b") == 0o700


# ----------------------------------------------------------------------------------------------
# Seeds


def test_no_seed_draws_one_kept_only_in_the_folder_and_reused_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "t"
    args = ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "4",
            "--out", str(out), *SHORT]
    code, stdout, stderr = invoke(*args, "--stop-after", "2")
    assert code == 0 and "/proc" not in stderr
    meta = json.loads((out / "tournament.json").read_text())
    seed = meta["plan"]["seed"]
    assert isinstance(seed, int) and meta["drawn-from"]
    assert str(seed) not in stdout
    code, stdout, _ = invoke(*args)
    assert code == 0 and json.loads(stdout)["found_done"] == 2
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    table = [BotEntry(n, BotSpec(f"builtin:{n}")) for n in ("greedy", "random")]
    # One seed for both runs: the deals of the drawn seed.
    assert sorted({r["seed"] for r in lines}) == sorted(deal_seed(seed, table, d) for d in (0, 1))
    for r in lines:
        assert verify(out / r["replay"]).actions == r["actions"]
    other = tmp_path / "u"
    code, _, _ = invoke(*args[:-len(SHORT) - 2], "--out", str(other), *SHORT)
    assert code == 0
    assert json.loads((other / "tournament.json").read_text())["plan"]["seed"] != seed


def test_default_folder_is_found_again_without_a_seed(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "2",
            *SHORT]
    code, stdout, _ = invoke(*args, "--stop-after", "1")
    assert code == 0
    folder = Path(json.loads(stdout)["folder"])
    code, stdout, _ = invoke(*args)
    assert code == 0 and json.loads(stdout)["folder"] == str(folder)
    assert json.loads(stdout)["found_done"] == 1
    assert mode(tmp_path / "tournaments") == 0o700


def test_seed_on_the_command_line_warns_and_the_config_seed_does_not(tmp_path: Path) -> None:
    base = ["tournament", "--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "2",
            *SHORT]
    code, _, stderr = invoke(*base, "--seed", "5", "--out", str(tmp_path / "a"))
    assert code == 0 and "visible to other processes" in stderr and "/proc" in stderr
    config = tmp_path / "t.toml"
    config.write_text("seed = 5\n")
    config.chmod(0o644)
    code, _, stderr = invoke(*base[:1], str(config), *base[1:], "--out", str(tmp_path / "b"))
    assert code == 0 and "/proc" not in stderr and "chmod 600" in stderr
    config.chmod(0o600)
    code, _, stderr = invoke(*base[:1], str(config), *base[1:], "--out", str(tmp_path / "b"))
    assert code == 0 and stderr == ""
    seeds = [json.loads((tmp_path / x / "tournament.json").read_text())["plan"]["seed"]
             for x in ("a", "b")]
    assert seeds == [5, 5]
    assert (tmp_path / "a" / "results.jsonl").read_text() != ""
