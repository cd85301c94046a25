"""The replay viewer without a browser: its frames against the engine, what a seat's page
holds, the page's size, the `replay html` command, and the server's answers (path traversal
included). The page's drawing is tested in a real browser in test_viewer_browser.py."""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import viewer_games as games
from typer.testing import CliRunner

from meldref.cli import app
from meldref.replay.files import load_replay, write_first_actions
from meldref.replay.html import game_data, replay_page, script_json
from meldref.replay.serve import ReplayServer, ServeError
from meldref.replay.words import describe_group

runner = CliRunner()


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("viewer-replays")
    return {"phase10": games.phase10_four(folder), "fivecrowns": games.fivecrowns_nine(folder),
            "solitaire": games.solitaire(folder), "faults": games.with_faults(folder)}


def frames(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The page's frames made whole again, as its script does, with per-seat lists rebuilt."""
    out, flat = [], {}
    for delta in data["frames"]:
        flat = {**flat, **delta}
        frame: dict[str, Any] = {}
        for key, value in flat.items():
            name, dot, index = key.partition(".")
            if dot:
                frame.setdefault(name, {})[int(index)] = value
            else:
                frame[name] = value
        out.append({k: [v[i] for i in sorted(v)] if isinstance(v, dict) and k != "end" else v
                    for k, v in frame.items()})
    return out


# ----------------------------------------------------------------------------------------------
# Frames against the engine


@pytest.mark.parametrize("game", ["phase10", "fivecrowns", "faults"])
def test_every_frame_of_a_table_game_is_the_engines_table(replays: dict[str, Path],
                                                          game: str) -> None:
    data = game_data(load_replay(replays[game]))
    facts = games.expected(replays[game])
    checked = ends = 0
    for step, frame in zip(data["steps"], frames(data), strict=True):
        if step["k"] != "a":
            continue
        n = step["n"]
        assert frame["sc"] == facts.scores(n), n
        assert frame["hs"] == facts.hand_sizes(n), n
        assert frame["hd"] == facts.hands(n), n
        if n in facts.hand_end:
            ends += 1
            assert frame["end"] is not None and frame["pts"] == facts.hand_end[n]["points"]
        else:
            checked += 1
            assert [(g[0], g[1]) for g in frame["tb"]] == facts.groups(n), n
            assert frame["dp"] == facts.after[n][0]["draw_pile_size"]
            top = facts.after[n][0]["discard_top"]
            assert frame["dis"][-1:] == ([top] if top else [])
    assert checked > 80 and ends >= 1


def test_every_frame_of_solitaire_is_the_engines_table(replays: dict[str, Path]) -> None:
    data = game_data(load_replay(replays["solitaire"]))
    facts = games.expected(replays["solitaire"])
    for step, frame in zip(data["steps"][1:], frames(data)[1:], strict=True):
        view = facts.after[step["n"]][0]
        assert frame["sc"] == [view["piles_closed"]]
        assert frame["pc"] == [p["cards"] for p in view["piles"]]
        assert frame["pz"] == [p["closed"] for p in view["piles"]]
        assert frame["top"] == view["draw_top"] and frame["dn"] == view["out_of_play"]
        # A closed pile shows the books and runs that closed it.
        assert all((g is not None) == closed for g, closed in zip(frame["pg"], frame["pz"],
                                                                   strict=True))


def test_a_lay_down_is_told_in_words(replays: dict[str, Path]) -> None:
    data = game_data(load_replay(replays["phase10"]))
    lays = [s["L"][0] for s in data["steps"] if s.get("a", "").startswith("lay ")]
    assert lays and all(re.search(r"lays phase \d+: (set of \d+ \w+|run \d+-\d+|\d+ \w+ "
                                  r"cards) \(", line) for line in lays)


def test_groups_in_words() -> None:
    assert describe_group("set:R7,B7,W=7,G7") == "set of 4 sevens"
    assert describe_group("run:R3,B4,Y5,W=6") == "run 3-6"
    assert describe_group("colour:G1,G5,W=G,G7,G9,G9,G12") == "7 green cards"
    assert describe_group("book:QH,QS,X=Q") == "book of 3 queens"
    assert describe_group("run:9H,10H,JH,X=Q,4S=K") == "run 9-K of hearts"
    assert describe_group("nonsense:Z9") == "nonsense:Z9"


def test_faults_sit_on_the_action_of_the_decision_they_happened_in(
        replays: dict[str, Path]) -> None:
    replay = load_replay(replays["faults"])
    data = game_data(replay)
    marked = [(f[0], f[1]) for s in data["steps"] for f in s.get("F", [])]
    recorded = [(f["seat"], f["outcome"]) for f in replay.faults()]
    assert sorted(marked) == sorted(recorded)
    assert {"timeout", "illegal"} <= {outcome for _, outcome in marked}
    timeout = next(s for s in data["steps"] if any(f[1] == "timeout" for f in s.get("F", [])))
    assert timeout["s"] == 2 and timeout["au"]  # the referee played the seat that timed out
    illegal = next(f for s in data["steps"] for f in s.get("F", []) if f[1] == "illegal")
    assert "draw takes one word" in illegal[2]  # the engine's reason


# ----------------------------------------------------------------------------------------------
# A seat's page


@pytest.mark.parametrize("game", ["phase10", "fivecrowns", "faults"])
def test_a_seats_page_holds_no_card_it_did_not_see(replays: dict[str, Path], game: str) -> None:
    replay = load_replay(replays[game])
    full = game_data(replay)
    seat = 1
    html, _ = replay_page(replays[game], seat)
    data = game_data(replay, seat)
    for frame in frames(data):
        for other, hand in enumerate(frame["hd"]):
            if other != seat and frame["end"] is None:
                assert hand is None
    # Every line the full page tells with another seat's hidden cards (its deal, its draws
    # from the pile) is absent from the seat's page; the seed is absent too.
    hidden = {line[0] for s in full["steps"] for line in s["L"]
              if isinstance(line, list) and line[2] != seat}
    assert hidden and not any(text in html for text in hidden)
    assert data["seed"] is None and f'"seed":{replay.header["seed"]}' not in html
    own = [line for s in data["steps"] for line in s["L"] if "seat 1 (" in str(line)]
    assert any("seat 1 (" in str(line) and "is dealt" in str(line) and "cards" not in str(line)
               for line in own)  # its own hand is named


def test_a_seats_page_hides_other_seats_fault_details(replays: dict[str, Path]) -> None:
    data = game_data(load_replay(replays["faults"]), 2)
    faults = [f for s in data["steps"] for f in s.get("F", [])]
    assert all((f[2] is None) == (f[0] != 2) for f in faults)
    assert any(f[0] == 1 for f in faults)  # seat 1's faults are marked, without their text


# ----------------------------------------------------------------------------------------------
# The page


def test_a_page_for_300_actions_at_14_seats_is_under_1_mb(tmp_path: Path) -> None:
    whole = games.fivecrowns_fourteen(tmp_path)
    cut = write_first_actions(whole, tmp_path / "cut.jsonl", 300)
    for path in (cut, whole):
        html, _ = replay_page(path)
        size = len(html.encode())
        print(f"{path.name}: {len(load_replay(path).actions())} actions, {size} bytes")
        assert size < 1_000_000


def test_page_data_cannot_close_its_script_element(tmp_path: Path,
                                                   replays: dict[str, Path]) -> None:
    evil = "</script><script>alert(1)</script><!--"
    path = games.renamed(replays["solitaire"], tmp_path / "evil.jsonl", {0: evil})
    html, _ = replay_page(path)
    assert evil not in html and "</script><script>alert" not in html
    payload = html.split('<script id="meldref-data" type="application/json">')[1]
    data = json.loads(payload.split("</script>")[0])
    assert data["names"] == [evil]
    assert json.loads(script_json({"x": "<&>\u2028"})) == {"x": "<&>\u2028"}


def test_the_page_needs_no_network(replays: dict[str, Path]) -> None:
    html, _ = replay_page(replays["phase10"])
    assert "default-src 'none'" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(http" not in html


# ----------------------------------------------------------------------------------------------
# meldref replay html


def test_replay_html_writes_one_owner_only_page(replays: dict[str, Path],
                                                tmp_path: Path) -> None:
    out = tmp_path / "game.html"
    result = runner.invoke(app, ["replay", "html", str(replays["phase10"]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.stat().st_mode & 0o777 == 0o600
    assert out.read_text().startswith("<!doctype html>")
    seat = tmp_path / "seat.html"
    result = runner.invoke(app, ["replay", "html", str(replays["phase10"]), "--seat", "2",
                                 "-o", str(seat)])
    assert result.exit_code == 0 and '"seat":2' in seat.read_text()


def test_replay_html_of_a_folder_writes_a_page_per_game_and_an_index(
        replays: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "site"
    folder = replays["phase10"].parent
    result = runner.invoke(app, ["replay", "html", str(folder), "-o", str(out)])
    assert result.exit_code == 0, result.output
    pages = sorted(p.name for p in out.glob("*.html"))
    assert pages == sorted([p.with_suffix(".html").name for p in folder.glob("*.jsonl")]
                           + ["index.html"])
    index = out.joinpath("index.html").read_text()
    assert all(f'"href":"{p.with_suffix(".html").name}"' in index for p in folder.glob("*.jsonl"))
    assert '"back":"index.html"' in out.joinpath("faults.html").read_text()


@pytest.mark.parametrize(("args", "message", "code"), [
    (["missing.jsonl"], "no such file", 2),
    (["PHASE10", "--seat", "4"], "--seat 4: the game has seats 0..3", 2),
    (["PHASE10", "--seat", "-1"], "--seat -1: the game has seats 0..3", 2),
    (["NOT_A_REPLAY"], "not a meldref replay", 1),  # a file that fails its check: as verify
    (["EMPTY_FOLDER"], "no replay files found", 2),
    (["FOLDER", "--seat", "3"], "--seat 3:", 2),
])
def test_replay_html_refuses_what_it_cannot_show(replays: dict[str, Path], tmp_path: Path,
                                                 args: list[str], message: str,
                                                 code: int) -> None:
    other = tmp_path / "notes.jsonl"
    other.write_text('{"hello": 1}\n')
    (tmp_path / "empty").mkdir()
    given = {"PHASE10": str(replays["phase10"]), "NOT_A_REPLAY": str(other),
             "EMPTY_FOLDER": str(tmp_path / "empty"), "FOLDER": str(replays["phase10"].parent)}
    out = tmp_path / "out"
    result = runner.invoke(app, ["replay", "html", *[given.get(a, a) for a in args],
                                 "-o", str(out)])
    assert result.exit_code == code, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not out.exists()  # nothing written


def test_replay_html_shows_an_altered_replay_up_to_its_bad_line(replays: dict[str, Path],
                                                                tmp_path: Path) -> None:
    lines = replays["phase10"].read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if i >= 60 and '"action":"draw pile"' in line)
    lines[at] = lines[at].replace('"draw pile"', '"draw discard"', 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(lines))
    result = runner.invoke(app, ["replay", "html", str(bad)])
    assert result.exit_code == 1
    assert f"line {at + 1}: altered" in result.output
    html = bad.with_suffix(".html").read_text()
    assert f"line {at + 1}: altered" in html
    data = json.loads(html.split('type="application/json">')[1].split("</script>")[0])
    assert [s.get("n") for s in data["steps"] if s["k"] == "a"][-1] == at - 3  # up to there


# ----------------------------------------------------------------------------------------------
# meldref replay serve


@pytest.fixture(scope="module")
def server(replays: dict[str, Path]) -> Iterator[ReplayServer]:
    folder = replays["phase10"].parent
    outside = folder.parent / "outside-secret.jsonl"
    outside.write_text(replays["solitaire"].read_text())
    link = folder / "link.jsonl"
    if not link.exists():
        link.symlink_to(outside)
    httpd = ReplayServer(folder, "127.0.0.1", 0, quiet=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    link.unlink()


def get(server: ReplayServer, path: str, method: str = "GET",
        host: str | None = None) -> tuple[int, str]:
    port = server.server_address[1]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        headers = {"Host": host or f"127.0.0.1:{port}"}
        connection.putrequest(method, path, skip_host=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def test_server_lists_the_games_and_shows_each(server: ReplayServer,
                                               replays: dict[str, Path]) -> None:
    status, body = get(server, "/")
    assert status == 200
    for path in replays.values():
        assert f'"href":"/view/{path.name}"' in body
    status, body = get(server, f"/view/{replays['faults'].name}")
    assert status == 200 and '"back":"/"' in body and '"timeout"' in body
    status, body = get(server, f"/view/{replays['phase10'].name}?seat=1")
    assert status == 200 and '"seat":1' in body
    assert get(server, f"/view/{replays['phase10'].name}?seat=9")[0] == 400
    assert get(server, f"/view/{replays['phase10'].name}?seat=x")[0] == 400


@pytest.mark.parametrize("path", [
    "/view/../outside-secret.jsonl",
    "/view/%2e%2e/outside-secret.jsonl",
    "/view/..%2foutside-secret.jsonl",
    "/view/%2E%2E%2Foutside-secret.jsonl",
    "/view//etc/passwd",
    "/view/../../../../../../etc/passwd",
    "/view/link.jsonl",  # a link inside the folder to a file outside it
    "/view/",
    "/view/.",
    "/view/phase10-4.jsonl%00.html",
    "/outside-secret.jsonl",
    "/phase10-4.jsonl",
    "/../outside-secret.jsonl",
])
def test_server_serves_nothing_outside_its_folder(server: ReplayServer, path: str) -> None:
    status, body = get(server, path)
    assert status == 404, (path, status)
    assert "meldref-replay" not in body and "solitaire" not in body.lower()


def test_server_answers_get_only_and_its_own_host_only(server: ReplayServer) -> None:
    assert get(server, "/", "POST")[0] == 501
    assert get(server, "/", "PUT")[0] == 501
    assert get(server, "/", host="evil.example:80")[0] == 421
    port = server.server_address[1]
    assert get(server, "/", host=f"localhost:{port}")[0] == 200
    assert server.url == f"http://127.0.0.1:{port}/"


def test_server_refuses_a_folder_without_replays(tmp_path: Path) -> None:
    with pytest.raises(ServeError, match="no replay files"):
        ReplayServer(tmp_path, "127.0.0.1", 0)
    with pytest.raises(ServeError, match="not a folder"):
        ReplayServer(tmp_path / "nothing", "127.0.0.1", 0)
    result = runner.invoke(app, ["replay", "serve", str(tmp_path), "--port", "0"])
    assert result.exit_code == 2 and "no replay files found" in result.output


def test_serve_on_a_port_in_use_stops_with_exit_2(server: ReplayServer,
                                                  replays: dict[str, Path]) -> None:
    port = str(server.server_address[1])
    result = runner.invoke(app, ["replay", "serve", str(replays["phase10"].parent),
                                 "--port", port])
    assert result.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in result.output
