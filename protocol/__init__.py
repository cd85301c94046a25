"""The wire format, bot processes and the referee's game loop (spec/PROTOCOL.md is the bot
author's reference).

- `wire`: message lines built from JSON-like values; the parser of bot lines (never raises).
- `viewtext`: the `view` and `item` lines of each game, written from its view objects.
- `channel`: `LineChannel`, lines over pipes with deadlines, never blocking.
- `process`: a bot program's process (`BotProcess`: its own process group, resource limits,
  network isolation, stderr to a capped log, quit, SIGTERM, SIGKILL, the sweep of what escaped)
  and `PipeTransport`, the conversation's transport over its pipes.
- `conversation`: the exchanges with one bot over any transport: handshake, requests, late and
  stray lines, silence, goodbye.
- `errors`: `Fault` records and `BotError` > `BotTimeoutError`, `BotCrashedError`,
  `BotProtocolError`, `SeatStartError`.
- `seats`: `Seat`, `InProcessSeat`, `ProcessSeat`, `StreamSeat`, `seat_from_spec`, and
  `connect_all` (start every seat before the first game; if one cannot, say which and why).
- `referee`: `MatchPolicy`, `play_game` (the game loop).
- `records`: `GameRecord` (what a game produced), the replay records, `Tally` (per bot).
"""
