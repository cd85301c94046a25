"""The sweep of what a bot program left running: its processes found through /proc (by
ancestry, by process group, by the `MELDREF_BOT` cookie every process it starts inherits),
killed and reaped; the CPU its group used; and the kill-all of a process about to exit, which
kills every bot it started and has not shut down yet."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from .process import BotProcess


# Every process a bot starts inherits this variable (a value unique to the bot), so its
# descendants can be found and killed at shutdown even after they left its process group and
# session (`setsid`) and lost their parent (Jenkins' process tree killer uses the same cookie).
COOKIE: Final = "MELDREF_BOT"
def process_name(pid: int) -> str:
    """The command name of process `pid` (its `comm`), or "?" once it is gone."""
    try:
        return read_proc(f"/proc/{pid}/comm").decode("utf-8", "replace").strip()
    except OSError:
        return "?"


# Every bot process started and not yet swept, so that a process about to end abruptly (a
# tournament worker told to stop) can kill them all first.
LIVE: set[BotProcess] = set()
# Held from a bot's start until it is in LIVE, and while the orphans handed to this process are
# swept (`adopted`): a guard another thread has just started is never taken for one of them.
STARTING = threading.Lock()


def kill_all_bots() -> None:
    """SIGKILL every bot program this process started and has not shut down yet, and what
    escaped their groups, for a process about to exit. Signal-safe: it takes no lock and waits
    for nothing, as a signal handler may run while the code it interrupted holds a lock (a
    worker blocked in `Popen.wait` holds that Popen's: `kill`'s reaping would wait for it for
    ever). The exiting process leaves the reaping to the kernel."""
    for bot in list(LIVE):
        with contextlib.suppress(Exception):
            strays = descendants(bot.pid) | carriers(COOKIE, bot.cookie)
            bot.signal_group(signal.SIGKILL)
            kill_strays(strays, bot.pid, reap_wait=0.0)


def read_proc(path: str) -> bytes:
    """A file of /proc, read without `pathlib`: a `Path` interns every part of its name, and
    the process ids of every bot and every scan would pile up in memory for good."""
    with open(path, "rb") as f:
        return f.read()


def _proc_stats() -> Iterator[tuple[int, list[str]]]:
    """(pid, fields after the command name) of every process in /proc."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat_of(int(entry))) is not None:
            yield int(entry), fields


def descendants(pid: int) -> set[tuple[int, str]]:
    """(pid, start time) of every live descendant of `pid`, by the parent links in /proc."""
    children: dict[int, list[tuple[int, str]]] = {}
    for child, f in _proc_stats():
        if f[0] != "Z":
            children.setdefault(int(f[1]), []).append((child, f[19]))
    out: set[tuple[int, str]] = set()
    todo = [pid]
    while todo:
        for entry in children.get(todo.pop(), []):
            if entry not in out:
                out.add(entry)
                todo.append(entry[0])
    return out


def carriers(name: str, value: str) -> set[tuple[int, str]]:
    """(pid, start time) of the live processes whose environment holds `name=value` (those
    this user may read)."""
    mark = f"{name}={value}".encode()
    out = set()
    for pid, f in _proc_stats():
        if f[0] == "Z" or pid == os.getpid():
            continue
        try:
            env = read_proc(f"/proc/{pid}/environ")
        except OSError:
            continue
        if mark in env.split(b"\0"):
            out.add((pid, f[19]))
    return out


def start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, as /proc says), or None once gone."""
    stat = _stat_of(pid)
    return None if stat is None else stat[19]


def adopted(since: str, known: set[int]) -> set[tuple[int, str]]:
    """(pid, start time) of the processes handed to this process (the child subreaper) since
    `since` (a start time in ticks), with theirs: its live children that it did not start
    (`known`: every bot's own process and container init) and that started then or later.
    Only a guard killed before its sweep hands a bot's processes up here."""
    me, out = os.getpid(), set()
    for pid, f in _proc_stats():
        if (int(f[1]) == me and f[0] != "Z" and pid not in known
                and int(f[19]) >= int(since)):
            out |= {(pid, f[19])} | descendants(pid)
    return out


def kill_strays(strays: set[tuple[int, str]], bot: int, reap_wait: float = 1.0) -> None:
    """SIGKILL each (pid, start time) still running as that same process (not a reused pid),
    then reap those that were reparented to us (the subreaper), so no zombie stays."""
    me = os.getpid()
    ours = []
    for pid, started in strays:
        if pid in (me, bot):
            continue
        stat = _stat_of(pid)
        if stat is None or stat[19] != started:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        if int(stat[1]) == me:
            ours.append(pid)
    deadline = time.monotonic() + reap_wait
    while ours and time.monotonic() < deadline:
        for pid in list(ours):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                ours.remove(pid)
        if ours:
            time.sleep(0.005)


def _stat_of(pid: int) -> list[str] | None:
    try:
        return read_proc(f"/proc/{pid}/stat").decode().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`, read from /proc."""
    return [pid for pid, f in _proc_stats() if int(f[2]) == pgid and f[0] != "Z"]


_TICKS: Final = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def group_cpu_time(pgid: int) -> float | None:
    """CPU seconds (user + system, reaped children included) of the processes in group `pgid`;
    None where there is no /proc to read. Tells a bot that computes from one that sleeps."""
    if not os.path.isdir("/proc/self"):
        return None
    ticks = 0
    for _, f in _proc_stats():
        if int(f[2]) == pgid:  # utime stime cutime cstime: fields 14-17 of proc(5)
            ticks += sum(int(x) for x in f[11:15])
    return ticks / _TICKS
