"""The sandbox (`--sandbox`): every bot program in a bubblewrap container of its own.

A sandboxed bot gets new user, PID, IPC, UTS, network and mount namespaces (`bwrap`, Debian's
`bubblewrap`); a kernel uid of its own, never one of another bot's (claimed from `UID_BASE`
with a lock held while it runs); an environment built from scratch (`ENVIRONMENT`, and what
the match names); the system's read-only directories (`SYSTEM`), the folder of its own file
and the installation of its program (even under a home folder: pyenv, a venv) read-only, a
private writable /tmp of `TMP_MB` MiB, nothing else of the host; its own /proc; no
capabilities, no new privileges, no further user namespaces (the container's own namespace
allows none: `user.max_user_namespaces` 0 in it). Memory, process count and CPU go
through a cgroup of its own where the machine offers one (v2, else v1), else through rlimits
(`plan` says which). When the referee dies the kernel kills the whole container: bwrap dies
with its parent, its init with it, and with the init every process of the PID namespace.

The referee runs bwrap as root; bwrap blocks once it made the user namespace, the referee
writes the namespace's uid map (the bot's uid inside to its uid outside; root to root, for
bwrap's own set-up only), puts the container's init in the bot's cgroup and sets its rlimits,
then lets it go on. Inside, `setpriv` drops to the bot's uid and every capability before the
program runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import pwd
import resource
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from .descriptors import Descriptor

BWRAP: Final = shutil.which("bwrap")
NSENTER: Final = shutil.which("nsenter")  # util-linux, as setpriv
SETPRIV_INSIDE: Final = "/usr/bin/setpriv"
BASH_INSIDE: Final = "/bin/bash"
# The bot's kernel uids: one per running bot, far above any user's or systemd's ranges.
UID_BASE: Final = 1_900_000_000
UID_SLOTS: Final = 100_000
INSIDE_UID: Final = 1000  # what the bot sees as its uid (and gid)
TMP_MB: Final = 64  # the private /tmp, unless the limits say otherwise (`tmp-mb`)
# Read-only for interpreters and libraries; a link (merged /usr) is made a link again.
SYSTEM: Final = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                 "/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf",
                 "/etc/ld.so.conf.d", "/etc/localtime", "/etc/ssl")  # node reads openssl.cnf
ENVIRONMENT: Final = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
                      "LANG": "C.UTF-8"}
CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
ONE_CPU: Final = 100_000  # microseconds of CPU per 100 ms period: at most one core


class SandboxError(OSError):
    """A sandbox cannot be built here; the message says what is missing."""


# ----------------------------------------------------------------------------------------------
# What the machine offers


@dataclass(frozen=True, slots=True)
class Cgroups:
    """Where a bot's cgroup goes, per controller (memory, pids, cpu): the folder of this
    process's own cgroup in that hierarchy, so a bot never leaves the limits set on us."""

    version: int  # 2 or 1
    parents: Mapping[str, Path]

    def describe(self) -> str:
        return f"cgroup v{self.version}"


@functools.cache
def own_cgroups() -> Cgroups | None:
    """The cgroups this process may make children in for memory, pids and cpu: v2 where its
    cgroup offers the three controllers to children, else v1 hierarchies mounted for them;
    None where neither can be written (not root, no cgroup file system)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    where = {}
    for line in lines:
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            where[name] = path.lstrip("/")
    v2 = _v2_mount()
    if v2 is not None and "" in where:
        own = v2 / where[""]
        with contextlib.suppress(OSError):
            enabled = (own / "cgroup.subtree_control").read_text().split()
            if {"memory", "pids", "cpu"} <= set(enabled) and os.access(own, os.W_OK):
                return Cgroups(2, {c: own for c in ("memory", "pids", "cpu")})
    parents = {}
    for name in ("memory", "pids", "cpu"):
        folder = CGROUP_ROOT / name / where.get(name, "")
        if name in where and (folder / "cgroup.procs").exists() and os.access(folder, os.W_OK):
            parents[name] = folder
    return Cgroups(1, parents) if parents else None


def _v2_mount() -> Path | None:
    for candidate in (CGROUP_ROOT / "unified", CGROUP_ROOT):
        if (candidate / "cgroup.controllers").exists():
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class Plan:
    """How a sandboxed bot's limits are applied: through its cgroup, or as rlimits."""

    cgroups: Cgroups | None
    memory_mb: int | None
    max_processes: int | None
    tmp_mb: int = TMP_MB

    @property
    def by_cgroup(self) -> list[str]:
        have = self.cgroups.parents if self.cgroups is not None else {}
        out = []
        if self.memory_mb is not None and "memory" in have:
            out.append("memory-mb")
        if self.max_processes is not None and "pids" in have:
            out.append("max-processes")
        if "cpu" in have:
            out.append("one CPU at most")
        return out

    def rlimits(self, wanted: Mapping[int, int]) -> dict[int, int]:
        """The rlimits still needed where the cgroup holds the same limit (the cgroup's is
        the better one: a memory cap on what the bot uses, not on the address space it
        reserves; a process cap on this bot's processes alone)."""
        through = self.by_cgroup
        dropped = ({resource.RLIMIT_AS} if "memory-mb" in through else set()) | (
            {resource.RLIMIT_NPROC} if "max-processes" in through else set())
        return {k: v for k, v in wanted.items() if k not in dropped}

    def describe(self) -> str:
        """What the run applies, in words: "memory-mb, max-processes, one CPU at most through
        cgroup v1; the rest as rlimits"."""
        where = self.cgroups.describe() if self.cgroups is not None else ""
        through = self.by_cgroup
        head = f"{', '.join(through)} through {where}" if through else "no cgroup here"
        return (f"sandbox (bubblewrap): {head}; other limits as rlimits; a private /tmp of "
                f"{self.tmp_mb} MiB")


def plan(memory_mb: int | None, max_processes: int | None, tmp_mb: int | None = None
         ) -> Plan:
    return Plan(own_cgroups(), memory_mb, max_processes, tmp_mb or TMP_MB)


_PROBLEM: list[str | None] = []


def sandbox_problem() -> str | None:
    """Why bots cannot be sandboxed here (what is missing), or None: bwrap, root (to give
    each bot a uid of its own), and a trial container that runs `true`. Tried once."""
    if not _PROBLEM:
        _PROBLEM.append(_try_sandbox())
    return _PROBLEM[0]


def _try_sandbox() -> str | None:
    if BWRAP is None:
        return "bubblewrap (`bwrap`) is not installed: apt-get install bubblewrap"
    if os.geteuid() != 0:
        return ("the sandbox gives every bot a uid of its own, which needs the referee to run "
                "as root")
    for program in (SETPRIV_INSIDE, BASH_INSIDE):
        if not os.access(program, os.X_OK):
            return f"{program} is missing (util-linux, bash)"
    if NSENTER is None:
        return "nsenter is missing (util-linux)"
    try:
        jail = Jail(("true",), None, {}, "probe", Plan(None, None, None))
        with jail:
            proc = subprocess.Popen(jail.argv, env=jail.outer_env, pass_fds=jail.pass_fds,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE)
            jail.started(proc.pid, {})
            _, said = proc.communicate(timeout=30)
            jail.reap()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap cannot build a sandbox here: {exc}"
    if proc.returncode != 0:
        last = said.decode("utf-8", "replace").strip().splitlines()[-1:] or [
            f"exit code {proc.returncode}"]
        return f"bubblewrap cannot build a sandbox here: {last[0]}"
    return None


# ----------------------------------------------------------------------------------------------
# A uid of its own


def _uid_folder() -> Path:
    for base in (Path("/run"), Path(tempfile.gettempdir())):
        folder = base / "meldref-sandbox-uids"
        with contextlib.suppress(OSError):
            folder.mkdir(mode=0o700, exist_ok=True)
            if folder.stat().st_uid == os.geteuid():
                return folder
    raise SandboxError("no folder to keep the bots' uid claims in (/run, the temporary one)")


def claim_uid() -> tuple[int, Descriptor]:
    """(uid, lock): a kernel uid no other running bot has, anywhere on the machine (its lock
    file stays locked while the descriptor is open), and no account's."""
    folder = _uid_folder()
    start = (os.getpid() * 7919) % UID_SLOTS
    for k in range(UID_SLOTS):
        uid = UID_BASE + (start + k) % UID_SLOTS
        lock = Descriptor(os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                                  0o600))
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            continue
        if _is_account(uid):
            lock.close()
            continue
        return uid, lock
    raise SandboxError(f"all {UID_SLOTS} sandbox uids are taken")


def _is_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


# ----------------------------------------------------------------------------------------------
# What the bot sees


def program_path(argv0: str, cwd: str) -> str | None:
    """The program's file: a path from the working directory, else found through PATH."""
    if "/" in argv0:
        path = os.path.join(cwd, argv0)
        return os.path.abspath(path) if os.path.exists(path) else None
    return shutil.which(argv0)


def installation(path: str) -> str:
    """The folder a program was installed in: above its bin/ (a venv, a pyenv version, a
    prefix), else its own folder."""
    folder = os.path.dirname(path)
    if os.path.basename(folder) in ("bin", "sbin", "shims"):
        return os.path.dirname(folder)
    return folder


def program_folders(argv0: str, cwd: str) -> list[str]:
    """Every installation along the program's chain of links (a venv's python links to the
    interpreter it was made from, which lives elsewhere)."""
    path = program_path(argv0, cwd)
    out: list[str] = []
    hops = 0
    while path is not None and hops < 40:
        out.append(installation(path))
        if not os.path.islink(path):
            break
        target = os.readlink(path)
        path = os.path.normpath(os.path.join(os.path.dirname(path), target))
        hops += 1
    if path is not None:
        out.append(installation(os.path.realpath(path)))
    return out


def meldref_folders() -> list[str]:
    """Where this meldref's own code lies (read-only to bots: the SDK, `meldref.bots.sdk`,
    and the engine its helpers use): the package, and the folders its links name (a checkout's
    `meldref/engine` links to its `engine/`), so an editable install imports in the sandbox
    as outside. Only code: a checkout's other folders (its `runs/`, say) stay unseen."""
    package = Path(__file__).absolute().parent.parent  # meldref/, through meldref/protocol
    if not (package / "__init__.py").is_file():
        return []
    out = [str(package.resolve())]
    for child in package.iterdir():
        if child.is_symlink() and child.is_dir():
            out.append(str(child.resolve()))
    return out


def bot_folder(argv: Sequence[str], cwd: str) -> str:
    """The bot's own folder: that of the first argument naming a file (`python3 mine/bot.py`),
    or of the program when given as a path (`./mybot/run`), else the working directory. A
    command that names its own working folder (`env -C DIR python3 bot.py`, as `meldref
    contest` starts its submissions) is read from there: DIR is its folder."""
    chdir = _env_chdir(argv)
    if chdir is not None:
        return os.path.abspath(os.path.join(cwd, chdir))
    for word in argv[1:]:
        path = os.path.join(cwd, word)
        if os.path.isfile(path):
            return os.path.dirname(os.path.abspath(path))
    if "/" in argv[0]:
        path = os.path.join(cwd, argv[0])
        if os.path.isfile(path):
            return os.path.dirname(os.path.abspath(path))
    return os.path.abspath(cwd)


def _env_chdir(argv: Sequence[str]) -> str | None:
    """DIR of `env -C DIR ...` / `env --chdir=DIR ...`, when that is how the command starts."""
    found = env_form(argv)
    return None if found is None else found[0]


def env_form(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """(DIR, the program's words) of a command `env -C DIR PROGRAM ARGS...` (or `--chdir=DIR`);
    None for any other command."""
    if not argv or os.path.basename(argv[0]) != "env":
        return None
    chdir, k = None, 1
    while k < len(argv) and argv[k].startswith("-"):
        if argv[k] in ("-C", "--chdir") and k + 1 < len(argv):
            chdir, k = argv[k + 1], k + 2
            continue
        if argv[k].startswith("--chdir="):
            chdir = argv[k].partition("=")[2]
        k += 1
    if chdir is None or k >= len(argv):
        return None
    return chdir, list(argv[k:])


def _outermost(folders: Sequence[str]) -> list[str]:
    """The folders without those inside another one of them (one bind each)."""
    kept: list[str] = []
    for folder in sorted({os.path.abspath(f) for f in folders}, key=len):
        if folder in ("", "/") or any(folder == k or folder.startswith(k + "/") for k in kept):
            continue
        kept.append(folder)
    return kept


def mounts(argv: Sequence[str], cwd: str, tmp_mb: int = TMP_MB) -> list[str]:
    """bwrap's file system options: the system's directories, the program's installations
    and the bot's folder read-only, a fresh /proc, /dev and a /tmp of `tmp_mb` MiB."""
    out: list[str] = []
    # /etc holds only what is bound below it: made passable (bwrap would make it owner-only,
    # and the bot runs as another user: node could not read /etc/ssl/openssl.cnf).
    out += ["--perms", "0755", "--dir", "/etc"]
    for path in SYSTEM:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            out += ["--ro-bind", path, path]
    # Before the bot's folders: one of them may lie below /tmp.
    out += ["--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
    system = [p for p in SYSTEM if os.path.exists(p)]
    mine = [bot_folder(argv, cwd), *program_folders(argv[0], cwd), *meldref_folders()]
    inner = env_form(argv)
    if inner is not None:  # `env -C DIR PROGRAM ...`: the program's installation too
        folder, words = inner
        mine += program_folders(words[0], os.path.join(cwd, folder))
    made: set[str] = {"/tmp", "/proc", "/dev", "/etc"}
    for folder in _outermost(mine):
        if any(folder == s or folder.startswith(s + "/") for s in system):
            continue
        # The folders above it, which bwrap would make owner-only: the bot may pass through.
        for above in _ancestors(folder):
            if above not in made:
                made.add(above)
                out += ["--perms", "0755", "--dir", above]
        out += ["--ro-bind", folder, folder]
    shown = [*system, *_outermost(mine)]
    here = os.path.abspath(cwd)
    if not any(here == f or here.startswith(f.rstrip("/") + "/") for f in shown):
        # The working directory, empty: it exists to start in, nothing of it is shown.
        out += [w for d in [*_ancestors(here), here] if d not in made
                for w in ("--perms", "0755", "--dir", d)]
    return out


def _ancestors(folder: str) -> list[str]:
    """/a/b/c -> ["/a", "/a/b"]."""
    parts = folder.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: k + 1]) for k in range(len(parts))]


# ----------------------------------------------------------------------------------------------
# One bot's container


@dataclass(eq=False)
class Jail:
    """One sandboxed bot: its uid, its cgroup, the bwrap command that starts it, and the
    descriptors it needs. Use `argv`, `outer_env` and `pass_fds` for `Popen`, call `started`
    right after, and `reap` once the process ended (also as a context manager).

    The jail owns every descriptor it holds (its uid's lock, both ends of bwrap's two pipes,
    and the write end the bot's stdout goes to) and closes each once: the child's ends as
    soon as the child has them (`started`), the rest at `reap` or `abandon`."""

    command: Sequence[str]
    cwd: str | None
    env: Mapping[str, str]
    name: str
    limits: Plan
    stdout: Descriptor | None = None  # the write end the bot's stdout goes to (else bwrap's)
    uid: int = 0
    init_pid: int | None = None
    cgroup_dirs: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.uid, self._lock = claim_uid()
        self._info_r, self._info_w = Descriptor.pipe()
        self._block_r, self._block_w = Descriptor.pipe()

    @property
    def _child_ends(self) -> tuple[Descriptor, ...]:
        """What bwrap is given and we hold only until it has them."""
        mine = (self.stdout,) if self.stdout is not None else ()
        return (self._info_w, self._block_r, *mine)

    @property
    def pass_fds(self) -> tuple[int, ...]:
        return tuple(fd.fileno() for fd in self._child_ends)

    @property
    def outer_env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", ENVIRONMENT["PATH"])}

    @property
    def argv(self) -> list[str]:
        assert BWRAP is not None
        cwd = os.path.abspath(self.cwd or os.getcwd())
        program = program_path(self.command[0], cwd) or self.command[0]
        env = {**ENVIRONMENT, **self.env}
        env["PATH"] = f"{os.path.dirname(program)}:{env['PATH']}" if "/" in program else (
            env["PATH"])
        setenv = [w for k, v in env.items() for w in ("--setenv", k, v)]
        drop = [SETPRIV_INSIDE, f"--reuid={INSIDE_UID}", f"--regid={INSIDE_UID}",
                "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"]
        # bwrap and its init keep descriptors 0-2 open: the bot's stdout comes as a
        # descriptor of its own, moved onto 1, so a bot that closes its stdout is seen to.
        fd = self.stdout.fileno() if self.stdout is not None else None
        # (`env -u`: bash's own variables are none of the bot's environment.)
        moved = f'exec 1>&{fd} {fd}>&-; exec /usr/bin/env -u PWD -u OLDPWD -u SHLVL "$@"'
        shim = [BASH_INSIDE, "-c", moved, "meldref-sandbox"] if fd is not None else []
        return [BWRAP, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                "--unshare-net", "--unshare-cgroup-try",
                "--die-with-parent", "--hostname", "bot",
                "--userns-block-fd", str(self._block_r.fileno()),
                "--info-fd", str(self._info_w.fileno()),
                "--cap-add", "CAP_SETUID,CAP_SETGID",
                *mounts(self.command, cwd, self.limits.tmp_mb), "--chdir", cwd, "--clearenv",
                *setenv,
                "--", *shim, *drop, program, *self.command[1:]]

    def started(self, pid: int, rlimits: Mapping[int, int]) -> None:
        """bwrap (`pid`) started: map the bot's uid, put the container's init in the bot's
        cgroup under its rlimits, then let it go on. `SandboxError` if bwrap failed."""
        for end in self._child_ends:  # bwrap has them: ours would hide its (and the bot's) end
            end.close()
        info = b""
        while not info.rstrip().endswith(b"}"):
            chunk = os.read(self._info_r.fileno(), 4096)
            if not chunk:
                raise SandboxError("bubblewrap ended before it built the sandbox")
            info += chunk
        self.init_pid = int(json.loads(info)["child-pid"])
        maps = f"0 0 1\n{INSIDE_UID} {self.uid} 1\n"
        for kind in ("uid_map", "gid_map"):
            with open(f"/proc/{self.init_pid}/{kind}", "w") as f:
                f.write(maps)
        no_nested_user_namespaces(self.init_pid)
        self._cgroup(self.init_pid)
        for key, value in rlimits.items():
            resource.prlimit(self.init_pid, key, (value, value))
        os.write(self._block_w.fileno(), b"g")

    def _cgroup(self, pid: int) -> None:
        groups = self.limits.cgroups
        if groups is None:
            return
        values = _cgroup_values(groups.version, self.limits)
        for controller, parent in groups.parents.items():
            folder = parent / f"meldref-{self.name}"
            if folder in self.cgroup_dirs:
                continue
            _clear_stale(parent)
            folder.mkdir(exist_ok=True)
            self.cgroup_dirs.append(folder)
            for name, value in values.get(controller, {}).items():
                if (folder / name).exists():
                    (folder / name).write_text(value)
        for folder in self.cgroup_dirs:
            (folder / "cgroup.procs").write_text(str(pid))

    def abandon(self) -> None:
        """A start that failed half-way: close our ends of bubblewrap's pipes, so that a
        sandbox waiting to be let go (the block pipe) ends instead of holding its stderr open
        for ever."""
        for end in (*self._child_ends, self._info_r, self._block_w):
            end.close()

    def reap(self) -> None:
        """After the bot ended: reap the container's init (an orphan of bwrap's, reparented to
        this subreaper), remove the cgroup, give the uid back."""
        if self.init_pid is not None:
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                try:
                    done, _ = os.waitpid(self.init_pid, os.WNOHANG)
                except ChildProcessError:
                    break
                if done:
                    break
                time.sleep(0.005)
        for folder in self.cgroup_dirs:
            _remove_cgroup(folder)
        self.cgroup_dirs.clear()
        self.abandon()
        self._lock.close()

    def __enter__(self) -> Jail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.reap()


def no_nested_user_namespaces(pid: int) -> None:
    """Allow no user namespace inside the container of `pid`: in one of its own a bot would be
    root again over what it made (mounts, a network) and reach the kernel's namespace code, a
    large surface. The limit is the container's namespace's own (`user.max_user_namespaces`,
    set from inside it by a process of ours that joined it: a joiner holds every capability
    there, the bot none). (bwrap's own `--disable-userns` cannot go with the block pipe the
    uid map is written through.)"""
    if NSENTER is None:
        raise SandboxError("nsenter (util-linux) is missing")
    done = subprocess.run(
        [NSENTER, f"--user=/proc/{pid}/ns/user", "--", "/bin/sh", "-c",
         "echo 0 > /proc/sys/user/max_user_namespaces"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        timeout=30, check=False)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [
            f"exit code {done.returncode}"]
        raise SandboxError(f"cannot refuse user namespaces in the sandbox: {said[0]}")


def _cgroup_values(version: int, limits: Plan) -> dict[str, dict[str, str]]:
    memory = None if limits.memory_mb is None else str(limits.memory_mb << 20)
    # The container's init counts as one of its processes.
    pids = None if limits.max_processes is None else str(limits.max_processes + 1)
    if version == 2:
        return {"memory": {"memory.max": memory, "memory.swap.max": "0"} if memory else {},
                "pids": {"pids.max": pids} if pids else {},
                "cpu": {"cpu.max": f"{ONE_CPU} 100000"}}
    return {"memory": {"memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes": memory}
            if memory else {},
            "pids": {"pids.max": pids} if pids else {},
            "cpu": {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": str(ONE_CPU)}}


def _remove_cgroup(folder: Path) -> None:
    """Remove a bot's cgroup once its processes are gone (they die as the namespace ends; a
    few milliseconds): kill what is left in it first."""
    deadline = time.monotonic() + 2.0
    while True:
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
        with contextlib.suppress(OSError, ValueError):
            for pid in (folder / "cgroup.procs").read_text().split():
                os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.01)


STALE_AFTER: Final = 60.0  # seconds an empty bot cgroup lives before another referee clears it


def _clear_stale(parent: Path) -> None:
    """Remove the empty cgroups of bots whose referee was killed before it could. Only old
    ones: a cgroup another referee has just made is empty until it puts its bot in, and
    removing it then failed that bot's start (two workers of one `-j 2` run starting bots at
    once), which left the referee waiting on a half-built sandbox."""
    now = time.time()
    with contextlib.suppress(OSError):
        for folder in parent.glob("meldref-*"):
            with contextlib.suppress(OSError):
                if (now - folder.stat().st_mtime > STALE_AFTER
                        and not (folder / "cgroup.procs").read_text().strip()):
                    folder.rmdir()


def exit_code(raw: int) -> int:
    """A sandboxed bot's exit code as `Popen` gives a bot's own: bwrap reports death by
    signal N as 128 + N, given back as -N (so a bot that exits with 139 itself reads as
    killed by SIGSEGV)."""
    if raw > 128 and raw - 128 in {s.value for s in signal.Signals}:
        return -(raw - 128)
    return raw
