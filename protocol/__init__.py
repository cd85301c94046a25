"""The wire format, bot processes and the referee's game loop (spec/PROTOCOL.md is the bot
author's reference).

- `wire`: message lines built from JSON-like values; the parser of bot lines (never raises).
- `viewtext`: the `view` and `item` lines of each game, written from its view objects.
- `channel`: `LineChannel`, lines over pipes with deadlines, never blocking, and
  `PipeTransport`, the conversation's transport over a bot program's pipes.
- `command`: `BotCommand` (a bot's argv, working folder and environment, never a shell),
  `program_found`, `why_not_started` and `describe_exit` (a start or an exit in words).
- `limits`: `Limits` (a seat's graces and resource limits), `resource_limits`, `apply_limits`,
  `limits_in_force` (read back from /proc).
- `launch`: `launch_argv` (under the guard or `setpriv --pdeathsig KILL`, `unshare --net` for
  no network), `become_subreaper`, `network_isolation_problem`.
- `descriptors`: `Descriptor`, an open file descriptor with one owner who closes it once (a
  number closed twice closes whatever reused it: another seat's pipe, the replay).
- `stderrlog`: `StderrLog`, a bot's stderr drained on a thread into a capped log.
- `sweep`: what escaped a bot's group, found through /proc (`descendants`, `group_members`, the
  `carriers` of its cookie, MELDREF_BOT) and killed (`kill_strays`); `group_cpu_time`; the
  kill-all of a process about to exit (`kill_all_bots`).
- `process`: `BotProcess`, a bot program's process from start to reaping (its own process
  group, quit, SIGTERM, SIGKILL, the sweep).
- `guard`: the small process that starts a bot program and outlives it by nothing: the
  subreaper of all it starts, its rlimits set between fork and exec, every process of the bot
  killed when the bot or the referee dies (kill -9 included).
- `sandbox`: `--sandbox`'s bubblewrap container for a bot program: namespaces, a uid of its
  own, a fresh environment, the folders it may read, a private /tmp, cgroup limits.
- `conversation`: the exchanges with one bot over any transport: handshake, requests, late and
  stray lines, silence, goodbye.
- `errors`: `Fault` records and `BotError` > `BotTimeoutError`, `BotCrashedError`,
  `BotProtocolError`, `SeatStartError`.
- `seats`: `Seat`, `InProcessSeat`, `ProcessSeat`, `StreamSeat` (and `TransportSeat`, any
  transport), `seat_from_spec`, and
  `connect_all` (start every seat before the first game; if one cannot, say which and why).
- `policy`: `MatchPolicy` (clocks, retries, what a failure costs).
- `referee`: `play_game` (the game loop).
- `records`: `GameRecord` (what a game produced), its `Figures` and `ResultLine`, the replay
  records.
"""
