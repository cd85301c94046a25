"""Shipping a tournament run to the cluster's workers before any game: the bot folder uploaded
(`upload-bots`), the run's setup (`cluster_worker.WorkerSetup`: its bots, their programs'
digests, limits, meldref's code digest) built for the dask worker plugin that installs it, and
every worker's start-up check, which also settles where the games' files are written.

Part of the cluster client (`cluster`, whose docstring says the whole design).
"""

# dask.distributed is typed only in part (as in `cluster`: pyproject's mypy overrides), and its
# calls here are checked by tests/test_cluster*.py against a real scheduler and workers.

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Final, Literal

import distributed

from .. import __version__
from ..private import private_dir, write_private_text
from .botfolder import BotFolderError, digest, pack
from .cluster_connect import ClusterError
from .cluster_worker import WorkerReport, WorkerSetup, check_run
from .config import ClusterSpec, TournamentConfig
from .proof import code_digest, program_digests

CHECK_POLL: Final = 0.5  # seconds between looks for workers gone during the start-up check
Files = Literal["shared", "client"]


def run_setup(client: distributed.Client, config: TournamentConfig, token: str,
              attempts: Path) -> WorkerSetup:
    """The run's setup, the bot folder uploaded first if asked, and the probe written."""
    spec = config.cluster
    assert spec is not None
    explicit = config.bot_folder
    folder_digest = archive = None
    try:
        if explicit is not None:
            folder_digest = digest(explicit)
        if spec.upload_bots:
            assert explicit is not None and folder_digest is not None
            archive = f"meldref-bots-{folder_digest[:16]}.tar.gz"
            upload(client, pack(explicit), archive)
    except BotFolderError as exc:
        raise ClusterError(str(exc)) from None
    private_dir(attempts)
    bots = config.plan.bots
    setup = WorkerSetup(token, __version__, config.plan.game, bots,
                        config.policy.startup_time, config.process_limits,
                        str(explicit or Path.cwd()), explicit is not None, folder_digest,
                        archive, spec.files, str(attempts), code_digest(),
                        program_digests(bots, explicit or Path.cwd()), os.getuid())
    write_private_text(setup.probe, token)
    return setup


def upload(client: distributed.Client, data: bytes, name: str) -> None:
    """dask's upload (every worker now, and each that joins later, gets the file)."""
    with tempfile.TemporaryDirectory(prefix="meldref-upload-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        client.upload_file(str(path), load=False)


def check_workers(client: distributed.Client, setup: WorkerSetup, spec: ClusterSpec,
                  folder: Path) -> tuple[WorkerSetup, Files]:
    """Every worker's start-up check; the setup with the files' way settled, and that way;
    `ClusterError` naming each worker that failed and why."""
    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    futures = {client.submit(check_run, setup.token, workers=[address],
                             allow_other_workers=False, pure=False,
                             key=f"meldref-check-{setup.token}-{k}"): address
               for k, address in enumerate(workers)}
    bound = 30.0 + setup.startup_time * (1 + len({b.spec for b in setup.bots}))
    left = await_checks(client, futures, bound)
    reports = []
    for future, address in futures.items():
        if future.status == "finished":
            reports.append(future.result())
        elif address in left:
            continue  # its replacement (or any later worker) checks itself at its 1st game
        elif future.status == "error":
            reports.append(WorkerReport(address, f"the check failed: "
                                        f"{future.exception()!r}", False))
        else:
            reports.append(WorkerReport(address, f"no answer to the start-up check in "
                                        f"{bound:.0f} s", False))
    if not reports:
        raise ClusterError("every worker left the cluster during the start-up check")
    client.cancel(list(futures))
    problems = [f"worker {r.address}: {r.problem}" for r in reports if r.problem]
    if problems:
        raise ClusterError("; ".join(problems))
    files = files_way(spec.files, reports, folder)
    return replace(setup, files=files), files


def await_checks(client: distributed.Client,
                 futures: Mapping[distributed.Future[WorkerReport], str],
                 bound: float) -> set[str]:
    """Wait up to `bound` seconds for every check, but not for those of workers that
    leave the cluster meanwhile (killed, lost): the addresses that left."""
    waiting, left = dict(futures), set()
    deadline = time.monotonic() + bound
    while waiting and time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError):  # none finished in CHECK_POLL seconds
            for _ in distributed.as_completed(list(waiting), loop=client.loop,
                                              timeout=CHECK_POLL):
                break
        present = set(client.scheduler_info(n_workers=-1)["workers"])
        for future, address in list(waiting.items()):
            if future.done() or address not in present:
                del waiting[future]
                if not future.done():
                    left.add(address)
    return left


def files_way(asked: str, reports: list[WorkerReport], folder: Path) -> Files:
    """Where games' files are written: "shared" when asked or when every worker sees the
    folder ("auto"); `ClusterError` naming a worker that does not see it when asked."""
    blind = [r for r in reports if not r.sees_folder]
    if asked == "client" or (asked == "auto" and blind):
        return "client"
    if blind:
        why = "; ".join(f"worker {r.address}: {r.folder_problem}" for r in blind)
        raise ClusterError(f"shared files in {folder} cannot work: {why}; give "
                           "--cluster-files client (files come back with each result)")
    return "shared"

