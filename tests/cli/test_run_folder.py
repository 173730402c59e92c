"""A tournament's run folder against concurrent runs, damaged logs, replaced deals and
Ctrl-C, through `spades tournament`, `analyze` and `show` run as subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from cli_helpers import (
    default_and_slow,
    finished_run,
    group_ended,
    kill_9,
    one_line_error,
    spades,
    start,
    wait_for_rows,
    without_timing,
)

from experiments.tournament import run_lock
from experiments.tournament.results_log import LogError, read_rows, repair, seal

SMALL = ["--agents", "random,heuristic", "--deals", "6", "--chunk", "2", "--no-progress"]


def assert_once_each(run_dir: Path, deals: int) -> None:
    """Exactly one row per (deal, side): nothing lost, nothing twice."""
    rows = read_rows(run_dir)
    counts = Counter((r["deal"], r["side"]) for r in rows)
    assert set(counts) == {(d, s) for d in range(deals) for s in (0, 1)}
    assert set(counts.values()) == {1}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["pairs"][0]["deals"] == deals


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    return finished_run(tmp_path_factory.mktemp("runs") / "done", *SMALL, "--workers", "1")


def copy_of(run_dir: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy"
    shutil.copytree(run_dir, dest)
    return dest


# ----------------------------------------------------------------------------- the lock
def test_a_run_folder_in_use_is_refused_naming_the_holder(finished, tmp_path):
    run_dir = copy_of(finished, tmp_path)
    before = (run_dir / "log.jsonl").read_bytes()
    with run_lock.hold(run_dir):
        line = one_line_error(spades("tournament", "--resume", "--out", str(run_dir)))
    assert f"pid {os.getpid()}" in line and "in use" in line
    assert (run_dir / "log.jsonl").read_bytes() == before


def test_two_resumes_at_once_one_runs_one_is_refused_and_no_row_is_doubled(tmp_path):
    """The issue's repro: kill -9 a run, then two `--resume --out SAME` at once."""
    run_dir = tmp_path / "H"
    args = ["--agents", "random,heuristic", "--deals", "300", "--chunk", "10", "--seed", "5"]
    first = start("tournament", *args, "--no-progress", "--out", str(run_dir))
    wait_for_rows(first, run_dir / "log.jsonl")
    kill_9(first)  # the kernel drops its lock with it
    assert len(read_rows(run_dir)) < 600, "the kill came too late"
    resumes = [
        start("tournament", "--resume", "--no-progress", "--out", str(run_dir)) for _ in "ab"
    ]
    outs = [(p.wait(timeout=600), p.communicate()[1]) for p in resumes]
    assert sorted(code for code, _ in outs) == [0, 2], outs
    refused = next(o for o in outs if o[0] == 2)
    assert "in use by pid" in one_line_error(refused)
    assert_once_each(run_dir, 300)


def test_a_refused_new_run_leaves_no_folder(tmp_path):
    out = tmp_path / "new" / "run"
    line = one_line_error(
        spades("tournament", *SMALL[2:], "--agents", "random,nosuch", "--out", str(out))
    )
    assert "nosuch" in line
    assert not (tmp_path / "new").exists()


# ----------------------------------------------------------------------------- duplicates
def test_resume_drops_a_unit_logged_twice(finished, tmp_path):
    run_dir = copy_of(finished, tmp_path)
    log = run_dir / "log.jsonl"
    rows = read_rows(log)
    first_unit = [r for r in rows if r["unit"] == 0]
    with open(log, "a") as f:  # what two resumes at once used to leave behind
        f.writelines(json.dumps({**r, "logged_at": "later"}) + "\n" for r in first_unit)
    with pytest.raises(LogError, match="repeats the row"):
        read_rows(log)  # analyze and show refuse it rather than count it twice
    out = spades("tournament", "--resume", "--out", str(run_dir))
    assert out.returncode == 0, out.stderr
    assert "logged twice" in out.stderr
    assert without_timing(read_rows(log)) == without_timing(rows)
    assert_once_each(run_dir, 6)


def test_resume_refuses_a_unit_logged_twice_with_other_rows(finished, tmp_path):
    run_dir = copy_of(finished, tmp_path)
    log = run_dir / "log.jsonl"
    first_unit = [r for r in read_rows(log) if r["unit"] == 0]
    before = log.read_bytes()
    with open(log, "a") as f:
        # rows of another run, each with its own valid checksum
        f.writelines(json.dumps(seal({**r, "bids": [1, 1, 1, 1]})) + "\n" for r in first_unit)
    line = one_line_error(spades("tournament", "--resume", "--out", str(run_dir)))
    assert "unit 0 twice with different rows" in line
    assert log.read_bytes().startswith(before)


# ----------------------------------------------------------------------------- damage
def damage_line_5(run_dir: Path, bad: str) -> Path:
    log = run_dir / "log.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    lines[4] = bad + "\n"
    log.write_text("".join(lines))
    return log


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        pytest.param("{not json", ["line 5", "not valid JSON"], id="garbage"),
        pytest.param("123", ["line 5", "not a JSON object", "int"], id="number"),
        pytest.param("[]", ["line 5", "not a JSON object", "list"], id="list"),
        pytest.param("null", ["line 5", "not a JSON object"], id="null"),
    ],
)
def test_a_damaged_line_in_the_middle_is_a_log_error_naming_it(finished, tmp_path, bad, words):
    log = damage_line_5(copy_of(finished, tmp_path), bad)
    before = log.read_bytes()
    for read in (read_rows, lambda path: repair(path, "any")):
        with pytest.raises(LogError) as err:
            read(log)
        for word in words:
            assert word in str(err.value)
    assert log.read_bytes() == before


@pytest.mark.parametrize(
    "command",
    [
        ["analyze", "{log}"],
        ["show", "{log}", "--deal", "5"],
        ["tournament", "--resume", "--out", "{dir}"],
    ],
    ids=["analyze", "show", "resume"],
)
def test_a_damaged_line_stops_every_command_naming_it(finished, tmp_path, command):
    run_dir = copy_of(finished, tmp_path)
    log = damage_line_5(run_dir, "[]")
    before = log.read_bytes()
    line = one_line_error(spades(*[a.format(log=log, dir=run_dir) for a in command]))
    assert "line 5" in line and "not a JSON object" in line
    assert log.read_bytes() == before  # nothing dropped, nothing played again


def test_a_torn_last_line_is_normal(finished, tmp_path):
    run_dir = copy_of(finished, tmp_path)
    log = run_dir / "log.jsonl"
    whole = log.read_bytes()
    with open(log, "ab") as f:
        f.write(b'{"tournament": "t-')
    assert without_timing(read_rows(log)) == without_timing(read_rows(finished))
    assert spades("show", str(log), "--deal", "5").returncode == 0
    out = spades("tournament", "--resume", "--out", str(run_dir))
    assert out.returncode == 0, out.stderr
    assert log.read_bytes() == whole


def test_repair_drops_a_unit_cut_short_in_the_middle(tmp_path):
    log = tmp_path / "log.jsonl"
    row = {"tournament": "t", "unit_rows": 2}
    lines = [
        {**row, "unit": 0, "deal": 0, "side": 0},
        {**row, "unit": 1, "deal": 2, "side": 0},  # unit 1 cut short
        {**row, "unit": 2, "deal": 4, "side": 0},
        {**row, "unit": 2, "deal": 4, "side": 1},
    ]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    found = repair(log, "t")
    assert found.done == {2} and found.partial == [0, 1]
    assert read_rows(log) == lines[2:]


# ----------------------------------------------------------------------------- deals.json
def test_resume_refuses_a_replaced_deal_file(finished, tmp_path):
    run_dir = copy_of(finished, tmp_path)
    other = tmp_path / "other"
    finished_run(other, *SMALL, "--seed", "9", "--workers", "1")
    shutil.copy(other / "deals.json", run_dir / "deals.json")
    line = one_line_error(spades("tournament", "--resume", "--out", str(run_dir)))
    assert "deals.json" in line and "is not the deal set of tournament" in line


# ----------------------------------------------------------------------------- Ctrl-C
def interrupt_and_resume(tmp_path: Path, delay: float) -> None:
    """Ctrl-C (SIGINT to the process group) `delay` s after the first row, or before any
    row when negative; the run must end at once and `--resume` must finish it."""
    run_dir = tmp_path / f"int{delay}"
    # Units of 50 deals: the larger a unit's result, the longer a worker spends sending it,
    # which is where an interrupted worker used to leave the pool's teardown waiting.
    args = ["--agents", "random,heuristic", "--deals", "200", "--chunk", "50", "--workers", "2"]
    proc = start("tournament", *args, "--no-progress", "--out", str(run_dir))
    if delay < 0:
        time.sleep(-delay)
    else:
        wait_for_rows(proc, run_dir / "log.jsonl")
        time.sleep(delay)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        code = proc.wait(timeout=60)  # a hang guard: it ends within moments
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the tournament hung after Ctrl-C")
    err = proc.communicate()[1]
    assert "Traceback" not in err, err
    if code == 0:
        return  # it finished before the interrupt arrived
    assert code in (130, -signal.SIGINT), err  # -SIGINT: Python's own exit on an interrupt
    assert group_ended(proc.pid, 30), "a worker outlived the interrupted driver"
    if not (run_dir / "config.json").exists():
        return  # interrupted before the run began
    out = spades("tournament", "--resume", "--no-progress", "--out", str(run_dir))
    assert out.returncode == 0, out.stderr
    assert_once_each(run_dir, 200)


MANY_MOMENTS = [-1.0, -2.0, 0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0]


@pytest.mark.parametrize("delay", default_and_slow([0.0], [0.5, *MANY_MOMENTS]))
def test_ctrl_c_ends_the_run_and_resume_finishes_it(tmp_path, delay):
    interrupt_and_resume(tmp_path, delay)


def test_a_last_row_without_its_newline_is_torn_and_cut_off(tmp_path):
    """The write of a unit may stop just before a row's newline; the next unit must not be
    appended to that line."""
    log = tmp_path / "log.jsonl"
    rows = [{"tournament": "t", "unit": 0, "unit_rows": 2, "deal": 0, "side": s} for s in (0, 1)]
    log.write_text(json.dumps(rows[0]) + "\n" + json.dumps(rows[1]))
    assert read_rows(log) == rows[:1]
    assert repair(log, "t").done == set()
    assert log.read_text() == ""
