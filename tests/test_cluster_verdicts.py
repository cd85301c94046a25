"""The verdicts of a tournament on a cluster are a local run's: the same SPRT stop after the
same whole deal sets, the same standings, whatever order the workers finish games in.

Deselect with `-m 'not cluster'`; skipped (and says why) without dask.distributed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("distributed",
                    reason="dask.distributed is not installed (pip install -e '.[cluster]')")

from meldref.cli import app

pytestmark = pytest.mark.cluster
runner = CliRunner()


def tournament(*args: str) -> dict:
    result = runner.invoke(app, ["tournament", *args, "--json", "--no-progress"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.long  # 4-6 s: kept out of the default run, which .ci/run's -m long runs
def test_a_cluster_stops_the_sprt_where_one_local_job_does(tmp_path: Path) -> None:
    args = ["--bot", "builtin:greedy", "--bot", "builtin:random", "--games", "400",
            "--rules", "phases-to-win=1", "--players", "2", "--sprt", "0,150", "--seed", "13"]
    local = tournament(*args, "-j", "1", "--out", str(tmp_path / "local"))
    remote = tournament(*args, "--cluster", "local:2", "--out", str(tmp_path / "cluster"))
    assert local["stopped"] == remote["stopped"] == "sprt"
    assert local["sprt"] == remote["sprt"]
    assert local["standings"] == remote["standings"]
    assert local["head_to_head"] == remote["head_to_head"]
    assert remote["head_to_head"]["games"] == 2 * remote["sprt"]["deal_sets"]
