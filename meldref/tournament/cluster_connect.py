"""Reaching a dask cluster for a tournament, safely: `local:N` made here over TLS with
certificates made for the run, a `tls://` scheduler only with dask's TLS settings, the client
connected with a worker to play on, dask's loggers quiet, and signals held while the cluster is
left. `ClusterError` is every way the cluster cannot play (one message, exit 2).

Part of the cluster client (`cluster`, whose docstring says the whole design).
"""

# dask.distributed is typed only in part (as in `cluster`: pyproject's mypy overrides), and its
# calls here are checked by tests/test_cluster*.py against a real scheduler and workers.

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from typing import Final

import dask.config
import dask.utils
import distributed

from .config import ConfigError
from .pool import MAX_TRIES

WORKER_WAIT: Final = 60.0  # seconds for a first worker to join it
CLOSE_TIMEOUT: Final = 10.0  # seconds for the client, then a local cluster, to close
# What a lost scheduler raises at the client: a closed connection (an OSError), a time-out,
# or futures cancelled under it.
LOST: Final = (OSError, TimeoutError, distributed.client.FutureCancelledError,
               asyncio.CancelledError)
# What a client needs to reach a tls:// scheduler: the authority to trust, its own certificate.
# (the key may be in the certificate's file, as dask allows)
TLS_SETTINGS: Final = ("distributed.comm.tls.ca-file", "distributed.comm.tls.client.cert")


class ClusterError(ConfigError):
    """The cluster cannot play this tournament: unreachable, no workers, a worker that cannot
    start a bot or see the bot folder, the scheduler lost, a worker whose games do not
    verify."""


def quiet_logs() -> contextlib.ExitStack:
    """dask's loggers in this process held to CRITICAL until the stack closes."""
    stack = contextlib.ExitStack()
    for name in ("distributed", "distributed.client", "distributed.worker", "tornado"):
        logger = logging.getLogger(name)
        stack.callback(logger.setLevel, logger.level)
        logger.setLevel(logging.CRITICAL)
    return stack


STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block (leaving the cluster: two seconds for
    `local:2`) is done, then act as they would have (`KeyboardInterrupt` for the command
    line's handlers); a second one acts at once. Only the main thread handles signals:
    elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: object) -> None:
        if caught:  # asked twice: stop now, whatever is left half done
            for number, handler in before.items():
                signal.signal(number, handler)
            signal.raise_signal(signum)
        caught.append(signum)

    before = {number: signal.signal(number, hold) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
    if caught:
        signal.raise_signal(caught[0])


def local_cluster(workers: int) -> distributed.LocalCluster:
    """A LocalCluster of `workers` processes of one thread each, on 127.0.0.1, with TLS made
    for this run; `ClusterError` without `cryptography` to make the certificates."""
    try:
        security = distributed.security.Security.temporary()
    except ImportError:
        raise ClusterError(
            "local:N runs its workers over TLS with certificates made for the run, which "
            "needs the cryptography package: pip install 'meldref[cluster]' (over plain TCP "
            "any process on this machine could run code on the workers)") from None
    # dask's sampling profiler walks the game's stack 100 times a second: games took 20-40%
    # longer with it (bench/bench_cluster.py); docs/cluster.md says how to turn it off.
    # No HTTP routes: the scheduler and each worker serve plain-HTTP status pages (workers,
    # logs, metrics) to anyone on the machine, dashboard or not; their servers are stopped too.
    settings = {"distributed.scheduler.allowed-failures": MAX_TRIES - 1,
                "distributed.worker.profile.enabled": False,
                "distributed.scheduler.http.routes": [],
                "distributed.worker.http.routes": []}
    # Quiet: a worker's death is told by the game's result line, and the lines dask logs as
    # the cluster stops (heartbeats to a scheduler already gone) would only clutter the screen.
    with dask.config.set(settings), _ctrl_c_ignored():
        cluster = distributed.LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
            # A port of its own (not 8787, which another cluster may hold), closed at once.
            dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False},
            worker_dashboard_address=None, plugins=(NoHttp(),),
            silence_logs=logging.CRITICAL, security=security, protocol="tls://")
    with contextlib.suppress(AttributeError):  # the scheduler runs in this process
        if cluster.scheduler is not None:
            cluster.scheduler.http_server.stop()
    return cluster


@contextlib.contextmanager
def _ctrl_c_ignored() -> Iterator[None]:
    """SIGINT ignored while `local:N` starts its worker processes, which inherit that: Ctrl-C
    reaches the terminal's whole process group, and each worker would print its traceback;
    the tournament stops them itself (`ClusterPool.close`). Only the main thread can."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


class NoHttp(distributed.WorkerPlugin):
    """Stops a `local:N` worker's HTTP server as it starts (its routes are off already)."""

    def setup(self, worker: distributed.Worker) -> None:
        worker.http_server.stop()


def connect_timeout() -> float:
    """Seconds the client tries to reach the scheduler, and to reach it again once lost:
    dask's own `distributed.comm.timeouts.connect` (30 s unless set), one setting for the
    client and its workers."""
    setting = dask.config.get("distributed.comm.timeouts.connect")
    return float(dask.utils.parse_timedelta(setting, default="s"))


def connect(address: str, cluster: distributed.LocalCluster | None) -> distributed.Client:
    """A client of the scheduler with a worker to play on; `ClusterError` if it cannot be
    reached, if a tls:// address comes without dask's TLS settings, or no worker joins in
    time."""
    if cluster is None and address.startswith("tls://"):
        missing = [key for key in TLS_SETTINGS if not dask.config.get(key, None)]
        if missing:
            raise ClusterError(
                f"--cluster {address}: dask's TLS settings are missing ({', '.join(missing)}); "
                "set them in a dask configuration file or as DASK_DISTRIBUTED__COMM__TLS__... "
                "variables (docs/cluster.md)")
    try:
        client = (distributed.Client(cluster, set_as_default=False) if cluster is not None else
                  distributed.Client(address, timeout=connect_timeout(), set_as_default=False))
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the dask scheduler at {address}: {exc}") from None
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise ClusterError(f"no dask worker joined the scheduler at {address} in "
                           f"{WORKER_WAIT:.0f} s ({exc})") from None
    return client

