"""A command killed alone (its pid, not its process group: `kill -9` or `kill` of the
driver, as a job scheduler or a careless user does) leaves no worker behind: the workers
of `dd-table`, `analyze --dd`, `train bc` and a tournament, and the step `train recipe`
runs, all end within seconds (agents.processes). And `--workers` beyond what the machine
holds is refused in one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import REPO, finished_run, one_line_error, spades

pytestmark = pytest.mark.cli

KILLS = {"kill -9": signal.SIGKILL, "kill": signal.SIGTERM}


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, from /proc."""
    parent_of = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parent_of[int(entry.name)] = int(fields[1])
    out, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, pp in parent_of.items() if pp in frontier} - out
        out |= frontier
    return out


def alive(pids: set[int]) -> set[int]:
    """Those of `pids` still running (a zombie, dead but not reaped, counts as ended)."""
    left = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            left.add(pid)
    return left


def kill_driver_alone(argv: list[str], workers: int, how: signal.Signals, cwd: Path) -> None:
    """Start `argv`, wait until it has `workers` processes below it, kill the driver alone
    with `how`, and check that every process it started ends."""
    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300  # a guard against hanging, not a speed check
        while len(below := alive(descendants(proc.pid))) < workers:
            assert proc.poll() is None, "the command ended before its workers started"
            assert time.monotonic() < deadline, "the workers never started"
            time.sleep(0.1)
        time.sleep(1.0)  # the workers at work
        below = alive(descendants(proc.pid))
        os.kill(proc.pid, how)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while alive(below) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = alive(below)
        assert not left, f"{len(left)} worker process(es) left running after {how.name}"
    finally:
        for pid in alive(descendants(proc.pid)):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "experiments.cli", *args]


ONE_KILL = [
    pytest.param(KILLS["kill -9"], id="kill-9"),
    pytest.param(KILLS["kill"], id="kill", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("how", ONE_KILL)
def test_a_killed_dd_table_leaves_no_worker(how, tmp_path):
    argv = cli("dd-table", "--deals", "3000", "--workers", "2", "--cache", str(tmp_path / "c"))
    kill_driver_alone([*argv, "--no-progress"], 2, how, tmp_path)


@pytest.mark.slow
def test_a_killed_analyze_dd_leaves_no_worker(tmp_path):
    run_dir = finished_run(tmp_path / "run", "--deals", "60", "--agents", "random,heuristic")
    argv = cli("analyze", str(run_dir), "--dd", "--out", str(tmp_path / "plots"))
    kill_driver_alone(argv, 1, signal.SIGKILL, tmp_path)


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.parametrize("how", [pytest.param(s, id=k) for k, s in KILLS.items()])
def test_a_killed_train_bc_leaves_no_worker(how, tmp_path):
    pytest.importorskip("torch")
    argv = cli("train", "bc", "--hands", "4000", "--hands-per-shard", "200", "--workers", "2",
               "--epochs", "1", "--runs-dir", str(tmp_path / "runs"), "--no-progress")  # fmt: skip
    kill_driver_alone(argv, 2, how, tmp_path)


@pytest.mark.slow
def test_a_killed_tournament_driver_leaves_no_worker(tmp_path):
    argv = cli("tournament", "--deals", "400", "--chunk", "2", "--workers", "2", "--agents",
               "heuristic,heuristic", "--out", str(tmp_path / "run"), "--no-progress")  # fmt: skip
    kill_driver_alone(argv, 2, signal.SIGKILL, tmp_path)


@pytest.mark.slow
@pytest.mark.torch
def test_a_killed_recipe_stops_its_step(tmp_path):
    pytest.importorskip("torch")
    argv = [
        sys.executable,
        "-m",
        "experiments.recipe",
        "learned",
        "--smoke",
        "--dir",
        str(tmp_path),
    ]
    kill_driver_alone(argv, 1, signal.SIGTERM, tmp_path)


def test_more_workers_than_the_machine_holds_are_refused_in_one_line(tmp_path):
    many = str(4 * (os.cpu_count() or 1) + 1)
    args = ["--deals", "200", "--chunk", "1", "--workers", many, "--out", str(tmp_path / "run")]
    line = one_line_error(spades("tournament", *args))
    assert f"--workers {many}: at most" in line
    assert not (tmp_path / "run").exists()
