"""The wire format, bot processes and the referee's game loop (spec/PROTOCOL.md is the bot
author's reference).

- `wire`: message lines built from JSON-like values; the parser of bot lines (never raises).
- `viewtext`: the `view` and `item` lines of each game, written from its view objects.
- `channel`: `LineChannel`, lines over pipes with deadlines, never blocking.
- `process`: a bot program's process (`BotProcess`: its own process group, resource limits,
  network isolation, stderr to a capped log, quit, SIGTERM, SIGKILL, the sweep of what escaped)
  and `PipeTransport`, the conversation's transport over its pipes.
- `guard`: the small process that starts a bot program and outlives it by nothing: the
  subreaper of all it starts, its rlimits set between fork and exec, every process of the bot
  killed when the bot or the referee dies (kill -9 included).
- `sandbox`: `--sandbox`'s bubblewrap container for a bot program: namespaces, a uid of its
  own, a fresh environment, the folders it may read, a private /tmp, cgroup limits.
- `conversation`: the exchanges with one bot over any transport: handshake, requests, late and
  stray lines, silence, goodbye.
- `errors`: `Fault` records and `BotError` > `BotTimeoutError`, `BotCrashedError`,
  `BotProtocolError`, `SeatStartError`.
- `seats`: `Seat`, `InProcessSeat`, `ProcessSeat`, `StreamSeat`, `seat_from_spec`, and
  `connect_all` (start every seat before the first game; if one cannot, say which and why).
- `referee`: `MatchPolicy`, `play_game` (the game loop).
- `records`: `GameRecord` (what a game produced), its `Figures` and `ResultLine`, the replay
  records.
"""
