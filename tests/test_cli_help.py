"""Every command's --help, rendered as a user sees it: each option's own words intact (rich
markup eats nothing), no type tags such as `<bool>` on flags, no flag named that the command
does not have, and typer held to the tested range that renders so."""

from __future__ import annotations

import re
import tomllib

import pytest
from packaging.specifiers import SpecifierSet
from support import ROOT, cli_commands
from typer.testing import CliRunner

from meldref.cli import app
from meldref.cli.app import COMMANDS, load_command

runner = CliRunner()
TYPE_TAG = re.compile(r"<(bool|str|int|float|path|file|dir|text|list\[[a-z]+\])>")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
MELDREF_COMMAND = re.compile(r"`meldref [^`]*`")  # another command's flags, quoted


def one_line(text: str) -> str:
    return " ".join(text.split())


ALL = cli_commands()


def render(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "3000"})
    assert result.exit_code == 0, result.output
    return result.stdout


def plain(help_text: str) -> str:
    """A help string as it should read: rich's escapes (`\\[`) undone."""
    return one_line(help_text.replace("\\[", "["))


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=" ".join)
def test_every_option_help_reads_as_written_with_no_type_tags(path: tuple[str, ...]) -> None:
    command = dict(ALL)[path]
    shown = one_line(render(path))
    assert not TYPE_TAG.search(shown), (path, TYPE_TAG.findall(shown))
    for param in command.params:
        words = getattr(param, "help", None)
        if words and not getattr(param, "hidden", False):
            assert plain(words) in shown, (path, param.name, plain(words))


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=" ".join)
def test_a_help_names_only_flags_its_command_has(path: tuple[str, ...]) -> None:
    command = dict(ALL)[path]
    own = {opt for p in command.params for opt in (*p.opts, *getattr(p, "secondary_opts", []))}
    own.add("--help")
    texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
    named = {flag for text in texts for flag in FLAG.findall(MELDREF_COMMAND.sub("", text))}
    assert named <= own, (path, sorted(named - own))


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=" ".join)
def test_no_help_trails_off_mid_sentence(path: tuple[str, ...]) -> None:
    command = dict(ALL)[path]
    for param in command.params:
        words = getattr(param, "help", None) or ""
        assert not re.search(r"\w\.\.\. \w", words), (path, param.name, words)


def test_the_cluster_extra_is_printed_whole() -> None:
    assert "pip install 'meldref[cluster]'" in one_line(render(("tournament",)))


def test_play_seat_says_which_seats_there_are() -> None:
    shown = one_line(render(("play",)))
    assert "Your seat: 0 to players - 1" in shown


def test_typer_is_pinned_to_the_range_these_tests_passed_on() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pin = next(d for d in data["project"]["dependencies"] if d.startswith("typer"))
    specifier = SpecifierSet(pin.removeprefix("typer"))
    assert any(s.operator == "<" for s in specifier), pin  # an upper bound
    from importlib.metadata import version
    assert version("typer") in specifier


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_top_help_lists_each_command_with_its_own_first_line(name: str) -> None:
    first = one_line((load_command(name).help or "").split("\n\n")[0])
    assert first == COMMANDS[name][2]
    assert COMMANDS[name][2] in one_line(render(()))
