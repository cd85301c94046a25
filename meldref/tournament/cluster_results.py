"""Taking the games' results at the client: each game's files put in place (moved from a
shared attempt folder, or written from what the worker sent), its replay verified (another
worker's verdict on the same bytes, or re-simulated here when none, when they differ, and 1
game in `CLIENT_SAMPLE` at random), and each game id counted once. Only this process writes the
output folder's `replays/` and `logs/`.

Part of the cluster client (`cluster`, whose docstring says the whole design).
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
from pathlib import Path
from typing import Final

from ..private import open_private, private_dir
from ..protocol.records import ResultLine
from ..replay.audit import verify
from ..replay.files import ReplayError
from .cluster_connect import ClusterError
from .cluster_worker import Checked, GameOutcome, Verdict, files_of, inflate, line_figures
from .schedule import GameJob

CLIENT_SAMPLE: Final = 500  # the client re-simulates 1 game in so many itself, at random


class Collector:
    """The results of one run's tasks taken into `folder`: `record` a task's games, in
    `line`s counted once, their files placed and replays verified."""

    def __init__(self, folder: Path, sample_every: int = CLIENT_SAMPLE) -> None:
        self.folder = folder
        self.sample_every = sample_every  # the client re-simulates 1 game in so many
        self.sample = random.Random()  # seeded from os.urandom: no worker foresees it
        self.made: set[Path] = set()  # the folders `place` made or found already

    def record(self, batch: tuple[GameJob, ...], outcomes: list[GameOutcome],
               checked: Checked | None, seen: set[str], lines: list[ResultLine]) -> None:
        """Append the result lines of a task's games to `lines`, files put in place and
        replays verified, games counted already left out; `ClusterError` at the first game
        that does not verify (the lines before it are in `lines`)."""
        try:
            for k, (job, outcome) in enumerate(zip(batch, outcomes, strict=False)):
                verdict = None
                if checked is not None and checked.verifier != outcome.worker and \
                        k < len(checked.verdicts):
                    verdict = checked.verdicts[k]
                line = self.line(outcome, job, job.game_id in seen, verdict,
                                 checked.verifier if checked is not None else None)
                if line is not None:
                    lines.append(count(line, seen))
        finally:
            # A task's games share an attempt folder; those not reached (a stop) go too.
            for attempt in {outcome.attempt for outcome in outcomes}:
                remove(attempt)

    def line(self, outcome: GameOutcome, job: GameJob, duplicate: bool,
             verdict: Verdict | None = None, verifier: str | None = None
             ) -> ResultLine | None:
        """A played game's result line, its files put in place and its replay verified;
        None for a game already counted; `ClusterError` for a game that does not verify."""
        assert outcome.line is not None
        if duplicate:
            return None  # its attempt folder goes with its task's (`record`)
        try:
            digest = self.place(outcome)
        except (OSError, ValueError) as exc:
            return job.error_line(f"its files could not be kept: {exc}")
        line = outcome.line
        figures = line_figures(line)
        if not line.replay:
            return line  # a game that never started writes no replay
        if figures is None:  # a game that did not finish: its replay may be cut short
            problem = self.unverified(line)
            if problem is not None:
                return job.error_line(f"the replay worker {outcome.worker} sent does not "
                                      f"verify ({problem}): it was not counted")
            return line
        same = verdict is not None and verdict.digest == digest
        if same and verdict is not None and verdict.figures == figures and \
                self.sample.random() * self.sample_every >= 1:
            return line  # another worker re-simulated these very bytes to these figures
        problem = self.unverified(line)
        if problem is not None:
            raise ClusterError(
                f"worker {outcome.worker} sent game {line.game_id}, whose replay does not "
                f"verify here ({problem}): it does not play what it proved at its start-up "
                "check; fix or stop it, then rerun to resume (the game was not counted)")
        if same and verdict is not None and verdict.figures != figures:  # the verifier's
            (self.folder / line.replay).unlink(missing_ok=True)
            found = "it does not verify" if verdict.figures is None else \
                f"figures {verdict.figures}"
            raise ClusterError(
                f"worker {verifier} re-simulated game {line.game_id} otherwise than this "
                f"machine ({found}; here {figures}): it does not run what it proved at its "
                "start-up check; fix or stop it, then rerun to resume")
        return line

    def unverified(self, line: ResultLine) -> str | None:
        """What is wrong with a game's replay as it arrived, re-simulated here from its seed
        and actions under this machine's rules (None: it verifies, and says the result the
        line says); a replay that does not verify is removed."""
        assert line.replay
        path = self.folder / line.replay
        try:
            done = verify(path)
            outcome = done.result.get("outcome") or {}
            said = {} if line.figures is None else {
                "actions": line.figures.actions, "places": list(line.figures.outcome.places),
                "scores": list(line.figures.outcome.scores)}
            for key, found in (("actions", done.actions), ("places", outcome.get("places")),
                               ("scores", outcome.get("scores"))):
                if key in said and said[key] != found:
                    raise ReplayError(0, f"{key} {found} in the replay, {said[key]} in the "
                                         "result it came with")
        except (ReplayError, OSError) as exc:
            path.unlink(missing_ok=True)
            return str(exc)
        return None

    def place(self, outcome: GameOutcome) -> str | None:
        """Move (shared) or write (client) the game's replay and kept logs into the folder;
        the sha256 digest of the replay as kept."""
        assert outcome.line is not None
        digest = None
        for rel in files_of(outcome.line):
            target = self.folder / rel
            if target.parent not in self.made:  # once a run for replays/
                private_dir(target.parent)
                self.made.add(target.parent)
            data = None
            if outcome.attempt is not None:
                try:
                    os.replace(os.path.join(outcome.attempt, rel), target)
                except FileNotFoundError:
                    continue  # a log the game did not write
                if rel == outcome.line.replay:
                    data = target.read_bytes()
            elif outcome.files is not None and rel in outcome.files:
                data = inflate(outcome.files[rel], rel)
                with open_private(target, "wb") as f:
                    f.write(data)
            if rel == outcome.line.replay and data is not None:
                digest = hashlib.sha256(data).hexdigest()
        return digest


def count(line: ResultLine, seen: set[str]) -> ResultLine:
    """`line`, its game now counted (a game id is yielded once)."""
    seen.add(line.game_id)
    return line


def remove(path: str | None) -> None:
    """Remove an attempt folder (or none), whatever is in it."""
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
