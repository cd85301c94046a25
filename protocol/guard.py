"""The guard: the process the referee starts for a bot program that runs outside a sandbox.

    python3 -I -S guard.py REFEREE_PID LIMITS SWEPT_FD -- PROGRAM ARGS...

It is run as a script, never imported (it imports only the standard library). It makes itself
the child subreaper of the bot, so every process the bot starts, even one that leaves its
session or loses its parent, stays its descendant; it starts PROGRAM under the rlimits LIMITS
(`RESOURCE=VALUE,...`, set between `fork` and `exec`, so they hold for the program the user's
wrapper finally runs: `setpriv --reuid`, `runuser` and their children inherit them), waits for
it, and exits with exactly its status (its code, or death by the same signal). Once it has
killed what the bot left, it writes one byte to SWEPT_FD (a pipe the referee passed, kept from
the bot): a guard that ends without that byte was killed before its sweep (SIGKILL, which no
process can catch, sent by the bot itself), and the referee sweeps what it was handed instead.

Why a guard and not the parent-death signal alone: the kernel's parent-death signal is one
process's, it is not inherited by the bot's children, and a user switch (`setpriv --reuid`,
`runuser`) clears it. Why not a PID namespace, which the sandbox uses: outside a sandbox the
bot must see the machine as it is (its real pids, /proc, `sudo`), and a namespace needs
privileges. The guard's own parent-death signal is SIGUSR1, which it catches: when the referee
dies, even by `kill -9` of it, of its process group or of a whole tournament, the guard kills
every process of the bot and then exits. When the bot ends, the guard kills what is left of it
at once (the referee's sweep would, and a `kill -9` of the referee right then must find
nothing). A `kill -9` aimed at the guard itself hands the bot's processes to the referee,
the child subreaper above it, which sees the missing byte and kills them; only a `kill -9` of
the guard and then of the referee before it sweeps could let a child of the bot live on: the
sandbox's PID namespace closes that too.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
NOTICE = signal.SIGUSR1  # the referee died
IGNORED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def prctl(option: int, value: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.prctl(option, value, 0, 0, 0) == 0)


def descendants() -> list[int]:
    """Every live process below this one, by the parent links of /proc."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != b"Z":
            parent[int(entry)] = int(fields[1])
    mine, found = {os.getpid()}, []
    grew = True
    while grew:
        grew = False
        for pid, ppid in parent.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                found.append(pid)
                grew = True
    return found


def kill_all() -> None:
    """SIGKILL every descendant and reap them, until none is left (a process may fork while
    its siblings die; each round kills what the last one found)."""
    for _ in range(100):
        left = descendants()
        if not left:
            break
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        reap()
    reap()


def reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def start(argv: list[str], limits: dict[int, int]) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:
        for sig in (*IGNORED, NOTICE):
            signal.signal(sig, signal.SIG_DFL)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for key, value in limits.items():
            try:
                resource.setrlimit(key, (value, value))
            except (OSError, ValueError) as exc:
                sys.stderr.write(f"meldref: cannot set resource limit {key} to {value}: "
                                 f"{exc}\n")
                os._exit(126)
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"meldref: cannot start {argv[0]}: {exc.strerror or exc}\n")
    os._exit(127)


def main() -> None:
    referee, spec, swept = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    if swept >= 0:
        os.set_inheritable(swept, False)  # the referee's alone: never the bot's to write
    argv = sys.argv[sys.argv.index("--") + 1:]
    limits = {int(k): int(v) for k, v in (p.split("=") for p in spec.split(",") if p)}

    def referee_died(signum: int, frame: object) -> None:
        kill_all()
        os._exit(137)

    # Handlers, not SIG_IGN: an ignored signal would stay ignored in the bot after `exec`.
    for sig in IGNORED:
        signal.signal(sig, lambda signum, frame: None)
    signal.signal(NOTICE, referee_died)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, NOTICE)
    if os.getppid() != referee:  # it died before the line above
        os._exit(137)
    bot = start(argv, limits)
    # The pipes are the bot's alone: a bot that closes its stdout is seen to close it.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(127)
        if pid == bot:
            break
    kill_all()
    if swept >= 0:
        with contextlib.suppress(OSError):
            os.write(swept, b"k")
    if os.WIFSIGNALED(status):  # die of the same signal
        death = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core of ours for the bot's
        signal.signal(death, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [death])
        os.kill(os.getpid(), death)
        os._exit(128 + death)  # a signal that does not kill (none the bot died of)
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
