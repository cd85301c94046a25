"""Issue 26: what the SDK gives a bot author besides the protocol: games in-process from Python
(`meldref.tools.arena.play`), a forward model over the seat's view, Solitaire helpers, and the
type of every view value documented in docs/sdk.md. The SDK stays importable on its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import PYTHON, RANDOM_BOT, ROOT
from test_game_registry import spellings

from meldref.bots import builtin_bot, sdk
from meldref.engine.game import find_game
from meldref.engine.phase10.rules import Phase10Rules
from meldref.protocol.wire import view_lines
from meldref.tools.arena import play

DOCS = (ROOT / "docs" / "sdk.md").read_text()


class Plain(sdk.Bot):
    name = "plain"


class Raising(sdk.Bot):
    name = "raising"

    def draw(self, request: sdk.Request) -> str:
        raise RuntimeError("no draw today")


def test_an_sdk_bot_plays_builtin_bots_in_process() -> None:
    result = play("fivecrowns", [Plain(), "builtin:greedy"], games=2, seed=3)
    assert len(result.records) == 2
    assert [s.name for s in result.standings] == ["plain", "greedy"]
    assert [s.games for s in result.standings] == [2, 2]
    assert sum(s.wins for s in result.standings) == 2
    assert all(set(r.status) == {"ok"} for r in result.records)
    # The seats rotate: the SDK bot played seat 0, then seat 1.
    assert [r.names.index("plain") for r in result.records] == [0, 1]


def test_an_sdk_bot_plays_a_program_in_process() -> None:
    result = play("phase10", [Plain(), RANDOM_BOT], games=1, seed=2,
                  rules=Phase10Rules(phases_to_win=1))
    assert result.standings[1].name == "random_bot"  # its `id name`, from its handshake
    assert result.records[0].status == ["ok", "ok"]


def test_an_sdk_bot_that_raises_is_counted_and_plays_its_fallback(
        capsys: pytest.CaptureFixture[str]) -> None:
    bot = Raising()
    result = play("fivecrowns", [bot, "builtin:greedy"], games=1, seed=1)
    assert result.records[0].status == ["ok", "ok"]
    err = capsys.readouterr().err
    assert sdk.SDK_RAISED in err and "RuntimeError: no draw today" in err
    assert "Traceback (most recent call last):" in err


def fivecrowns_request(hand: list[str], top: str) -> sdk.Request:
    seats = [{"seat": s, "playing": True, "score": 0, "hand_size": 3, "gone_out": False,
              "had_last_turn": False} for s in range(2)]
    data = {"seat": 0, "round": 1, "tiebreak": False, "deal_size": 3, "wild_rank": "3",
            "dealer": 1, "to_move": 0, "decision": "draw", "turn": 2, "turn_cap": 50,
            "natural": "none", "decks": 2, "hand": hand, "discard_top": top,
            "discard_pile_size": 2, "draw_pile_size": 100, "went_out": None,
            "last_turn": False, "table": [], "seats": seats}
    game = sdk.Game("fivecrowns", 2, 0, {}, {0: "a", 1: "b"})
    return sdk.Request(1, "draw", 1000, 0, sdk.View.from_json(data), (), game)


def test_the_forward_model_says_what_would_go_out() -> None:
    request = fivecrowns_request(["7H", "8H", "KS"], "9H")
    taken = sdk.after_draw(request.view)
    assert [c.text for c in taken.hand] == ["7H", "8H", "KS", "9H"]
    assert taken.discard_top is None and taken.decision == "discard"
    assert sdk.go_out(request, taken) == "discard KS run:7H,8H,9H"
    assert sdk.go_out(request, sdk.after_draw(request.view, "QD")) is None
    thrown = sdk.after_discard(taken, "KS")
    assert thrown.discard_top is not None and thrown.discard_top.text == "KS"
    assert [c.text for c in request.view.hand] == ["7H", "8H", "KS"]  # a copy: unchanged
    with pytest.raises(ValueError, match="not in the hand"):
        sdk.after_discard(taken, "QC")


def solitaire_request() -> sdk.Request:
    info = find_game("solitaire")
    state = info.new_game(info.rules(), 1, 5)
    data = state.observation(0).to_json()
    return sdk.Request(1, "place", 1000, 0, sdk.View.from_json(data), (),
                       sdk.Game("solitaire", 1, 0, {}, {0: "me"}))


def test_solitaire_helpers() -> None:
    assert [sdk.pile_wild(n) for n in (3, 10, 11, 13)] == ["3", "10", "J", "K"]
    request = solitaire_request()
    view = request.view
    assert view.draw_top is not None
    pile = view.piles[0]
    after = sdk.after_place(view, pile.size, view.draw_top)
    assert [c.text for c in after.piles[0].cards] == [c.text for c in pile.cards]
    assert after.draw_top is None and after.data["moves"] == view.data["moves"] + 1
    assert sdk.pile_points(request, pile.size) > 0
    engine = sdk.engine_view(request)
    # The points by parts (what the game scores at its end) are the whole pile's solver's.
    assert all(sdk.pile_points(request, p.size) == engine.solver(p.size).points()
               for p in view.piles)
    closing = [a for a in (str(x) for x in engine.legal_actions())
               if engine.solver(int(a.split()[1]), engine.draw_top).points() == 0]
    assert set(sdk.closing_places(request)) <= set(closing) or not closing


def view_keys(game: str, players: int) -> set[str]:
    """Every key of every view of one game, read as the SDK reads the wire (tables as
    `name[].key`)."""
    info = find_game(game)
    state = info.new_game(info.rules(), players, 1)
    bots = [builtin_bot(game, "greedy", k) for k in range(players)]
    keys: set[str] = set()
    while (seat := state.to_move) is not None:
        view = state.observation(seat)
        for line in view_lines(view.to_json()):
            words = line.split()
            if words[0] == "view":
                keys |= {w for w in sdk.decode_pairs(words[1:])}
            elif words[0] == "item":
                keys |= {f"{words[1]}[].{k}" for k in sdk.decode_pairs(words[2:])}
        state.apply(bots[seat].act(view))
    return keys - {"table", "seats", "piles"}  # an empty table's `-`: its records are listed


@pytest.mark.parametrize(("game", "players"), [("phase10", 3), ("fivecrowns", 3),
                                               ("solitaire", 1)])
def test_every_view_value_has_its_type_in_the_docs(game: str, players: int) -> None:
    documented = set(re.findall(r"^\| `([a-z_\[\].]+)` \| `", DOCS, re.M))
    missing = view_keys(game, players) - documented
    assert not missing, f"docs/sdk.md does not give the type of {sorted(missing)}"


def test_the_sdk_imports_on_its_own(tmp_path: Path) -> None:
    """A bot program may copy bots/sdk.py next to it: no meldref needed to import it."""
    copy = tmp_path / "sdk.py"
    copy.write_text((ROOT / "bots" / "sdk.py").read_text())
    done = subprocess.run([PYTHON, "-E", "-s", "-c", "import sdk; print(sdk.after_draw.__name__)"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "after_draw", done.stderr
    assert sys.executable


def test_the_sdk_names_no_game() -> None:
    """Issue 45: the SDK's Five Crowns and Solitaire helpers reach the engine through the
    request's game (its registered view), so bots/sdk.py spells no game's name: a game added
    by docs/adding-a-game.md needs nothing here."""
    assert list(spellings(ROOT / "bots" / "sdk.py")) == []
