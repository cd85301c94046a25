"""Rule options read from text (`meldref.settings.parse_rules`): names, conversions and clear
errors; and their JSON form (`engine.game`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest

from meldref.engine.game import RuleOptionError, check_choice, rules_from_json, rules_to_json
from meldref.settings import parse_rules


@dataclass(frozen=True)
class Demo:
    skip_victim: Literal["choose", "next"] = "choose"
    run_wrap: bool = False
    turn_cap: int = 300
    phases_to_win: int | None = None

    def __post_init__(self) -> None:
        check_choice("skip_victim", self.skip_victim, ("choose", "next"))
        if self.turn_cap < 1:
            raise RuleOptionError("rule option turn-cap: at least 1")


def test_reads_every_kind_of_value() -> None:
    rules = parse_rules(
        Demo, {"skip-victim": "NEXT", "run_wrap": "yes", "turn-cap": "50", "phases-to-win": "5"}
    )
    assert rules == Demo("next", True, 50, 5)
    assert parse_rules(Demo, {"phases-to-win": "none"}).phases_to_win is None


def test_json_round_trip() -> None:
    rules = Demo("next", True, 50, 5)
    data = rules_to_json(rules)
    assert data == {"skip-victim": "next", "run-wrap": True, "turn-cap": 50, "phases-to-win": 5}
    assert rules_from_json(Demo, data) == rules


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ({"skip": "next"}, "unknown rule option 'skip'; options: phases-to-win, run-wrap"),
        ({"skip-victim": "left"}, "one of choose, next"),
        ({"run-wrap": "maybe"}, "true or false"),
        ({"turn-cap": "many"}, "a whole number"),
        ({"turn-cap": "0"}, "at least 1"),
    ],
)
def test_bad_options_are_clear_errors(pairs: dict[str, str], message: str) -> None:
    with pytest.raises(RuleOptionError, match=message):
        parse_rules(Demo, pairs)


def test_unknown_json_option_is_an_error() -> None:
    with pytest.raises(RuleOptionError, match="unknown rule options"):
        rules_from_json(Demo, {"colour": "red"})
