"""The shipped networks' recipes as one command (experiments.recipe)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import recipe

ROOT = Path(__file__).resolve().parents[2]


def test_every_shipped_network_has_a_recipe_of_runnable_commands():
    for name in ("learned", "learned2", "ppo_small"):
        steps, _ = recipe.recipe_steps(name)
        assert steps
        for step in steps:
            for argv in recipe.split_commands(step["command"]):
                head = recipe.executable(argv)
                assert head[0] == sys.executable or head[:2] == ["nice", "-n"], head


def test_a_quoted_semicolon_stays_in_its_argument():
    assert recipe.split_commands("a --agents 'x;y' --n 2; b -k 1") == [
        ["a", "--agents", "x;y", "--n", "2"],
        ["b", "-k", "1"],
    ]


def test_smoke_shrinks_the_budgets_and_nothing_else():
    argv = ["spades", "train", "ppo", "--total-timesteps", "120000000", "--learning-rate", "1e-4"]
    assert recipe.smoke_args(argv) == [
        "spades", "train", "ppo", "--total-timesteps", recipe.SMOKE["--total-timesteps"],
        "--learning-rate", "1e-4",
    ]  # fmt: skip


def test_a_later_step_reads_the_newest_run_folder_of_an_earlier_one(tmp_path):
    for stamp in ("20261201-100000", "20261202-090000"):
        (tmp_path / "runs" / f"ft7__1__{stamp}" / "checkpoints").mkdir(parents=True)
    (tmp_path / "runs" / "ft7__1__20261202-090000" / "checkpoints" / "update_000002.pt").touch()
    argv = ["--init", "runs/ft7__1__<time>/checkpoints/update_000300.pt"]
    assert recipe.resolve(argv, tmp_path) == [
        "--init", "runs/ft7__1__20261202-090000/checkpoints/update_000300.pt"
    ]  # fmt: skip
    assert recipe.resolve(argv, tmp_path, smoke=True)[1].endswith("update_000002.pt")
    with pytest.raises(FileNotFoundError, match=r"no run folder runs/bc7__1__\*"):
        recipe.resolve(["runs/bc7__1__<time>/final.pt"], tmp_path)


@pytest.mark.cli
def test_cli_refuses_an_unknown_network_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "train", "recipe", "nosuch"],
        capture_output=True, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 2
    assert "no shipped network 'nosuch'" in done.stderr and "learned" in done.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ppo_small", "learned", "learned2"])
@pytest.mark.cli
def test_a_smoke_run_of_the_recipe_makes_a_network_and_its_wall_time(name, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    work = tmp_path / "work"
    done = subprocess.run(
        [sys.executable, "-m", "experiments.recipe", name, "--smoke", "--dir", str(work)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((work / "recipe.json").read_text())
    steps, _ = recipe.recipe_steps(name)
    assert [s["step"] for s in report["steps"]] == [s["step"] for s in steps]
    assert report["smoke"] and report["wall_minutes"] > 0
    assert list((work / "runs").glob("*__1__*/final.pt"))
