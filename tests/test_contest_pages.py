"""The contest's final on its leaderboard page: intervals as the tournament prints them, the
reason where there is none or only one bound (issue 21: "the contest page says so")."""

from __future__ import annotations

from typing import Any

from meldref.contest.serve.pages import final_section


def final(*rows: tuple[str, float | None, float | None, float | None, str | None]
          ) -> dict[str, Any]:
    standings = [{"rank": k, "bot": bot, "rating": rating, "rating_ci95": [low, high],
                  "games": 20, "no_interval": why}
                 for k, (bot, rating, low, high, why) in enumerate(rows, start=1)]
    return {"final": {"standings": standings}, "ladder": []}


def cells(html: str, bot: str) -> str:
    return html.split(f">{bot}<", 1)[1].split("</tr>", 1)[0]


def test_a_finalist_bounded_on_one_side_reads_so_with_the_reason() -> None:
    # Was: a TypeError (the upper bound None formatted as a number), and the leaderboard page
    # with it, once a finalist had won or lost every comparison.
    html = final_section(final(
        ("champ", 310.0, 150.0, None, "only a lower bound: it was never placed below another"),
        ("middle", 0.0, -80.0, 80.0, None),
        ("chump", -310.0, None, -150.0, "only an upper bound: it was never placed above "
         "another")))
    assert "&ge; +150" in cells(html, "champ") and "never placed below" in cells(html, "champ")
    assert "&le; -150" in cells(html, "chump") and "never placed above" in cells(html, "chump")
    assert "-80 .. +80" in cells(html, "middle")


def test_a_final_too_small_for_an_interval_says_why() -> None:
    why = "6 deals: a rating interval needs 10 or more"
    html = final_section(final(("a", 40.0, None, None, why), ("b", -40.0, None, None, why)))
    assert f"none: {why}" in cells(html, "a") and f"none: {why}" in cells(html, "b")
