"""The standing ladder: `run.play_ladder` plays it, `run.Ladder` keeps its ratings."""
