"""Issue 28's repros of lost or silently wrong data, each run as a user would, through
`spades` subprocesses: resume repairs by row identity, foreign folders and caches are
refused untouched, spliced rows are refused, refused runs leave no folder, and workers
do not outlive a driver killed alone."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import (
    dd_answers,
    finished_run,
    group_ended,
    one_line_error,
    snapshot,
    spades,
    start,
    wait_for_rows,
)
from slow_cases import first_by_default

pytestmark = pytest.mark.cli

TINY = ["--agents", "random,random", "--deals", "4", "--chunk", "2", "--workers", "1"]


@pytest.fixture(scope="module")
def issue_run(tmp_path_factory) -> Path:
    """The issue's tournament: 40 deals, seed 3, units of 10."""
    args = ["--deals", "40", "--seed", "3", "--chunk", "10", "--no-progress"]
    return finished_run(tmp_path_factory.mktemp("issue") / "B", *args)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, small_run) -> dict[str, Path]:
    """Two tiny tournaments: random against random, and against the heuristic."""
    a = finished_run(tmp_path_factory.mktemp("tiny") / "a", *TINY, "--no-progress")
    return {"a": a, "b": small_run}


@pytest.mark.parametrize("line", first_by_default([30, 5, 55]))
def test_resume_keeps_every_row_when_a_line_is_duplicated(issue_run, tmp_path, line):
    run_dir = tmp_path / "R"
    shutil.copytree(issue_run, run_dir)
    lines = (run_dir / "log.jsonl").read_bytes().splitlines(keepends=True)
    lines.insert(line, lines[line - 1])  # sed -i '{line}p'
    (run_dir / "log.jsonl").write_bytes(b"".join(lines))
    out = spades("tournament", "--resume", "--no-progress", "--out", str(run_dir))
    assert out.returncode == 0, out.stderr
    assert "logged twice" in out.stderr
    # every row, once, as the uninterrupted run wrote it; the folder reads again
    assert (run_dir / "log.jsonl").read_bytes() == (issue_run / "log.jsonl").read_bytes()
    if line == 30:  # the issue's case: the repaired folder resumes and reads again
        again = spades("tournament", "--resume", "--no-progress", "--out", str(run_dir))
        assert again.returncode == 0, again.stderr
        assert spades("show", str(run_dir), "--deal", "19").returncode == 0


def bc_like_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"algo": "bc", "lr": 0.001}))
    (folder / "summary.json").write_text(json.dumps({"agreement": 0.93}))
    (folder / "events.out.tfevents.1").write_bytes(b"\x00events")
    return folder


@pytest.mark.parametrize("kind", first_by_default(["other files", "bc run", "other deals"]))
def test_a_tournament_never_writes_into_a_folder_of_another_kind(tiny, tmp_path, kind):
    folder = tmp_path / "theirs"
    if kind == "bc run":
        bc_like_run(folder)
    elif kind == "other files":
        folder.mkdir()
        (folder / "notes.txt").write_text("mine")
    else:
        folder.mkdir()
        shutil.copy(tiny["b"] / "deals.json", folder / "deals.json")
    before = snapshot(folder)
    args = [*TINY, "--seed", "1", "--no-progress", "--out", str(folder)]
    line = one_line_error(spades("tournament", *args))
    assert str(folder) in line
    assert snapshot(folder) == before  # nothing overwritten, no lock file added
    line = one_line_error(spades("tournament", "--resume", "--out", str(folder)))
    assert snapshot(folder) == before


@pytest.mark.parametrize("command", ["show", "analyze"])
def test_a_row_of_another_tournament_spliced_in_is_refused(tiny, tmp_path, command):
    run_dir = tmp_path / "spliced"
    shutil.copytree(tiny["a"], run_dir)
    theirs = (tiny["b"] / "log.jsonl").read_bytes().splitlines(keepends=True)[2]
    with open(run_dir / "log.jsonl", "ab") as f:
        f.write(theirs)
    before = snapshot(run_dir)
    args = ["--deal", "0"] if command == "show" else ["--no-dd", "--out", str(tmp_path / "p")]
    line = one_line_error(spades(command, str(run_dir), *args))
    assert "another run" in line and "line 9" in line
    assert snapshot(run_dir) == before and not (tmp_path / "p").exists()


def cache_of(run_dir: Path, path: Path, value: int) -> Path:
    """A double-dummy cache holding `value` for every hand of the run."""
    dd_answers(run_dir, path, 0)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE tricks SET team0 = ?", (value,))
    return path


def foreign_sqlite(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE songs (title TEXT)")
    return path


SLOW = pytest.mark.slow


@pytest.mark.parametrize(
    ("kind", "command"),
    [
        ("99 tricks", "analyze"),
        pytest.param("99 tricks", "dd-table", marks=SLOW),
        ("not sqlite", "dd-table"),
        pytest.param("other sqlite", "analyze", marks=SLOW),
        ("damaged", "analyze"),
        pytest.param("-1 tricks", "analyze", marks=SLOW),
        pytest.param("text", "dd-table", marks=SLOW),
        pytest.param("not sqlite", "analyze", marks=SLOW),
        pytest.param("other sqlite", "dd-table", marks=SLOW),
        pytest.param("damaged", "dd-table", marks=SLOW),
    ],
)
def test_a_bad_dd_cache_is_refused_in_one_line_never_shown_as_tricks(tiny, tmp_path, kind, command):
    path = tmp_path / "dd.sqlite"
    if kind in ("99 tricks", "-1 tricks"):
        cache_of(tiny["a"], path, int(kind.split()[0]))
        if command == "dd-table":  # the cache of dd-table's own deals
            good = spades(
                "dd-table", "--deals", "1", "--workers", "1", "--no-progress", "--cache", str(path)
            )
            assert good.returncode == 0, good.stderr
            with sqlite3.connect(path) as db:
                db.execute("UPDATE tricks SET team0 = ?", (int(kind.split()[0]),))
    elif kind == "text":
        path.write_text("key,team0\nabc,7\n")
    elif kind == "not sqlite":
        path.write_bytes(os.urandom(4096))
    elif kind == "other sqlite":
        foreign_sqlite(path)
    else:  # the header of SQLite, then garbage
        path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    before = path.read_bytes()
    if command == "dd-table":
        out = spades(
            "dd-table", "--deals", "1", "--workers", "1", "--no-progress", "--cache", str(path)
        )
    else:
        out = spades(
            "analyze",
            str(tiny["a"]),
            "--dd-max",
            "0",
            "--dd-cache",
            str(path),
            "--out",
            str(tmp_path / "p"),
        )
    line = one_line_error(out)
    assert "dd cache" in line and str(path) in line
    assert "tricks" not in out.stdout
    if kind not in ("99 tricks", "-1 tricks"):
        assert path.read_bytes() == before


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda d: d["deals"][0].update(seed=-1), id="seed -1"),
        pytest.param(lambda d: d["deals"][1]["hands"].__setitem__(2, None), id="null hand"),
        pytest.param(
            lambda d: d["deals"][0].update(hands=None), id="null hands", marks=pytest.mark.slow
        ),
        pytest.param(lambda d: d["deals"].__setitem__(0, None), id="null deal"),
        pytest.param(
            lambda d: d["deals"][0].update(seed=2**64), id="seed 2**64", marks=pytest.mark.slow
        ),
        pytest.param(
            lambda d: d["deals"][0].update(dealer="x"), id="dealer text", marks=pytest.mark.slow
        ),
    ],
)
def test_a_bad_deal_file_is_one_line(tiny, tmp_path, change):
    data = json.loads((tiny["a"] / "deals.json").read_text())
    change(data)
    bad = tmp_path / "deals.json"
    bad.write_text(json.dumps(data))
    line = one_line_error(
        spades("tournament", *TINY, "--deal-file", str(bad), "--out", str(tmp_path / "x"))
    )
    assert "deal file" in line and "deal " in line
    assert not (tmp_path / "x").exists()
    run_dir = tmp_path / "copy"
    shutil.copytree(tiny["a"], run_dir)
    shutil.copy(bad, run_dir / "deals.json")
    before = snapshot(run_dir)
    one_line_error(spades("tournament", "--resume", "--out", str(run_dir)))
    assert snapshot(run_dir) == before


@pytest.mark.parametrize("address", ["127.0.0.1:1", "garbage", "host:0", "a b:6379"])
def test_a_ray_address_nobody_answers_is_refused_before_a_folder(tmp_path, address):
    pytest.importorskip("ray")
    out = tmp_path / "run"
    line = one_line_error(
        spades(
            "tournament",
            *TINY,
            "--backend",
            "ray",
            "--address",
            address,
            "--out",
            str(out),
            timeout=60,
        )
    )
    assert "--address" in line
    assert not out.exists()


def test_train_refuses_a_ray_address_before_its_progress_bar_and_folder(tmp_path):
    pytest.importorskip("ray")
    runs = tmp_path / "runs"
    flags = ["--backend", "ray", "--address", "garbage", "--runs-dir", str(runs)]
    line = one_line_error(spades("train", "dmc", *flags, timeout=120))
    assert "--address 'garbage'" in line
    assert not runs.exists()


def test_workers_exit_when_the_driver_alone_is_killed(tmp_path):
    run_dir = tmp_path / "orphans"
    args = ["--agents", "random,heuristic", "--deals", "400", "--chunk", "10", "--workers", "2"]
    proc = start("tournament", *args, "--no-progress", "--out", str(run_dir), quiet=True)
    wait_for_rows(proc, run_dir / "log.jsonl", 0)
    os.kill(proc.pid, signal.SIGKILL)  # the driver alone, not its group
    proc.wait()
    try:
        assert group_ended(proc.pid, 60), "workers outlived their killed driver"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


# ----------------------------------------------------------------------------- checks first
def test_play_checks_its_save_file_before_the_first_move(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("mine")
    out = spades("play", "--seed", "1", "--save", str(blocker / "g.json"), input="")
    line = one_line_error(out)
    assert "--save" in line and "is a file" in line
    assert "legal:" not in out.stdout  # refused before the first prompt
    assert blocker.read_text() == "mine"


def test_dd_table_checks_out_before_solving(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("mine")
    cache = tmp_path / "dd.sqlite"
    args = ["--deals", "500", "--cache", str(cache), "--out", str(blocker / "t.npz")]
    line = one_line_error(spades("dd-table", *args))
    assert "--out" in line and "is a file" in line
    assert not cache.exists()  # nothing solved, no cache made


def test_analyze_checks_out_and_the_cache_before_solving(tiny, tmp_path):
    target = tmp_path / "plots"
    target.write_text("mine")
    cache = tmp_path / "dd.sqlite"
    out = spades("analyze", str(tiny["a"]), "--dd", "--dd-cache", str(cache), "--out", str(target))
    assert "is a file" in one_line_error(out)
    assert not cache.exists()  # one line, before any cache is opened or hand solved


def test_a_new_run_whose_first_unit_fails_leaves_no_folder(tmp_path):
    out_dir = tmp_path / "new" / "run"
    args = [*TINY, "--agents", "heuristic:aggression=nan,random", "--no-progress"]
    out = spades("tournament", *args, "--out", str(out_dir))
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "new").exists()
