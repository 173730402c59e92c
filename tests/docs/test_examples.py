"""Every script of examples/ runs, as a user runs it (`python examples/X.py --tiny`, a
subprocess), and prints what it is for. The RL libraries are the `integrations` and
`rllib` extras, which `.ci/setup` installs; where one is missing the script says so and
exits 0, and its test is skipped.

The RLlib example is marked slow: `tests/experiments/test_rllib_example.py` trains the same code
(`experiments.rllib_ppo.train`) in the default run, with a check that every action is
legal."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import spades

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def run_example(name: str, tmp_path: Path | None, *args: str) -> str:
    env = dict(os.environ)
    if tmp_path is not None:  # run folders and models land in tmp_path
        env["TMPDIR"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--tiny", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def needs(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed")


def test_every_example_is_listed_in_the_readme():
    readme = (EXAMPLES / "README.md").read_text()
    for path in EXAMPLES.glob("*.py"):
        assert f"`{path.name}`" in readme, path.name


@pytest.mark.cli
def test_own_agent_plays_a_tournament_and_prints_its_tables(tmp_path):
    out = run_example("my_agent_tournament.py", tmp_path)
    assert "Duplicate results" in out and "Bid accuracy" in out
    assert "bid3" in out and "heuristic" in out
    assert list(tmp_path.glob("my-agent-*/summary.json"))


@pytest.mark.cli
def test_sb3_maskable_ppo_trains_then_plays_a_tournament(tmp_path):
    needs("sb3_contrib")
    out = run_example("sb3_maskable_ppo.py", tmp_path, "--out", str(tmp_path / "m"))
    assert "trained 256 steps" in out
    assert (tmp_path / "m" / "model.zip").exists()
    rows = (tmp_path / "m" / "tournament" / "log.jsonl").read_text().splitlines()
    assert len(rows) == 3 * 4 * 2  # 3 pairs x 4 deals x 2 sides, every action legal
    assert "mine" in out  # the sb3: model under its NAME=
    assert "Duplicate results" in out
    # the same model enters the evaluation protocol by its spec, no code of the user's
    # (--test-deals: a tiny budget, marked as not the protocol)
    model = tmp_path / "m" / "model.zip"
    done = spades(
        "evaluate", f"mine=sb3:{model}", "--test-deals", "2", "--workers", "1",
        "--dir", str(tmp_path / "eval"), "--out", str(tmp_path / "eval.json"), "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "eval.json").read_text())
    assert result["candidate"].startswith("mine=sb3:") and not result["official"]
    assert len(result["rungs"]) == 4  # random, heuristic, pimc:worlds=64, learned


@pytest.mark.cli
@pytest.mark.slow  # torch and the library load in a subprocess: 10 s
def test_tianshou_collects_whole_hands(tmp_path):
    needs("tianshou")
    out = run_example("tianshou_collect.py", tmp_path)
    assert "episodes 3, steps 168" in out  # 4 bids + 52 cards a hand
    assert "partners share the reward: True" in out


@pytest.mark.cli
@pytest.mark.slow  # torch and the library load in a subprocess: 10 s
def test_torchrl_wrapper_passes_its_spec_check_and_rolls_out(tmp_path):
    needs("torchrl")
    out = run_example("torchrl_rollout.py", tmp_path)
    assert "check_env_specs: passed" in out
    assert "rollout steps 60, seat moves 60" in out


@pytest.mark.cli
def test_cleanrl_style_ppo_updates_on_the_vector_env(tmp_path):
    needs("torch")
    out = run_example("cleanrl_ppo_vector.py", tmp_path)
    assert "update 2/2: hands 16" in out  # 8 games x 16 steps: 2 hands of 8 learner moves


@pytest.mark.cli
def test_pettingzoo_loop_seats_registry_agents(tmp_path):
    out = run_example("pettingzoo_registry_agents.py", tmp_path)
    lines = [line for line in out.splitlines() if "points per hand" in line]
    assert len(lines) == 4
    assert lines[0].split(":")[1] == lines[2].split(":")[1]  # partners score together


@pytest.mark.slow
@pytest.mark.cli
def test_rllib_ppo_trains_one_iteration():
    needs("ray.rllib")
    out = run_example("rllib_ppo.py", None)  # Ray's sockets: tmp_path is too long a path
    assert "iteration 1: 256.0 env steps" in out
