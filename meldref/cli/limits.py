"""The limit flags: the clocks, the referee's policy and the bot programs' resource limits,
defined once for every command that starts bots (`match`, `tournament`, `bot check`, `bot test`,
`contest init`, `replay resume`) and given to the command as one value.

typer reads a command's options off its signature, one parameter each. `with_limit_flags`
gives a command the flags it names in place of its one parameter `limits`, which receives the
`[limits]` keys given on the command line (`{"move-time": 2.0}`; a flag not given is left out):
the command's own code never lists them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Final

import typer

from ..engine.game import JSON
from ..protocol.referee import MatchPolicy
from ..settings import LimitSettings, SettingsError, limit_settings
from .common import err, fail

LimitFlags = dict[str, JSON]  # the `[limits]` keys given on the command line, by public name
Command = Callable[..., None]

_POLICY: Final = MatchPolicy()
_CPU_HELP: Final = "CPU seconds per bot process (sandbox: 3600)."


@dataclass(frozen=True, slots=True)
class LimitFlag:
    """One flag: the `[limits]` key it sets, its typer option (`Annotated[T, typer.Option]`)
    and its default (None: not given, the referee's default applies)."""

    key: str
    option: object  # the parameter's annotation, which typer reads
    default: object = None


# One line of help each (at 80 columns); docs/commands.md#limits says each in full.
LIMIT_FLAGS: Final = {
    "move_time": LimitFlag("move-time", Annotated[float | None, typer.Option(
        help=f"Seconds per decision (default {_POLICY.move_time:g}).")]),
    "first_move_time": LimitFlag("first-move-time", Annotated[float | None, typer.Option(
        help=f"First decision's seconds (default {_POLICY.first_move_time:g}).")]),
    "startup_time": LimitFlag("startup-time", Annotated[float | None, typer.Option(
        help=f"Seconds to start and say ready (default {_POLICY.startup_time:g}).")]),
    "time_bank": LimitFlag("time-bank", Annotated[float | None, typer.Option(
        help=f"Bank seconds per seat and game (default {_POLICY.time_bank:g}).")]),
    "increment": LimitFlag("increment", Annotated[float | None, typer.Option(
        help=f"Bank seconds added per decision (default {_POLICY.increment:g}).")]),
    "max_bank": LimitFlag("max-bank", Annotated[float | None, typer.Option(
        help="The bank's cap in seconds (default none).")]),
    "on_failure": LimitFlag("on-failure", Annotated[str | None, typer.Option(
        help="After a final failure: forfeit or autoplay.")]),
    "hints": LimitFlag("legal-hints", Annotated[bool | None, typer.Option(
        "--hints/--no-hints", help="Send the legal actions (default on).")]),
    "memory_mb": LimitFlag("memory-mb", Annotated[int | None, typer.Option(
        help="Memory cap per bot, MiB (sandbox: 1024).")]),
    "max_processes": LimitFlag("max-processes", Annotated[int | None, typer.Option(
        help="Process cap (RLIMIT_NPROC; sandbox: 64).")]),
    "file_size_mb": LimitFlag("file-size-mb", Annotated[int | None, typer.Option(
        help="File size cap per bot, MiB (sandbox: 64).")]),
    "cpu_seconds": LimitFlag("cpu-seconds", Annotated[int | None, typer.Option(
        help=_CPU_HELP)]),
    "no_network": LimitFlag("no-network", Annotated[bool | None, typer.Option(
        "--no-network", help="No network for bot programs.")]),
    "sandbox": LimitFlag("sandbox", Annotated[bool | None, typer.Option(
        "--sandbox", help="Each bot in a bubblewrap sandbox.")]),
    "tmp_mb": LimitFlag("tmp-mb", Annotated[int | None, typer.Option(
        help="A sandboxed bot's /tmp, MiB (default 64).")]),
    "fresh_bots": LimitFlag("fresh-bots", Annotated[bool | None, typer.Option(
        "--fresh-bots", help="A new bot process every game.")]),
}
# `contest init` takes the sandbox as --sandbox/--no-sandbox (on unless said): all but it.
CONTEST_FLAGS: Final = tuple(name for name in LIMIT_FLAGS if name != "sandbox")
# `bot check` starts the program afresh for each check: no --fresh-bots to speak of.
CHECK_CPU: Final = LimitFlag("cpu-seconds", Annotated[int | None, typer.Option(
    "--cpu-seconds", help=_CPU_HELP)])


def with_limit_flags(*names: str, **own: LimitFlag) -> Callable[[Command], Command]:
    """Give a command the limit flags `names` (as `LIMIT_FLAGS` defines them, or as `own`
    does for the ones whose clock means something else there), in the place of its
    parameter `limits`, which receives the keys given (`LimitFlags`)."""
    flags = {name: own.get(name) or LIMIT_FLAGS[name] for name in names}

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        params: list[inspect.Parameter] = []
        for param in signature.parameters.values():
            if param.name == "limits":
                params += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                             default=flag.default, annotation=flag.option)
                           for name, flag in flags.items()]
            else:  # keyword-only: typer passes every value by name, defaults in any order
                params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))

        @functools.wraps(command)
        def run(**values: object) -> None:
            given = {flag.key: values.pop(name) for name, flag in flags.items()}
            command(**values, limits={k: v for k, v in given.items() if v is not None})

        # typer reads the options off the signature and its annotations.
        run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in params}
        return run

    return decorate


def warn_about(limits: LimitSettings) -> None:
    """Say which limits given cannot work here."""
    for text in limits.warnings():
        err.print(f"warning: {text}", markup=False)
    for text in limits.notes():
        err.print(text, markup=False)


def limits_or_fail(flags: LimitFlags) -> LimitSettings:
    """The limit flags as checked values, their policy made (and kept); exit 2 naming the
    flag when one is wrong."""
    try:
        limits = limit_settings(flags)
        limits.policy()
    except SettingsError as exc:
        fail(str(exc))
    problem = limits.sandbox_problem()
    if problem is not None:
        fail(f"--sandbox: {problem}")
    warn_about(limits)
    return limits
