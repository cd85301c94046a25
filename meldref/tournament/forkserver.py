"""multiprocessing's fork server as meldref's pool uses it: the only module that touches the
server's private CPython members.

The pool (`pool`) forks its workers from the fork server, and needs three things the public
`multiprocessing.forkserver` API does not give: the server's process id, a way to stop the
server when the tournament ends (left alone it outlives `meldref tournament -j 2`'s return a
moment), and, in a worker, a way to drop the worker's copy of the server's "alive" pipe (held
by workers, it would keep the server, and so the workers and their bots, alive after a
tournament killed with SIGKILL). Each is one function here, reading the members named in
`MEMBERS`. On an interpreter without them the functions do nothing (the tournament still
runs, as before these fixes), and the fork server's tests in tests/test_pool_workers.py fail:
they are the alarm that a new Python moved them.
"""

from __future__ import annotations

import contextlib
import os
import signal
from multiprocessing import forkserver
from typing import Final

# Which of the fork server's private members each function reads: the module's `_forkserver`
# (the process's one server), its pid (None in a process forked from it), its "alive" pipe's
# descriptor, and its `_stop` (close the pipe, reap the server, remove its socket).
SERVER: Final = "_forkserver"
MEMBERS: Final = ("_forkserver_pid", "_forkserver_alive_fd", "_stop")


def _server() -> object:
    return getattr(forkserver, SERVER, None)


def missing() -> list[str]:
    """The private members this interpreter's fork server lacks (none on CPython 3.11-3.13)."""
    server = _server()
    if server is None:
        return [SERVER]
    return [name for name in MEMBERS if not hasattr(server, name)]


def start() -> int | None:
    """Start this process's fork server if it is not running (public API); its pid."""
    forkserver.ensure_running()
    return server_pid()


def server_pid() -> int | None:
    """The pid of the fork server this process started; None if it started none (or is
    itself a process forked from one)."""
    pid = getattr(_server(), "_forkserver_pid", None)
    return pid if isinstance(pid, int) else None


def stop() -> bool:
    """End the fork server this process started and wait for its end; whether there was one.
    SIGTERM, not the closed pipe alone: a copy of the pipe held elsewhere must not keep the
    caller waiting. Its workers, if any are left, get their parent-death signal."""
    pid = server_pid()
    if pid is None:
        return False
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGTERM)
    stop_server = getattr(_server(), "_stop", None)
    if callable(stop_server):
        with contextlib.suppress(OSError):
            stop_server()
    return True


def leave_alive_pipe() -> int | None:
    """In a process forked from the fork server: close its copy of the server's "alive" pipe,
    which the server waits on to end; the descriptor closed (None: none held, or this process
    started the server itself and must keep it)."""
    server = _server()
    fd = getattr(server, "_forkserver_alive_fd", None)
    if not isinstance(fd, int) or server_pid() is not None:
        return None
    with contextlib.suppress(OSError):
        os.close(fd)
    setattr(server, "_forkserver_alive_fd", None)  # noqa: B010 (a private member: no type)
    return fd
