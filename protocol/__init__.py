"""The wire format and bot processes (spec/PROTOCOL.md is the bot author's reference).

- `wire`: message lines built from JSON-like values; the parser of bot lines (never raises).
- `channel`: `LineChannel` (lines over pipes with deadlines, never blocking) and `BotProcess`
  (a command in its own process group; stderr to a capped log; quit, SIGTERM, SIGKILL).
- `errors`: `Fault` records and `BotError` > `BotTimeoutError`, `BotCrashedError`,
  `BotProtocolError`, `SeatStartError`.
- `seats`: `Seat`, `InProcessSeat`, `ProcessSeat`, `StreamSeat`, `seat_from_spec`, and
  `connect_all` (start every seat before the first game; `SeatStartError` says who and why).
- `referee`: `MatchPolicy`, `play_game` (the game loop).
- `records`: `GameRecord` (what a game produced), the replay records, `Tally` (per bot).
"""
