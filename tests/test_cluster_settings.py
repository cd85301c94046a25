"""Cluster settings without a cluster (issue 14): `--cluster` and its companions parsed and
checked before any bot starts, the bot folder (bots start there; its digest and archive), and
the message when dask.distributed is not installed."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from support import ROOT
from typer.testing import CliRunner

from meldref.cli.app import app
from meldref.tournament import botfolder
from meldref.tournament.botfolder import BotFolderError, digest, pack, unpack
from meldref.tournament.config import ClusterTarget, ConfigError, build_config

BOTS = {"bots": ["builtin:greedy", "builtin:random"]}
runner = CliRunner()


@pytest.mark.parametrize("text", ["local:1", "local:256", "tcp://127.0.0.1:8786",
                                  "tls://scheduler.example.org:8786", "tcp://[::1]:1"])
def test_cluster_targets_round_trip(text: str) -> None:
    target = ClusterTarget.parse(text)
    assert str(target) == text and ClusterTarget.parse(str(target)) == target
    assert (target.workers is None) == (target.address is not None)


@pytest.mark.parametrize("text", ["local:0", "local:257", "local:", "local:two", "local:-1",
                                  "http://host:80", "tcp://host", "tcp://host:0",
                                  "tcp://host:65536", "tcp://:8786", "tcp://a b:1", "host:8786",
                                  ""])
def test_wrong_cluster_targets_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        ClusterTarget.parse(text)


def test_the_cluster_comes_from_the_file_or_the_flag(tmp_path: Path) -> None:
    config = build_config({**BOTS, "cluster": "local:3", "cluster-files": "client",
                           "bot-folder": str(tmp_path), "upload-bots": True}, {})
    assert config.cluster is not None and str(config.cluster.target) == "local:3"
    assert config.cluster.files == "client" and config.cluster.upload_bots
    assert config.bot_folder == tmp_path.resolve()
    flagged = build_config({**BOTS, "cluster": "local:3"}, {"cluster": "tls://h:8786"})
    assert flagged.cluster is not None and flagged.cluster.target.address == "tls://h:8786"
    assert flagged.cluster.files == "auto" and not flagged.cluster.upload_bots
    assert build_config(BOTS, {}).cluster is None


@pytest.mark.parametrize(("data", "flags", "message"), [
    ({"cluster": "local:0"}, {}, "cluster = 'local:0': local:N takes N from 1 to 256"),
    ({}, {"cluster": "udp://h:1"}, "--cluster = 'udp://h:1': local:N, or a dask scheduler's "
                                   "address tcp://HOST:PORT or tls://HOST:PORT"),
    ({"cluster": 3}, {}, "cluster = 3: "),
    ({}, {"upload-bots": True}, "--upload-bots: only with a cluster (--cluster)"),
    ({"cluster-files": "client"}, {}, "cluster-files: only with a cluster"),
    ({"cluster": "local:1", "upload-bots": True}, {},
     "upload-bots: give the folder to upload (--bot-folder)"),
    ({"cluster": "local:1"}, {"cluster-files": "nfs"},
     "--cluster-files = 'nfs': one of auto, shared, client"),
    ({"bot-folder": "/no/such/folder"}, {}, "bot-folder /no/such/folder: not a folder"),
    ({}, {"bot-folder": "/no/such/folder"}, "--bot-folder /no/such/folder: not a folder"),
])
def test_wrong_cluster_settings_name_their_key_or_flag(data: dict[str, Any],
                                                       flags: dict[str, Any],
                                                       message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        build_config({**BOTS, **data}, flags)
    assert message in str(caught.value)


def test_bot_programs_start_in_the_bot_folder(tmp_path: Path) -> None:
    # "./mine.py" exists only in the bot folder: the preflight and every game find it there.
    folder = tmp_path / "contest"
    folder.mkdir()
    mine = folder / "mine.py"
    mine.write_text(f"#!{sys.executable}\nimport runpy, sys\n"
                    f"sys.argv = ['random_bot.py', '--seed', '1']\n"
                    f"runpy.run_path({str(ROOT / 'bots' / 'random_bot.py')!r}, "
                    "run_name='__main__')\n")
    mine.chmod(0o755)
    out = tmp_path / "t"
    args = ["tournament", "--bot", "./mine.py", "--bot", "builtin:greedy", "--rules",
            "phases-to-win=1", "--games", "2", "--out", str(out), "--no-progress", "--json"]
    missing = runner.invoke(app, args)
    assert missing.exit_code == 2 and "./mine.py does not exist" in missing.stderr
    result = runner.invoke(app, [*args, "--bot-folder", str(folder)])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["played_now"] == 2
    stored = json.loads((out / "tournament.json").read_text())
    assert stored["bot-folder"] == str(folder) and stored["cluster"] is None


def test_without_dask_the_cluster_flag_says_what_to_install(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "distributed" else real(name, *a))
    result = runner.invoke(app, ["tournament", "--bot", "builtin:greedy", "--bot",
                                 "builtin:random", "--cluster", "local:1", "--out",
                                 str(tmp_path / "t"), "--no-progress"])
    assert result.exit_code == 2
    assert "pip install 'meldref[cluster]'" in " ".join(result.stderr.split())


def make_folder(root: Path) -> Path:
    folder = root / "bots"
    (folder / "lib").mkdir(parents=True)
    (folder / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "lib" / "weights.bin").write_bytes(bytes(range(256)) * 10)
    (folder / "link").symlink_to("lib/weights.bin")
    return folder


def test_the_digest_covers_contents_modes_names_and_links(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    first = digest(folder)
    assert digest(folder) == first
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"cache")
    assert digest(folder) == first  # written by bots that import modules: not the folder's
    (folder / "run.sh").chmod(0o644)
    assert digest(folder) != first
    (folder / "run.sh").chmod(0o755)
    assert digest(folder) == first
    (folder / "lib" / "weights.bin").write_bytes(b"other")
    assert digest(folder) != first
    (folder / "lib" / "weights.bin").write_bytes(bytes(range(256)) * 10)
    (folder / "link").unlink()
    (folder / "link").symlink_to("run.sh")
    assert digest(folder) != first


def test_an_archive_unpacks_to_the_same_folder(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    target = tmp_path / "worker" / "copy"
    target.parent.mkdir()
    unpack(pack(folder), target, digest(folder))
    assert digest(target) == digest(folder)
    assert (target / "run.sh").stat().st_mode & 0o100  # still executable
    assert (target / "link").is_symlink()
    unpack(pack(folder), target, digest(folder))  # already there: checked, kept
    with pytest.raises(BotFolderError, match="holds another bot folder"):
        unpack(pack(folder), target, "0" * 64)
    with pytest.raises(BotFolderError, match="damaged on the way"):
        unpack(pack(folder), tmp_path / "worker" / "other", "0" * 64)
    assert list((tmp_path / "worker").iterdir()) == [target]  # no half-unpacked folder left


def test_an_archive_may_not_write_outside_its_folder(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        member = tarfile.TarInfo("../escaped")
        member.size = 2
        tar.addfile(member, io.BytesIO(b"hi"))
    with pytest.raises(BotFolderError, match="cannot unpack"):
        unpack(buffer.getvalue(), tmp_path / "copy", "0" * 64)
    assert not (tmp_path / "escaped").exists()


def test_a_bot_folder_too_large_to_send_is_refused(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_folder(tmp_path)
    (folder / "big").write_bytes(os.urandom(1 << 20))  # does not compress
    monkeypatch.setattr(botfolder, "MAX_ARCHIVE_BYTES", 1000)
    with pytest.raises(BotFolderError, match="shared filesystem"):
        pack(folder)
