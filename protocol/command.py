"""How a bot program is named and started: its command (`BotCommand`, split like a shell
would, never run by one), whether its program is there, and why a start or an exit went wrong,
in words that name the program."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class BotCommand:
    """How to start a bot: argv (no shell), working directory, extra environment."""

    argv: tuple[str, ...]
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    @staticmethod
    def parse(
        text: str, cwd: str | None = None, env: Mapping[str, str] | None = None
    ) -> BotCommand:
        """A command line split like a POSIX shell would (`shlex`), without running a shell."""
        argv = tuple(shlex.split(text))
        if not argv:
            raise ValueError("empty bot command")
        return BotCommand(argv, cwd, dict(env or {}))

    def __str__(self) -> str:
        return shlex.join(self.argv)


def why_not_started(command: BotCommand, exc: OSError) -> str:
    """The reason a command could not be started, in words that name the program."""
    program = command.argv[0]
    if isinstance(exc, FileNotFoundError):
        if command.cwd and not os.path.isdir(command.cwd):
            return f"the working directory {command.cwd} does not exist"
        if "/" in program:
            where = f" (from {command.cwd})" if command.cwd else ""
            return f"{program} does not exist{where}"
        return f"{program!r} is not on PATH"
    if isinstance(exc, PermissionError):
        if "/" in program and os.path.isdir(os.path.join(command.cwd or ".", program)):
            return f"{program} is a directory, not a program"
        return f"{program} is not executable (chmod +x {program}?)"
    return f"{program}: {exc.strerror or exc}"


def describe_exit(code: int) -> str:
    """`Popen.returncode` in words: "exited with code 3" or "killed by signal SIGSEGV"."""
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = str(-code)
    return f"killed by signal {name}"


def program_found(command: BotCommand) -> bool:
    """Whether the command's program exists as an executable (through PATH, or from its
    working directory when it names a path)."""
    program = command.argv[0]
    if "/" in program:
        path = os.path.join(command.cwd or ".", program)
        return os.path.isfile(path) and os.access(path, os.X_OK)
    return shutil.which(program) is not None
