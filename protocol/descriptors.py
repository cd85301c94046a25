"""An open file descriptor with one owner (`Descriptor`), who closes it once.

A descriptor is a number the kernel hands out again as soon as it is closed: a number kept
after its close and closed "again, to be sure" closes whatever reused it, another seat's pipe
or the replay being written (a sandboxed bot that crashed did exactly that). So a descriptor
the referee opens is held as a `Descriptor`, never as a bare number: `close` closes it the
first time and does nothing after, `fileno` on a closed one raises instead of naming a stranger,
and `give_up` passes it on to the one new owner (a file object, a child process) without
closing it.
"""

from __future__ import annotations

import os
from typing import Final

CLOSED: Final = -1


class Descriptor:
    """One open descriptor and the one duty to close it."""

    __slots__ = ("_fd",)

    def __init__(self, fd: int) -> None:
        if fd < 0:
            raise ValueError(f"not an open descriptor: {fd}")
        self._fd = fd

    @staticmethod
    def pipe() -> tuple[Descriptor, Descriptor]:
        """(read end, write end) of a new pipe, neither inherited by a program run later
        unless it is passed on by name (`pass_fds`)."""
        read, write = os.pipe2(os.O_CLOEXEC)
        return Descriptor(read), Descriptor(write)

    @property
    def closed(self) -> bool:
        return self._fd == CLOSED

    def fileno(self) -> int:
        """The number, while it is ours: a closed descriptor has none any more (its number
        may already be another file's)."""
        if self._fd == CLOSED:
            raise ValueError("the descriptor was closed: its number is no longer ours")
        return self._fd

    def close(self) -> None:
        """Close it, the first time only (a later call, from any teardown path, is a no-op)."""
        fd, self._fd = self._fd, CLOSED
        if fd != CLOSED:
            os.close(fd)

    def give_up(self) -> int:
        """The number, for a new owner that will close it (`os.fdopen`); this one no longer
        will."""
        fd = self.fileno()
        self._fd = CLOSED
        return fd

    def __enter__(self) -> Descriptor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "Descriptor(closed)" if self._fd == CLOSED else f"Descriptor({self._fd})"
