"""`meldref bot check` reads a bot through the referee's own reader and parser, so it judges
every line as a match would: what the referee accepts (message types in any case, words after
`ready`, spec/PROTOCOL.md sections 4-5) the check accepts too, and the reverse."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from meldref.protocol.referee import MatchPolicy
from meldref.tools.botcheck import check_bot

SHOUTY = '''\
    import sys
    legal = []
    for line in sys.stdin:
        w = line.split()
        if not w:
            continue
        if w[0] == "meldref":
            print("ID name shouty\\nREADY to play", flush=True)
        elif w[0] == "ping":
            print(f"PONG {w[1]}", flush=True)
        elif w[0] == "view":
            legal = []
        elif w[0] == "legal":
            legal.append(" ".join(w[1:]))
        elif w[0] == "go":
            print(f"ACTION {w[1]} {legal[0]}", flush=True)
        elif w[0] == "quit":
            break
    '''


def test_what_the_referee_accepts_the_check_accepts(tmp_path: Path) -> None:
    bot = tmp_path / "shouty.py"
    bot.write_text(textwrap.dedent(SHOUTY))
    report = check_bot(f"{sys.executable} {bot}", games=["solitaire"])
    checks = {c.name: c for c in report.checks}
    assert report.passed, [c for c in report.checks if c.status != "pass"]
    assert checks["handshake"].status == "pass"  # `READY to play`: words after ready ignored
    assert checks["answers ping"].status == "pass"  # `PONG check-1`: any case
    assert report.ids == {"name": "shouty"}  # `ID name ...`, as the referee reads it
    assert checks["solitaire: a full game"].status == "pass"  # and the referee agrees


def test_a_line_cut_off_by_the_end_of_output_is_no_message(tmp_path: Path) -> None:
    """The reader hands over a last line without its newline at the end of output (the
    referee reads it); the check still names the missing newline, as it does for a program
    that runs on."""
    bot = tmp_path / "cut.py"
    bot.write_text(textwrap.dedent('''\
        import sys
        sys.stdin.readline()
        sys.stdout.write("ready")
        '''))
    report = check_bot(f"{sys.executable} {bot}", games=["solitaire"],
                       policy=MatchPolicy(startup_time=1.0))
    (handshake,) = [c for c in report.checks if c.name == "handshake"]
    assert handshake.status == "fail" and "arrived without a newline" in handshake.detail
