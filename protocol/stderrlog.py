"""A bot program's stderr, drained on a thread into a capped log file (`StderrLog`): never
parsed, kept to its first bytes, switched from game to game for a kept bot."""

from __future__ import annotations

import contextlib
import os
import select
import stat
import threading
from pathlib import Path
from typing import BinaryIO, Final

from .descriptors import Descriptor

STDERR_TAIL: Final = 400
# O_NONBLOCK: a FIFO planted where the log goes must not block the open (regular files ignore it).
APPEND: Final = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
                 | os.O_NONBLOCK)


class StderrLog:
    """A bot's stderr, drained on a thread into the log of the game it is playing (never
    parsed): the first `limit` bytes of each log are kept, then a note of how many were
    dropped. A kept bot moves on to the next game's log with `switch`; everything it wrote
    before goes to the log it was writing to (the pipe is emptied first, under the lock the
    thread reads with), and what it writes between two games (`hold`) opens the next log."""

    def __init__(self, pipe: Descriptor, path: Path | None, limit: int, name: str) -> None:
        self.pipe, self.limit = pipe, limit  # the log owns the pipe and closes it at its end
        self.bytes = 0
        self.tail = b""
        self._lock = threading.Lock()
        self._file: BinaryIO | None = None
        self._offered = 0  # bytes offered to the current log, kept or not
        self._held: bytearray | None = None  # between games: for the next log
        self._open(path)
        os.set_blocking(pipe.fileno(), False)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.pipe.fileno(), select.POLLIN)
        try:
            while True:
                poller.poll()
                with self._lock:
                    if not self._pump():
                        break
        finally:
            with self._lock:
                self._close()
                self.pipe.close()

    def _pump(self) -> bool:
        """Take what the pipe holds now; False once it is closed for good."""
        while not self.pipe.closed:
            try:
                chunk = os.read(self.pipe.fileno(), 1 << 16)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self.bytes += len(chunk)
            self.tail = (self.tail + chunk)[-STDERR_TAIL:]
            self._take(chunk)
        return False

    def _take(self, chunk: bytes) -> None:
        if self._held is not None:
            self._held += chunk[: max(0, self.limit - len(self._held))]
            return
        kept = max(0, min(len(chunk), self.limit - self._offered))
        self._offered += len(chunk)
        if self._file is not None and kept:
            try:
                self._file.write(chunk[:kept])
                self._file.flush()
            except (OSError, ValueError):  # a full disk must not stop the drain
                self._file = None

    def _open(self, path: Path | None) -> None:
        self._offered = 0
        self._file = None
        if path is None:
            return
        try:  # never through a link planted where the log goes; owner-only, as every log
            fd = os.open(path, APPEND, 0o600)
        except OSError:
            return
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            os.close(fd)  # a FIFO or another user's file put there: the log goes nowhere
            return
        self._file = os.fdopen(fd, "ab")

    def _close(self) -> None:
        if self._file is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if self._offered > self.limit:
                self._file.write(f"\n[meldref: {self._offered - self.limit} more bytes of "
                                 "stderr dropped]\n".encode())
            self._file.close()
        self._file = None

    def switch(self, path: Path | None) -> None:
        """Write to `path` from now on (None: nowhere); what came before went where it was
        going, what was held since `hold` opens the new log."""
        with self._lock:
            self._pump()
            self._close()
            held, self._held = self._held, None
            self._open(path)
            if held:
                self._take(bytes(held))

    def hold(self) -> None:
        """Close the current log (after what came so far) and keep what comes next, up to
        `limit` bytes, for the next `switch`."""
        with self._lock:
            self._pump()
            self._close()
            self._held = bytearray()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)
