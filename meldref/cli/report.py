"""Rich tables for people: match results and tournament standings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..tournament.standings import Standings


def _faults_text(faults: Sequence[Sequence[Mapping[str, Any]]]) -> str:
    parts = []
    for seat, fs in enumerate(faults):
        if fs:
            kinds = sorted({str(f["outcome"]) for f in fs})
            parts.append(f"s{seat}:{','.join(kinds)}×{len(fs)}")
    return " ".join(parts) or "-"


def match_table(lines: Sequence[Mapping[str, Any]], title: str) -> Table:
    """One row per game: seed, seats, winner, scores, progress, faults."""
    table = Table(title=title, title_justify="left")
    for column in ("game", "seed", "seats", "winner", "scores", "progress", "hands", "faults"):
        table.add_column(column, justify="right" if column in ("seed", "hands") else "left")
    for line in lines:
        if line["status"] != "ok":
            table.add_row(line["game_id"], str(line["seed"]), escape(" ".join(line["bots"])),
                          "[red]error[/red]", escape(str(line.get("error", ""))), "", "", "")
            continue
        detail = line.get("detail") or {}
        progress = detail.get("phases_completed") or detail.get("piles_closed") or ""
        winners = escape(", ".join(f"{line['bots'][s]} (s{s})" for s in line["winners"]) or "-")
        table.add_row(
            line["game_id"], str(line["seed"]), escape(" ".join(line["bots"])), winners,
            " ".join(map(str, line["scores"])),
            " ".join(map(str, progress)) if isinstance(progress, list) else str(progress),
            str(line.get("hands") or ""), _faults_text(line["faults"]),
        )
    return table


def totals_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    table = Table(title="totals", title_justify="left")
    for column in ("bot", "games", "wins", "mean score", "mean place", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for row in rows:
        table.add_row(escape(row["bot"]), str(row["games"]), f"{row['wins']:g}",
                      f"{row['mean_score']:.1f}", f"{row['mean_place']:.2f}",
                      str(row["faults"]))
    return table


def standings_table(standings: Standings, title: str = "standings") -> Table:
    """Bots ranked by openskill ordinal (mu - 3 sigma), with win rates and faults."""
    table = Table(title=title, title_justify="left")
    for column in ("#", "bot", "games", "wins", "win %", "mean place", "mean score", "mu",
                   "sigma", "ordinal", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right")
    for rank, line in enumerate(standings.lines, start=1):
        table.add_row(
            str(rank), escape(line.name), str(line.games), f"{line.wins:g}",
            f"{100 * line.win_rate:.1f}", f"{line.mean_place:.2f}", f"{line.mean_score:.1f}",
            f"{line.mu:.2f}", f"{line.sigma:.2f}", f"{line.ordinal:.2f}", str(line.faults),
        )
    return table


def head_to_head_lines(standings: Standings) -> list[str]:
    """Two bots: W-D-L, score with its 95% Wilson interval, Elo, and the SPRT state."""
    h = standings.head_to_head
    if h is None or h.games == 0:
        return []
    band = h.score_interval()
    elo, elo_band = h.elo()
    out = [
        f"{h.first} vs {h.second}: +{h.wins} ={h.draws} -{h.losses} ({h.games} games)",
        f"score {100 * h.score:.1f}% (95% CI {100 * band.low:.1f}..{100 * band.high:.1f}%), "
        f"Elo {_elo(elo)} ({_elo(elo_band.low)}..{_elo(elo_band.high)})",
    ]
    sprt = standings.sprt
    if sprt is not None:
        llr = sprt.llr(h.wins, h.draws, h.losses)
        verdict = sprt.verdict(h.wins, h.draws, h.losses)
        state = {"H1": f"H1 accepted (elo >= {sprt.elo1:g})",
                 "H0": f"H0 accepted (elo <= {sprt.elo0:g})"}.get(verdict or "", "undecided")
        out.append(f"SPRT [{sprt.elo0:g}, {sprt.elo1:g}] alpha {sprt.alpha:g} beta "
                   f"{sprt.beta:g}: LLR {llr:.2f} ({sprt.lower:.2f}, {sprt.upper:.2f}): {state}")
    return out


def _elo(x: float) -> str:
    if x == float("inf"):
        return "+inf"
    if x == float("-inf"):
        return "-inf"
    return f"{x:+.0f}"
