"""Said once, read once: a tournament reads each agent spec and builds its rules once per
process (the config holds the values; the units, the summary and a resume trust them),
and a run made with a relative `checkpoint:` path resumes from any folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import agents.registry.grammar as grammar
from experiments.cli import tournament as cli_tournament
from experiments.cli.app import build_parser
from experiments.tournament import TournamentConfig, run_tournament
from spades_env.rules import Rules

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "agents" / "learned" / "checkpoints" / "ppo_small.pt"


@pytest.fixture
def counted(monkeypatch):
    """Count each reading of a spec's text (`agents.registry.grammar._parse`, the one place it is
    read) and each built and checked `Rules` (its `__post_init__`)."""
    specs: Counter[str] = Counter()
    rules: list[Rules] = []
    parse, post_init = grammar._parse, Rules.__post_init__

    def counting_parse(text):
        specs[text] += 1
        return parse(text)

    def counting_post_init(self):
        post_init(self)
        rules.append(self)

    monkeypatch.setattr(grammar, "_parse", counting_parse)
    monkeypatch.setattr(Rules, "__post_init__", counting_post_init)
    return specs, rules


def test_a_tournament_reads_each_spec_and_builds_its_rules_once(tmp_path, counted):
    specs, rules = counted
    agents = ("random", "h=heuristic:aggression=0.2", "heuristic:bid=rules")
    config = TournamentConfig(agents=agents, rules=Rules(target=300), deals=4, chunk=2)
    result = run_tournament(tmp_path / "run", config, workers=1)
    assert len(result["config"]["agents"]) == 3
    assert specs == Counter(agents)  # 3 pairs x 2 chunks = 6 units built their agents
    assert len(rules) == 1  # Rules(target=300); the units, deals and summary reuse it

    specs.clear()
    rules.clear()
    resumed = run_tournament(tmp_path / "run", resume=True, workers=1)
    assert resumed["config"] == result["config"]
    assert specs == Counter(agents)  # read once from config.json
    assert len(rules) == 1


def test_the_command_line_reads_each_spec_and_its_rules_once(counted):
    specs, rules = counted
    args = build_parser().parse_args(
        ["tournament", "--agents", "random,pimc:worlds=4,policy=greedy", "--option", "target=300"]
    )
    config = cli_tournament.build_config(args)
    assert specs == Counter(["random", "pimc:worlds=4,policy=greedy"])
    final = [r for r in rules if r == config.rules]
    assert len(final) == 1 and config.rules.target == 300
    assert len(rules) <= 2  # and the bare preset, built once per process
    config.play_rules()
    config.play_rules()
    assert len(rules) <= 2


def _spades(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "experiments.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.cli
@pytest.mark.torch
def test_a_relative_checkpoint_run_resumes_from_another_folder(tmp_path):
    pytest.importorskip("torch")
    made, other = tmp_path / "made", tmp_path / "other"
    made.mkdir()
    other.mkdir()
    shutil.copy(SHIPPED, made / "l.pt")
    run = tmp_path / "run"
    # one worker: the path under test is the driver's, and each worker process loads torch
    flags = ["--deals", "2", "--chunk", "1", "--seed", "3", "--no-progress", "--workers", "1"]
    first = _spades(
        made, "tournament", "--agents", "checkpoint:l.pt,random", "--out", str(run), *flags
    )
    assert first.returncode == 0, first.stderr
    log = run / "log.jsonl"
    lines = log.read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert {r["unit"] for r in rows} == {0, 1}
    assert "checkpoint:l.pt" in {s for r in rows for s in r["seats"]}
    stored = json.loads((run / "config.json").read_text())["config"]["agents"][0]
    assert stored == {"spec": f"checkpoint:{made / 'l.pt'}", "name": "checkpoint:l.pt"}
    kept = [line for line, r in zip(lines, rows, strict=True) if r["unit"] == 0]
    log.write_text("\n".join(kept) + "\n")  # the last unit lost: --resume plays it again

    again = _spades(
        other, "tournament", "--resume", "--out", str(run), "--no-progress", "--workers", "1"
    )
    assert again.returncode == 0, again.stderr
    resumed = [json.loads(line) for line in log.read_text().splitlines()]
    drop = ("logged_at", "check")
    assert [{k: v for k, v in r.items() if k not in drop} for r in resumed] == [
        {k: v for k, v in r.items() if k not in drop} for r in rows
    ]
