"""Matchmaking's minimum share and pair cap (issue 44): over a simulated ladder of 8 versions
whose top two are equal, every version keeps at least its minimum share of the recent deal
sets and no pair sits together in more than its cap of them. Before, the two leaders took
most of the ladder and the others stopped playing after their settling.

The games are synthetic (a Bradley-Terry draw from known ratings, both seatings of a deal
set), the fit is the ladder's own (`contest.ratings.LadderRatings`), refreshed every 8 deal
sets as parallel games see it, and the recent deal sets are counted as `contest run` counts
them (`Share.window` x the versions in play)."""

from __future__ import annotations

import itertools
import random
import subprocess
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from support import PYTHON, ROOT

from meldref.contest.matchmaking import MIN_SHARE, PAIR_CAP, Candidate, Share, next_table
from meldref.contest.ranking import Rating, ranked
from meldref.contest.ratings import LadderRatings
from meldref.contest.settings import ContestSettings
from meldref.verdicts.games import GameResult

TRUTH = {f"v{k}": elo for k, elo in enumerate((0.0, 0.0, -40, -80, -120, -160, -200, -240))}
PLACEMENT, BATCH, DEAL_SETS = 2, 8, 400


def _deal_set(rng: random.Random, a: str, b: str) -> list[GameResult]:
    p = 1 / (1 + 10 ** ((TRUTH[b] - TRUTH[a]) / 400))
    out = []
    for seats in ((a, b), (b, a)):
        places = (1, 2) if (seats[0] == a) == (rng.random() < p) else (2, 1)
        out.append(GameResult(0, seats, places, (float(places[0]), float(places[1]))))
    return out


def _ladder(share: bool, seed: int = 1) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    names = sorted(TRUTH)
    ratings, fitted = LadderRatings(), dict[str, Rating]()
    played = dict.fromkeys(range(len(names)), 0)
    tables: list[tuple[int, ...]] = []
    while len(tables) < DEAL_SETS:
        pending = dict.fromkeys(range(len(names)), 0)
        for _ in range(BATCH):
            order = ranked({n: fitted.get(n, Rating(None, None, None, 0)) for n in names})
            ranking = [Candidate(names.index(n),
                                 *(fitted[n].resampled if n in fitted else (None, None)),
                                 played[names.index(n)] - pending[names.index(n)],
                                 pending[names.index(n)]) for n in order]
            counted = Share(recent=tables[-Share.window(len(names)):]) if share else None
            table = next_table(ranking, 2, PLACEMENT, ratings.doubt(order),
                               ratings.doubt(order, apart=2), counted)
            assert table is not None
            ratings.add_deal_set(_deal_set(rng, names[table[0]], names[table[1]]))
            tables.append(table)
            for v in table:
                played[v] += 1
                pending[v] += 1
        fitted = ratings.fit(names, 20, seed=len(tables))
    return tables


def _worst(tables: Sequence[tuple[int, ...]]) -> tuple[int, int]:
    """Over every window of the last half: the fewest deal sets of a version, the most of a
    pair."""
    window = Share.window(len(TRUTH))
    fewest, most = window, 0
    for end in range(DEAL_SETS // 2, DEAL_SETS + 1):
        recent = tables[end - window:end]
        seats = Counter(v for t in recent for v in t)
        pairs = Counter(frozenset(p) for t in recent for p in itertools.combinations(t, 2))
        fewest = min(fewest, *(seats[v] for v in range(len(TRUTH))))
        most = max(most, *pairs.values())
    return fewest, most


def test_every_version_keeps_its_share_and_no_pair_passes_its_cap() -> None:
    window = Share.window(len(TRUTH))  # 80 deal sets: a fair share is 20 of them
    floor = MIN_SHARE * window * 2 / len(TRUTH)  # 10
    cap = PAIR_CAP * window  # 20
    fewest, most = _worst(_ladder(share=True))
    # The rule acts on the deal set after a version falls below: one short at most.
    assert fewest >= floor - 1, (fewest, floor)
    assert most <= cap, (most, cap)


def test_without_them_the_leaders_take_the_ladder() -> None:
    """What the rules mend: the matchmaking of before (no `Share`) breaks both bounds."""
    window = Share.window(len(TRUTH))
    fewest, most = _worst(_ladder(share=False))
    assert fewest < MIN_SHARE * window * 2 / len(TRUTH) - 1 and most > PAIR_CAP * window


def test_the_share_and_cap_are_fixed_at_init_and_printed() -> None:
    settings = ContestSettings.checked("phase10", 2, {}, {}, True, 6, 3, 7,
                                       min_share=0.4, pair_cap=0.3)
    again = ContestSettings.from_json(settings.to_json())
    assert (again.min_share, again.pair_cap) == (0.4, 0.3)
    assert "min-share 0.4 of a fair share, pair-cap 0.3" in settings.summary()
    assert settings.differs(ContestSettings.checked("phase10", 2, {}, {}, True, 6, 3, 7)) \
        == "min-share is 0.4, not 0.5"
    written = settings.to_json()
    assert "min-share" in written and not any("_" in key for key in written)  # init's spelling
    old = {k: v for k, v in written.items() if k not in ("min-share", "pair-cap")}
    made_before = ContestSettings.from_json(old)  # a contest made before issue 44
    assert (made_before.min_share, made_before.pair_cap) == (MIN_SHARE, PAIR_CAP)
    older = {k.replace("-", "_"): v for k, v in written.items()}  # before one spelling
    assert ContestSettings.from_json(older) == settings


def test_the_benchmark_of_the_bias_runs() -> None:
    """bench/bench_matchmaking.py, whose figures docs/contest.md prints, on a tiny input."""
    done = subprocess.run([PYTHON, str(ROOT / "bench" / "bench_matchmaking.py"), "--seeds",
                           "2", "--deal-sets", "24", "--schemes", "share,random"],
                          capture_output=True, text=True, timeout=300, check=True)
    assert "| 8 | -240 | " in done.stdout and "leaders' share of the last half" in done.stdout


def test_an_owed_version_plays_first_and_not_with_a_pair_at_its_cap() -> None:
    ranking = [Candidate(k, -10.0 * k, 100 - 10.0 * k, 100, 0) for k in range(8)]
    # 80 recent deal sets; version 7 sat in 8, all against version 0: below its floor of
    # 20 (min-share 1), and the pair (0, 7) at its cap of 8 (pair-cap 0.1).
    others = itertools.cycle(itertools.combinations(range(7), 2))
    recent = [(0, 7)] * 8 + [next(others) for _ in range(72)]
    share = Share(1.0, 0.1, recent)
    assert share.owed(ranking, 2) == ranking[7] and share.capped(0, 7, 8)
    for placed in range(100, 110):  # whatever the spread's step, never its capped rival
        ranking[7] = Candidate(7, -70.0, 30.0, placed, 0)
        table = next_table(ranking, 2, PLACEMENT, [0.5] * 7, [0.5] * 6, share)
        assert table is not None and table[0] == 7 and table[1] != 0


def test_the_rules_and_limits_are_parsed_once_for_all_the_jobs_of_a_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 45: every job of a run parsed the contest's rules and built its limits again
    # (10 jobs: 10 parses of the rules and 20 of the limits). Now once, at the first job.
    import meldref.contest.settings as settings_module
    from meldref.contest.ladder.run import job_of
    from meldref.contest.store import GameRow

    calls = {"rules": 0, "limits": 0}

    def counted(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(settings_module, "parse_rules",
                        counted("rules", settings_module.parse_rules))
    monkeypatch.setattr(settings_module, "limit_settings",
                        counted("limits", settings_module.limit_settings))
    stored = ContestSettings.from_json(ContestSettings.checked(
        "phase10", 2, {"phases-to-win": 1}, {"move-time": 2}, False, 6, 3, 7).to_json())
    calls.update(rules=0, limits=0)
    store = SimpleNamespace(settings=stored, folder=tmp_path)
    versions = {v: SimpleNamespace(label=f"v{v}", command="python3 bot.py", folder=f"v{v}")
                for v in (1, 2)}
    jobs = [job_of(store, GameRow(k, 0, k % 2, f"ds000000-s{k:02d}", (1, 2), "queued", k,
                                  "ladder"), versions)  # type: ignore[arg-type]
            for k in range(10)]
    assert calls == {"rules": 1, "limits": 1}
    assert len({id(job.rules) for job in jobs}) == 1
    assert jobs[0].rules == stored.info.rules_type(phases_to_win=1)
