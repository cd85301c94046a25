"""Every key meldref writes from a tournament's configuration is spelt as the user writes it in
the TOML file (`bot-folder`, `shared-deals`, `[limits] move-time`), in every JSON file of a
real run's folder; a folder an older meldref wrote (`bot_folder`, `drawn_from`, `move_time`)
still resumes. The keys left as they are: those a spec fixes (a replay's `policy`,
spec/REPLAY.md) and the rating method's record in standings.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from meldref.engine.game import find_game, rules_to_json
from meldref.settings import LimitSettings, public_names
from meldref.tournament.config import Sources

# Every key a user writes: the file's top level, `[limits]`, and the game's `[rules]`.
CONFIG_KEYS = {*public_names(Sources), *public_names(LimitSettings), "drawn-from",
               *rules_to_json(find_game("phase10").rules())}

# (file pattern, key path part): snake_case that a format fixes, not meldref's choice here.
EXCEPTIONS = {
    ("replays/", "policy"),  # the referee's MatchPolicy in replay lines: spec/REPLAY.md
    ("standings.json", "rank_by"),  # the rating method's record (verdicts), docs/verdicts.md
}

CONFIG = """\
game = "phase10"
games = 4
shared-deals = true
rank-by = "margin"
sprt = "0,10,0.05,0.05"
bot-folder = "."
[rules]
phases-to-win = 1
[limits]
move-time = 2.0
time-bank = 3.0
memory-mb = 1024
fresh-bots = true
[[bot]]
cmd = "builtin:greedy"
[[bot]]
cmd = "builtin:random"
"""


def tournament(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `meldref tournament` on `folder`/t.toml (no seed: one is drawn and kept)."""
    config = folder / "t.toml"
    if not config.exists():
        config.write_text(CONFIG)
        config.chmod(0o600)
    return subprocess.run([sys.executable, "-m", "meldref", "tournament", str(config), "--out",
                           str(folder / "t"), "--no-progress", *args], cwd=folder,
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "MELDREF_PURE": "1"})


def records(folder: Path) -> Iterator[tuple[str, Any]]:
    """Every JSON value in the folder's files, by the file's path in the folder."""
    for path in sorted(folder.rglob("*.json*")):
        name = str(path.relative_to(folder))
        text = path.read_text()
        if path.suffix == ".jsonl":
            yield from ((name, json.loads(line)) for line in text.splitlines() if line)
        else:
            yield name, json.loads(text)


def keys(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every key in `value`, at every depth."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*path, key)
            yield from keys(inner, (*path, key))
    elif isinstance(value, list):
        for inner in value:
            yield from keys(inner, path)


def misspelt(folder: Path) -> list[str]:
    """`file: a/b/key` for each configuration key spelt with `_` (tournament.json holds only
    the configuration: every key of it counts)."""
    found = []
    for name, value in records(folder):
        for path in keys(value):
            key = path[-1]
            config = name == "tournament.json" or key.replace("_", "-") in CONFIG_KEYS
            excused = any(name.startswith(f) and part in path for f, part in EXCEPTIONS)
            if config and "_" in key and not excused:
                found.append(f"{name}: {'/'.join(path)}")
    return sorted(set(found))


def test_every_configuration_key_a_run_writes_is_spelt_as_the_toml_spells_it(
        tmp_path: Path) -> None:
    run = tournament(tmp_path)
    assert run.returncode == 0, run.stderr
    out = tmp_path / "t"
    assert {p.name for p in out.iterdir()} >= {"tournament.json", "results.jsonl",
                                                "standings.json", "replays"}
    assert misspelt(out) == []
    meta = json.loads((out / "tournament.json").read_text())
    assert meta["bot-folder"] == str(tmp_path) and meta["plan"]["shared-deals"] is True
    assert meta["limits"] == {"move-time": 2.0, "time-bank": 3.0, "memory-mb": 1024,
                              "fresh-bots": True}
    assert meta["drawn-from"] and isinstance(meta["plan"]["seed"], int)
    # The walk sees what it must excuse: the replay's policy is spec/REPLAY.md's.
    header = json.loads(next((out / "replays").glob("*.jsonl")).read_text().splitlines()[0])
    assert header["policy"]["move_time"] == 2.0


def old_spelling(meta: dict[str, Any]) -> dict[str, Any]:
    """`tournament.json` as meldref wrote it before its keys took the TOML's spelling."""
    old = {k.replace("-", "_"): v for k, v in meta.items()}
    old["plan"] = {k.replace("-", "_"): v for k, v in meta["plan"].items()}
    old["limits"] = {k.replace("-", "_"): v for k, v in meta["limits"].items()}
    return old


def test_a_folder_an_older_meldref_wrote_resumes_with_its_drawn_seed(tmp_path: Path) -> None:
    first = tournament(tmp_path, "--stop-after", "1")
    assert first.returncode == 0, first.stderr
    meta_path = tmp_path / "t" / "tournament.json"
    meta = json.loads(meta_path.read_text())
    old = old_spelling(meta)
    assert {"drawn_from", "bot_folder"} <= old.keys() and "shared_deals" in old["plan"]
    meta_path.write_text(json.dumps(old, indent=2))
    # The seed was drawn (none in t.toml): only `drawn_from` says it is this plan's, so a
    # reader blind to the old spelling draws another and refuses the folder as another's.
    again = tournament(tmp_path)
    assert again.returncode == 0, again.stderr
    lines = [json.loads(x) for x in (tmp_path / "t" / "results.jsonl").read_text().splitlines()]
    assert len(lines) == len({x["game_id"] for x in lines}) == 4  # the first not played again
    rewritten = json.loads(meta_path.read_text())
    assert rewritten["plan"]["seed"] == meta["plan"]["seed"]
    assert rewritten["fingerprint"] == meta["fingerprint"] and misspelt(tmp_path / "t") == []
