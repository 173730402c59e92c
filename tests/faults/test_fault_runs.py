"""Fault injection for tournament run folders (the way SQLite tests its file format):
random edits of a finished run's `log.jsonl`, `deals.json` and `config.json` (lines
duplicated, dropped, swapped, spliced from another run, the file truncated, a byte
flipped) and runs killed with SIGKILL at random moments. After `spades tournament
--resume`, either the rows and summary are those of the uninterrupted run, or the command
refuses in one line and leaves every file byte for byte as it was; never anything else.

Every case is drawn from its own seed, so a failure names the seed that reproduces it.
The default run tries a handful of cases; `-m slow` tries many. Each case's outcome
(recovered / refused) is counted and reported at the end of the module.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from cli_helpers import (
    default_and_slow,
    finished_run,
    kill_9,
    one_line_error,
    outcome_report,
    snapshot,
    spades,
    start,
    without_timing,
)

from experiments.tournament.results_log import read_rows

pytestmark = pytest.mark.cli

SMALL = ["--agents", "random,heuristic", "--deals", "6", "--chunk", "2", "--workers", "1"]
FILES = ("log.jsonl", "deals.json", "config.json")
OUTCOMES, report = outcome_report(__file__)


def rows_of(run_dir: Path) -> list[dict]:
    rows = without_timing(read_rows(run_dir))
    return sorted(rows, key=lambda r: (r["unit"], r["deal"], r["side"], r["hand"]))


def summary_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A finished tournament and another one (rows, deals and config to splice in)."""
    base = tmp_path_factory.mktemp("faults")
    return {
        name: finished_run(base / name, *SMALL, "--seed", seed, "--no-progress")
        for name, seed in (("run", "3"), ("other", "4"))
    }


# ----------------------------------------------------------------------------- edits
def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def edit(rng: random.Random, name: str, data: bytes, other: bytes) -> tuple[str, bytes]:
    """One random edit of a file's bytes (`other`: the same file of another run)."""
    lines, theirs = _lines(data), _lines(other)
    kinds = ["flip", "truncate", "splice_file"]
    if len(lines) > 1:
        kinds += ["duplicate", "drop", "swap", "splice_line"]
    kind = rng.choice(kinds)
    if kind == "flip":
        i = rng.randrange(len(data))
        return f"flip byte {i}", data[:i] + bytes([data[i] ^ rng.randrange(1, 256)]) + data[i + 1 :]
    if kind == "truncate":
        n = rng.randrange(len(data))
        return f"truncate to {n}", data[:n]
    if kind == "splice_file":
        return "replace with the other run's", other
    i = rng.randrange(len(lines))
    if kind == "duplicate":
        j = rng.randrange(len(lines) + 1)
        return f"line {i + 1} again at {j + 1}", b"".join([*lines[:j], lines[i], *lines[j:]])
    if kind == "drop":
        return f"drop line {i + 1}", b"".join(lines[:i] + lines[i + 1 :])
    if kind == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return f"swap lines {i + 1} and {j + 1}", b"".join(lines)
    line = rng.choice(theirs)
    if rng.random() < 0.5:
        return f"the other run's line at {i + 1}", b"".join([*lines[:i], line, *lines[i:]])
    return f"the other run's line for line {i + 1}", b"".join([*lines[:i], line, *lines[i + 1 :]])


def check_resume(run_dir: Path, reference: Path, what: str) -> str:
    """Resume; the outcome is `recovered` (the reference's rows and summary) or `refused`
    (one line, every file as it was)."""
    before = snapshot(run_dir)
    out = spades("tournament", "--resume", "--no-progress", "--workers", "1", "--out", str(run_dir))
    assert "Traceback" not in out.stderr, (what, out.stderr)
    if out.returncode == 0:
        assert rows_of(run_dir) == rows_of(reference), what
        assert summary_of(run_dir) == summary_of(reference), what
        assert spades("show", str(run_dir), "--deal", "0").returncode == 0, what
        return "recovered"
    assert out.returncode == 2, (what, out.stderr)
    one_line_error(out)
    assert snapshot(run_dir) == before, f"{what}: a refused resume changed files"
    return "refused"


def edit_case(runs: dict[str, Path], tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    run_dir = tmp_path / "edited"
    shutil.copytree(runs["run"], run_dir)
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):  # mostly one edit, sometimes a few
        name = rng.choices(FILES, weights=(6, 2, 2))[0]
        path = run_dir / name
        what, data = edit(rng, name, path.read_bytes(), (runs["other"] / name).read_bytes())
        path.write_bytes(data)
        done.append(f"{name}: {what}")
    OUTCOMES[check_resume(run_dir, runs["run"], f"seed {seed}: " + "; ".join(done))] += 1


@pytest.mark.parametrize("seed", default_and_slow(range(2), [2, 3, *range(100, 220)]))
def test_an_edited_run_folder_is_recovered_or_refused_untouched(runs, tmp_path, seed):
    edit_case(runs, tmp_path, seed)


# ----------------------------------------------------------------------------- kills
KILL = ["--agents", "random,random", "--deals", "30", "--chunk", "2", "--seed", "7"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> Path:
    return finished_run(tmp_path_factory.mktemp("whole") / "run", *KILL, "--workers", "2",
                        "--no-progress")  # fmt: skip


def kill_case(uninterrupted: Path, tmp_path: Path, seed: int) -> None:
    """SIGKILL the driver and its workers at a random moment, then finish the run."""
    delay = random.Random(seed).uniform(0.0, 3.0)
    run_dir = tmp_path / "killed"
    args = [*KILL, "--workers", "2", "--no-progress", "--out", str(run_dir)]
    proc = start("tournament", *args, stdout=subprocess.DEVNULL)
    time.sleep(delay)
    kill_9(proc)
    if not (run_dir / "config.json").exists():
        # killed before the run began: a new start in the same folder must work
        out = spades("tournament", *args)
        assert out.returncode == 0, (f"seed {seed}", out.stderr)
        OUTCOMES["killed before it began"] += 1
        assert rows_of(run_dir) == rows_of(uninterrupted)
        return
    OUTCOMES[check_resume(run_dir, uninterrupted, f"kill seed {seed} after {delay:.2f} s")] += 1


@pytest.mark.parametrize("seed", default_and_slow(range(1), range(100, 116)))
def test_a_run_killed_at_a_random_moment_is_finished_by_resume(uninterrupted, tmp_path, seed):
    kill_case(uninterrupted, tmp_path, seed)
