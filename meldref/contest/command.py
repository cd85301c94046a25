"""A submission's command: how it starts in its own folder, and what it may name.

Every version runs in its own folder (`bots/<name>/v<n>`). In the sandbox it sees that folder,
the system's folders and its interpreter's installation read-only, and nothing else of the
host; but the sandbox shows the folder of whatever program a command names, along its chain
of links (`protocol.sandbox.mounts`), so a command that named another submission's program
(`../../cbot/v1/meldbot`) ran it under its own author's name. So `submit` holds a command,
and the copy it runs from, to these rules (`Confinement.check`), before anything runs:

- the program is a file of the submission (`./bot`, `bin/run`), a bare name found on PATH
  (`python3`, `node`, `java`, `sh`), or an absolute path into the system's folders
  (`/usr/bin/python3`); never an option (`--chdir=DIR ...` would be env's, `runnable`);
- no word names a file outside the submission: no `..` step anywhere (`../x`, `-C../x`,
  `--chdir=../x`, `sh -c 'cd ..; ...'`), no absolute path into the contest's folder (its
  database, another submission), none to a file elsewhere but in the system's folders;
- every link in the copy stays inside it (relative, never through `..` above its folder), or
  leads into the system's folders: a link is copied as a link, and followed where it runs;
- and, checked on the very command the ladder starts, every folder the sandbox would show
  that lies in the contest's folder is the submission's own.

Words a program reads as code (`python3 -c ...`) are not parsed: in the sandbox such a
program still sees nothing outside its folder. Without the sandbox (`init --no-sandbox`) a
program may open any file it can read once it runs; the rules then keep only the command and
the copy honest.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ..protocol.sandbox import SYSTEM, mounts
from .settings import ContestError

RULE: Final = ("a command may start only a file of its own submission (./bot), a program "
               "found on PATH (python3, node, java, sh) or one in the system's folders "
               "(/usr, /bin, ...), and may name no file outside its submission; a link in "
               "the submission must stay inside it")
CHECK_LOGS: Final = ".check-logs"  # where the check writes the program's stderr
# Where a path may hide in a word: `--chdir=DIR`, `-cp a:b`, `sh -c 'cd DIR; ...'`.
SEPARATORS: Final = re.compile(r"[\s=:,;'\"()&|<>`$]+")
# A `..` step: at the start, after a slash, or after an option's letters (`-C../x`).
UP: Final = re.compile(r"(?:^|/|^-+[A-Za-z0-9]*)\.\.(?:/|$)")
# An absolute path, alone or after a short option's letter (`-C/x`, `-iC/x`).
ABSOLUTE: Final = re.compile(r"^(?:-+[A-Za-z0-9]*)?(/.*)$")


def runnable(command: str, folder: Path) -> str:
    """The command line that starts `command` in `folder` (absolute) with no shell, its
    program found on this PATH now (`python3` as the organiser's shell finds it: a sandbox's
    own PATH would find the system's, without the packages the bot may need)."""
    program, *rest = shlex.split(command)
    if "/" not in program:
        program = shutil.which(program) or program
    return shlex.join(["env", "-C", str(folder.resolve()), program, *rest])


def within(path: Path, folder: Path) -> bool:
    """Whether `path` lies in `folder` (or is it), every link followed."""
    return _under(os.path.realpath(path), os.path.realpath(folder))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class Confinement:
    """The folders a submission's command and links may lead into: its own copy (`root`),
    and the system's; never the rest of the contest's folder (`contest`). Paths are real
    (every link followed)."""

    root: str
    contest: str
    system: tuple[str, ...]

    @staticmethod
    def of(copy: Path, contest: Path) -> Confinement:
        system = tuple(sorted({os.path.realpath(p) for p in SYSTEM if os.path.exists(p)}))
        return Confinement(os.path.realpath(copy), os.path.realpath(contest), system)

    def check(self, command: str) -> None:
        """`ContestError` naming the first thing of the copy or of `command` that leads out
        of the submission, and the rule; None when all stays inside."""
        why = self.reserved() or self.links() or self.program(command) or self.words(
            command) or self.shown(command)
        if why is not None:
            raise ContestError(f"{why}: {RULE}")

    def check_build(self, build: str) -> None:
        """`ContestError` for a build command (a shell line, `build.run_build`) whose program
        or words lead out of the submission, as a command's would."""
        try:
            words = shlex.split(build)
        except ValueError as exc:
            raise ContestError(f"--build: {exc}") from None
        if not words:
            raise ContestError("--build: an empty command")
        why = self.program(build) or self.words(build)
        if why is not None:
            raise ContestError(f"{why.replace('--cmd', '--build')}: {RULE}")

    def place(self, path: str) -> str:
        """Where `path` leads: "own", "contest", "system" or "elsewhere"."""
        real = os.path.realpath(path)
        if _under(real, self.root):
            return "own"
        if _under(real, self.contest):
            return "contest"
        return "system" if any(_under(real, s) for s in self.system) else "elsewhere"

    def reserved(self) -> str | None:
        if os.path.lexists(os.path.join(self.root, CHECK_LOGS)):
            return f"the submission holds {CHECK_LOGS}, where its check writes its stderr"
        return None

    def links(self) -> str | None:
        """The first link of the copy that leads out of it, in words."""
        for path in sorted(Path(self.root).rglob("*")):  # rglob enters no linked folder
            if not path.is_symlink():
                continue
            target = os.readlink(path)
            inner = os.path.relpath(path, self.root)
            lexical = os.path.normpath(os.path.join(os.path.dirname(inner), target))
            place = self.place(str(path))
            if os.path.isabs(target):
                ok = place == "system"
            else:  # relative: inside wherever the folder lies, now and once it has moved
                ok = UP.search(lexical) is None and place in ("own", "system")
            if not ok:
                return f"the link {inner} -> {target} leads outside the submission"
        return None

    def program(self, command: str) -> str | None:
        """Why the command's program may not run, in words; None if it may."""
        program = shlex.split(command)[0]
        if program.startswith("-"):
            return f"--cmd begins with an option ({program}), not a program"
        if "/" not in program:
            found = shutil.which(program)
            if found is None:
                return (f"--cmd: {program} is not found on PATH (a program of the submission "
                        f"is named by its path: ./{program})")
            if self.place(found) == "contest":
                return f"--cmd: {program} is found on PATH in the contest's folder ({found})"
            return None
        inside = os.path.join(self.root, program)  # a relative path is read from the copy
        place = self.place(inside)
        allowed = ("system",) if os.path.isabs(program) else ("own", "system")
        if UP.search(program) is not None or place not in allowed:
            return f"--cmd: the program {program} lies outside the submission"
        return None

    def words(self, command: str) -> str | None:
        """The first word after the program that names a file outside the submission."""
        for word in shlex.split(command)[1:]:
            for piece in SEPARATORS.split(word):
                if UP.search(piece) is not None:
                    return f"--cmd: {word} names a file outside the submission ('..')"
                found = ABSOLUTE.match(piece)
                if found is None:
                    continue
                path = found[1]
                place = self.place(path)
                if place == "contest":
                    return f"--cmd: {word} names {path}, in the contest's folder"
                if place == "elsewhere" and os.path.lexists(path):
                    return f"--cmd: {word} names {path}, outside the submission"
        return None

    def shown(self, command: str) -> str | None:
        """A folder of the contest's other than the submission's own that the sandbox would
        show the command as the ladder starts it (the rules above close every way to one;
        this reads the sandbox's own list, so a change there cannot open one)."""
        argv = shlex.split(runnable(command, Path(self.root)))
        options = mounts(argv, os.getcwd())
        for k, option in enumerate(options[:-1]):
            if option == "--ro-bind" and self.place(options[k + 1]) == "contest":
                return f"--cmd: the sandbox would show it {options[k + 1]}"
        return None
