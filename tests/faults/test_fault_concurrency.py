"""Two processes at once on one run folder, training run, dataset, cache or file, for
every command that writes: `tournament` (new, resumed, without --out), `evaluate`,
`train ppo` (new runs of one name, two resumes), `train bc`'s dataset, `dd-table`,
`analyze`'s double-dummy cache and `play`'s save file.

Each pair ends in one of two ways: both succeed, each with a result identical to an
undisturbed run and a folder of its own, or one succeeds and the other is refused in one
line naming the holder; never a shared folder, a row logged twice or a torn file. The
default run tries the cheap pairs, `-m slow` all of them; outcomes are counted and
reported at the end of the module.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import REPO, outcome_report, spades, without_timing
from fault_cases import error_line, start_command, tmp_files

from experiments.tournament.results_log import read_rows
from spades_env.tooling.files import atomic_write, new_folder

#: (commands run as a subprocess; a case that trains also needs torch)
pytestmark = pytest.mark.cli

OUTCOMES, report = outcome_report(__file__)


def both(*commands: tuple[tuple[str, ...], Path | None]) -> list[tuple[int, str, str]]:
    """Start every command at once; (exit status, stdout, stderr) of each."""
    procs = [start_command(*args, cwd=cwd) for args, cwd in commands]
    outs = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=900)
        outs.append((p.returncode, stdout, stderr))
    return outs


def one_ran_or_both(outs: list[tuple[int, str, str]], what: str, refusals: tuple[str, ...]) -> str:
    """Both succeeded, or one did and the other was refused in one line saying why."""
    codes = sorted(code for code, _, _ in outs)
    if codes == [0, 0]:
        outcome = "both ran"
    else:
        assert codes == [0, 2], outs
        line = error_line(next((c, e) for c, _, e in outs if c == 2))
        assert any(r in line for r in refusals), line
        outcome = "one refused"
    OUTCOMES[f"{what}: {outcome}"] += 1
    return outcome


# ----------------------------------------------------------------------------- folders
def _grab(args: tuple[str, str]) -> str:
    return new_folder(*args).name


def test_new_folder_never_gives_one_folder_twice(tmp_path):
    names = [new_folder(tmp_path, "run").name for _ in range(3)]
    assert names == ["run", "run-2", "run-3"]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        got = pool.map(_grab, [(str(tmp_path / "race"), "same")] * 12)
    assert len(set(got)) == 12
    OUTCOMES["new_folder 12 processes at once: all distinct"] += 1


def _write_many(args: tuple[str, int]) -> None:
    path, k = args
    for i in range(60):
        atomic_write(path, bytes([k]) * (1000 + 37 * i))


def test_atomic_writes_from_several_processes_never_tear_a_file(tmp_path):
    path = tmp_path / "f.bin"
    atomic_write(path, b"\1" * 10)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        result = pool.map_async(_write_many, [(str(path), k) for k in (1, 2, 3)])
        seen = 0
        while not result.ready():
            data = path.read_bytes()
            assert len(set(data)) == 1, "a reader saw two writers' bytes in one file"
            seen += 1
        result.get()
    assert not tmp_files(tmp_path)
    OUTCOMES[f"atomic_write 3 writers, {seen} reads: never torn"] += 1


# ----------------------------------------------------------------------------- tournaments
TINY = ("--agents", "random,heuristic", "--deals", "2", "--workers", "1", "--no-progress")


def test_two_tournaments_without_out_get_folders_of_their_own(tmp_path):
    """The issue's repro: two at once in one folder; one failed "File exists"."""
    outs = both((("tournament", *TINY), tmp_path), (("tournament", *TINY), tmp_path))
    assert [c for c, _, _ in outs] == [0, 0], outs
    folders = sorted((tmp_path / "runs").iterdir())
    assert len(folders) == 2
    rows = [without_timing(read_rows(f)) for f in folders]
    assert rows[0] == rows[1] and len(rows[0]) == 4
    OUTCOMES["tournament x2 without --out: both ran"] += 1


def test_two_new_tournaments_on_one_out_never_share_it(tmp_path, small_run):
    run_dir = tmp_path / "run"
    args = ("tournament", "--agents", "random,heuristic", "--deals", "4", "--chunk", "2",
            "--workers", "1", "--no-progress", "--out", str(run_dir))  # fmt: skip
    outs = both((args, None), (args, None))
    one_ran_or_both(outs, "tournament x2 on one --out", ("in use by", "already holds"))
    assert [c for c, _, _ in outs].count(0) == 1, "two new runs wrote one folder"
    assert without_timing(read_rows(run_dir)) == without_timing(read_rows(small_run))


# ----------------------------------------------------------------------------- training
PPO = ("--total-timesteps", "300", "--num-games", "8", "--hidden", "16", "--eval-every", "0")


@pytest.mark.torch
def test_two_training_runs_of_one_name_get_folders_of_their_own(tmp_path):
    """The issue's repro: two `train ppo --exp-name sweep` with other learning rates,
    started together, shared one folder, each checkpoint holding one run's rate."""
    pytest.importorskip("torch")
    from agents.learned.checkpoint import read_checkpoint

    runs = tmp_path / "R"
    common = ("train", "ppo", *PPO, "--exp-name", "sweep", "--runs-dir", str(runs),
              "--no-progress")  # fmt: skip
    outs = both(
        ((*common, "--learning-rate", "0.001"), None), ((*common, "--learning-rate", "0.002"), None)
    )
    assert [c for c, _, _ in outs] == [0, 0], outs
    folders = sorted(runs.iterdir())
    assert len(folders) == 2, folders
    rates = sorted(read_checkpoint(f / "final.pt")["args"]["learning_rate"] for f in folders)
    assert rates == [0.001, 0.002]
    for f in folders:
        events = list(f.glob("events.out.tfevents.*"))
        assert len(events) == 1, events  # one run's events per folder
    OUTCOMES["train ppo x2 of one name: both ran, two folders"] += 1


@pytest.mark.torch
@pytest.mark.slow
def test_two_resumes_of_one_training_run_one_is_refused(tmp_path):
    pytest.importorskip("torch")
    runs = tmp_path / "R"
    first = spades("train", "ppo", *PPO[:1], "3000", *PPO[2:], "--stop-after", "1",
                   "--runs-dir", str(runs), "--no-progress")  # fmt: skip
    assert first.returncode == 0, first.stderr
    (run_dir,) = runs.iterdir()
    args = ("train", "ppo", "--resume", str(run_dir), "--no-progress")
    outs = both((args, None), (args, None))
    one_ran_or_both(outs, "train ppo --resume x2", ("in use by",))


@pytest.mark.torch
@pytest.mark.slow
def test_two_bc_runs_at_once_share_their_dataset_and_get_folders_of_their_own(tmp_path):
    pytest.importorskip("torch")
    runs = tmp_path / "R"
    common = ("train", "bc", "--hands", "40", "--hands-per-shard", "10", "--epochs", "1",
              "--eval-deals", "2", "--hidden", "16", "--batch-size", "64",
              "--runs-dir", str(runs), "--no-progress")  # fmt: skip
    outs = both((common, None), (common, None))
    assert [c for c, _, _ in outs] == [0, 0], outs
    folders = [f for f in runs.iterdir() if f.name != "data"]
    assert len(folders) == 2, folders
    assert not tmp_files(runs)
    OUTCOMES["train bc x2: both ran, two folders, one dataset"] += 1


# ----------------------------------------------------------------------------- evaluate
@pytest.mark.slow
def test_two_evaluations_in_one_folder_never_share_it(tmp_path):
    folder = tmp_path / "ev"
    args = ("evaluate", "random", "--test-deals", "2", "--workers", "1", "--no-progress",
            "--dir", str(folder))  # fmt: skip
    outs = both((args, None), (args, None))
    one_ran_or_both(outs, "evaluate x2 on one --dir", ("in use by", "already holds"))
    assert json.loads((folder / "result.json").read_text())["rungs"]


# ----------------------------------------------------------------------------- dd cache, files
def test_two_dd_tables_on_one_cache_and_one_out(tmp_path):
    cache, out = tmp_path / "dd.sqlite", tmp_path / "t.npz"
    args = ("dd-table", "--deals", "3", "--no-progress", "--cache", str(cache), "--out", str(out))
    outs = both((args, None), (args, None))
    assert [c for c, _, _ in outs] == [0, 0], outs
    with np.load(out) as z:
        tables = z["tables"]
    again = spades("dd-table", "--deals", "3", "--no-progress", "--cache", str(cache),
                   "--out", str(tmp_path / "u.npz"))  # fmt: skip
    assert again.returncode == 0 and "3 from the cache" in again.stdout, again.stdout
    with np.load(tmp_path / "u.npz") as z:
        assert (z["tables"] == tables).all()
    assert not tmp_files(tmp_path)
    OUTCOMES["dd-table x2 on one cache and --out: both ran"] += 1


@pytest.mark.slow
def test_two_analyses_on_one_dd_cache(tmp_path, small_run):
    cache = tmp_path / "dd.sqlite"
    outs = both(*[
        (("analyze", str(small_run), "--dd", "--dd-cache", str(cache), "--out", str(tmp_path / k)),
         None)
        for k in "ab"
    ])  # fmt: skip
    assert [c for c, _, _ in outs] == [0, 0], outs
    OUTCOMES["analyze --dd x2 on one cache: both ran"] += 1


@pytest.mark.slow
def test_two_dataset_generations_in_one_folder(tmp_path):
    """Two processes generating one dataset: the second waits for the first, then finds
    its shards; the data is what one process alone writes."""
    folder, alone = tmp_path / "data", tmp_path / "alone"
    code = (
        "import sys; from agents.registry import parse_agent; "
        "from training.bc_data import DatasetSpec, generate; "
        "generate(sys.argv[1], DatasetSpec.from_fields(parse_agent('heuristic'), '', 3, 3, 4))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(folder)], cwd=REPO, env=env) for _ in "ab"
    ]
    assert [p.wait(timeout=900) for p in procs] == [0, 0]
    subprocess.run([sys.executable, "-c", code, str(alone)], cwd=REPO, env=env, check=True)
    for shard in sorted(alone.glob("shard_*.npz")):
        with np.load(shard) as a, np.load(folder / shard.name) as b:
            assert all((a[k] == b[k]).all() for k in a.files)
    assert not tmp_files(folder)
    OUTCOMES["dataset generation x2: both ran, same shards"] += 1


@pytest.mark.slow
def test_two_games_saving_to_one_file_leave_a_whole_save(tmp_path):
    save = tmp_path / "g.json"
    first = spades("play", "--seed", "3", "--save", str(save), input="quit\n")
    assert first.returncode == 0, first.stderr
    procs = [start_command("play", "--load", str(save)) for _ in "ab"]
    for p in procs:
        p.communicate("3\nsave\nsave\nquit\n", timeout=300)
        assert p.returncode == 0
    data = json.loads(save.read_text())
    assert len(data["actions"]) > 0
    assert not tmp_files(tmp_path)
    OUTCOMES["play --load x2 saving one file: whole save"] += 1
