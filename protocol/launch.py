"""How a bot program is launched: under the guard (protocol/guard.py) or `setpriv --pdeathsig
KILL`, so it dies with the referee; in a network namespace of its own when asked (`unshare
--net`); with the referee as the child subreaper of all it starts."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from .command import BotCommand, program_found

PR_SET_CHILD_SUBREAPER: Final = 36
_subreaper: bool | None = None


def become_subreaper() -> bool:
    """Make this process the Linux child subreaper of its descendants (best effort, once):
    orphans of a bot are then reparented to the referee, not to init, and stay visible."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


SETPRIV: Final = shutil.which("setpriv")  # util-linux


UNSHARE: Final = shutil.which("unshare")  # util-linux

# The guard (protocol/guard.py) runs in the referee's own interpreter, isolated from the
# environment (-I) and without site packages (-S): a few milliseconds, nothing imported.
GUARD: Final = Path(__file__).with_name("guard.py")
GUARDED: Final = sys.platform.startswith("linux") and os.path.isdir("/proc")


def launch_argv(command: BotCommand, no_network: bool = False,
                rlimits: Mapping[int, int] | None = None, swept_fd: int = -1) -> list[str]:
    """The argv that starts `command` outside a sandbox: under the guard (protocol/guard.py:
    every process the bot starts dies with it and with the referee, even after a `kill -9` of
    the referee, its process group or a tournament; the `rlimits` are set before the program
    is executed, so a user-switch wrapper's program has them too) and, with `no_network`, in a
    network namespace of its own (`unshare --net`: no interface but a loopback that is down,
    so no connection anywhere, the referee's machine included). Without the guard (no /proc):
    `setpriv --pdeathsig KILL`, the bot alone dying with the referee. A program that cannot
    be found is started as it is, so that the error names it."""
    argv = list(command.argv)
    if no_network:
        argv = [*unshare_net(), "--", *argv]
    if not program_found(command):
        return argv
    if GUARDED:
        limits = ",".join(f"{k}={v}" for k, v in (rlimits or {}).items())
        return [sys.executable, "-I", "-S", str(GUARD), str(os.getpid()), limits, str(swept_fd),
                "--", *argv]
    if SETPRIV is None:
        return argv
    return [SETPRIV, "--pdeathsig", "KILL", "--", *argv]


def unshare_net() -> list[str]:
    """`unshare --net`, with a user namespace of its own when not root (as an unprivileged
    user may where the kernel allows user namespaces)."""
    if UNSHARE is None:
        raise OSError("no network namespace without util-linux's `unshare`")
    return [UNSHARE, "--net"] + ([] if os.geteuid() == 0 else ["--map-root-user"])


def network_isolation_problem() -> str | None:
    """Why bots cannot be given a network namespace of their own here, or None if they can."""
    try:
        done = subprocess.run([*unshare_net(), "--", "true"], capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return f"`unshare --net` fails here: {said[0]} (run as root, or allow user namespaces)"
    return None
