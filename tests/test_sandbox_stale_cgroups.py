"""A referee clears the empty cgroups that killed referees left, and only those: never one
another referee has just made for a bot it is starting (issue 23's sandbox, found as a
`contest run -j 2` that hung on a half-built sandbox)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from meldref.protocol import sandbox


def test_a_fresh_empty_cgroup_is_left_to_the_referee_making_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    removed: list[str] = []
    monkeypatch.setattr(Path, "rmdir", lambda self: removed.append(self.name))
    for name in ("meldref-fresh", "meldref-old", "meldref-busy", "other-old"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "cgroup.procs").write_text("123\n" if name == "meldref-busy" else "")
    long_ago = time.time() - 2 * sandbox.STALE_AFTER
    for name in ("meldref-old", "meldref-busy", "other-old"):
        os.utime(tmp_path / name, (long_ago, long_ago))
    sandbox._clear_stale(tmp_path)
    # Was: every empty meldref-* cgroup went, the one a referee had made a moment before for
    # the bot it was starting included; that bot's start failed half-way.
    assert removed == ["meldref-old"]


def test_a_failed_start_closes_the_pipes_a_half_built_sandbox_waits_on() -> None:
    jail = sandbox.Jail(("true",), None, {}, "t", sandbox.Plan(None, None, None))
    argv = jail.argv
    fds = [int(argv[argv.index(flag) + 1]) for flag in ("--userns-block-fd", "--info-fd")]
    assert sorted(fds) == sorted(jail.pass_fds)
    jail.abandon()
    for fd in fds:
        with pytest.raises(OSError):
            os.fstat(fd)
    jail.reap()
