#!/usr/bin/env python3
"""A bot that misbehaves on purpose, one way per mode (argv[1]); otherwise it plays the first
`legal` hint. Used by tests/test_protocol_*.py, the command line and tournament tests.

Modes:
  good          plays correctly (the control)
  silent        handshakes, then never writes again (ignores pings too)      -> stalled
  slow          answers a decision only once the referee's `ping` came, which it sends only
                after the deadline: its answer, then the pong               -> timeout, late
                (late by construction, never by a race between two clocks)
  compute       single-threaded: computes (busy CPU) from `go` until the referee's `ping` waits
                on its stdin (unread), then SLOW seconds more (more than the referee's ping
                grace), then answers: it reads nothing meanwhile       -> timeout, late, busy
  spin          handshakes, then computes for ever at its first decision        -> stalled (busy)
  garbage       answers every decision with a line that is not protocol         -> malformed
  illegal       answers every decision with an action the rules forbid          -> illegal
  crash         plays 3 decisions, then exits with code 3                       -> crashed
  segv          plays 1 decision, then kills itself with SIGSEGV                -> crashed
  exit_at_start exits with code 1 before the handshake                          -> crashed
  silent_start  never answers the handshake (ignores pings too)                 -> stalled
  close_stdout  closes stdout after the handshake, keeps running                -> closed
  stderr_flood  plays correctly while writing megabytes to stderr               -> normal game
  stderr_lines  plays correctly, writing protocol-like lines (wrong actions) on stderr
                                                                                -> normal game
  orphan_child  plays correctly with a child that outlives it (sleeps, ignores SIGTERM),
                and exits on `quit`                                   -> the child is killed
  no_read       handshakes, then stops reading stdin forever                    -> stalled
  fork_child    forks a child that ignores SIGTERM (before `ready`, so BAD_BOT_CHILD_PID_FILE
                exists before the game starts), then stalls ignoring SIGTERM -> stalled,
                and the referee must SIGKILL both
  no_flush      handshakes, then answers without flushing                       -> stalled
  retry_once    answers each decision illegally once, then legally after the error
  late_then_ok  answers the first decision late (as `slow`), then plays correctly
  chatty        sends info lines and a stray pong before every answer           -> normal game
  twice         answers every request, then answers it again with a wrong action -> late only
  banner        prints a banner line before the handshake                       -> normal game
  flood         writes FLOOD `action 0 draw pile` lines before every answer     -> malformed
                (flooding), judged at once
  flood_idle    writes FLOOD such lines after every answer (between requests)   -> malformed
  flood_banner  writes FLOOD banner lines before `ready`                        -> malformed
  wrong_id      answers every decision at once, legally, but with the id of the request
                before it (id - 1)                    -> late notes, then timeout (`bot check`:
                a wrong request id)
  stray         writes 30 stray `action 0 draw pile` lines before every answer (under the
                flood limit)                                   -> normal game, notes capped
  long_illegal  answers every decision with a 16,000-character illegal action   -> illegal
  escape        plays correctly with a child started by `setsid sleep 77`, which leaves its
                process group and session                             -> the child is killed
  escape_orphan plays correctly after a double fork: a grandchild in its own session whose
                parent exited (an orphan)                             -> the orphan is killed
  hog           allocates HOG_MB MiB at its first decision, then plays       -> crashed when
                the seat's memory cap is lower
  hold          counts each game in BAD_BOT_COUNT_FILE at its first decision (a start-up check
                that only shakes hands does not count; a process kept for several games counts
                each): the first BAD_BOT_PLAY games play correctly, the next BAD_BOT_HOLD
                (default: all) never get an answer (the bot leaves on `quit`), so a tournament
                stays in a game until the test stops it.
                Without BAD_BOT_COUNT_FILE it plays correctly (a resumed tournament).

Words after MODE are ignored: tests add a unique token to find their bots' processes.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
SLOW = float(os.environ.get("BAD_BOT_SLOW", "0.6"))
CHILD_PID_FILE = os.environ.get("BAD_BOT_CHILD_PID_FILE", "")
FLOOD = int(os.environ.get("BAD_BOT_FLOOD", "5000"))
HOG_MB = int(os.environ.get("BAD_BOT_HOG_MB", "512"))
COUNT_FILE = os.environ.get("BAD_BOT_COUNT_FILE", "")
PLAY = int(os.environ.get("BAD_BOT_PLAY", "0"))
HOLD = int(os.environ.get("BAD_BOT_HOLD", "1000000"))


def send(line: str, flush: bool = True) -> None:
    sys.stdout.write(line + "\n")
    if flush:
        sys.stdout.flush()


def fork_stubborn_child() -> None:
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.closerange(0, 3)
        while True:
            time.sleep(1)
    if CHILD_PID_FILE:
        with open(CHILD_PID_FILE, "w") as f:
            f.write(str(pid))


def write_child_pid(pid: int) -> None:
    if CHILD_PID_FILE:
        with open(CHILD_PID_FILE + ".tmp", "w") as f:
            f.write(str(pid))
        os.replace(CHILD_PID_FILE + ".tmp", CHILD_PID_FILE)


def escape() -> None:
    """A child out of the bot's process group and session: `setsid sleep 77`."""
    import subprocess

    child = subprocess.Popen(["setsid", "sleep", "77"])
    write_child_pid(child.pid)


def escape_orphan() -> None:
    """Double fork: the grandchild starts its own session, its parent exits at once."""
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            os.setsid()
            os.closerange(0, 3)
            write_child_pid(os.getpid())
            os.execvp("sleep", ["sleep", "77"])
        os._exit(0)
    os.waitpid(pid, 0)
    deadline = time.monotonic() + 5
    while CHILD_PID_FILE and not os.path.exists(CHILD_PID_FILE) and time.monotonic() < deadline:
        time.sleep(0.01)


def counted_as() -> int:
    """This process's number among those counted in BAD_BOT_COUNT_FILE (1, 2, ...): each
    appends one byte, and O_APPEND makes the offset after the write its own count."""
    fd = os.open(COUNT_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, b".")
        return os.lseek(fd, 0, os.SEEK_CUR)
    finally:
        os.close(fd)


def ping_waiting() -> bool:
    """Whether a line (the referee's `ping`) waits on stdin, without reading it."""
    return bool(select.select([sys.stdin.fileno()], [], [], 0)[0])


def main() -> None:
    if MODE == "no_flush":  # block-buffered even under PYTHONUNBUFFERED, as C stdio on a pipe
        sys.stdout = os.fdopen(1, "w", buffering=8192, closefd=False)
    if MODE == "exit_at_start":
        sys.exit(1)
    if MODE == "silent_start":
        time.sleep(3600)
    if MODE == "banner":
        send("Welcome to BadBot 0.1, the finest bot in town")
    if MODE == "flood_banner":
        send("\n".join(["Welcome to BadBot 0.1, the finest bot in town"] * FLOOD))
    legal: list[str] = []
    decisions = 0
    game_decisions = 0  # in this game: a kept process plays several
    owed = ""  # slow, late_then_ok: the answer held back until the referee's ping
    holding = False
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        kind = words[0]
        if kind == "meldref":
            if MODE in ("orphan_child", "fork_child"):
                fork_stubborn_child()
            if MODE == "escape":
                escape()
            if MODE == "escape_orphan":
                escape_orphan()
            send(f"id name bad-{MODE}")
            send("ready")
            sys.stdout.flush()
            after_handshake()
        elif kind == "game":
            game_decisions = 0
        elif kind == "view":
            legal = []
        elif kind == "legal":
            legal.append(" ".join(words[1:]))
        elif kind == "ping" and MODE != "silent":
            if owed:  # past the deadline for sure: the referee pings only then
                send(owed)
                owed = ""
            send(f"pong {words[1]}", flush=MODE != "no_flush")
        elif kind == "quit":
            return
        elif kind == "go":
            decisions += 1
            game_decisions += 1
            if MODE == "hold" and COUNT_FILE and game_decisions == 1:
                holding = PLAY < counted_as() <= PLAY + HOLD
            if holding:
                continue
            if MODE == "slow" or (MODE == "late_then_ok" and decisions == 1):
                owed = f"action {words[1]} {legal[0] if legal else 'draw pile'}"
                continue
            answer(words[1], legal, decisions)


def after_handshake() -> None:
    if MODE in ("silent", "no_read"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        while True:
            time.sleep(1)
    if MODE == "close_stdout":
        sys.stdout.close()
        os.close(1)
        while True:
            time.sleep(1)
    if MODE == "fork_child":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)


def compute(seconds: float) -> None:
    """Burn CPU like a search that does not look at its input until it is done."""
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n = (n * 31 + 7) % 1_000_003


def compute_past_the_ping(seconds: float) -> None:
    """Burn CPU until the referee's ping waits on stdin (so the deadline has passed), then
    `seconds` more: the answer comes after the referee's first ping grace by construction."""
    while not ping_waiting():
        compute(0.001)
    compute(seconds)


def answer(rid: str, legal: list[str], decisions: int) -> None:
    good = legal[0] if legal else "draw pile"
    if MODE == "stderr_flood":
        sys.stderr.write("x" * 200_000 + "\n")
    if MODE == "stderr_lines":  # never read as protocol: these would be illegal or malformed
        sys.stderr.write(f"action {rid} discard Q*\nhello there\npong 1\n")
        sys.stderr.flush()
    if MODE == "chatty":
        send("info thinking hard")
        send("pong 999")
    if MODE in ("flood", "stray"):
        send("\n".join(["action 0 draw pile"] * (FLOOD if MODE == "flood" else 30)))
    if MODE == "hog" and decisions == 1:
        hog = bytearray(HOG_MB << 20)
        hog[-1] = 1
    if MODE == "compute":
        compute_past_the_ping(SLOW)
    if MODE == "spin":
        compute(float("inf"))
    if MODE == "garbage":
        send("hello referee, I would like to draw please")
    elif MODE == "wrong_id":
        send(f"action {int(rid) - 1} {good}")
    elif MODE == "illegal":
        send(f"action {rid} discard Q*")
    elif MODE == "long_illegal":
        send(f"action {rid} discard " + "Q*" * 8000)
    elif MODE == "retry_once" and decisions % 2 == 1:  # every other request: the retries
        send(f"action {rid} draw nowhere")
    elif MODE == "no_flush":
        send(f"action {rid} {good}", flush=False)
    else:
        send(f"action {rid} {good}")
    if MODE == "flood_idle":
        send("\n".join(["action 0 draw pile"] * FLOOD))
    if MODE == "twice":  # arrives while the referee waits for the next answer, or between
        send(f"action {rid} discard Q*")
    if MODE == "crash" and decisions >= 3:
        sys.exit(3)
    if MODE == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)


if __name__ == "__main__":
    main()
