"""What a contest fixes at `init`: the game, its seats and rules, the limits every bot plays
under, the sandbox, the thresholds of placement and suspension, matchmaking's minimum share
and pair cap (`matchmaking.Share`), and the secret seed.

They are fixed because the ladder's ratings compare games: a game played under other rules or
other clocks would not be the same contest. `init` on a folder that holds a contest with other
settings is refused, naming the first setting that differs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from ..engine.game import JSON, GameInfo, Rules, find_game, option_name, rules_to_json
from ..protocol.referee import MatchPolicy
from ..protocol.seats import Limits
from ..settings import LimitSettings, as_written, limit_settings, parse_rules, read_key
from .matchmaking import MIN_SHARE, PAIR_CAP

PLACEMENT_DEAL_SETS: Final = 6  # a new version's first deal sets, spread over the ranking
SUSPEND_AFTER: Final = 3  # failing games among a version's last RECENT_GAMES: suspended
RECENT_GAMES: Final = 10


class ContestError(ValueError):
    """Something a contest command cannot do, in the words the organiser should read."""


@dataclass(frozen=True, slots=True)
class InForce:
    """A contest's rules and limits as the games take them: parsed once (`ContestSettings.
    in_force`)."""

    rules: Rules
    limits: LimitSettings
    policy: MatchPolicy
    process: Limits


@dataclass(frozen=True, slots=True)
class ContestSettings:
    """A contest's settings, as `init` fixed them (rules by their public names, limits as
    the files meldref writes spell them: `move_time`, `LimitSettings.to_json`)."""

    game: str
    players: int
    rules: Mapping[str, JSON] = field(default_factory=dict)
    limits: Mapping[str, JSON] = field(default_factory=dict)
    sandbox: bool = True  # off only with an explicit `init --no-sandbox`
    placement: int = PLACEMENT_DEAL_SETS
    suspend_after: int = SUSPEND_AFTER
    seed: int = 0  # of every deal: kept in the owner-only database, never on a command line
    min_share: float = MIN_SHARE  # of a version's fair share of the recent deal sets, at least
    pair_cap: float = PAIR_CAP  # of the recent deal sets, at most, for one pair
    # The rules and limits as values, made at their first use (`in_force`), then kept.
    _in_force: InForce | None = field(default=None, init=False, repr=False, compare=False)

    @staticmethod
    def checked(game: str, players: int | None, rules: Mapping[str, JSON],
                limits: Mapping[str, JSON], sandbox: bool, placement: int, suspend_after: int,
                seed: int, min_share: float = MIN_SHARE,
                pair_cap: float = PAIR_CAP) -> ContestSettings:
        """Settings from `init`'s flags, every value checked now (`ContestError`, or the
        `SettingsError` of a wrong rule or limit)."""
        info = find_game(game)
        seats = players or info.default_players
        if seats < 2:
            raise ContestError(f"--players {seats}: a ladder compares bots, at least 2 seats")
        parsed = parse_rules(info.rules_type, rules)
        info.check_setup(parsed, seats)
        given = limit_settings(limits).to_json()
        if placement < 1 or suspend_after < 1:
            raise ContestError("--placement and --suspend-after: at least 1")
        if not 0 <= min_share <= 1:
            raise ContestError(f"--min-share {min_share}: a share of the fair one, 0 to 1")
        if not 0 < pair_cap <= 1:
            raise ContestError(f"--pair-cap {pair_cap}: a share of the recent deal sets, "
                               "above 0 and at most 1")
        out = ContestSettings(info.name, seats, rules_to_json(parsed), given, sandbox,
                              placement, suspend_after, seed, min_share, pair_cap)
        out.limit_settings().policy()  # values that do not fit together fail now
        return out

    @property
    def info(self) -> GameInfo:
        return find_game(self.game)

    def in_force(self) -> InForce:
        """The rules and limits as values, parsed at the first call and kept: a run gives
        every game the same ones, where each of its jobs parsed them again (issue 45)."""
        if self._in_force is None:
            # The limits every ladder and final game is played under, and every submission
            # checked under, with the contest's sandbox setting: this is where the limits
            # are built, the one place the sandbox reaches them.
            limits = limit_settings({**self.limits, "sandbox": self.sandbox})
            made = InForce(parse_rules(self.info.rules_type, self.rules), limits,
                           limits.policy(), limits.process_limits())
            object.__setattr__(self, "_in_force", made)  # a cache: frozen for the rest
            return made
        return self._in_force

    def parsed_rules(self) -> Rules:
        return self.in_force().rules

    def limit_settings(self) -> LimitSettings:
        """The limits every game is played under (`in_force`)."""
        return self.in_force().limits

    def policy(self) -> MatchPolicy:
        return self.in_force().policy

    def process_limits(self) -> Limits:
        """Every bot program's process limits (the sandbox among them, see above)."""
        return self.in_force().process

    def summary(self) -> str:
        """The settings in a line: the rules that differ from the defaults, the sandbox, the
        thresholds (the limits: `limits_in_force`)."""
        defaults = rules_to_json(self.info.rules())
        rules = {k: v for k, v in self.rules.items() if defaults.get(k) != v}
        return (f"{self.game}, {self.players} seats, rules {_shown(rules)}, sandbox "
                f"{'on' if self.sandbox else 'off'}, placement {self.placement} deal sets, "
                f"suspended after {self.suspend_after} failing games, min-share "
                f"{self.min_share:g} of a fair share, pair-cap {self.pair_cap:g} of the "
                f"recent deal sets")

    def limits_in_force(self) -> dict[str, JSON]:
        """Every limit each bot plays under, by its `[limits]` key (`move-time`, `memory-mb`):
        the value given at init, else its default (a sandboxed bot's caps among them); None
        where there is no cap. Read off the policy and process limits the games are played
        under, so they cannot say other than the games do."""
        settings = self.limit_settings()
        values = {**dataclasses.asdict(settings.process_limits()),
                  **dataclasses.asdict(settings.policy())}
        values["no_network"] = values["no_network"] or values["sandbox"]  # the sandbox's own
        return {option_name(name): values[name] for name in LimitSettings.model_fields
                if name != "sandbox"}

    def to_json(self) -> dict[str, JSON]:
        """The settings as the store keeps them, every key spelt as `init`'s flags are
        (`suspend-after`, as a configuration file writes it)."""
        return as_written({"game": self.game, "players": self.players,
                           "rules": dict(self.rules), "limits": dict(self.limits),
                           "sandbox": self.sandbox, "placement": self.placement,
                           "suspend_after": self.suspend_after, "seed": self.seed,
                           "min_share": self.min_share, "pair_cap": self.pair_cap})

    @staticmethod
    def from_json(data: Mapping[str, JSON]) -> ContestSettings:
        # A contest made before the limits were spelt as in the replays has `move-time`.
        limits = limit_settings(data["limits"]).to_json()
        return ContestSettings(str(data["game"]), int(data["players"]), dict(data["rules"]),
                               limits, bool(data["sandbox"]),
                               int(data["placement"]), int(read_key(data, "suspend-after")),
                               int(data["seed"]),
                               # A contest made before issue 44 plays under the defaults; one
                               # made before one spelling has `min_share` (read_key reads both).
                               float(read_key(data, "min-share", MIN_SHARE)),
                               float(read_key(data, "pair-cap", PAIR_CAP)))

    def differs(self, other: ContestSettings) -> str | None:
        """The first setting (as `init` names it) in which `other` differs, with both
        values; None if they agree (the seed is drawn, never compared)."""
        mine, theirs = self.to_json(), other.to_json()
        mine["limits"], theirs["limits"] = _as_flags(self.limits), _as_flags(other.limits)
        for key in ("game", "players", "rules", "limits", "sandbox", "placement",
                    "suspend-after", "min-share", "pair-cap"):
            if mine[key] != theirs[key]:
                return f"{key} is {_shown(mine[key])}, not {_shown(theirs[key])}"
        return None


def _as_flags(limits: Mapping[str, JSON]) -> dict[str, JSON]:
    """Limits by the names `init` takes them under (`move-time`), for messages."""
    return {option_name(k): v for k, v in limits.items()}


def _shown(value: JSON) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}={v}" for k, v in sorted(value.items())) + "}"
    return str(value)
