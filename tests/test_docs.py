"""Every example of README.md and docs/ runs as printed (run alone: `pytest tests/test_docs.py`,
or leave it out: `-m 'not docs'`). README.md's in the default run; the guides' in docs/ are
marked long (`pytest -m long`, which .ci/run runs).

How a page is run. Each page gets a scratch folder that looks like the repository root: every
top-level entry of the repository linked into it (bots/, docs/, spec/, ...), but a `runs/` of
its own, so commands write under `runs/...` (or `/tmp/...`) and never into the checkout. The
page's blocks run there in order, so a later block may read what an earlier one wrote (a
tournament, then its replays). `meldref` is this checkout's (a shim on PATH runs
`python -m meldref` with the repository first on PYTHONPATH) and `python3` the interpreter
running the tests, in a terminal 120 columns wide.

- ```sh: run by `bash` with `set -eo pipefail`; it must exit 0 within two minutes. The line
  `<!-- docs-test: skip (reason) -->` before it skips it (the reason is printed).
- ```text right after a ```sh block: the block's standard output, compared line by line after
  normalising what varies between runs: trailing spaces, and times (`0.09 s`, `12 ms`) read
  as `<time>`.
- A ```console or ```text block marked `<!-- docs-output: why -->` (docblocks.py), prose
  between it and its ```sh block: a sample whose figures vary. Every number reads as `#` and
  runs of spaces and of a table's rule characters as one, in the sample and in what the block
  printed (standard output, then standard error); the sample's lines must then be found in
  that, in order (it may show a part). A stale sample -- a column renamed, a line reworded,
  a table drawn otherwise -- fails; a different seed's figures do not.
- ```toml: parsed. A tournament configuration (it has `[[bot]]` tables) is also played: two
  games of it (`--stop-after 2`), which must exit 0; a position (it has `to_move`) starts a
  match. `<!-- docs-file: NAME -->` before it also writes it to NAME for the blocks after it.

Docs commands stay small (a few short games): all of it is about a minute of CPU, so well
under a minute at -n 2 on an idle machine. (A runner of our own rather than sybil: a page's
blocks share one scratch folder and run in order, by bash, with the docs-file convention.)
The site (mkdocs.yml) is built with warnings as errors, so a broken link fails too.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pytest
from docblocks import Block, blocks
from support import ROOT

from meldref.protocol.sandbox import sandbox_problem

pytestmark = pytest.mark.docs

PAGES: Final = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
NOT_LINKED: Final = {".git", "runs", "site", "tournaments", ".venv", ".pytest_cache"}
BLOCK_SECONDS: Final = 120
_TIME: Final = re.compile(r"\b\d+(\.\d+)? ?(s|ms|us)\b")
_NUMBER: Final = re.compile(r"[+-]?\d[\d,]*(\.\d+)?")
_RUNS: Final = re.compile(r"([ ─━═┄\-])\1+")


@dataclass
class Outcome:
    """What running a page gave: the problems found, and the blocks skipped with why."""

    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def scratch_root(folder: Path) -> Path:
    """A folder that looks like the repository root, with a `runs/` of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry in ROOT.iterdir():
        if entry.name not in NOT_LINKED:
            (folder / entry.name).symlink_to(entry)
    (folder / "runs").mkdir()
    shim = folder / ".bin"
    shim.mkdir()
    (shim / "meldref").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m meldref "$@"\n')
    (shim / "meldref").chmod(0o755)
    return folder


def environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # Then the folder of the python running the tests, as an activated venv has it: a
    # contest's bots run in the sandbox, whose fresh environment has no PYTHONPATH, so a bot
    # importing meldref (the SDK) needs the `python3` that has it installed.
    env["PATH"] = os.pathsep.join([str(folder / ".bin"), os.path.dirname(sys.executable),
                                   env.get("PATH", "")])
    env["COLUMNS"], env["TERM"] = "120", "dumb"
    env.pop("FORCE_COLOR", None)
    return env


def normalise(text: str, folder: Path) -> list[str]:
    text = text.replace(str(folder), "<dir>")
    return [_TIME.sub("<time>", line.rstrip()) for line in text.strip("\n").splitlines()]


def loose(text: str, folder: Path) -> list[str]:
    """`text`'s lines as a `docs-output` sample is compared: numbers read as `#`, runs of
    spaces and of rule characters as one, blank lines left out."""
    lines = (_RUNS.sub(r"\1", _NUMBER.sub("#", line)).strip()
             for line in text.replace(str(folder), "<dir>").splitlines())
    return [line for line in lines if line]


def missing_from(sample: list[str], printed: list[str]) -> str | None:
    """The first line of `sample` not found in `printed` after the lines before it, or None."""
    at = 0
    for line in sample:
        try:
            at = printed.index(line, at) + 1
        except ValueError:
            return line
    return None


def shell(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """`command` run by bash in `folder`; past the time bound, its whole process group is
    killed (the bots of a killed meldref die with it) and TimeoutExpired raised."""
    with subprocess.Popen(["bash", "-c", "set -eo pipefail\n" + command], cwd=folder,
                          env=environment(folder), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                          start_new_session=True) as process:
        try:
            out, err = process.communicate(timeout=BLOCK_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def failed(block: Block, what: str, result: subprocess.CompletedProcess[str]) -> str:
    tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
    return f"{block.where}: {what}, exit {result.returncode}\n{block.text}{tail}"


def run_sh(block: Block, folder: Path) -> str | None:
    """The problem with one ```sh block, if any."""
    try:
        result = shell(block.text, folder)
    except subprocess.TimeoutExpired:
        return f"{block.where}: still running after {BLOCK_SECONDS} s (docs commands stay small)"
    if result.returncode != 0:
        return failed(block, "the commands failed", result)
    if block.output is not None:
        printed, shown = normalise(result.stdout, folder), normalise(block.output, folder)
        if printed != shown:
            diff = "\n".join(f"- {a}\n+ {b}" for a, b in zip(shown, printed, strict=False)
                             if a != b) or f"{len(shown)} lines shown, {len(printed)} printed"
            return f"{block.where}: the output differs from the page (- page, + printed)\n{diff}"
    if block.sample is not None:
        printed = loose(result.stdout + "\n" + result.stderr, folder)
        stale = missing_from(loose(block.sample, folder), printed)
        if stale is not None:
            return (f"{block.where}: the sample of its output below is stale: no line reads "
                    f"{stale!r} (numbers as #) in what it printed:\n" + "\n".join(printed[:40]))
    return None


def run_toml(block: Block, folder: Path) -> str | None:
    """The problem with one ```toml block, if any: it must parse; a tournament configuration
    must play two games, a position must start a match."""
    try:
        data = tomllib.loads(block.text)
    except tomllib.TOMLDecodeError as exc:
        return f"{block.where}: not TOML: {exc}"
    if block.file:
        (folder / block.file).write_text(block.text)
    path = folder / "runs" / f"docs-{block.page.stem}-{block.line}.toml"
    path.write_text(block.text)
    path.chmod(0o600)  # a configuration that holds a seed warns when others can read it
    if "bot" in data:
        command = (f"meldref tournament {path} --stop-after 2 --no-progress "
                   f"--out runs/docs-{block.page.stem}-{block.line}")
    elif "to_move" in data:
        command = f"meldref match --position {path}"
    else:
        return None
    result = shell(command, folder)
    return None if result.returncode == 0 else failed(block, command, result)


def lacks(needs: str | None) -> str | None:
    """Why this machine lacks what a block `needs` (docblocks.py), or None."""
    if needs is None:
        return None
    problem = sandbox_problem()
    return None if problem is None else f"needs the bot sandbox: {problem}"


def run_page(page: Path, folder: Path) -> Outcome:
    """Every block of `page`, in order, in the scratch folder `folder`."""
    outcome = Outcome()
    scratch_root(folder)
    for block in blocks(page):
        if block.skip is not None:
            outcome.skipped.append(f"{block.where}: skipped ({block.skip})")
            continue
        if block.needs not in (None, "sandbox"):
            outcome.problems.append(f"{block.where}: needs {block.needs}: unknown (sandbox?)")
            continue
        lacking = lacks(block.needs)
        if lacking is not None:
            outcome.skipped.append(f"{block.where}: skipped ({lacking})")
            continue
        runner = {"sh": run_sh, "toml": run_toml}.get(block.lang)
        problem = runner(block, folder) if runner else None
        if problem:
            outcome.problems.append(problem)
    return outcome


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


# Every page's examples (the README's 12 s, a minute of CPU in all) with -m long, which
# .ci/run runs: kept out of the default run, to keep it under 5 minutes on two cores.
@pytest.mark.parametrize("page", [
    pytest.param(page, id=page_id(page), marks=[pytest.mark.long]) for page in PAGES])
def test_every_example_of_the_page_runs_as_printed(page: Path, tmp_path: Path) -> None:
    outcome = run_page(page, tmp_path)
    for line in outcome.skipped:
        print(line)
    assert not outcome.problems, "\n\n".join(outcome.problems)


# ----------------------------------------------------------------------------------------------
# The runner fails when an example breaks


def page(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "page" / "example.md"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


TINY: Final = ("meldref tournament --bot builtin:greedy --bot builtin:random --games 2 "
               "--rules phases-to-win=1 --seed 4 --out runs/t --no-progress > /dev/null\n")


@pytest.mark.parametrize(("game_id", "works"), [("t00-d0000-s00", True),
                                               ("t00-d0000-r0", False)])
def test_a_replay_example_must_name_a_game_the_tournament_wrote(
        tmp_path: Path, game_id: str, works: bool) -> None:
    # README's example named runs/rr200/replays/t00-d0000-r0.jsonl; ids end in -s<seating>.
    doc = page(tmp_path, f"```sh\n{TINY}meldref replay show runs/t/replays/{game_id}.jsonl\n```\n")
    outcome = run_page(doc, tmp_path / "scratch")
    assert bool(outcome.problems) is not works, outcome.problems
    if not works:
        assert "example.md:1: the commands failed, exit 2" in outcome.problems[0]


def test_output_that_differs_from_the_page_fails_and_times_do_not(tmp_path: Path) -> None:
    commands = "```sh\necho 'wall time 0.04 s'; echo hands 12\n```\n"
    good = commands + "```text\nwall time 0.09 s\nhands 12\n```\n"
    bad = commands + "```text\nwall time 0.09 s\nhands 13\n```\n"
    assert run_page(page(tmp_path / "a", good), tmp_path / "a" / "s").problems == []
    problems = run_page(page(tmp_path / "b", bad), tmp_path / "b" / "s").problems
    assert len(problems) == 1 and "- hands 13\n+ hands 12" in problems[0]


SAMPLE: Final = ("```sh\necho 'seed 731: 3 games'; echo '| # | bot | rating |'; "
                  "echo '|  1 | sdk  |   +129 |'\n```\nIt prints (the seed varies):\n\n"
                  "<!-- docs-output: the seed varies -->\n```console\n{}\n```\n")


@pytest.mark.parametrize(("shown", "stale"), [
    ("seed 12: 3 games\n| # | bot | rating |\n| 2 | sdk | -40 |", False),  # other figures
    ("| # | bot | rating |", False),  # a part of it
    ("seed 12: 3 games\n| # | bot | elo |", True),  # a column renamed since
    ("seed 12: 3 games played", True),  # a line reworded
    ("| # | bot | rating |\nseed 12: 3 games", True),  # out of order
])
def test_a_sample_of_varying_output_fails_only_when_stale(tmp_path: Path, shown: str,
                                                          stale: bool) -> None:
    """Issue 47: docs/contest.md's `status` sample was stale, and no test compared it."""
    problems = run_page(page(tmp_path, SAMPLE.format(shown)), tmp_path / "s").problems
    assert bool(problems) is stale, problems
    if stale:
        assert "example.md:1: the sample of its output below is stale" in problems[0]


def test_a_skipped_block_is_not_run_and_its_reason_is_kept(tmp_path: Path) -> None:
    doc = page(tmp_path, "<!-- docs-test: skip (needs two machines) -->\n```sh\nexit 3\n```\n")
    outcome = run_page(doc, tmp_path / "scratch")
    assert outcome.problems == []
    assert outcome.skipped == ["example.md:2: skipped (needs two machines)"]


def test_a_block_that_needs_the_sandbox_runs_only_where_it_can(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The README's contest example failed where bubblewrap was missing, as a test that could
    # not run rather than one that says why and skips.
    from meldref.protocol import sandbox

    text = "<!-- docs-test: needs sandbox -->\n```sh\nexit 3\n```\n"
    monkeypatch.setattr(sandbox, "BWRAP", None)
    monkeypatch.setattr(sandbox, "_PROBLEM", [])
    outcome = run_page(page(tmp_path / "a", text), tmp_path / "a" / "s")
    assert outcome.problems == []
    assert outcome.skipped == ["example.md:2: skipped (needs the bot sandbox: bubblewrap "
                               "(`bwrap`) is not installed: apt-get install bubblewrap)"]
    monkeypatch.setattr(sandbox, "_PROBLEM", [None])  # a machine where it runs: run, and fail
    outcome = run_page(page(tmp_path / "b", text), tmp_path / "b" / "s")
    assert len(outcome.problems) == 1 and "exit 3" in outcome.problems[0]
    typo = run_page(page(tmp_path / "c", text.replace("sandbox", "sandbx")), tmp_path / "c" / "s")
    assert typo.problems == ["example.md:2: needs sandbx: unknown (sandbox?)"]


def test_a_block_past_the_bound_fails_and_leaves_no_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "BLOCK_SECONDS", 1)
    mark = f"docs-test-{os.getpid()}"
    doc = page(tmp_path, f"```sh\nbash -c 'exec -a {mark} sleep 600' & wait\n```\n")
    problems = run_page(doc, tmp_path / "scratch").problems
    assert len(problems) == 1 and "still running after 1 s" in problems[0]
    left = subprocess.run(["pgrep", "-f", mark], capture_output=True, text=True).stdout
    assert left == "", f"left running: {left}"


SAMPLE_TOML_BEFORE: Final = '''\
game = "phase10"
players = 4
bot-folder = "contest"
[[bot]]
cmd = "builtin:greedy"
[[bot]]
cmd = "python3 bots/random_bot.py"
'''


def test_a_tournament_configuration_that_cannot_play_fails(tmp_path: Path) -> None:
    # README's sample: 2 bots cannot fill tables of 4, then a bot-folder that does not exist.
    doc = page(tmp_path, f"```toml\n{SAMPLE_TOML_BEFORE}```\n")
    problems = run_page(doc, tmp_path / "scratch").problems
    assert len(problems) == 1 and "exit 2" in problems[0] and "tables of 4" in problems[0]
    fixed = SAMPLE_TOML_BEFORE.replace("players = 4", "players = 2")
    doc = page(tmp_path / "b", f"```toml\n{fixed}```\n")
    problems = run_page(doc, tmp_path / "b" / "s").problems
    assert len(problems) == 1 and "contest" in problems[0]


def test_the_configuration_example_of_config_py_plays(tmp_path: Path) -> None:
    from meldref.tournament import config

    doc = config.__doc__ or ""
    found = re.search(r"```toml\n(.*?)```", doc, re.S)
    assert found, "meldref/tournament/config.py's docstring has no toml example"
    outcome = run_page(page(tmp_path, f"```toml\n{found.group(1)}```\n"), tmp_path / "scratch")
    assert outcome.problems == []


def test_the_docs_blocks_are_found_with_their_markers() -> None:
    every = [block for path in PAGES for block in blocks(path)]
    assert {"sh", "toml"} <= {block.lang for block in every}
    assert "text" not in {block.lang for block in every}  # each shows the output of a sh block
    assert any(block.output for block in every)
    assert any(block.skip for block in every) and any(block.file for block in every)


# ----------------------------------------------------------------------------------------------
# The site


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]'): the site is not built")
    result = subprocess.run([mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "tournaments" / "index.html").is_file()


# ----------------------------------------------------------------------------------------------
# The README's first screen


def test_the_readmes_first_screen_says_what_each_command_family_is_for() -> None:
    # A first screen: what a reader sees before scrolling, about 30 lines. Issue 22 asked that
    # it say what `meldref contest` is for (it said only "matches, tournaments and contests").
    first = "\n".join((ROOT / "README.md").read_text().splitlines()[:30])
    assert "python3 -m venv" in first and "Linux" in first and "3.11" in first
    assert re.search(r"`meldref contest` for a contest that runs for weeks", first), first
