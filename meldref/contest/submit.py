"""`contest submit`: a bot program copied into the contest, checked, and given a version.

The program (a folder, or a single file) is copied first, so the check and every later game
run the copy: an author's later edits of the original change nothing. The copy is checked the
way `bot check` checks a program (`tools.botcheck.check_bot`: handshake, ping, flushing,
quit, two full games), under the contest's rules, limits and table size. A submission that
fails is refused with the check's report, and its copy removed: nothing is added. One that
passes becomes `bots/<name>/v<n>` with its row, in one transaction (`store.join`).

Every program runs in its own folder: the command is started through `env -C <folder>`, so a
bot that reads a file next to itself finds it, whatever folder the referee runs in.
"""

from __future__ import annotations

import re
import shlex
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..private import private_dir
from ..protocol.seats import BotSpec
from ..tools.botcheck import Report, check_bot
from .settings import ContestError
from .store import STAGING, ContestStore, Version

NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
RUNNERS: Final = {".py": "python3", ".js": "node", ".rb": "ruby", ".sh": "sh"}


class SubmissionRefused(ContestError):
    """A submission whose check failed: the report says why; nothing was added."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True, slots=True)
class Submission:
    """A program to submit: its source (folder or file), name, and command (run in its
    folder; default for a single file: by its suffix, `python3 bot.py`, else `./bot`)."""

    source: Path
    name: str
    command: str

    @staticmethod
    def of(source: Path, name: str, command: str | None) -> Submission:
        if not NAME.fullmatch(name):
            raise ContestError(f"--name {name!r}: 1 to 40 letters, digits, '_', '.' or '-', "
                               "starting with a letter or digit")
        if not source.exists():
            raise ContestError(f"{source}: no such file or folder")
        if command is None:
            if source.is_dir():
                raise ContestError(f"{source} is a folder: say how to start it, --cmd "
                                   "\"python3 main.py\" (run in the folder)")
            runner = RUNNERS.get(source.suffix)
            command = shlex.join([runner, source.name] if runner else [f"./{source.name}"])
        try:
            spec = BotSpec.parse(command)
        except ValueError as exc:
            raise ContestError(f"--cmd: {exc}") from None
        if spec.builtin is not None:
            raise ContestError("--cmd: a contest plays bot programs, not built-in bots")
        return Submission(source, name, command)


def runnable(command: str, folder: Path) -> str:
    """The command line that starts `command` in `folder` (absolute) with no shell, its
    program found on this PATH now (`python3` as the organiser's shell finds it: a sandbox's
    own PATH would find the system's, without the packages the bot may need)."""
    program, *rest = shlex.split(command)
    if "/" not in program:
        program = shutil.which(program) or program
    return shlex.join(["env", "-C", str(folder.resolve()), program, *rest])


def submit(store: ContestStore, sub: Submission) -> tuple[Version, Report]:
    """Copy, check, and add `sub` as its bot's next version; `SubmissionRefused` with the
    check's report if it fails (the copy removed, nothing added)."""
    staging = private_dir(store.folder / "bots" / STAGING) / uuid.uuid4().hex
    try:
        _copy(sub.source, staging)
        report = check(store, sub.command, staging)
        if not report.passed:
            failed = [c for c in report.checks if c.status == "fail"]
            first = failed[0] if failed else None
            why = f"{first.name}: {first.detail}" if first else "the check failed"
            raise SubmissionRefused(f"{sub.name}: refused, the check failed ({why}){_tail(staging)}"
                                    "; nothing was added", report)
        shutil.rmtree(staging / ".check-logs", ignore_errors=True)
        return store.join(sub.name, sub.command, staging), report
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already once it joined


def check(store: ContestStore, command: str, folder: Path) -> Report:
    """`bot check` of the program in `folder`, under the contest's settings."""
    settings = store.settings
    policy = settings.policy()
    return check_bot(runnable(command, folder), [settings.game], policy.startup_time,
                     policy.move_time, folder / ".check-logs", None, policy.first_move_time,
                     settings.process_limits(), policy.time_bank, rules=settings.parsed_rules(),
                     seat_counts=[settings.players])


def _tail(staging: Path) -> str:
    """The end of the check's stderr logs (they go with the refused copy)."""
    lines = []
    for log in sorted((staging / ".check-logs").glob("*.stderr")):
        text = log.read_bytes()[-300:].decode("utf-8", "replace").strip()
        if text:
            lines.append(f"{log.stem}: {' / '.join(text.splitlines()[-2:])}")
    return f"; its stderr ends: {'; '.join(lines)}" if lines else ""


def _copy(source: Path, target: Path) -> None:
    """The program's copy (a folder whole, links kept as links; a file alone), readable by
    others inside: a sandboxed bot runs as a user of its own, and its folder is the only part
    of the contest its sandbox shows it. No one else reaches it: the contest's own folder is
    owner-only (`store`), and a sandbox shows no other bot's folder."""
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True)
    else:
        private_dir(target)
        shutil.copy2(source, target / source.name)
    for path in [target, *target.rglob("*")]:
        if path.is_symlink():
            continue
        executable = path.is_dir() or path.stat().st_mode & 0o100
        path.chmod(0o755 if executable else 0o644)
