"""Values from outside are parsed once, at the edge (`meldref.settings`): any number a flag or a
`[limits]` key can hold either becomes a finite, in-range policy or is refused with exit 2 and
a message naming the flag or key -- never a traceback, never a game ended by status error."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from meldref.cli import app
from meldref.engine.phase10 import Phase10Rules
from meldref.protocol.referee import MatchPolicy
from meldref.settings import (
    MAX_SECONDS,
    SettingsError,
    flag,
    in_table,
    limit_settings,
    parse_rules,
)
from meldref.tournament.config import ConfigError, build_config

runner = CliRunner()
SECONDS = ["move-time", "first-move-time", "startup-time", "time-bank", "increment", "max-bank"]
WHOLE = ["memory-mb", "max-processes", "file-size-mb", "illegal-retries"]
NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, -1, 0.0, -0.0, 1e308, float("nan"), float("inf"), 2**63, 1e-300]),
)


WHOLE_RANGE = {"memory-mb": (1, 1 << 24), "max-processes": (1, 1 << 22),
               "file-size-mb": (1, 1 << 24), "illegal-retries": (0, 100)}


def _fine(key: str, value: float | int) -> bool:
    """Whether `value` is a value `key` takes (alone, with the other limits' defaults)."""
    if isinstance(value, bool):
        return False
    if key in WHOLE_RANGE:
        low, high = WHOLE_RANGE[key]
        return isinstance(value, int) and low <= value <= high
    if not math.isfinite(value) or value > MAX_SECONDS:
        return False
    if key in ("move-time", "first-move-time", "startup-time"):
        return value > 0
    if key == "max-bank":
        return value >= MatchPolicy().time_bank
    return value >= 0


@settings(max_examples=300, deadline=None)
@given(key=st.sampled_from(SECONDS + WHOLE), value=NUMBERS)
def test_any_number_is_a_finite_policy_or_an_error_naming_the_key(key: str,
                                                                  value: float | int) -> None:
    for where, name in ((flag, f"--{key}"), (in_table("limits"), f"[limits] {key}")):
        try:
            limits = limit_settings({key: value}, where)
            policy = limits.policy()
            process = limits.process_limits()
        except SettingsError as exc:
            assert not _fine(key, value), (key, value, exc)
            assert str(exc).startswith(name) or "max-bank" in str(exc), str(exc)
            continue
        assert _fine(key, value), (key, value)
        clocks = [policy.move_time, policy.first_move_time, policy.startup_time,
                  policy.time_bank, policy.increment, policy.max_bank or 0.0]
        assert all(math.isfinite(c) and 0 <= c <= MAX_SECONDS for c in clocks)
        assert all(v is None or v >= 1 for v in (process.memory_mb, process.max_processes,
                                                  process.file_size_mb))


BAD = st.sampled_from(["nan", "inf", "-inf", "1e308", "-1", "0", "NaN", "-0.5"])


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(["move-time", "startup-time", "time-bank", "increment",
                            "max-bank", "memory-mb", "max-processes", "file-size-mb"]),
       text=BAD)
def test_match_refuses_a_bad_number_before_any_game(key: str, text: str) -> None:
    if key in ("time-bank", "increment") and text == "0":
        return  # a zero bank or increment is a fine value
    result = runner.invoke(app, ["match", "phase10", f"--{key}", text])
    if key in ("memory-mb", "max-processes", "file-size-mb") and not re.fullmatch(r"-?\d+",
                                                                                 text):
        assert result.exit_code == 2  # typer refuses a non-integer for an int flag
        return
    assert result.exit_code == 2, (key, text, result.output)
    assert f"--{key}" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(SECONDS + WHOLE),
       value=st.one_of(NUMBERS, st.text(max_size=8), st.booleans()))
def test_limits_keys_of_a_config_file_are_checked_with_their_names(key: str,
                                                                   value: object) -> None:
    data = {"bots": ["builtin:greedy", "builtin:random"], "limits": {key: value}}
    try:
        cfg = build_config(data, {})
    except ConfigError as exc:
        assert f"[limits] {key}" in str(exc) or "[limits] max-bank" in str(exc), str(exc)
        return
    assert isinstance(value, int | float) and not isinstance(value, bool)
    assert all(math.isfinite(c) for c in (cfg.policy.move_time, cfg.policy.time_bank))


def test_bot_check_refuses_nan() -> None:
    result = runner.invoke(app, ["bot", "check", "python3 x.py", "--move-time", "nan"])
    assert result.exit_code == 2 and "--move-time = nan: a finite number" in result.stderr


def test_flags_over_a_file_and_each_named_where_it_came_from() -> None:
    in_file = limit_settings({"move-time": 2.0, "time-bank": 1.0}, in_table("limits"))
    in_flags = limit_settings({"move-time": 0.5})
    merged = in_flags.over(in_file)
    assert merged.given() == {"move-time": 0.5, "time-bank": 1.0}
    assert merged.policy().move_time == 0.5 and merged.policy().time_bank == 1.0
    with pytest.raises(SettingsError, match=r"^--hints/--no-hints = 'yes': true or false$"):
        limit_settings({"legal-hints": "yes"})


def test_rules_from_text_and_toml_values_alike() -> None:
    from_text = parse_rules(Phase10Rules, {"Run_Wrap": "YES", "skip-victim": "Next",
                                           "phases-to-win": "none"})
    from_toml = parse_rules(Phase10Rules, {"run-wrap": True, "skip-victim": "next"})
    assert from_text == from_toml == Phase10Rules(run_wrap=True, skip_victim="next")
    with pytest.raises(SettingsError, match=r"\[rules\]: rule option turn-cap='x': a whole"):
        parse_rules(Phase10Rules, {"turn-cap": "x"}, "[rules]")
