"""Replays: the file format and its checks (`files`), telling a game and counting games
(`show`), and playing on from a recorded point (`resume`)."""
