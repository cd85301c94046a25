"""Rich tables for people: match results and tournament standings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..engine.game import JSON
from ..protocol.errors import Fault
from ..protocol.records import ResultLine
from ..replay.words import printable
from ..verdicts.elo import chance_percent, format_elo, signed
from ..verdicts.pairs import HeadToHead, SameDeals

if TYPE_CHECKING:  # a match prints no standings: their statistics (scipy) stay unimported
    from ..tools.botcheck import Check
    from ..tools.bottest import Answer
    from ..tournament.standings import Report


def _faults_text(faults: Sequence[Sequence[Fault]]) -> str:
    parts = []
    for seat, fs in enumerate(faults):
        if fs:
            kinds = sorted({str(f.outcome) for f in fs})
            parts.append(f"s{seat}:{','.join(kinds)}×{len(fs)}")
    return " ".join(parts) or "-"


def match_table(lines: Sequence[ResultLine], title: str,
                labels: Mapping[str, str] | None = None) -> Table:
    """One row per game: id, seed, seats, winner, scores, progress, hands, faults. Game ids
    are never cut; with `labels` (`fit_labelled`) each bot is shown by its label."""
    def shown(bot: str) -> str:
        return escape(bot if labels is None else labels.get(bot, bot))

    table = _compact(title)
    longest = max((len(line.game_id) for line in lines), default=4)
    for column in ("game", "seed", "seats", "winner", "scores", "progress", "hands", "faults"):
        table.add_column(column, justify="right" if column in ("seed", "hands") else "left",
                         overflow="fold", min_width=longest if column == "game" else None)
    for line in lines:
        seats = " ".join(shown(bot) for bot in line.bots)
        if line.figures is None:
            table.add_row(line.game_id, str(line.seed), seats, "[red]error[/red]",
                          escape(str(line.error or "")), "", "", "")
            continue
        outcome = line.figures.outcome
        detail = outcome.detail
        progress = detail.get("phases_completed") or detail.get("piles_closed") or ""
        winners = ", ".join(f"{shown(line.bots[s])} (s{s})" for s in outcome.winners) or "-"
        table.add_row(
            line.game_id, str(line.seed), seats, winners, " ".join(map(str, outcome.scores)),
            " ".join(map(str, progress)) if isinstance(progress, list) else str(progress),
            str(line.figures.hands or ""), _faults_text(line.figures.faults),
        )
    return table


def totals_table(rows: Sequence[Mapping[str, JSON]],
                 labels: Mapping[str, str] | None = None) -> Table:
    table = _compact("totals")
    for column in ("bot", "games", "wins", "mean score", "mean place", "faults"):
        table.add_column(column, justify="left" if column == "bot" else "right",
                         overflow="fold")
    for row in rows:
        name = row["bot"] if labels is None else labels.get(row["bot"], row["bot"])
        table.add_row(escape(name), str(row["games"]), f"{row['wins']:g}",
                      f"{row['mean_score']:.1f}", f"{row['mean_place']:.2f}",
                      str(row["faults"]))
    return table


def match_tables(lines: Sequence[ResultLine], title: str, totals: Sequence[Mapping[str, JSON]],
                 console: Console) -> tuple[list[Table], dict[str, str] | None]:
    """A match's results (and its totals, for several games) as they fit `console`: with the
    bots' names, else with labels to print with their `legend`."""
    names = list(dict.fromkeys(bot for line in lines for bot in line.bots))

    def tables(labels: Mapping[str, str] | None) -> list[Table]:
        shown = [match_table(lines, title, labels)]
        return shown + ([totals_table(totals, labels)] if len(lines) > 1 else [])

    return fit_labelled(console, names, tables)


def fit_labelled(console: Console, names: Sequence[str],
                 tables: Callable[[Mapping[str, str] | None], list[Table]]
                 ) -> tuple[list[Table], dict[str, str] | None]:
    """`tables(None)` (the bots by name) if every one fits `console`'s width whole, else
    `tables(labels)` with short labels (`bot_labels`) and the labels, for the `legend`."""
    named = tables(None)
    unbounded = console.options.update(max_width=100_000)  # measured whole, not clamped
    if all(console.measure(t, options=unbounded).maximum <= console.width for t in named):
        return named, None
    labels = bot_labels(names)
    return tables(labels), labels


def stats_table(rows: Sequence[Mapping[str, JSON]],
                labels: Mapping[str, str] | None = None) -> Table:
    """`replay stats`' bots (`Stats.to_json()["bots"]`): games, wins, mean score, faults by
    outcome; with `labels`, each bot by its label (`fit_labelled`)."""
    table = _compact("bots")
    for column in ("bot", "games", "wins", "mean score", "faults"):
        table.add_column(column, justify="right" if column in ("games", "wins", "mean score")
                         else "left", overflow="fold")
    for row in rows:
        name = printable(row["bot"] if labels is None else labels.get(row["bot"], row["bot"]))
        faults = " ".join(f"{k}:{v}" for k, v in row["faults_by_outcome"].items()) or "-"
        score = row["mean_score"]
        table.add_row(escape(name), str(row["games"]), f"{row['wins']:g}",
                      "-" if score is None else f"{score:.2f}", faults)
    return table


def checks_table(checks: Sequence[Check], title: str, marks: Mapping[str, str]) -> Table:
    """`bot check`'s checklist: each check, its result (`marks[status]`, markup) and why.
    A word longer than its column (`games=phase10,fivecrowns,solitaire`) is folded onto the
    next line, not cut, so the table fits 80 columns whole."""
    table = Table(title=escape(title), title_justify="left")
    for column in ("check", "result", "why"):
        table.add_column(column, overflow="fold", no_wrap=column == "result")
    for check in checks:
        table.add_row(escape(check.name), marks[check.status], escape(check.detail))
    return table


def answers_table(answers: Sequence[Answer], folder: Path, title: str) -> Table:
    """`bot test`'s answers, one row per position: its path under `folder`, the seat, the
    decision, the answer, legal or not (and why), the expected action matched or not. Long
    cells wrap (nothing is cut), so the table fits 80 columns."""
    table = _compact(escape(title))
    paths = [str(a.path.relative_to(folder)) for a in answers]
    # Fixed widths for the position (a longer name wraps), the seat and the decision: left
    # free, rich squeezed the last column's head instead ("expec").
    fixed = {"position": min(max(map(len, paths), default=8), 26), "seat": 4,
             "decision": max([8, *(len(a.decision) for a in answers)])}
    for column in ("position", "seat", "decision", "answer", "legal", "expected"):
        table.add_column(column, justify="right" if column == "seat" else "left",
                         overflow="fold", width=fixed.get(column), no_wrap=column == "seat")
    for a, path in zip(answers, paths, strict=True):
        legal = ("[green]yes[/green]" if a.problem is None
                 else f"[red]no[/red]: {escape(a.problem)}")
        expected = "-" if a.matched is None else (
            "[green]matched[/green]" if a.matched
            else f"[red]not[/red] {escape(' | '.join(a.expected))}")
        table.add_row(escape(path), str(a.seat), a.decision, escape(a.action or "-"), legal,
                      expected)
    return table


def standings_table(report: Report, title: str = "standings",
                    labels: Mapping[str, str] | None = None) -> Table:
    """Bots ranked by rating (Bradley-Terry on all games, Elo scale) with its 95% interval,
    how often the bot held its rank, its 95% rank interval and its chance of first, then its
    record and faults. With `labels`
    (`fitted`), each bot is shown by its label and the heads take two lines; with standings
    ranked by margin (`--rank-by margin`) the margin takes the rating's place."""
    by_margin = report.standings.rank_by == "margin"
    # With labels the table is to fit a narrow terminal: its thirteen columns need it tight.
    table = _compact(f"{title} (by mean score margin per game)" if by_margin else title,
                     tight=labels is not None)
    for column in ("#", "bot", "margin" if by_margin else "rating", "95% CI", "rank held",
                   "ranks", "P first", "games", "wins", "win %", "mean place", "mean score",
                   "faults"):
        head = column if labels is None else column.replace(" ", "\n")
        table.add_column(head, justify="left" if column == "bot" else "right",
                         overflow="fold")
    faults = {row.name: row.fault_count for row in report.faults.rows()}
    for row in report.standings.rows:
        rating = "-" if row.rating is None else format_elo(row.rating)
        interval = _interval_text(row.rating_low, row.rating_high)
        if by_margin:
            rating = "-" if row.margin is None else signed(row.margin, 1)
            interval = ("-" if row.margin_low is None or row.margin_high is None else
                        f"{signed(row.margin_low, 1)}..{signed(row.margin_high, 1)}")
        held = "-" if row.rank_held is None else f"{100 * row.rank_held:.0f}%"
        # The 95% rank interval and the chance of first (verdicts.ranks): ties shared.
        ranks = ("-" if row.rank_low is None or row.rank_high is None else str(row.rank_low)
                 if row.rank_low == row.rank_high else f"{row.rank_low}-{row.rank_high}")
        first = "-" if row.p_first is None else chance_percent(row.p_first)
        name = row.bot if labels is None else labels[row.bot]
        table.add_row(str(row.rank), escape(name), rating, interval, held, ranks, first,
                      str(row.games),
                      f"{row.wins:g}", f"{100 * row.win_rate:.1f}", f"{row.mean_place:.2f}",
                      f"{row.mean_score:.1f}", str(faults.get(row.bot, 0)))
    return table


def _interval_text(low: float | None, high: float | None) -> str:
    # One-sided bounds read as such; "-" where there is none (the note under the table says
    # why, `interval_notes`).
    if low is not None and high is not None:
        return f"{format_elo(low)}..{format_elo(high)}"
    if low is not None:
        return f">= {format_elo(low)}"
    if high is not None:
        return f"<= {format_elo(high)}"
    return "-"


def interval_notes(report: Report) -> list[str]:
    """Why intervals are missing or one-sided, once per reason, naming the bots."""
    by_reason: dict[str, list[str]] = {}
    for row in report.standings.rows:
        if row.rating is not None and row.no_interval is not None:
            by_reason.setdefault(row.no_interval, []).append(row.bot)
    out = []
    for why, bots in by_reason.items():
        everyone = len(bots) == sum(r.rating is not None for r in report.standings.rows)
        out.append(f"no 95% interval: {why}" if everyone else f"{', '.join(bots)}: {why}")
    return out


def cross_table(report: Report, labels: Mapping[str, str] | None = None) -> Table | None:
    """Every pair of bots, row against column: the row's score against the column's at the
    tables they shared (Elo), or, for one-seat games, the row's win-rate difference on the
    deals both played. None with fewer than three bots (the head-to-head lines say it all).
    With `labels`, each bot is shown by its label (`fitted`)."""
    bots = [row.bot for row in report.standings.rows]
    if len(bots) < 3:
        return None
    shown = dict(labels) if labels is not None else {bot: bot for bot in bots}
    title = "cross table (row against column)"
    if any(isinstance(p, SameDeals) for p in report.cross.pairs):
        title += ": the row's share of deals won minus the column's, in percentage points (pp)"
    table = _compact(title)
    table.add_column("", overflow="fold")
    for bot in bots:
        table.add_column(escape(shown[bot]), justify="right", overflow="fold")
    for a in bots:
        cells = []
        for b in bots:
            pair = report.cross.get(a, b) if a != b else None
            cells.append(_cell(pair))
        table.add_row(escape(shown[a]), *cells)
    return table


def _compact(title: str, tight: bool = False) -> Table:
    """A table of figures with a rule under the head and no column lines: eleven columns fit
    80 columns of terminal; `tight` (one space between columns, not two), thirteen."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                 padding=(0, 0 if tight else 1, 0, 0))


def bot_labels(bots: Sequence[str]) -> dict[str, str]:
    """Short unique labels for `bots` in order: A, B, ... Z, then A1, B1, ..."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return {bot: letters[i % 26] + (str(i // 26) if i >= 26 else "")
            for i, bot in enumerate(bots)}


def legend(labels: Mapping[str, str]) -> list[str]:
    """One line per label: `A = greedy`."""
    return [f"  {label} = {bot}" for bot, label in labels.items()]


def print_fitted(console: Console, tables: Sequence[Table],
                 labels: Mapping[str, str] | None) -> None:
    """Tables made by `fit_labelled`, then the legend of their labels if they have any."""
    for table in tables:
        console.print(table)
    if labels is not None:
        console.print("bots:", markup=False)
        for line in legend(labels):  # names from a replay too: no escape sequence passes
            console.print(printable(line), markup=False)


def fitted(report: Report, console: Console) -> tuple[list[Table], dict[str, str] | None]:
    """The standings and the cross table as they fit `console`'s width: with the bots' names
    if they fit (nothing squeezed), else with short labels (`bot_labels`), to print with their
    `legend`."""

    def tables(labels: Mapping[str, str] | None) -> list[Table]:
        crossed = cross_table(report, labels)
        return [standings_table(report, labels=labels), *([] if crossed is None else [crossed])]

    return fit_labelled(console, [row.bot for row in report.standings.rows], tables)


def _cell(pair: HeadToHead | SameDeals | None) -> str:
    if pair is None:
        return "-"
    if isinstance(pair, SameDeals):
        # Percentage points of deals won: "pts" read as the game's points.
        return f"{100 * pair.win_rate.mean:+.1f} pp won"
    stats = pair.stats
    return f"{100 * stats.score.mean:.0f}% ({format_elo(stats.elo)})"


def head_to_head_lines(report: Report) -> list[str]:
    """Why rating intervals are missing (if they are); for two bots their record and
    figures, and the SPRT's state."""
    out = interval_notes(report)
    out += [] if report.pair is None else report.pair.text().splitlines()
    if report.sprt is not None:
        out.append(report.sprt.text())
    if report.after_stop:
        out.append(f"{report.after_stop} games finished after the SPRT decided: recorded, not "
                   "counted")
    return out
