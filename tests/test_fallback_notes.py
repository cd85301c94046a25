"""A bot never plays its SDK's fallback unseen (issue 48): the SDK says `info fallback <id>
<why>` when its thinking raised or ran out of time, and the referee notes a `fallback` fault
(it costs the bot nothing) in the replay, the match's fault counts and `replay stats`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support import PYTHON, ROOT

from meldref.protocol.conversation import Conversation
from meldref.protocol.errors import FaultOutcome

RAISING = f"{PYTHON} {ROOT / 'tests' / 'bots' / 'raising_sdk_bot.py'}"


def meldref(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "meldref", *args], capture_output=True,
                          text=True, cwd=ROOT, check=False)


def test_a_match_counts_every_fallback_the_sdk_played(tmp_path: Path) -> None:
    replay = tmp_path / "g.jsonl"
    done = meldref("match", "--bot", RAISING, "--bot", "builtin:random", "--seed", "3",
                   "--rules", "phases-to-win=1", "--replay", str(replay))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in replay.read_text().splitlines()]
    draws = sum(1 for r in records if r["type"] == "action" and r["seat"] == 0
                and r["decision"] == "draw")
    fallbacks = [r for r in records if r["type"] == "fault" and r["outcome"] == "fallback"]
    assert draws > 0 and fallbacks and all(r["seat"] == 0 and not r["fatal"] for r in fallbacks)
    assert "ValueError: no idea how to draw" in fallbacks[0]["detail"]
    counted = sum(r.get("suppressed", 1) for r in fallbacks)
    assert counted == draws  # every raising draw, and nothing else
    stats = meldref("replay", "stats", str(replay), "--json")
    bots = {b["bot"]: b for b in json.loads(stats.stdout)["bots"]}
    assert bots["raising"]["faults_by_outcome"] == {"fallback": draws}
    assert meldref("replay", "verify", str(replay)).returncode == 0


class Silent:
    """A transport nobody reads from: the notes are all this test looks at."""

    def send(self, *lines: str) -> None:
        pass


def test_the_referee_notes_a_fallback_once_a_request_and_only_for_that_request() -> None:
    conversation = Conversation(transport=Silent())  # type: ignore[arg-type]
    conversation._fallback_said("fallback 7 ValueError: x", 7)
    conversation._fallback_said("fallback 7 again", 7)  # a flood is one note
    conversation._fallback_said("fallback 6 an old one", 7)  # another request's: nothing
    conversation._fallback_said("thinking about fallbacks", 7)  # plain info: nothing
    notes = conversation.take_notes()
    assert [(n.outcome, n.request_id, n.fatal) for n in notes] == [
        (FaultOutcome.FALLBACK, 7, False)]
    assert "ValueError: x" in notes[0].detail
