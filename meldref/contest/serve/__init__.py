"""`contest serve`: the leaderboard, the bots' pages (`pages`) and the viewer (`server`)."""
