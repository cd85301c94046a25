"""Phase 10 rule options: names, defaults, values, and combinations that make no sense."""

from __future__ import annotations

import pytest

from meldref.bots import builtin_names
from meldref.engine.game import RuleOptionError, find_game, rules_from_json, rules_to_json
from meldref.engine.phase10 import GAME, Phase10Rules, describe_phase
from meldref.settings import parse_rules


def test_defaults_are_the_printed_rules() -> None:
    assert rules_to_json(Phase10Rules()) == {
        "dealer": "random",
        "deal-rotation": "left",
        "first-skip": "skip-first-player",
        "natural": "phase",
        "run-wrap": False,
        "skip-victim": "choose",
        "skip-repeat": "once-per-orbit",
        "hit-on-lay-turn": "any",
        "going-out": "any",
        "win": "last-phase",
        "tiebreak": "first-out",
        "tiebreak-players": "tied",
        "phases": "all",
        "phases-to-win": None,
        "any-order": False,
        "fixed-hands": False,
        "turn-cap": 300,
        "hand-cap": 100,
    }


def test_every_variant_reads_from_text() -> None:
    rules = parse_rules(GAME.rules_type, {
        "dealer": "seat0", "first-skip": "twist", "natural": "group", "run-wrap": "yes",
        "skip-victim": "next", "skip-repeat": "unlimited", "hit-on-lay-turn": "own",
        "going-out": "must-discard", "tiebreak": "first-to-lay", "phases": "even",
        "phases-to-win": "3", "any-order": "yes", "turn-cap": "50", "hand-cap": "none",
        "deal-rotation": "fixed", "win": "last-phase-and-out", "tiebreak-players": "everyone",
    })
    assert rules == Phase10Rules(
        dealer="seat0", first_skip="twist", natural="group", run_wrap=True, skip_victim="next",
        skip_repeat="unlimited", hit_on_lay_turn="own", going_out="must-discard",
        tiebreak="first-to-lay", phases="even", phases_to_win=3, any_order=True, turn_cap=50,
        hand_cap=None, deal_rotation="fixed", win="last-phase-and-out",
        tiebreak_players="everyone",
    )
    assert rules_from_json(Phase10Rules, rules_to_json(rules)) == rules
    assert parse_rules(GAME.rules_type, {"fixed-hands": "yes", "tiebreak": "shared"}).fixed_hands


def test_the_registry_finds_the_game() -> None:
    assert find_game("Phase-10") is GAME
    assert {"random", "greedy", "expert"} <= set(builtin_names(GAME.name))
    assert GAME.decisions == ("draw", "play")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"skip_victim": "left"}, "skip-victim='left': one of choose, next"),
        ({"natural": "all"}, "natural='all': one of phase, group, none"),
        ({"run_wrap": "yes"}, "run-wrap='yes': true or false"),
        ({"turn_cap": 0}, "turn-cap=0: at least 1"),
        ({"turn_cap": None}, "turn-cap=None: a whole number"),
        ({"hand_cap": 0}, "hand-cap=0: at least 1, or none"),
        ({"phases_to_win": 11}, "phases-to-win=11: 1..10"),
        ({"phases_to_win": 6, "phases": "even"}, "phases-to-win=6: 1..5 with phases=even"),
        ({"fixed_hands": True, "any_order": True}, "fixed-hands and any-order exclude"),
        ({"fixed_hands": True, "phases_to_win": 5}, "fixed-hands and phases-to-win exclude"),
        ({"fixed_hands": True, "hand_cap": 9}, "fixed-hands plays 10 hands"),
    ],
)
def test_bad_values_are_clear_errors(values: dict[str, object], message: str) -> None:
    with pytest.raises(RuleOptionError, match=message):
        Phase10Rules(**values)  # type: ignore[arg-type]


def test_text_errors_name_the_option() -> None:
    with pytest.raises(RuleOptionError, match="unknown rule option 'wrap'"):
        parse_rules(GAME.rules_type, {"wrap": "yes"})
    with pytest.raises(RuleOptionError, match="tiebreak='coin'"):
        parse_rules(GAME.rules_type, {"tiebreak": "coin"})


def test_players_two_to_six() -> None:
    for bad in (1, 7):
        with pytest.raises(RuleOptionError, match=r"2\.\.6 players"):
            GAME.new_game(Phase10Rules(), bad, 0)


def test_sequence_target_and_final_phase() -> None:
    assert Phase10Rules().sequence == tuple(range(1, 11))
    assert Phase10Rules(phases="even").sequence == (2, 4, 6, 8, 10)
    assert Phase10Rules(phases="odd").final_phase == 9
    assert Phase10Rules(phases_to_win=5).final_phase == 5
    assert Phase10Rules(phases="even", phases_to_win=2).final_phase == 4
    assert Phase10Rules(phases="even", phases_to_win=2).target == 2


def test_the_ten_phases_in_words() -> None:
    assert [describe_phase(p) for p in range(1, 11)] == [
        "2 sets of 3", "1 set of 3 + 1 run of 4", "1 set of 4 + 1 run of 4", "1 run of 7",
        "1 run of 8", "1 run of 9", "2 sets of 4", "7 cards of one colour",
        "1 set of 5 + 1 set of 2", "1 set of 5 + 1 set of 3",
    ]
