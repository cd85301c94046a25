"""Replays and configuration files are untrusted input: whatever a file holds (its hash chain
recomputed, so only the content is wrong), every command that reads it ends with one clear
message and a documented exit code -- no traceback, no hang, memory bounded."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from meldref.cli import app
from meldref.tournament.config import ConfigError, build_config, read_toml

runner = CliRunner()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("originals")
    games = {"phase10": ["--players", "2", "--rules", "phases-to-win=1"],
             "fivecrowns": ["--players", "2", "--rules", "turn-cap=2"],
             "solitaire": []}
    out = {}
    for game, args in games.items():
        path = folder / f"{game}.jsonl"
        result = runner.invoke(app, ["match", game, "--seed", "3", *args, "--replay", str(path)])
        assert result.exit_code == 0, result.output
        out[game] = [json.loads(line) for line in path.read_text().splitlines()]
    return out


def chained(records: list[Any], raw: dict[int, str] | None = None) -> bytes:
    """A replay file of `records` with a valid sum chain (as spec/REPLAY.md section 1 says);
    `raw` gives some lines' body text as is (what json.dumps cannot make)."""
    previous, lines = "", []
    for i, record in enumerate(records):
        if raw and i in raw:
            body = raw[i]
        elif isinstance(record, dict):
            body = json.dumps({k: v for k, v in record.items() if k != "sum"},
                              separators=(",", ":"), ensure_ascii=False)
        else:
            lines.append(json.dumps(record))
            continue
        previous = hashlib.sha256((previous + body).encode()).hexdigest()[:16]
        lines.append(f'{body[:-1]},"sum":"{previous}"}}' if body.endswith("}") else body)
    return ("\n".join(lines) + "\n").encode()


def mutate(records: list[dict[str, Any]], rnd: random.Random, value: Any,
           kind: str) -> tuple[list[Any], dict[int, str]]:
    records = json.loads(json.dumps(records))
    # Each kind of line as likely as any other (there are many more action lines).
    kinds = sorted({r["type"] for r in records})
    chosen = rnd.choice(kinds)
    i = rnd.choice([k for k, r in enumerate(records) if r["type"] == chosen])
    record = records[i]
    keys = sorted(record)
    raw: dict[int, str] = {}
    if kind == "set":
        record[rnd.choice([*keys, "extra"])] = value
    elif kind == "delete" and keys:
        del record[rnd.choice(keys)]
    elif kind == "nested":  # a value too deep for any JSON reader's recursion
        key = rnd.choice(keys)
        body = json.dumps({k: v for k, v in record.items() if k not in (key, "sum")},
                          separators=(",", ":"))
        raw[i] = body[:-1] + f',"{key}":' + "[" * 100_000 + "]" * 100_000 + "}"
    elif kind == "event" and isinstance(record.get("events"), list) and record["events"]:
        event = rnd.choice(record["events"])
        event[rnd.choice(sorted(event))] = value
    elif kind == "whole":
        records[i] = value
    elif kind == "number":  # past Python's 4300-digit int limit
        raw[i] = json.dumps({k: v for k, v in record.items() if k != "sum"},
                            separators=(",", ":"))[:-1] + ',"n":' + "9" * 5000 + "}"
    return records, raw


COMMANDS = [["verify"], ["show"], ["show", "--seat", "0"], ["stats"], ["stats", "--verify"],
            ["resume", "--at", "0", "--replay", "RESUMED"]]


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                    HealthCheck.data_too_large])
@given(game=st.sampled_from(["phase10", "fivecrowns", "solitaire"]),
       seed=st.integers(0, 10**6), value=JSON_VALUES,
       kind=st.sampled_from(["set", "set", "delete", "nested", "event", "event", "whole",
                             "number"]))
@example(game="phase10", seed=29494, value=[{}], kind="set")  # was: KeyError('seat') in show
# A null wall_time (or actions) in the result, which the schema allows: was TypeError in stats.
@example(game="phase10", seed=169, value=None, kind="set")
def test_any_content_with_a_valid_chain_is_a_clear_error(
        originals: dict[str, list[dict[str, Any]]], tmp_path_factory: pytest.TempPathFactory,
        game: str, seed: int, value: Any, kind: str) -> None:
    records, raw = mutate(originals[game], random.Random(seed), value, kind)
    path = tmp_path_factory.mktemp("m") / "r.jsonl"
    path.write_bytes(chained(records, raw))
    for command in COMMANDS:
        args = [str(path.with_name("resumed.jsonl")) if a == "RESUMED" else a for a in command]
        result = runner.invoke(app, ["replay", args[0], str(path), *args[1:]])
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            command, kind, repr(result.exception), result.output[-500:])
        assert result.exit_code in (0, 1, 2), (command, result.exit_code)


def test_a_bad_file_among_good_ones_is_reported_and_the_rest_counted(
        originals: dict[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(chained(originals["phase10"]))
    bad = tmp_path / "bad.jsonl"
    records = json.loads(json.dumps(originals["phase10"]))
    records[3]["action"] = ["not", "text"]  # was: AttributeError 'list' has no 'strip'
    bad.write_bytes(chained(records))
    result = runner.invoke(app, ["replay", "stats", str(tmp_path), "--json"])
    assert result.exit_code == 1 and json.loads(result.stdout)["finished"] == 1
    assert "bad.jsonl" in result.stderr and "line 4" in result.stderr
    verify = runner.invoke(app, ["replay", "verify", str(bad)])
    assert verify.exit_code == 1 and "line 4: altered: a action record with action" in " ".join(
        verify.stderr.split())


def test_a_huge_sparse_file_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    with path.open("wb") as f:
        f.truncate(1 << 30)  # 1 GiB of zeros, no disk used
    # The peak from /proc (VmHWM, since the exec): ru_maxrss keeps the high-water mark of the
    # process before its exec, a test worker's own (407 MB in a full run, past the bound).
    script = ("import sys\nfrom meldref.cli import main\nsys.argv = ['meldref', "
              f"'replay', 'verify', {str(path)!r}]\ntry:\n    main()\nfinally:\n"
              "    hwm = next(x for x in open('/proc/self/status') if x.startswith('VmHWM:'))\n"
              "    print('rss', hwm.split()[1], file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 1 and "not a meldref replay" in done.stderr
    rss_kb = int(done.stderr.rsplit("rss", 1)[1].split()[0])
    assert rss_kb < 400_000, rss_kb  # was 1.1 GB: the file was read whole


# ----------------------------------------------------------------------------------------------
# Configuration files

BASE = ('game = "phase10"\nplayers = 2\ngames = 4\nseed = 1\n[rules]\nphases-to-win = 2\n'
        '[limits]\nmove-time = 0.5\nmemory-mb = 512\n[[bot]]\ncmd = "builtin:greedy"\n'
        '[[bot]]\ncmd = "builtin:random"\n')


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_mutated_config_is_a_config_error_or_a_plan(data: st.DataObject,
                                                        tmp_path_factory: pytest.TempPathFactory
                                                        ) -> None:
    text = BASE.encode()
    kind = data.draw(st.sampled_from(["bytes", "value", "nested", "utf8"]))
    if kind == "bytes":
        pos = data.draw(st.integers(0, len(text) - 1))
        text = text[:pos] + data.draw(st.binary(min_size=1, max_size=4)) + text[pos + 1:]
    elif kind == "value":
        line = data.draw(st.sampled_from(["players", "games", "seed", "out", "duplicate",
                                          "jobs", "sprt", "format", "game"]))
        value = data.draw(st.sampled_from(
            ["0", "-1", "10**20", "100000000000000000000", "1e308", "nan", "inf", '"yes"',
             "true", "5", '"x"', "[1, 2]", "{ a = 1 }", '"nan,inf"', '"0,10"']))
        text = f"{line} = {value}\n".encode() + text.replace(f"{line} = ".encode(), b"#")
    elif kind == "nested":
        text = text + b"deep = " + b"[" * 50_000 + b"]" * 50_000 + b"\n"
    else:
        text = b"\xff\xfe" + text
    path = tmp_path_factory.mktemp("c") / "t.toml"
    path.write_bytes(text)
    try:
        cfg = build_config(read_toml(path), {})
    except ConfigError:
        return
    assert cfg.plan.table_count() * cfg.plan.games_per_table() <= 10_000_000


@pytest.mark.parametrize("body", [b"\xff\xfe" + BASE.encode(),
                                  BASE.encode() + b"deep = " + b"[" * 50_000 + b"]" * 50_000])
def test_a_config_that_is_not_utf8_or_too_deep_exits_2_naming_the_file(
        tmp_path: Path, body: bytes) -> None:
    # docs/faults.md's row: the command, not only the reader, says what is wrong and plays nothing.
    path = tmp_path / "t.toml"
    path.write_bytes(body)
    result = runner.invoke(app, ["tournament", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert str(path) in " ".join(result.stderr.split()) and "Traceback" not in result.output
    assert not (tmp_path / "o").exists()


def test_a_billion_games_are_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('games = 1000000000\nbots = ["builtin:greedy", "builtin:random"]\n')
    with pytest.raises(ConfigError, match="at most 1,000,000"):
        build_config(read_toml(path), {})
    many = 'players = 4\ngames = 1000000\nbots = [' + ", ".join(
        ['"builtin:greedy"'] * 30) + "]\n"
    path.write_text(many)
    with pytest.raises(ConfigError, match=r"27,405,219,240 games .* at most 10,000,000"):
        build_config(read_toml(path), {})


def test_a_fifo_as_a_config_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "t.toml"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-m", "meldref", "tournament", str(fifo)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and "not a regular file" in done.stderr


# ----------------------------------------------------------------------------------------------
# Output paths


@pytest.mark.parametrize("command", [
    ["match", "phase10", "--players", "2", "--rules", "phases-to-win=1", "--replay"],
    ["play", "phase10", "--players", "2", "--replay"],
])
def test_an_output_path_that_is_a_device_or_fifo_is_refused_untouched(
        command: list[str], tmp_path: Path) -> None:
    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo, 0o644)
    for target in ("/dev/null", str(fifo)):
        before = os.stat(target).st_mode
        done = subprocess.run([sys.executable, "-m", "meldref", *command, target],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
        assert os.stat(target).st_mode == before  # was: /dev/null made 0600 (as root)


def test_open_private_refuses_a_special_file_without_touching_it(tmp_path: Path) -> None:
    from meldref.private import SpecialFileError, open_private

    fifo = tmp_path / "f"
    os.mkfifo(fifo, 0o644)
    with pytest.raises(SpecialFileError):
        open_private(fifo, "w")  # and does not block waiting for a reader
    assert (os.stat(fifo).st_mode & 0o777) == 0o644
