"""The `spades` command line as a new, careless or hostile user meets it (run as a
subprocess): `--version`, the bare command, `--rules` as a preset everywhere, and bad
input answered with one line naming the problem, nothing half-written left behind."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import one_line_error, spades
from slow_cases import first_by_default

from experiments.tournament.results_log import read_rows

REPO = Path(__file__).resolve().parents[2]
SMALL = ["--agents", "random,heuristic", "--deals", "4", "--chunk", "2", "--no-progress"]
COMMANDS = (
    "demo",
    "bench",
    "tournament",
    "evaluate",
    "leaderboard",
    "show",
    "analyze",
    "play",
    "train",
    "export-chat",
)


# ----------------------------------------------------------------------------- commands
def test_version():
    out = spades("--version")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"spades {importlib.metadata.version('spades-env')}"


def test_bare_spades_prints_the_commands():
    out = spades()
    assert out.returncode == 0, out.stderr
    for command in COMMANDS:
        assert command in out.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_without_doubled_defaults_or_percent_signs(command):
    out = spades(command, "--help")
    assert out.returncode == 0, out.stderr
    assert "%%" not in out.stdout and "(default: )" not in out.stdout


@pytest.mark.parametrize("command", ["demo", "tournament", "play"])
def test_rules_is_a_preset_and_option_the_rest(command):
    text = spades(command, "--help").stdout
    assert "--rules PRESET" in text and "--option NAME=VALUE" in text


def test_demo_takes_a_preset_and_options():
    out = spades("demo", "--hands", "1", "--rules", "jokers", "--option", "nil_tricks=count")
    assert out.returncode == 0, out.stderr
    assert "BJ" in out.stdout or "LJ" in out.stdout or "trick 13:" in out.stdout


# ----------------------------------------------------------------------------- bad input
def test_out_at_a_file_is_one_line(tmp_path):
    target = tmp_path / "afile"
    target.write_text("mine")
    line = one_line_error(spades("tournament", *SMALL, "--out", str(target)))
    assert "is a file" in line
    assert target.read_text() == "mine"


def test_out_below_a_file_is_one_line(tmp_path):
    (tmp_path / "afile").write_text("mine")
    line = one_line_error(spades("tournament", *SMALL, "--out", str(tmp_path / "afile" / "r")))
    assert "afile" in line and "Not a directory" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any folder")
def test_out_in_an_unwritable_folder_is_one_line(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    line = one_line_error(spades("tournament", *SMALL, "--out", str(locked / "r")))
    assert "Permission denied" in line


def test_deal_file_that_is_a_folder_is_one_line(tmp_path):
    line = one_line_error(
        spades("tournament", *SMALL, "--deal-file", str(tmp_path), "--out", str(tmp_path / "r"))
    )
    assert "is a folder" in line
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "args",
    [["tournament", *SMALL, "--seed", "-3"], ["demo", "--seed", "-3"], ["play", "--seed", "-3"]],
    ids=["tournament", "demo", "play"],
)
def test_a_negative_seed_is_one_line_and_makes_no_folder(args, tmp_path):
    out_dir = tmp_path / "r"
    extra = ["--out", str(out_dir)] if args[0] == "tournament" else []
    line = one_line_error(spades(*args, *extra))
    assert "--seed" in line and "0..2**64-1" in line
    assert not out_dir.exists()


def test_play_with_stdin_closed_is_one_line():
    out = subprocess.run(
        ["sh", "-c", f'exec "{sys.executable}" -m experiments.cli play --seed 1 <&-'],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "stdin is closed" in one_line_error(out)


@pytest.fixture(scope="module")
def saved_game(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("play") / "g.json"
    out = spades("play", "--seed", "1", "--save", str(path), input="nil\n")
    assert out.returncode == 0, out.stderr
    return json.loads(path.read_text())


@pytest.mark.parametrize(
    ("change", "words"),
    first_by_default(
        [
            pytest.param(
                {"actions": [999]}, ["actions must be [seat, action] pairs"], id="actions"
            ),
            pytest.param({"actions": [[1, "AS"]]}, ["action 1"], id="illegal"),
            pytest.param({"seed": -5}, ["seed must be a non-negative integer"], id="seed"),
            pytest.param({"seed": "abc"}, ["seed must be a non-negative integer"], id="seed-text"),
            pytest.param({"rules": 5}, ["not a valid saved game"], id="rules"),
            pytest.param({"rules": None}, ["not a valid saved game"], id="no-rules"),
        ],
        keep=2,
    ),
)
def test_a_tampered_save_is_one_line(saved_game, tmp_path, change, words):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**saved_game, **change}))
    line = one_line_error(spades("play", "--load", str(path), input=""))
    for word in words:
        assert word in line


def test_analyze_out_at_a_file_is_one_line(small_run, tmp_path):
    target = tmp_path / "plots"
    target.write_text("mine")
    line = one_line_error(spades("analyze", str(small_run), "--out", str(target)))
    assert "is a file" in line


FULL_DISK = """
import errno, importlib, sys

def full(path, *rest):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))

module, _, name = sys.argv[1].rpartition(".")
setattr(importlib.import_module("experiments.tournament." + module), name, full)
from experiments.cli.app import main
raise SystemExit(main(sys.argv[2:]))
"""


def full_disk(where: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`spades ARGS` with the disk full when the run writes `where` (`module.function` of
    experiments.tournament: the run folder's `folder`, the units' `schedule`)."""
    return subprocess.run(
        [sys.executable, "-c", FULL_DISK, where, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_full_disk_at_the_start_is_one_line_and_leaves_no_folder(tmp_path):
    out_dir = tmp_path / "r"
    # deals_mod.save is reached through the module; fail the run folder's first write
    out = full_disk("folder._write_json", "tournament", *SMALL, "--out", str(out_dir))
    line = one_line_error(out)
    assert "No space left on device" in line
    assert not out_dir.exists()


def test_a_full_disk_mid_run_is_one_line_and_the_run_resumes(tmp_path):
    out_dir = tmp_path / "r"
    args = ["tournament", *SMALL, "--workers", "1", "--out", str(out_dir)]
    out = full_disk("schedule.append_unit", *args)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    line = out.stderr.strip().splitlines()[-1]  # after the run's header line
    assert line.startswith("spades tournament: error:")
    assert "No space left on device" in line and "log.jsonl" in line
    out = spades("tournament", "--resume", "--out", str(out_dir), "--no-progress")
    assert out.returncode == 0, out.stderr
    assert len(read_rows(out_dir)) == 8


def test_shell_completion_completes_commands_and_flags(tmp_path):
    answers = tmp_path / "completions"
    for line, want in (("spades tou", "tournament"), ("spades tournament --ag", "--agents")):
        env = {
            **os.environ,
            "_ARGCOMPLETE": "1",
            "_ARGCOMPLETE_IFS": "\n",
            "COMP_LINE": line,
            "COMP_POINT": str(len(line)),
            "_ARGCOMPLETE_STDOUT_FILENAME": str(answers),
        }
        out = spades(env=env)
        assert out.returncode == 0, out.stderr
        assert want in answers.read_text().split()
