"""The leaderboard as `status` prints it and `serve` shows it: from the database alone (the
ratings the run saved after its last deal set), so reading it never refits anything."""

from __future__ import annotations

from typing import Any

from .ranking import Rating, ranked
from .store import ContestStore, SavedRating, is_running


def leaderboard(store: ContestStore) -> dict[str, Any]:
    """Rank, bot, version, rating with its 95% interval, games and faults of every version in
    play; the versions out of play with their reason; the games running and queued."""
    ratings = store.latest_ratings()
    versions = store.versions()
    labels = {v.id: v.label for v in versions}
    playing = {v.label: Rating(*ratings.get(v.id, (None, None, None, 0, None)))
               for v in versions if v.in_play}
    rows = []
    for rank, label in enumerate(ranked(playing), start=1):
        version = next(v for v in versions if v.label == label)
        rows.append({"rank": rank, **_row(store, version.id, labels, ratings)})
    out_of_play = [{**_row(store, v.id, labels, ratings), "state": v.state, "reason": v.reason}
                   for v in versions if not v.in_play]
    counts = store.counts()
    return {"game": store.settings.game, "players": store.settings.players,
            "run": is_running(store.folder),
            "leaderboard": rows, "out_of_play": out_of_play,
            "running": [{"game_id": gid, "bots": [labels[v] for v in seats]}
                        for gid, seats in store.running()],
            "queued": counts.get("queued", 0), "played": counts.get("done", 0),
            "final": store.last_final()}


def _row(store: ContestStore, vid: int, labels: dict[int, str],
         ratings: dict[int, SavedRating]) -> dict[str, Any]:
    version = store.version(vid)
    games, faults = store.version_record(vid)
    rating, low, high, _, why = ratings.get(vid, (None, None, None, 0, None))
    return {"bot": version.bot, "version": version.number, "label": labels[vid],
            "rating": rating, "rating_ci95": [low, high], "no_interval": why, "games": games,
            "faults": faults}


def interval_text(row: dict[str, Any], joiner: str) -> str:
    """A leaderboard row's 95% interval as `status` and the page print it: both ends, one
    (a version never placed below, or above, another), or, where there is none, why."""
    low, high = row["rating_ci95"]
    if low is not None and high is not None:
        return f"{low:+.0f}{joiner}{high:+.0f}"
    if low is not None or high is not None:
        return f">= {low:+.0f}" if low is not None else f"<= {high:+.0f}"
    why = row.get("no_interval")
    return f"none: {why}" if why else "-"
