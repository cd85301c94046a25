"""`contest submit`: a bot program copied into the contest, checked, and given a version.

The program (a folder, or a single file) is copied first, so the check and every later game
run the copy: an author's later edits of the original change nothing. The copy is checked the
way `bot check` checks a program (`tools.botcheck.check_bot`: handshake, ping, flushing,
quit, two full games), under the contest's rules, limits and table size. A submission that
fails is refused with the check's report, and its copy removed: nothing is added. One that
passes becomes `bots/<name>/v<n>` with its row, in one transaction (`store.join`).

Every program runs in its own folder: the command is started through `env -C <folder>`, so a
bot that reads a file next to itself finds it, whatever folder the referee runs in. What the
command and the copy may name is held to the submission itself (`command.Confinement`), and
the copy takes nothing through a link: a link is copied as a link and judged there, a file
is read through a descriptor that follows none.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import shutil
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..private import private_dir
from ..protocol.seats import BotSpec
from ..tools.botcheck import Report, check_bot
from .build import BuildFailed, BuildLimits, regular, run_build
from .command import CHECK_LOGS, Confinement, runnable, within
from .settings import ContestError
from .store import STAGING, Build, ContestStore, NameTaken, Version

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
    folder; default for a single file: by its suffix, `python3 bot.py`, else `./bot`); its
    build step (`build.run_build`, a shell line run once in its folder), if any."""

    source: Path
    name: str
    command: str
    build: str | None = None

    @staticmethod
    def of(source: Path, name: str, command: str | None,
           build: str | None = None) -> Submission:
        if not NAME.fullmatch(name):
            raise ContestError(f"--name {name!r}: 1 to 40 letters, digits, '_', '.' or '-', "
                               "starting with a letter or digit")
        if source.is_symlink():  # its author may have made it: name what it leads to
            raise ContestError(f"{source} is a link: submit the file or folder itself "
                               f"({source.resolve()}), so that nothing of another is copied in")
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
        if build is not None and not build.strip():
            raise ContestError("--build: an empty command (leave it out for no build step)")
        return Submission(source, name, command, build)


def submit(store: ContestStore, sub: Submission,
           author: int | None = None) -> tuple[Version, Report]:
    """Copy, build (if it has a build step), check, and add `sub` as its bot's next version
    (an `author`'s: the name must be free or theirs, `NameTaken`); `ContestError` if its
    command or copy leads out of it or its build fails (`build.BuildFailed`),
    `SubmissionRefused` with the check's report if the check fails (the copy removed,
    nothing added)."""
    if within(sub.source, store.folder) or within(store.folder, sub.source):
        raise ContestError(f"{sub.source} and the contest's folder overlap: a submission "
                           "comes from outside the contest, and holds none of it")
    if author is not None:  # before anything runs; `join` asks again as it takes the name
        taken = store.name_holder(sub.name, author)
        if taken is not None:
            raise NameTaken(f"{sub.name}: refused, {taken}; nothing was added")
    staging = private_dir(store.folder / "bots" / STAGING) / uuid.uuid4().hex
    try:
        try:  # before anything runs: the check runs the program too
            _copy(sub.source, staging)
            confinement = Confinement.of(staging, store.folder)
            confinement.check(sub.command)
            if sub.build is not None:
                confinement.check_build(sub.build)
            build = _build(store, sub, staging, confinement)
        except BuildFailed as exc:
            raise BuildFailed(f"{sub.name}: refused, {exc}; nothing was added", exc.log) from None
        except ContestError as exc:
            raise ContestError(f"{sub.name}: refused, {exc}; nothing was added") from None
        report = check(store, sub.command, staging)
        if not report.passed:
            raise SubmissionRefused(_refusal(sub.name, report, staging), report)
        shutil.rmtree(staging / CHECK_LOGS, ignore_errors=True)
        return store.join(sub.name, sub.command, staging, author, build), report
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already once it joined


def _build(store: ContestStore, sub: Submission, staging: Path,
           confinement: Confinement) -> Build | None:
    """The submission's build run in its copy, and the copy judged again after it (what
    the build made must keep to the rules a submission keeps to); None without a build."""
    if sub.build is None:
        return None
    settings, service = store.settings, store.service
    caps = settings.process_limits()
    built = run_build(sub.build, staging, BuildLimits.of(service, caps.file_size_mb,
                                                         caps.tmp_mb), settings.sandbox)
    regular(staging, service.expanded_mb << 20)
    confinement.check(sub.command)
    return built


def _refusal(name: str, report: Report, staging: Path) -> str:
    failed = [c for c in report.checks if c.status == "fail"]
    why = f"{failed[0].name}: {failed[0].detail}" if failed else "the check failed"
    return f"{name}: refused, the check failed ({why}){_tail(staging)}; nothing was added"


def check(store: ContestStore, command: str, folder: Path) -> Report:
    """`bot check` of the program in `folder`, under the contest's settings."""
    settings = store.settings
    return check_bot(runnable(command, folder), [settings.game], policy=settings.policy(),
                     log_dir=folder / CHECK_LOGS, limits=settings.process_limits(),
                     rules=settings.parsed_rules(), seat_counts=[settings.players])


def _tail(staging: Path) -> str:
    """The end of the check's stderr logs (they go with the refused copy)."""
    lines = []
    for log in sorted((staging / CHECK_LOGS).glob("*.stderr")):
        text = log.read_bytes()[-300:].decode("utf-8", "replace").strip()
        if text:
            lines.append(f"{log.stem}: {' / '.join(text.splitlines()[-2:])}")
    return f"; its stderr ends: {'; '.join(lines)}" if lines else ""


def _copy(source: Path, target: Path) -> None:
    """The program's copy (a folder whole, links kept as links; a file alone), readable by
    others inside: a sandboxed bot runs as a user of its own, and its folder is the only part
    of the contest its sandbox shows it. No one else reaches it: the contest's own folder is
    owner-only (`store`), and a sandbox shows no other bot's folder."""
    try:
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True, copy_function=_copy_file)
        else:
            private_dir(target)
            _copy_file(str(source), str(target / source.name))
    except OSError as exc:
        raise ContestError(f"{source}: cannot copy it ({exc})") from None
    for path in [target, *target.rglob("*")]:
        if path.is_symlink():
            continue
        executable = path.is_dir() or path.stat().st_mode & 0o100
        path.chmod(0o755 if executable else 0o644)


def _copy_file(source: str, target: str) -> None:
    """One file of the program, read through a descriptor that follows no link: a file made a
    link while the folder is copied is copied as that link (and judged as one), never as
    what it leads to; anything but a regular file (a FIFO, a device) is refused."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        os.symlink(os.readlink(source), target)
        return
    with open(fd, "rb") as src:  # owns the descriptor: closed once, here
        mode = os.fstat(src.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise ContestError(f"{source}: not a file, a folder or a link")
        with open(target, "xb") as dst:
            shutil.copyfileobj(src, dst)
        os.chmod(target, stat.S_IMODE(mode))
