"""Values from outside, parsed once at the edge into typed, frozen values.

Command-line flags, configuration files and replay headers all reach meldref as text or loose
TOML/JSON values. They are checked here, once, by one validation layer (pydantic), and turned
into the values the rest of meldref passes around: a game's rules dataclass, the referee's
`MatchPolicy`, a bot program's process `Limits`. A wrong value is a `SettingsError` whose message
names where it came from the way the user wrote it: `--move-time`, `[limits] move-time`,
`--rules skip-victim`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import types
import typing
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Annotated, Any, Final, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    create_model,
)
from pydantic_core import ErrorDetails

from .engine.game import JSON, RuleOptionError, option_name
from .protocol.referee import MatchPolicy
from .protocol.sandbox import sandbox_problem
from .protocol.seats import Limits

R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)
V = TypeVar("V")
# A limit's value as flags, `[limits]` and the files meldref writes give it.
LimitValue = bool | int | float | str
Where = Callable[[str], str]  # a field's public name -> how the user wrote it

# Bounds that keep every clock a real, finite deadline (a week: `meldref play` gives a person a
# day per decision) and every resource limit a number the kernel takes.
MAX_SECONDS: Final = 7 * 24 * 3600.0
MAX_MEBIBYTES: Final = 1 << 24  # 16 TiB
MAX_PROCESSES: Final = 1 << 22  # the kernel's largest pid_max
MAX_RETRIES: Final = 100


# What a yes/no option takes, as errors say it: spec/RULES.md writes `true` and `false` (so do
# the protocol and the replays); `yes`/`no`, `on`/`off` and `1`/`0` are read as well.
BOOLEAN_WANTED: Final = "true or false (yes or no is read too)"


class SettingsError(ValueError):
    """A value from a flag, a file or a replay header that meldref cannot use (names it)."""


class RuleSettingsError(SettingsError, RuleOptionError):
    """A rule option written wrong: an unknown name, or a value the option does not take."""


# Fields whose flag is not simply --<name>.
FLAG_NAMES: Final = {"legal-hints": "--hints/--no-hints"}


def flag(name: str) -> str:
    """How a field is written on the command line: `move-time` -> `--move-time`."""
    return FLAG_NAMES.get(name, f"--{name}")


def in_table(table: str) -> Where:
    """How a field is written in a TOML table: `move-time` -> `[limits] move-time`."""
    return lambda name: f"[{table}] {name}" if table else name


def validate(model: type[M], data: Mapping[str, object], where: Where) -> M:
    """`model` from `data`; `SettingsError` listing every wrong value as `where` names it."""
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise SettingsError(describe(exc, where, public_names(model))) from None


def public_names(model: type[BaseModel]) -> list[str]:
    """A model's fields as users write them (their aliases)."""
    return sorted(f.alias or name for name, f in model.model_fields.items())


def describe(exc: ValidationError, where: Where, known: Sequence[str] = ()) -> str:
    """One clause per wrong value, as the user wrote it: `--move-time = nan: a finite number`."""
    lines = []
    for error in exc.errors():
        name = ".".join(str(part) for part in error["loc"]) or "value"
        if error["type"] == "extra_forbidden":
            lines.append(f"{where(name)}: unknown; known: {', '.join(known)}")
        else:
            lines.append(f"{where(name)} = {_shown(error.get('input'))}: {wanted(error)}")
    return "; ".join(lines)


def wanted(error: ErrorDetails) -> str:
    """What a value should have been, in a few words."""
    kind, ctx = str(error["type"]), error.get("ctx") or {}
    words = {"int_type": "a whole number", "int_parsing": "a whole number",
             "int_from_float": "a whole number", "float_type": "a number",
             "float_parsing": "a number", "finite_number": "a finite number",
             "bool_type": "true or false", "bool_parsing": "true or false",
             "string_type": "a text", "list_type": "a list", "dict_type": "a table"}
    if kind in words:
        return words[kind]
    if kind == "greater_than":
        return "positive" if ctx.get("gt") == 0 else f"more than {ctx.get('gt')}"
    if kind == "greater_than_equal":
        return f"at least {ctx.get('ge')}"
    if kind == "less_than_equal":
        return f"at most {ctx.get('le'):,}" if isinstance(ctx.get("le"), int) else (
            f"at most {ctx.get('le')}")
    if kind == "value_error" and ctx.get("error") is not None:
        return str(ctx["error"])  # our own validators' words
    if kind == "literal_error":
        return "one of " + str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
    message = str(error["msg"])
    return message[:1].lower() + message[1:]


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


# ----------------------------------------------------------------------------------------------
# The referee's limits: `[limits]` keys and the flags of the same names


# The bank a game starts with when none is given (read off the field, not off a policy made
# for it).
DEFAULT_BANK: Final = next(f.default for f in dataclasses.fields(MatchPolicy)
                           if f.name == "time_bank")
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]
SecondsOrZero = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
Mebibytes = Annotated[int, Field(ge=1, le=MAX_MEBIBYTES)]


class LimitSettings(BaseModel):
    """The referee's clocks and policy and every bot program's resource limits, as given
    (None: not given, the default applies). Two of them merge with `over`."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True,
                              alias_generator=option_name, populate_by_name=True)

    move_time: Seconds | None = None
    first_move_time: Seconds | None = None
    startup_time: Seconds | None = None
    time_bank: SecondsOrZero | None = None
    increment: SecondsOrZero | None = None
    max_bank: SecondsOrZero | None = None
    illegal_retries: Annotated[int, Field(ge=0, le=MAX_RETRIES)] | None = None
    on_failure: Literal["forfeit", "autoplay"] | None = None
    legal_hints: bool | None = None
    memory_mb: Mebibytes | None = None
    max_processes: Annotated[int, Field(ge=1, le=MAX_PROCESSES)] | None = None
    file_size_mb: Mebibytes | None = None
    cpu_seconds: Annotated[int, Field(ge=1, le=int(MAX_SECONDS))] | None = None
    no_network: bool | None = None
    sandbox: bool | None = None
    tmp_mb: Mebibytes | None = None
    fresh_bots: bool | None = None
    # How the user wrote each value given (`--max-bank`, `[limits] max-bank`): values that
    # do not fit together are named as they came, a flag's and a file's alike.
    _written: dict[str, str] = PrivateAttr(default_factory=dict)
    # The referee's policy these limits make: made once, at the first `policy()` (which
    # checks that the values fit together), then kept with them.
    _policy: MatchPolicy | None = PrivateAttr(None)

    def written(self, name: str) -> str:
        """How the value `name` (public) was written; `the default NAME` if it was not."""
        return self._written.get(name, f"the default {name}")

    def given(self) -> dict[str, LimitValue]:
        """The values given, by their public names (`move-time`...), as flags and `[limits]`
        write them."""
        return self.model_dump(by_alias=True, exclude_none=True)

    def to_json(self) -> dict[str, LimitValue]:
        """The values given, as the files meldref writes spell them: as the user wrote them
        (`move-time`: `tournament.json`, a contest's settings). Only a replay's `policy`
        says `move_time` (spec/REPLAY.md fixes it; it is the referee's `MatchPolicy`, not
        these). Files that said `move_time` still read: `limit_settings` takes either."""
        return self.given()

    def over(self, base: LimitSettings) -> LimitSettings:
        """These values where given, `base`'s elsewhere (flags over a file): merged value by
        value, each already checked where it came from."""
        values = {name: getattr(base, name) if getattr(self, name) is None
                  else getattr(self, name) for name in type(self).model_fields}
        merged = LimitSettings.model_construct(**values)
        merged._written = {**base._written, **self._written}
        return merged

    def policy(self) -> MatchPolicy:
        """The referee's `MatchPolicy` (defaults where not given), made at the first call and
        kept; `SettingsError` for values that do not fit together (a time bank over its
        cap)."""
        if self._policy is None:
            self._policy = self._made_policy()
        return self._policy

    def _made_policy(self) -> MatchPolicy:
        names = {f.name for f in dataclasses.fields(MatchPolicy)}
        values = {k: v for k, v in self.model_dump().items() if k in names and v is not None}
        bank = values.get("time_bank", DEFAULT_BANK)
        if self.max_bank is not None and self.max_bank < bank:
            raise SettingsError(f"{self.written('max-bank')} ({self.max_bank:g}) is below "
                                f"{self.written('time-bank')} ({bank:g})")
        try:
            return MatchPolicy(**values)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None

    def process_limits(self) -> Limits:
        """The resource limits of every bot program (none where not given), and whether each
        game starts its own processes (`fresh-bots`)."""
        return Limits(memory_mb=self.memory_mb, max_processes=self.max_processes,
                      file_size_mb=self.file_size_mb, cpu_seconds=self.cpu_seconds,
                      no_network=bool(self.no_network), sandbox=bool(self.sandbox),
                      tmp_mb=self.tmp_mb, fresh_bots=bool(self.fresh_bots))

    def warnings(self) -> list[str]:
        """Limits given that cannot work here, in words (the run goes on without them)."""
        out = []
        # In the sandbox every bot has a uid of its own: the cap counts its processes alone.
        if self.max_processes is not None and os.geteuid() == 0 and not self.sandbox:
            out.append("max-processes has no effect on bots running as root: the kernel does "
                       "not count root's processes (run the bots as another user: "
                       "docs/untrusted-bots.md)")
        return out


    def sandbox_problem(self) -> str | None:
        """Why the sandbox asked for cannot be built here (None: not asked, or it can)."""
        return sandbox_problem() if self.sandbox else None

    def notes(self) -> list[str]:
        """How the limits given apply here, in words (the sandbox's cgroups or rlimits, and
        the caps every bot gets)."""
        limits = self.process_limits()
        plan = limits.sandbox_plan()
        if plan is None:
            return []
        caps = ", ".join(f"{name} {value}" for name, value in limits.caps().items())
        return [f"{plan.describe()}; per bot: {caps}"]


def limit_settings(values: Mapping[str, object], where: Where = flag) -> LimitSettings:
    """`LimitSettings` from `[limits]` keys or flags (None values: not given)."""
    given = {k: v for k, v in values.items() if v is not None}
    settings = validate(LimitSettings, given, where)
    settings._written = {name: where(name) for name in settings.given()}
    return settings


# ----------------------------------------------------------------------------------------------
# Rule options: `--rules KEY=VALUE` and `[rules]` tables, into a game's rules dataclass


def parse_rules(rules_type: type[R], options: Mapping[str, object], where: str = "--rules") -> R:
    """`rules_type` (a game's frozen rules dataclass) from option texts or TOML values by their
    public names (`skip-victim`; `skip_victim` and any case are accepted too); `SettingsError`
    naming the option and what it takes."""
    model = _rules_model(typing.cast(Hashable, rules_type))
    data = {str(k).strip().lower().replace("_", "-"): v for k, v in options.items()}
    fields = public_names(model)
    for key in data:
        if key not in fields:
            raise RuleSettingsError(f"{where}: unknown rule option {key!r}; options: "
                                f"{', '.join(fields)}")
    try:
        checked = model.model_validate(data)
    except ValidationError as exc:
        raise RuleSettingsError(_rule_errors(exc, where)) from None
    try:
        return rules_type(**checked.model_dump())
    except RuleOptionError as exc:  # ranges and combinations: the game's own checks
        raise RuleSettingsError(f"{where}: {exc}") from None


@functools.cache
def _rules_model(key: Hashable) -> type[BaseModel]:
    rules_type = typing.cast(type, key)
    hints = typing.get_type_hints(rules_type)
    # Any: unpacked into create_model, whose other keywords (__config__...) take other types.
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(rules_type):
        hint = hints[f.name]
        if f.default is dataclasses.MISSING:
            raise TypeError(f"rule option {f.name} of {rules_type.__name__} has no default")
        default = f.default
        read = BeforeValidator(_option_reader(hint))
        fields[f.name] = (Annotated[hint, read], Field(default=default,
                                                         alias=option_name(f.name)))
    config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    return create_model(f"{rules_type.__name__}Options", __config__=config, **fields)


def _option_reader(hint: object) -> Callable[[object], object]:
    """How an option's text reads before its type is checked: case does not matter for
    choices, and "none" or "off" is no value where the option takes none."""
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType) and type(
        None) in typing.get_args(hint)

    def read(value: object) -> object:
        if not isinstance(value, str):
            return value
        text = value.strip()
        if optional and text.lower() in ("none", "off", ""):
            return None
        return text.lower() if not text.lstrip("-").isdigit() else text

    return read


def _rule_errors(exc: ValidationError, where: str) -> str:
    lines = []
    for error in exc.errors():
        key = str(error["loc"][0])
        # The documented spelling is the replay's (true/false); yes/no are read too.
        phrase = wanted(error).replace("true or false", BOOLEAN_WANTED)
        lines.append(f"{where}: rule option {key}={_shown(error.get('input'))}: {phrase}")
    return "; ".join(lines)


# ----------------------------------------------------------------------------------------------
# The keys of the files meldref writes: spelt as the user writes them (`bot-folder`)


def as_written(data: Mapping[str, V]) -> dict[str, V]:
    """`data` with its keys spelt as a configuration writes them (`bot_folder` ->
    `bot-folder`), its values untouched, so that a file meldref writes spells a key one way,
    the user's."""
    return {option_name(k): v for k, v in data.items()}


def read_key(data: Mapping[str, JSON], name: str, default: JSON = None) -> JSON:
    """The value of the key `name` (`drawn-from`) of a file meldref wrote, or of its older
    spelling (`drawn_from`) in a file an older meldref wrote; `default` where there is
    neither."""
    return data[name] if name in data else data.get(name.replace("-", "_"), default)
