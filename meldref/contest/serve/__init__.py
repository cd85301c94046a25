"""`contest serve`: the leaderboard (updating itself from `/board.json`) and the bots' pages
(`pages`), the viewer and the server around them (`server`, on `meldref.web`), and the
authors' pages and API (`api`)."""
