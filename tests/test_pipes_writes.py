"""The referee's writes to a bot: the events of a turn go to the transport once, with the
request or the turn's flush that carries them, as the lines of one send (joined and encoded
once); the bytes and their order on the wire are unchanged (tests/test_protocol_transcripts.py
pins those). And a referee pinned to one core does not look for a quick answer before it
sleeps: its bot, on that core too, cannot answer meanwhile."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from test_conversation import Clock, ScriptedBot, request

from meldref.protocol.conversation import Conversation


class CountingBot(ScriptedBot):
    """A scripted bot that also keeps each send's lines as one batch."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self.batches: list[list[str]] = []

    def send(self, *lines: str, now: bool = True) -> None:
        self.batches.append(list(lines))
        super().send(*lines, now=now)


def conversation() -> tuple[Conversation, CountingBot]:
    bot = CountingBot(Clock())
    bot.on("go 1").reply("action 1 place 3 X")
    return Conversation(bot, clock=bot.clock), bot


def test_events_told_go_out_with_the_request_in_one_send() -> None:
    conv, bot = conversation()
    conv.notify([{"event": "draw", "seat": 0}])
    conv.notify([{"event": "place", "pile": 3, "card": "R7"}, {"event": "moves", "moves": 2}])
    assert bot.batches == []  # nothing goes out at `notify`
    assert conv.decide(request()).text == "place 3 X"
    [batch] = bot.batches
    assert batch[:3] == ["event draw seat 0", "event place pile 3 card R7", "event moves moves 2"]
    assert batch[3].startswith("view ") and batch[-1].startswith("go 1 ")


def test_the_turns_flush_sends_its_events_once_and_a_flush_without_events_nothing() -> None:
    conv, bot = conversation()
    conv.notify([{"event": "draw", "seat": 1}])
    conv.notify([{"event": "discard", "seat": 1, "card": "R7"}])
    conv.flush()
    conv.flush()
    assert bot.batches == [["event draw seat 1", "event discard seat 1 card R7"]]
    conv.reject(3, "illegal")
    conv.notify([{"event": "draw", "seat": 0}])
    conv.finish({"winners": [0]})
    assert bot.batches[1:] == [["error 3 illegal"], ["event draw seat 0", "gameover winners 0"]]


# A child pinned to one core (and so its bot, `cat`, which inherits that) counts the yields of
# its reads' looks for a quick answer: the bot cannot answer while the referee looks there.
PINNED_READS = """
import os, subprocess, time
from meldref.protocol import channel
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
yields = 0
def counted() -> None:
    global yields
    yields += 1
os.sched_yield = counted
cat = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
pipe = channel.PipeTransport(cat.stdout.fileno(), cat.stdin.fileno())
for i in range(200):
    pipe.send(f"ping {i}")
    assert pipe.read(time.monotonic() + 10).data == f"ping {i}".encode()
cat.stdin.close()
cat.wait()
print(yields)
"""


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or shutil.which("cat") is None,
                    reason="needs Linux's CPU affinity and cat")
def test_a_referee_pinned_to_one_core_sleeps_at_once_for_an_answer() -> None:
    run = subprocess.run([sys.executable, "-c", PINNED_READS], capture_output=True, text=True,
                         timeout=120, env=os.environ.copy())
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["0"]
