"""A game's result is typed from the referee to the standings (`ResultLine`, its `Figures`),
and JSON only at the results file: what a file holds reads back as the value written, and the
per-bot counts (`verdicts.tally.Tally`) take the typed figures, never a record rebuilt from a
line (no seed, no rules, no actions)."""

from __future__ import annotations

import json
import pickle

from meldref.engine.game import Outcome, Termination
from meldref.protocol.errors import Fault
from meldref.protocol.records import Figures, ResultLine
from meldref.protocol.seats import BotSpec
from meldref.tournament.runner import play_one
from meldref.tournament.schedule import BotEntry, Plan
from meldref.verdicts.tally import Tally


def test_a_game_played_is_a_typed_line_that_the_file_gives_back() -> None:
    line = play_one("phase10", ["builtin:greedy", "builtin:random"], 3,
                    rules={"phases-to-win": 1})
    assert isinstance(line, ResultLine) and isinstance(line.figures, Figures)
    written = json.dumps(line.to_json(), separators=(",", ":"))
    assert ResultLine.from_json(json.loads(written)) == line


def test_a_result_line_crosses_processes_whole() -> None:
    # A pool worker's and a cluster's lines come back pickled. Was, on the compiled build: the
    # frozen Outcome could not be unpickled (FrozenInstanceError), and every game of -j 2
    # was recorded as "its worker died 3 times".
    line = play_one("fivecrowns", ["builtin:greedy", "builtin:random"], 3)
    assert pickle.loads(pickle.dumps(line)) == line


def test_an_error_line_round_trips_and_is_not_a_finished_game() -> None:
    bots = (BotEntry("a", BotSpec("builtin:greedy")), BotEntry("b", BotSpec("builtin:random")))
    job = Plan("phase10", bots, players=2, games=2, seed=1).job(1)
    line = job.error_line("its worker died 3 times")
    data = line.to_json()
    assert (data["status"], data["error"], data["index"]) == ("error", line.error, 1)
    assert ResultLine.from_json(data) == line and not line.ok and line.failed


def test_the_tally_counts_the_typed_figures() -> None:
    figures = Figures(Outcome(Termination.NORMAL, (1, 2), (0, 40)), ("ok", "forfeit"),
                      ((), (Fault("timeout", "slow", fatal=True),
                            Fault("late", "5 more", suppressed=5))), 120, 130)
    tally = Tally(["a", "b"])
    tally.add(("b", "a"), figures.outcome, figures.faults)
    rows = {row.name: row for row in tally.rows()}
    assert (rows["b"].wins, rows["a"].wins, rows["a"].score_sum) == (1.0, 0.0, 40)
    assert rows["a"].faults == {"timeout": 1, "late": 5}


def test_what_pickles_through_its_constructor_carries_every_field() -> None:
    # A result line, its figures and a job pickle through their constructors (a dataclass's
    # own state setter looked its fields up for every object: a cluster's client unpickled a
    # task's results three times slower): a field added later must be in `__reduce__` too.
    import dataclasses

    from meldref.tournament.schedule import GameJob

    for cls in (ResultLine, Figures, GameJob):
        names = [f.name for f in dataclasses.fields(cls)]
        values = {name: object() for name in names}  # each field a value of its own
        item = cls.__new__(cls)
        for name, value in values.items():
            object.__setattr__(item, name, value)
        rebuilt, args = item.__reduce__()
        assert rebuilt is cls and list(args) == list(values.values()), cls
