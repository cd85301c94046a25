"""The limit flags are defined once (`meldref.cli.limits`) for every command that starts bots,
and reach each command as one value: the `[limits]` keys given."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from meldref.cli.app import load_command
from meldref.cli.limits import CONTEST_FLAGS, LIMIT_FLAGS, LimitFlags, with_limit_flags

runner = CliRunner()

# Per command: the flags it takes as `LIMIT_FLAGS` defines them (`bot check` and `bot test`
# give their clocks defaults and words of their own).
TAKEN = {
    ("match",): tuple(LIMIT_FLAGS),
    ("tournament",): tuple(LIMIT_FLAGS),
    ("contest", "init"): CONTEST_FLAGS,
    ("bot", "check"): ("memory_mb", "max_processes", "file_size_mb", "no_network", "sandbox"),
    ("bot", "test"): ("hints", "memory_mb", "max_processes", "file_size_mb", "sandbox"),
    ("replay", "resume"): ("move_time", "startup_time"),
}


def command(path: tuple[str, ...]) -> Any:
    found = load_command(path[0])
    for name in path[1:]:
        found = found.commands[name]
    return found


def shape(param: Any) -> tuple[Any, ...]:
    return (param.opts, getattr(param, "secondary_opts", []), param.default,
            getattr(param, "help", None), param.type.name)


def shared() -> dict[str, Any]:
    @with_limit_flags(*LIMIT_FLAGS)
    def every(*, limits: LimitFlags) -> None:
        """Every limit flag."""

    single = typer.Typer()
    single.command()(every)
    return {p.name: p for p in typer.main.get_command(single).params if p.name}


@pytest.mark.parametrize("path", list(TAKEN), ids=" ".join)
def test_every_command_that_starts_bots_takes_the_one_definition(path: tuple[str, ...]
                                                                  ) -> None:
    definitions = shared()
    params = {p.name: p for p in command(path).params}
    for name in TAKEN[path]:
        assert shape(params[name]) == shape(definitions[name]), (path, name)


def test_the_commands_own_clocks_keep_their_defaults_and_words() -> None:
    # bot check plays with a match's clocks (issue 49): unset flags take MatchPolicy's values,
    # which the help states; --strict takes the bank away.
    check = {p.name: p for p in command(("bot", "check")).params}
    assert (check["move_time"].default, check["move_time"].help) == (
        None, "Seconds per decision (default 1).")
    assert "(default 5)" in str(check["time_bank"].help)
    assert "(default 5)" in str(check["first_move_time"].help)
    assert check["strict"].default is False
    assert "--fresh-bots" not in str(check["cpu_seconds"].help)
    test = {p.name: p for p in command(("bot", "test")).params}
    assert (test["move_time"].default, test["move_time"].help) == (5.0, "Seconds for each "
                                                                   "answer.")
    contest = {p.name: p for p in command(("contest", "init")).params}
    assert (contest["sandbox"].secondary_opts, contest["sandbox"].default) == (
        ["--no-sandbox"], True)  # on unless `init --no-sandbox`


def test_the_flags_given_reach_the_command_as_one_value() -> None:
    seen: list[LimitFlags] = []

    @with_limit_flags("move_time", "hints", "memory_mb")
    def play(game: str = "phase10", *, limits: LimitFlags, verbose: bool = False) -> None:
        """A command that starts bots."""
        seen.append(limits)

    single = typer.Typer()
    single.command()(play)
    assert runner.invoke(single, ["--move-time", "2", "--no-hints"]).exit_code == 0
    assert runner.invoke(single, ["--game", "fivecrowns", "--verbose"]).exit_code == 0
    assert seen == [{"move-time": 2.0, "legal-hints": False}, {}]
