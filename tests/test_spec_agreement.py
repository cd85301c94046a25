"""Issue 26: the spec, the error messages and `--help` agree on every rule value and bot name.

- yes/no rule options are spelled `true`/`false` (spec/RULES.md, spec/PROTOCOL.md, replays);
  the error says so, and `yes`/`no` are still read;
- `match --json` shows the rules the games were played under (Five Crowns' `party` settled
  to on or off, as the replay records it), not `auto`;
- `--bot`'s help names every built-in bot, from the registry;
- spec/RULES.md says where an undeclared wild at the top of a run goes, and the engine agrees;
- Solitaire's cross table does not call a win-rate difference "pts" (points).
"""

from __future__ import annotations

import json
import re

import pytest
from support import ROOT
from typer.testing import CliRunner

from meldref.bots import BUILTIN_BOTS, builtin_help, builtin_names
from meldref.cli.app import app, load_command
from meldref.cli.report import _cell
from meldref.engine.game import GAME_NAMES, find_game
from meldref.engine.meld_check import parse_meld
from meldref.engine.phase10.rules import Phase10Rules
from meldref.replay.files import read_lines
from meldref.settings import SettingsError, parse_rules
from meldref.verdicts.elo import Estimate
from meldref.verdicts.pairs import SameDeals

runner = CliRunner()
RULES_MD = (ROOT / "spec" / "RULES.md").read_text()


def test_a_wrong_yes_no_value_asks_for_true_or_false() -> None:
    result = runner.invoke(app, ["match", "phase10", "--rules", "run-wrap=maybe", "--seed", "1"])
    assert result.exit_code == 2
    assert "run-wrap='maybe': true or false" in result.stderr, result.stderr
    assert "| `run-wrap` | `false`, `true` |" in RULES_MD


@pytest.mark.parametrize(("spelled", "value"), [("true", True), ("yes", True),
                                                ("false", False), ("no", False)])
def test_yes_and_no_are_still_read(spelled: str, value: bool) -> None:
    assert parse_rules(Phase10Rules, {"run-wrap": spelled}).run_wrap is value


def test_the_settings_error_names_true_or_false() -> None:
    with pytest.raises(SettingsError, match="true or false"):
        parse_rules(Phase10Rules, {"run-wrap": "maybe"})


def test_match_json_shows_the_party_the_games_played(tmp_path) -> None:
    replay = tmp_path / "g.jsonl"
    result = runner.invoke(app, ["match", "fivecrowns", "--players", "2", "--seed", "3",
                                 "--replay", str(replay), "--json"])
    assert result.exit_code == 0, result.output
    start = next(r for _, r in read_lines(replay) if r["type"] == "start")
    assert json.loads(result.stdout)["rules"] == start["rules"]
    assert start["rules"]["party"] == "off"


def test_bot_help_names_every_builtin_bot_from_the_registry() -> None:
    for game in GAME_NAMES:
        assert builtin_names(game) == tuple(BUILTIN_BOTS), game
    for name in ("match", "tournament"):
        (bot,) = [p for p in load_command(name).params if p.name == "bot"]
        assert builtin_help() in bot.help, name
        for builtin in BUILTIN_BOTS:
            assert f"builtin:{builtin}" in bot.help, (name, builtin)


def test_an_undeclared_wild_at_a_runs_top_is_specified_and_played_so() -> None:
    said = re.search(r"`run:R10,R11,R12,W` is (\S+) ", RULES_MD)
    assert said is not None, "RULES.md: no example of a wild written after a run's 12"
    assert said.group(1) == "9-12"
    played = parse_meld("run:R10,R11,R12,W", Phase10Rules().melds)
    assert str(played) == "run:W=9,R10,R11,R12"
    wrapped = parse_meld("run:R10,R11,R12,W", Phase10Rules(run_wrap=True).melds)
    assert str(wrapped) == "run:R10,R11,R12,W=1" and "`run-wrap=true`, 10-12-1" in RULES_MD
    assert find_game("phase10")  # the game these rules are of


def test_solitaires_cross_table_cell_is_not_points() -> None:
    cell = _cell(SameDeals("a", "b", 40, Estimate(0.125, 0.05), Estimate(3.0, 1.0)))
    assert "pts" not in cell and cell == "+12.5 pp won"
