"""`spades tournament --backend ray`: the same rows as the local backend, a killed worker's
unit run again, the CLI. On a local Ray with two CPUs (skipped without the ray extra)."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

import pytest

from experiments.cli.app import main
from experiments.tournament import ray_backend
from experiments.tournament.config import TournamentConfig, TournamentError
from experiments.tournament.results_log import TIMING_FIELDS, read_rows
from experiments.tournament.runner import run_tournament
from experiments.tournament.units import execute_unit

pytestmark = pytest.mark.ray

CONFIG = TournamentConfig(agents=("random", "heuristic", "random"), deals=6, chunk=2, seed=5)
CLI = ["--agents", "random,heuristic", "--deals", "4", "--chunk", "2", "--no-progress"]


def rows(run_dir: Path) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in read_rows(run_dir)]


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> tuple[Path, dict]:
    run_dir = tmp_path_factory.mktemp("local") / "run"
    return run_dir, run_tournament(run_dir, CONFIG, workers=1)


# ----------------------------------------------------------------------------- no Ray
def test_without_ray_the_error_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    out = tmp_path / "r"
    assert main(["tournament", *CLI, "--backend", "ray", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("install the ray extra: pip install -e '.[ray]'")
    assert "\n" not in err and not out.exists()


def test_address_needs_the_ray_backend(tmp_path, capsys):
    assert main(["tournament", *CLI, "--address", "auto", "--out", str(tmp_path / "r")]) == 2
    assert "--address needs --backend ray" in capsys.readouterr().err


# ----------------------------------------------------------------------------- on Ray
def test_ray_backend_writes_the_local_backends_log_and_summary(local_ray, local_run, tmp_path):
    local_dir, local_summary = local_run
    summary = run_tournament(tmp_path / "ray", CONFIG, workers=2, backend="ray")
    assert rows(tmp_path / "ray") == rows(local_dir)
    assert summary == local_summary
    assert local_ray.is_initialized()  # a Ray the caller started is left running


def test_a_killed_workers_unit_runs_again_and_is_logged_once(
    local_ray, local_run, tmp_path, monkeypatch
):
    marker = tmp_path / "killed"

    def kill_once(ctx, unit):  # pickled by value into the tasks
        if unit == 4 and not marker.exists():
            marker.write_text(str(os.getpid()))
            os._exit(1)  # the worker process dies mid-unit, as in a crash
        return execute_unit(ctx, unit)

    monkeypatch.setattr(ray_backend, "UNIT_FN", kill_once)
    run_tournament(tmp_path / "ray", CONFIG, workers=2, backend="ray")
    assert marker.exists()  # unit 4's first worker did die
    got = rows(tmp_path / "ray")
    assert got == rows(local_run[0])
    per_side = Counter((r["teams"][0], r["teams"][1], r["deal"], r["side"]) for r in got)
    assert len(per_side) == len(CONFIG.pairs) * CONFIG.deals * 2
    assert set(per_side.values()) == {1}  # one row per (pair, deal, side): no duplicates


def test_an_error_in_a_unit_stops_the_run_with_its_message(local_ray, tmp_path, monkeypatch):
    def fail(ctx, unit):
        if unit == 2:
            raise TournamentError("unit 2: no such card")
        return execute_unit(ctx, unit)

    monkeypatch.setattr(ray_backend, "UNIT_FN", fail)
    with pytest.raises(TournamentError, match="no such card"):
        run_tournament(tmp_path / "ray", CONFIG, workers=2, backend="ray")
    assert sorted({r["unit"] for r in read_rows(tmp_path / "ray")}) == [0, 1]  # before it


def test_cli_ray_backend_matches_the_local_one(local_ray, tmp_path, capsys):
    assert main(["tournament", *CLI, "--workers", "1", "--out", str(tmp_path / "local")]) == 0
    assert main(["tournament", *CLI, "--backend", "ray", "--out", str(tmp_path / "ray")]) == 0
    assert "Duplicate results" in capsys.readouterr().out
    assert rows(tmp_path / "ray") == rows(tmp_path / "local")
