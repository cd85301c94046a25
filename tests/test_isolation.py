"""Bot isolation options: a network namespace per bot (`--no-network`), a CPU-time cap
(`--cpu-seconds`), and a warning where a limit cannot apply (`--max-processes` as root)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meldref.cli import app
from meldref.protocol.launch import network_isolation_problem

runner = CliRunner()
NETWORK = network_isolation_problem()


def write(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return f"{sys.executable} {path}"


def connecting_bot(folder: Path, port: int) -> str:
    """A bot whose `id name` says whether it could connect to 127.0.0.1:`port`."""
    return write(folder, "net.py", f'''\
        import socket, sys
        for line in sys.stdin:
            w = line.split()
            if w and w[0] == "meldref":
                try:
                    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
                    how = "connected"
                except OSError:
                    how = "cut-off"
                sys.stdout.write(f"id name {{how}}\\nready\\n")
                sys.stdout.flush()
            elif w and w[0] == "quit":
                break
        ''')


@pytest.mark.skipif(NETWORK is not None, reason=f"no network namespaces here: {NETWORK}")
@pytest.mark.long  # 4-6 s: kept out of the default run, which .ci/run's -m long runs
def test_no_network_denies_a_connect_to_loopback(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        bot = connecting_bot(tmp_path, port)
        common = ["bot", "check", bot, "--game", "solitaire", "--json", "--startup-time", "5",
                  "--first-move-time", "0.1", "--move-time", "0.1"]  # it never answers a go
        free = json.loads(runner.invoke(app, common).stdout)
        cut = json.loads(runner.invoke(app, [*common, "--no-network"]).stdout)
    finally:
        server.close()
    assert free["ids"]["name"] == "connected"  # the control: without the option it can
    assert cut["ids"]["name"] == "cut-off"


@pytest.mark.skipif(shutil.which("unshare") is None, reason="util-linux's unshare is missing")
def test_no_network_is_refused_clearly_where_it_cannot_be_had(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    from meldref.protocol import launch

    monkeypatch.setattr(launch, "UNSHARE", "/nonexistent/unshare")
    bot = connecting_bot(tmp_path, 9)
    result = runner.invoke(app, ["match", "solitaire", "--bot", bot, "--no-network"])
    assert result.exit_code == 2 and "--no-network:" in result.stderr


def test_a_cpu_cap_ends_a_bot_that_computes_past_it(tmp_path: Path) -> None:
    bot = write(tmp_path, "spin.py", '''\
        import sys
        for line in sys.stdin:
            w = line.split()
            if w and w[0] == "meldref":
                sys.stdout.write("id name spin\\nready\\n")
                sys.stdout.flush()
            elif w and w[0] == "go":
                while True:
                    pass
        ''')
    result = runner.invoke(app, ["match", "solitaire", "--bot", f"{bot}", "--seed", "1",
                                 "--cpu-seconds", "1", "--move-time", "30", "--json"])
    assert result.exit_code == 0, result.output
    (game,) = json.loads(result.stdout)["games"]
    (fault,) = game["faults"][0]
    # Killed by the kernel at 1 s of CPU (SIGXCPU), long before the 30 s deadline.
    assert fault["outcome"] == "crashed" and fault["fatal"], fault


@pytest.mark.skipif(os.geteuid() != 0, reason="the warning is for root only")
def test_max_processes_as_root_is_warned_about() -> None:
    result = runner.invoke(app, ["match", "phase10", "--players", "2", "--rules",
                                 "phases-to-win=1", "--max-processes", "100"])
    assert result.exit_code == 0
    assert "warning: max-processes has no effect on bots running as root" in result.stderr
