#!/usr/bin/env python3
"""A bot that tries every escape from its sandbox, then plays the first `legal` hint.

    probe_bot.py [--other PATH]... [--referee PID] [--other-pid PID] [--port N]
                 [--unix PATH] [--abstract NAME] [--heavy] [--mark PATH]

Before `ready` it tries each escape below and reports it as `id probe.<escape> blocked <why>`
or `id probe.<escape> OPEN <what it got>` (`meldref bot check` turns these into checks). Each
try is harmless where it succeeds: signals are tested with signal 0, tracing by opening
/proc/PID/mem, a network connection goes to 127.0.0.1 (a port the caller listens on) or to a
UDP socket's route (nothing is sent), never off the machine. With `--heavy` it also fills
its /tmp, forks and allocates without end and spins two processes on the CPU (each bounded,
so it stops on a machine without limits too), and leaves nothing running. `--mark PATH`:
try to create PATH (a file of the host, outside its temporary folder).

  read-other       open every --other PATH (another bot's folder, the contest's files, the
                   replay being written; without any, /etc/passwd, /etc/hostname, /home,
                   /var/log, /srv): blocked if none can be read
  referee-proc     also: any process in /proc but its own and pid 1
  referee-proc     read /proc/PID/{cmdline,environ,fd} of --referee and of its parent
  signal           signal 0 to --referee, --other-pid and its parent (unless pid 1): blocked
                   if none exists for it
  trace            open /proc/PID/mem of --referee, else of its parent (ptrace's check)
  loopback         TCP connect to 127.0.0.1:--port, where the caller listens (refused: the
                   loopback is not the host's)
  network          a route to an address beyond the machine (UDP connect to 192.0.2.1, which
                   sends nothing)
  unix-socket      connect to the Unix socket --unix (without it, the system's D-Bus, systemd
                   and docker sockets where they exist) and the abstract socket --abstract
  write-outside    create a file in its working directory, /, /usr, /dev/shm
                   and --mark
  user-namespace   a child makes a user namespace of its own (unshare(CLONE_NEWUSER)), where
                   it would be root again, with every capability over what it made
  fill-tmp         write /tmp until refused (heavy; at most 512 MiB)
  fork-bomb        fork sleeping children until refused (heavy; at most 3000)
  allocate         a child allocating 32 MiB blocks until refused (heavy; at most 8 GiB)
  spin-cpu         two children spinning 1.5 s: blocked if they got at most one CPU (heavy)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import signal
import socket
import sys
import time

FILL_CAP = 512 << 20
FORK_CAP = 3000
ALLOC_CAP = 8 << 30


# What of the host's files it tries when given none.
HOST_FILES = ("/etc/passwd", "/etc/hostname", "/home", "/var/log", "/srv")


def _own_paths() -> list[str]:
    """What a sandbox shows it on purpose, each at its real path: its working directory, its
    own folder, and meldref's package (bound for the SDK). Their parents exist in the sandbox
    holding just the way down to them (a checkout in /srv/ci: /srv holds `ci`)."""
    own = [os.path.realpath(os.getcwd()), os.path.dirname(os.path.realpath(__file__))]
    spec = importlib.util.find_spec("meldref")
    if spec is not None and spec.origin:
        own.append(os.path.dirname(os.path.realpath(spec.origin)))
    return own


def _others(folder: str) -> list[str]:
    """The entries of `folder` that are not on the way down to its own paths."""
    base, own = os.path.realpath(folder), _own_paths()
    return [name for name in os.listdir(folder)
            if not any(o == os.path.join(base, name)
                       or o.startswith(os.path.join(base, name) + os.sep) for o in own)]


def probe_read(paths: list[str]) -> str:
    got = []
    for path in paths:
        try:
            if os.path.isdir(path):
                if others := _others(path):
                    got.append(f"{path}: {len(others)} entries")
            else:
                with open(path, "rb") as f:
                    got.append(f"{path}: {len(f.read(4096))} bytes")
        except OSError:
            continue
    return f"OPEN {'; '.join(got)}" if got else f"blocked: none of {len(paths)} readable"


def probe_referee_proc(pid: int | None) -> str:
    got = []
    # Its parent, unless that is pid 1: the init of a PID namespace of its own (a sandbox's,
    # whose command line is bwrap's) or the machine's.
    for target in [p for p in (pid, os.getppid()) if p and p != 1]:
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{target}/{part}", "rb") as f:
                    data = f.read()
                if data:
                    got.append(f"{target}/{part}")
            except OSError:
                pass
        try:
            if os.listdir(f"/proc/{target}/fd"):
                got.append(f"{target}/fd")
        except OSError:
            pass
    me = os.getpid()
    others = [e for e in os.listdir("/proc") if e.isdigit() and int(e) not in (1, me)]
    if others:
        got.append(f"{len(others)} other processes in /proc")
    return f"OPEN {', '.join(got)}" if got else "blocked: no process but its own in /proc"


def probe_signal(pids: list[int]) -> str:
    got = []
    for pid in pids:
        try:
            os.kill(pid, 0)
            got.append(str(pid))
        except OSError:
            pass
    return f"OPEN could signal {', '.join(got)}" if got else "blocked: no such process"


def probe_trace(pid: int | None) -> str:
    if not pid:
        return "blocked: no pid given"
    try:
        with open(f"/proc/{pid}/mem", "rb"):
            return f"OPEN /proc/{pid}/mem"
    except OSError as exc:
        return f"blocked: {exc.strerror}"


def probe_connect(family: int, address: object, timeout: float) -> str:
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(address)
        return "OPEN connected"
    except TimeoutError:
        return "OPEN no refusal (timed out)"
    except OSError as exc:
        return f"blocked: {exc.strerror}"
    finally:
        s.close()


# Sockets of the host a bot would like: tried besides the one given, where they exist.
HOST_SOCKETS = ("/run/dbus/system_bus_socket", "/run/systemd/private", "/var/run/docker.sock",
                "/run/systemd/journal/socket")


def probe_route() -> str:
    """Whether any address beyond this machine has a route: `connect` on a UDP socket picks
    one and sends nothing (TEST-NET-1, an address for documentation)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))
        return f"OPEN a route out, from {s.getsockname()[0]}"
    except OSError as exc:
        return f"blocked: {exc.strerror}"
    finally:
        s.close()


def probe_unix(path: str | None, abstract: str | None) -> str:
    results = []
    for where in [path] if path else [p for p in HOST_SOCKETS if os.path.exists(p)] or [
            HOST_SOCKETS[0]]:
        results.append(probe_connect(socket.AF_UNIX, where, 0.5))
    if abstract:
        results.append(probe_connect(socket.AF_UNIX, "\0" + abstract, 0.5))
    opened = [r for r in results if r.startswith("OPEN")]
    return opened[0] if opened else "blocked: " + "; ".join(r[9:] for r in results)


def probe_write(mark: str | None) -> str:
    made = []
    for folder in (os.getcwd(), "/", "/usr", "/dev/shm"):
        path = os.path.join(folder, f".probe-{os.getpid()}")
        try:
            with open(path, "x"):
                pass
            os.unlink(path)
            made.append(folder)
        except OSError:
            pass
    if mark:
        try:
            with open(mark, "x"):
                pass
            made.append(mark)
        except OSError:
            pass
    return f"OPEN wrote in {', '.join(made)}" if made else "blocked: read-only everywhere"


CLONE_NEWUSER = 0x10000000


def probe_user_namespace() -> str:
    import ctypes

    pid = os.fork()
    if pid == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        os._exit(0 if libc.unshare(CLONE_NEWUSER) == 0 else min(ctypes.get_errno(), 125))
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return "OPEN made a user namespace" if code == 0 else f"blocked: {os.strerror(code)}"


def probe_fill() -> str:
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "probe-fill")
    written = 0
    block = b"x" * (1 << 20)
    try:
        with open(path, "wb") as f:
            while written < FILL_CAP:
                f.write(block)
                f.flush()
                written += len(block)
        return f"OPEN wrote {written >> 20} MiB"
    except OSError as exc:
        return f"blocked after {written >> 20} MiB: {exc.strerror}"
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def probe_fork() -> str:
    children = []
    why = ""
    try:
        while len(children) < FORK_CAP:
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError as exc:
        why = exc.strerror or str(exc)
    finally:
        for pid in children:
            os.kill(pid, signal.SIGKILL)
        for pid in children:
            os.waitpid(pid, 0)
    if why:
        return f"blocked after {len(children)} processes: {why}"
    return f"OPEN {len(children)} processes"


def probe_allocate() -> str:
    pid = os.fork()
    if pid == 0:
        blocks = []
        try:
            while len(blocks) * 32 < ALLOC_CAP >> 20:
                blocks.append(bytearray(32 << 20))
        except MemoryError:
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return f"OPEN allocated {ALLOC_CAP >> 30} GiB"
    how = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
           else "out of memory")
    return f"blocked: {how}"


def probe_spin() -> str:
    # Only the spinners' own CPU: the times of children waited for earlier (the fork bomb's,
    # the allocator's) are in os.times() too.
    before = os.times()
    began = time.monotonic()
    pids = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            end = time.monotonic() + 1.5
            while time.monotonic() < end:
                pass
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    wall = time.monotonic() - began
    after = os.times()
    used = (after.children_user - before.children_user
            + after.children_system - before.children_system)
    share = used / wall
    return (f"blocked: {share:.2f} CPUs for two spinners" if share <= 1.25
            else f"OPEN {share:.2f} CPUs for two spinners")


def parent() -> int | None:
    """The process that started it, unless that is pid 1 (a sandbox's own init)."""
    return os.getppid() if os.getppid() != 1 else None


def probes(args: argparse.Namespace) -> dict[str, str]:
    out = {
        "read-other": probe_read(args.other or list(HOST_FILES)),
        "referee-proc": probe_referee_proc(args.referee),
        "signal": probe_signal([p for p in (args.referee, args.other_pid, parent()) if p]),
        "trace": probe_trace(args.referee or parent()),
        "loopback": probe_connect(socket.AF_INET, ("127.0.0.1", args.port or 9), 0.5),
        "network": probe_route(),
        "unix-socket": probe_unix(args.unix, args.abstract),
        "write-outside": probe_write(args.mark),
        "user-namespace": probe_user_namespace(),
    }
    if args.heavy:
        out["fill-tmp"] = probe_fill()
        out["fork-bomb"] = probe_fork()
        out["allocate"] = probe_allocate()
        out["spin-cpu"] = probe_spin()
    return out


def send(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--other", action="append", default=[])
    parser.add_argument("--referee", type=int)
    parser.add_argument("--other-pid", type=int)
    parser.add_argument("--port", type=int)
    parser.add_argument("--unix")
    parser.add_argument("--abstract")
    parser.add_argument("--mark")
    parser.add_argument("--heavy", action="store_true")
    args = parser.parse_args()
    legal: list[str] = []
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        if words[0] == "meldref":
            send("id name probe")
            send(f"id env {','.join(sorted(os.environ))}")
            for name, result in probes(args).items():
                send(f"id probe.{name} {' '.join(result.split())}")
            send("ready")
        elif words[0] == "view":
            legal = []
        elif words[0] == "legal":
            legal.append(" ".join(words[1:]))
        elif words[0] == "go":
            send(f"action {words[1]} {legal[0] if legal else 'draw pile'}")
        elif words[0] == "ping":
            send(f"pong {words[1]}")
        elif words[0] == "quit":
            return


if __name__ == "__main__":
    main()
