"""A contest that runs for weeks: submissions, a standing ladder, and a live leaderboard.

- `settings`: what is fixed at `init` (game, seats, rules, limits, sandbox, thresholds).
- `store`: the SQLite database of the contest folder (bots, versions, deal sets, games,
  ratings), its check on open, and the replay folder it must agree with.
- `submit`: a bot program copied in, checked as `bot check` checks, given a version.
- `ratings`: the order-free fit of the ladder's games, with intervals, fast at 200 bots.
- `matchmaking`: which deal set the ladder plays next, and why.
- `ladder`: `contest run`, the ladder played on the local pool or a cluster.
- `final`: the closing round robin of the top versions on fresh deal sets.
- `serve`: the leaderboard, a page per bot, and every game in the viewer.
"""
