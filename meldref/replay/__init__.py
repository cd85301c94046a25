"""Replays and positions, the game files of spec/: the replay format and its checks
(`files`), telling a game and counting games (`show`), a game's state written down to start
from (`positions`)."""
