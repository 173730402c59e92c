"""What a new user meets in the first hour, through the command line: notices on stderr in
a pipe as on a terminal (and none with `--quiet`), the recipes and what they need, one
card notation, and help texts that speak the product's words."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from cli_helpers import REPO, one_line_error, spades

pytestmark = [pytest.mark.cli]


# ----------------------------------------------------------------------------- notices
def test_quiet_silences_the_compile_notice_of_every_process(monkeypatch):
    from experiments.cli import app
    from spades_env.core.compile import NOTICE_ENV

    assert app.NOTICE_ENV == NOTICE_ENV  # app names it without importing the engine first
    monkeypatch.setenv(NOTICE_ENV, "")
    assert not app.quiet_notices(["tournament", "--deals", "4"])
    assert app.quiet_notices(["tournament", "--quiet"])
    assert app.quiet_notices(["--quiet", "analyze", "x"])
    import os

    assert os.environ[NOTICE_ENV] == "0"  # inherited by the workers it starts


def test_quiet_is_taken_before_and_after_the_command():
    for argv in (["--quiet", "demo", "--hands", "1"], ["demo", "--hands", "1", "--quiet"]):
        done = spades(*argv)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
        assert "hand" in done.stdout.lower()


def test_the_double_dummy_solves_are_announced_before_they_start(small_run):
    """`on_solve(0, todo)` comes before the first solve (the first solve also compiles the
    solver: the progress bar and the notice must not wait for it)."""
    from experiments.bid_analysis.double_dummy import dd_tricks
    from experiments.bid_analysis.log_frames import load_log

    calls: list = []

    def solve(hands, leader, rules):
        calls.append("solve")
        return 7

    class NoCache:
        def get(self, keys):
            return {}

        def put(self, answers):
            pass

    rows = load_log(small_run)
    dd_tricks(rows, NoCache(), solve=solve, on_solve=lambda d, t: calls.append((d, t)))
    todo = calls.count("solve")
    assert todo >= 1
    assert calls[:2] == [(0, todo), "solve"]
    assert calls[-1] == (todo, todo)


@pytest.fixture
def run_copy(small_run, tmp_path):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(small_run, out)
    return out


def test_analyze_says_on_stderr_in_a_pipe_that_it_solves(run_copy, tmp_path):
    cache = str(tmp_path / "dd.sqlite")
    # (timeout: the solver's first compile on a cold cache and a busy machine takes minutes)
    done = spades("analyze", str(run_copy), "--dd-max", "1", "--dd-cache", cache, timeout=1200)
    assert done.returncode == 0, done.stderr
    assert "double dummy: solving 1 new hand on every core" in done.stderr
    quiet = spades(
        "analyze", str(run_copy), "--dd-max", "1", "--dd-cache", str(tmp_path / "b.sqlite"),
        "--quiet", timeout=1200,
    )  # fmt: skip
    assert quiet.returncode == 0, quiet.stderr
    assert "double dummy: solving" not in quiet.stderr


def test_analyze_help_names_no_internal_constant():
    text = " ".join(spades("analyze", "--help").stdout.split())
    assert "AUTO_SOLVES" not in text and "experiments." not in text
    assert "at most 200 new hands" in text


@pytest.mark.parametrize("command", ["demo", "bench"])
def test_demo_and_bench_help_describe_the_command(command):
    out = spades(command, "--help").stdout
    usage, description = out.split("\n\n")[:2]
    assert usage.startswith("usage:")
    assert not description.lstrip().startswith(("options:", "positional")), out
    assert len(description.split()) >= 8


# ----------------------------------------------------------------------------- recipes
def test_recipe_help_lists_every_recipe_on_disk_with_its_extras():
    from experiments.recipe import CHECKPOINTS, needs

    on_disk = sorted(
        p.stem
        for p in CHECKPOINTS.glob("*.json")
        if {"recipe", "command"} & set(json.loads(p.read_text()))
    )
    assert "learned2" in on_disk
    text = " ".join(spades("train", "recipe", "--help").stdout.split())
    for name in on_disk:
        assert f"{name} ({' + '.join(needs(name))})" in text
    assert set(needs("learned2")) == {"train", "ray"}
    assert set(needs("ppo_small")) == {"train"}


BLOCK_RAY = """
import sys
from importlib.abc import MetaPathFinder

class NoRay(MetaPathFinder):  # as if the ray extra were not installed
    def find_spec(self, name, path=None, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, NoRay())
from experiments.cli.app import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_recipe_without_its_extra_says_so_before_it_starts(tmp_path):
    work = tmp_path / "recipe"
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_RAY, "train", "recipe", "learned2", "--smoke",
         "--dir", str(work)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    line = one_line_error(done)
    assert "the recipe of learned2 needs the ray" in line
    assert line.endswith("pip install -e '.[train,ray]'")
    assert not work.exists(), "nothing ran"


# ----------------------------------------------------------------------------- words
PRODUCT = ["agents", "spades_env", "experiments", "training", "examples", "docs", "notebooks"]
SEED_WORDS = re.compile(r"\b[Ss]eeds? 00[0-3]\b|\b[Ss]eed 000's")


def test_the_rule_texts_go_by_their_name_outside_the_rule_book():
    rules = (REPO / "RULES.md").read_text(encoding="utf-8")
    assert "rule texts 000 to 003" in rules.split("## §1")[0], "RULES.md names its sources"
    files = [REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "RULES.md"]
    for top in PRODUCT:
        files += [p for p in (REPO / top).rglob("*") if p.suffix in (".py", ".md", ".ipynb")]
    found = [
        f"{p.relative_to(REPO)}: {m.group(0)}"
        for p in files
        if "_build" not in p.parts and "_generated" not in p.parts
        for m in SEED_WORDS.finditer(p.read_text(encoding="utf-8"))
    ]
    assert found == []
    agents = spades("tournament", "--help").stdout + spades("evaluate", "--help").stdout
    assert not SEED_WORDS.search(agents)


def test_a_hint_counts_one_trick_in_the_singular():
    from agents.heuristic.play import _NEED, WHYS, reason_text

    why = WHYS.index("cash a sure winner")
    assert reason_text(_NEED, why, 1, 0) == "the team needs 1 more trick: cash a sure winner"
    assert reason_text(_NEED, why, 3, 0).startswith("the team needs 3 more tricks:")


def test_the_notebooks_papermill_comes_with_an_extra():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        text = nb.read_text(encoding="utf-8")
        if "papermill" not in text:
            continue
        named = re.search(r"papermill, from the `(\w+)` extra", text)
        assert named, f"{nb.name} suggests papermill without naming its extra"
        assert any(r.startswith("papermill") for r in extras[named.group(1)])


def test_the_benchmark_page_describes_every_section():
    from experiments.bench.runner import SECTIONS

    page = (REPO / "docs" / "benchmark.md").read_text(encoding="utf-8")
    described = set(re.findall(r"^- `(\w+)`(?:, `(\w+)`)?:", page, flags=re.M))
    names = {n for pair in described for n in pair if n}
    assert set(SECTIONS) <= names, set(SECTIONS) - names


# ----------------------------------------------------------------------------- cards
def test_one_card_notation_on_every_screen(small_run):
    from experiments.table.words import card_label
    from spades_env.cards import HEARTS, NUM_RANKS, card_to_str, str_to_card
    from spades_env.table_image import _card_text

    ten = HEARTS * NUM_RANKS + 8
    assert card_label(ten) == card_to_str(ten, unicode=True) == "T♥"
    assert _card_text(ten)[0] == "T"
    assert str_to_card("10♥") == str_to_card("T♥") == str_to_card("th") == ten
    shown = spades("show", str(small_run), "--deal", "0")
    assert shown.returncode == 0, shown.stderr
    assert "T" in shown.stdout and not re.search(r"10[♠♥♦♣]", shown.stdout)


def test_card_notation_in_the_play_screen_and_show_agree():
    """The play screen's hand (`experiments.play.screen.hand_text`) writes each card as
    `card_to_str` does."""
    from experiments.play.screen import hand_text
    from spades_env.cards import card_to_str

    cards = list(range(52))
    text = hand_text(cards, None).plain
    for card in cards:
        assert card_to_str(card, unicode=True) in text


# ----------------------------------------------------------------------------- setup
def test_warm_compiles_the_default_tournaments_kernels_on_two_processes():
    from cli_helpers import run_module

    done = run_module("experiments.warm", timeout=1200)
    assert done.returncode == 0, done.stderr
    assert "kernels compiled in" in done.stderr and "engine" in done.stderr
    assert "heuristic" in done.stderr
    assert run_module("experiments.warm", "--quiet", timeout=1200).stderr == ""


def test_setup_takes_the_core_or_all_and_refuses_anything_else(tmp_path):
    done = subprocess.run(
        ["bash", str(REPO / ".ci" / "setup"), "--everything"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.strip() == "usage: bash .ci/setup [--all]"
    run = (REPO / ".ci" / "run").read_text()
    assert "bash .ci/setup --all" in run, "CI installs every extra before the tests"
