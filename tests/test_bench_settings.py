"""bench_strength.py's `--set BOT.OPTION=VALUE`: one option of a built-in bot changed for a run,
so that docs/bots.md's tries are commands anyone can run rather than edits to a module."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from support import ROOT

from meldref.bots.search import Budget, choose

sys.path.insert(0, str(ROOT / "bench"))
import bench_strength


@pytest.fixture
def settings() -> Iterator[Any]:
    yield bench_strength
    bench_strength._setup(None, {})


def test_a_setting_reaches_the_bot_it_names_and_no_other(settings: Any) -> None:
    settings._setup(None, {"search": {"clear": "1", "search_discards": "no", "discards": "2"}})
    search = settings.configured("phase10", "search", "s:0")
    assert (search.clear, search.search_discards, search.discards) == (1.0, False, 2)
    assert settings.configured("phase10", "expert", "s:1").feed_weight == 6.0
    assert settings.label("search") == "search clear=1,search_discards=no,discards=2"
    assert settings.label("expert") == "expert"
    settings._setup(None, {"search": {"clear": "1", "discards": "5"}})
    five_crowns = settings.configured("fivecrowns", "search", "s:0")
    assert (five_crowns.clear, five_crowns.discards) == (1.0, 5)


def test_worker_processes_get_the_settings(settings: Any) -> None:
    settings._setup(None, {"expert": {"feed_weight": "3"}})
    with settings._pool(2) as pool:
        bot = pool.submit(settings.configured, "phase10", "expert", "s:0").result()
    assert bot.feed_weight == 3.0


def test_the_edge_a_rival_must_clear_is_the_bots_own(settings: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`clear` decides: a rival whose gain is 1.46 standard errors above zero replaces the
    prior at clear=1 and not at clear=2 (as the search ships); and the search passes its own
    `clear`, as `--set` gave it, to `choose`."""
    def value(world: int, move: str) -> float:
        return 0.0 if move == "prior" else [1.0, 3.0, -1.0, 2.0][world]

    for clear, chosen in ((2.0, "prior"), (1.0, "rival")):
        worlds = iter(range(4))
        assert choose(["prior", "rival"], lambda rng, w=worlds: next(w), value, Budget(4, None),
                      random.Random(0), clear) == chosen

    from meldref.bots import search as search_module
    from meldref.engine.game import find_game

    given: list[float] = []

    def spy(candidates: Any, *args: Any) -> Any:
        given.append(args[-1])
        return candidates[0]

    monkeypatch.setattr(search_module, "choose", spy)
    settings._setup(None, {"search": {"clear": "0.5"}})
    bot = settings.configured("phase10", "search", "c")
    info = find_game("phase10")
    for deal in (f"c{i}" for i in range(10)):
        state = info.new_game(info.rules(), 2, deal)
        for _ in range(12):
            state.apply(bot.act(state.observation(state.to_move)))
    assert given and set(given) == {0.5}


@pytest.mark.parametrize(("setting", "says"), [
    ("search.clearr=1", "search has no option 'clearr'; its options: clear, discards,"),
    ("search.discards=2.5", "search.discards is a whole number, not '2.5'"),
    ("search.search_discards=maybe", "search.search_discards is yes or no, not 'maybe'"),
    ("search.discards", "write BOT.OPTION=VALUE, e.g. search.clear=1"),
    ("wizard.clear=1", "no built-in bot 'wizard'; built-in bots: random, greedy, expert, search"),
])
def test_a_bad_setting_is_refused_with_the_reason(setting: str, says: str,
                                                   capsys: pytest.CaptureFixture[str],
                                                   settings: Any) -> None:
    with pytest.raises(SystemExit) as stop:
        settings.main(["--game", "phase10", "--games", "2", "--set", setting])
    assert stop.value.code == 2 and says in capsys.readouterr().err


def test_an_option_one_game_lacks_is_named_with_the_game(capsys: pytest.CaptureFixture[str],
                                                         settings: Any) -> None:
    with pytest.raises(SystemExit):
        settings.main(["--game", "all", "--games", "2", "--set", "search.discards=2"])
    assert "(solitaire): search has no option 'discards'; its options: candidates," in (
        capsys.readouterr().err)


def test_the_rows_name_the_bot_with_its_settings(capsys: pytest.CaptureFixture[str],
                                                 settings: Any) -> None:
    assert settings.main(["--game", "phase10", "--games", "2", "--pair", "expert:greedy",
                          "--set", "expert.feed_weight=3"]) == 0
    assert "| phase10 | expert feed_weight=3 | greedy | 2 | 1 |" in capsys.readouterr().out


def test_the_phase10_search_reads_its_discard_options_from_itself(settings: Any) -> None:
    """`discards` and `search_discards` are the bot's own: the discard candidates of one view,
    as it ships (the expert's and up to two more), two at most, and none searched."""
    from meldref.engine.game import find_game
    from meldref.engine.phase10.actions import Discard

    info = find_game("phase10")
    counts = []
    for deal in (f"o{i}" for i in range(20)):
        state = info.new_game(info.rules(), 2, deal)
        state.apply(settings.configured("phase10", "expert", "x").act(
            state.observation(state.to_move)))  # the first draw: now a discard (or a lay)
        view = state.observation(state.to_move)
        found = []
        for options in ({}, {"discards": "2"}, {"search_discards": "no"}):
            settings._setup(None, {"search": options})
            bot = settings.configured("phase10", "search", "x")
            prior = bot.prior(view)
            if not isinstance(prior, Discard):
                break
            found.append(len(bot.candidates(view, prior)))
        if len(found) == 3:
            counts.append(found)
    assert counts and all(a <= 3 and b <= 2 and c == 1 for a, b, c in counts)
    assert any(a == 3 for a, _, _ in counts) and any(b == 2 for _, b, _ in counts)
