"""Issue 26: `bot check` names the fault a bot made: an answer with the wrong request id is
reported as a wrong id (not as the timeout it leads to); a bot whose code raised, answered by
its SDK's fallback, fails; the SDK prints each exception's traceback to stderr and counts
them."""

from __future__ import annotations

import json
from pathlib import Path

from support import BAD_BOT, PYTHON, ROOT
from typer.testing import CliRunner

from meldref.cli.app import app

RAISING = f"{PYTHON} {ROOT / 'tests' / 'bots' / 'raising_sdk_bot.py'}"
runner = CliRunner()


def check(command: str, *args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["bot", "check", command, "--json", *args])
    return result.exit_code, json.loads(result.stdout)


def failed(report: dict) -> dict[str, str]:
    return {c["check"]: c["detail"] for c in report["checks"] if c["status"] == "fail"}


def test_a_wrong_request_id_is_named_a_wrong_id() -> None:
    code, report = check(f"{BAD_BOT} wrong_id", "--game", "phase10", "--move-time", "0.3",
                         "--first-move-time", "0.3")
    assert code == 1
    detail = failed(report)["phase10: a full game"]
    assert detail.startswith("wrong request id:"), detail
    assert "answered request 1 with id 0" in detail, detail


def test_a_bot_whose_code_raised_fails_with_the_exception(tmp_path: Path) -> None:
    code, report = check(RAISING, "--game", "fivecrowns", "--move-time", "10",
                         "--logs", str(tmp_path))
    assert code == 1
    detail = failed(report)["fivecrowns: its code raised no exception"]
    assert "ValueError: no idea how to draw" in detail, detail
    assert "the SDK answered with its fallback" in detail
    log = (tmp_path / "fivecrowns.stderr").read_text()
    assert "Traceback (most recent call last):" in log and "in draw" in log
    assert "exception 2 of this process" in log  # counted, each with its traceback
