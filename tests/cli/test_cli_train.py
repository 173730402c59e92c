"""`spades train` run as a subprocess: its help, and bad flags refused in one line with
nothing written (the runs folder stays empty)."""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest
from cli_helpers import one_line_error, spades
from slow_cases import first_by_default

pytest.importorskip("torch")  # the train extra: training's arguments

from spades_env.tooling.flags import FlagParser, add_flags, field_docs
from training.session import SessionArgs, migrate_args

pytestmark = pytest.mark.torch

TINY = ["--total-timesteps", "700", "--num-games", "8", "--hidden", "16", "--eval-deals", "2"]


def test_train_help_lists_the_algorithms():
    out = spades("train", "--help")
    assert out.returncode == 0, out.stderr
    from experiments.cli.train import SCRIPTS

    assert "{" + ",".join([*sorted(SCRIPTS), "recipe"]) + "}" in out.stdout


@pytest.mark.parametrize("algo", ["ppo", "dmc"])
def test_algorithm_help_lists_choices_and_shows_each_default_once(algo):
    out = spades("train", algo, "--help")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "--backend {local,ray}" in text
    assert "--rules PRESET" in text and "--option NAME=VALUE" in text
    assert "(default: )" not in text
    assert not re.search(r"default[^()]*\) \(default", text)  # no default shown twice
    assert "%%" not in text


@pytest.mark.parametrize("algo", ["ppo", "dmc", "bc"])
def test_every_flag_of_a_trainer_has_its_docstring_as_help(algo):
    from experiments.cli.train import SCRIPTS

    args_cls = importlib.import_module(SCRIPTS[algo]).Args
    docs = field_docs(args_cls)
    parser = FlagParser()
    add_flags(parser, args_cls)
    helps = {a.dest: a.help for a in parser._actions}
    for f in dataclasses.fields(args_cls):
        assert docs.get(f.name), f"{algo} --{f.name} has no docstring"
        assert helps[f.name].startswith(docs[f.name]), f.name


@dataclasses.dataclass
class _Base:
    kept: int = 1
    """the base's doc"""
    restated: int = 2
    """the base's doc of restated"""


@dataclasses.dataclass
class _Derived(_Base):
    kept: int = 3
    restated: int = 4
    """the subclass's doc"""
    own: int = 5
    """a field of its own"""


def test_field_docs_reads_the_bases_and_a_subclass_docstring_wins():
    assert field_docs(_Derived) == {
        "kept": "the base's doc",
        "restated": "the subclass's doc",
        "own": "a field of its own",
    }


@pytest.mark.parametrize("algo", ["ppo", "dmc"])
def test_the_self_play_trainers_share_the_session_fields(algo):
    from experiments.cli.train import SCRIPTS

    args_cls = importlib.import_module(SCRIPTS[algo]).Args
    assert issubclass(args_cls, SessionArgs)
    docs = field_docs(args_cls)
    assert docs["exp_name"] == field_docs(SessionArgs)["exp_name"]  # restated without a doc
    assert "swapping seats" in docs["eval_deals"]


@pytest.mark.parametrize(
    ("flags", "words"),
    first_by_default(
        [
            pytest.param(["--num-games", "0"], ["--num-games", "at least 1"], id="num-games-0"),
            pytest.param(["--device", "nosuch"], ["--device", "nosuch"], id="device"),
            pytest.param(["--backend", "mars"], ["--backend", "local", "ray"], id="backend"),
            pytest.param(["--rules", "poker"], ["--rules poker", "known presets"], id="preset"),
            pytest.param(["--option", "target=3x"], ["--option target=3x", "integer"], id="option"),
            pytest.param(
                ["--option", "target=300", "--option", "target=200"], ["given twice"], id="twice"
            ),
            pytest.param(["--selfplay-frac", "2"], ["--selfplay-frac"], id="share"),
        ],
        keep=2,
    ),
)
def test_a_bad_flag_is_one_line_and_writes_nothing(flags, words, tmp_path):
    # TINY's own value of a flag tested here is left out (a flag given twice is an error)
    tiny = [x for i, x in enumerate(TINY) if (TINY[i - (i % 2)]) not in flags]
    line = one_line_error(spades("train", "ppo", "--runs-dir", str(tmp_path), *tiny, *flags))
    for word in words:
        assert word in line
    assert list(tmp_path.iterdir()) == []


@pytest.fixture(scope="module")
def dmc_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    out = spades(
        "train",
        "dmc",
        "--runs-dir",
        str(runs),
        *TINY,
        "--save-every",
        "1",
        "--stop-after",
        "1",
        "--rules",
        "standard",
        "--option",
        "target=300",
        "--no-progress",
    )
    assert out.returncode == 0, out.stderr
    [run_dir] = runs.iterdir()
    return run_dir


@pytest.mark.parametrize(
    ("flags", "words"),
    first_by_default(
        [
            pytest.param(["--num-games", "16"], ["--num-games 16", "differs", "8"], id="num-games"),
            pytest.param(["--option", "target=200"], ["--option", "differs"], id="option"),
            pytest.param(["--rules", "jokers"], ["--rules 'jokers'", "differs"], id="rules"),
        ]
    ),
)
def test_resume_refuses_a_flag_that_differs_from_the_run(dmc_run, flags, words):
    line = one_line_error(spades("train", "dmc", "--resume", str(dmc_run), *flags))
    for word in words:
        assert word in line


def test_resume_with_the_other_algorithm_is_refused(dmc_run):
    line = one_line_error(spades("train", "ppo", "--resume", str(dmc_run)))
    assert "trained dmc, not ppo" in line and "spades train dmc" in line


@pytest.mark.parametrize(
    ("saved", "rules", "option"),
    [
        ({"rules": ""}, "standard", ()),
        ({"rules": "nil_tricks=count"}, "standard", ("nil_tricks=count",)),
        ({"rules": "jokers", "option": ["target=300"]}, "jokers", ("target=300",)),
    ],
)
def test_saved_args_of_older_runs_are_migrated(saved, rules, option):
    new = migrate_args(saved)
    assert (new["rules"], new["option"]) == (rules, option)
