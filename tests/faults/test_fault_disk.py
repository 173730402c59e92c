"""The disk refuses: a small file system that fills up at a random moment, a read-only one,
and (without root, in-process) a write that fails with "No space left on device" at a
chosen call.

Every case ends in success identical to an undisturbed run, or in one clear line naming
the disk's trouble, with no partial file and no temporary file left; freeing the space
(or making the disk writable) and resuming then gives the undisturbed run's result. The
file systems are real tmpfs mounts (the cases skip where mounting is not permitted); the
in-process cases inject the error into the project's own writes. The default run tries
a few moments per command, `-m slow` many; outcomes are counted and reported at the end.
"""

from __future__ import annotations

import errno
import json
import random
import shutil

import numpy as np
import pytest
from cli_helpers import default_and_slow, outcome_report, spades, without_timing
from fault_cases import command, error_line, fill, set_read_only, small_disk, tmp_files

from experiments.tournament.results_log import read_rows
from spades_env.tooling import files

#: (commands run as a subprocess; a case that trains also needs torch)
pytestmark = pytest.mark.cli

OUTCOMES, report = outcome_report(__file__)


def full(err: str) -> bool:
    return "no space left" in err.lower()


def disk_line(out) -> str:
    """The error of a command the disk stopped: one line (after what a run prints as it
    starts, on stderr), no traceback, naming the disk's trouble and the file, not damage."""
    line = error_line(out)
    assert "b'" not in line and "delete" not in line, line
    assert "/" in line, f"the error names no file: {line}"
    return line


# ----------------------------------------------------------------------------- in-process
class Injected:
    """Make the `n`-th call of `os.<name>` in `spades_env.tooling.files` fail with ENOSPC."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str, n: int) -> None:
        self.calls, self.n = 0, n
        real = getattr(files.os, name)

        def failing(*args, **kw):
            self.calls += 1
            if self.calls == self.n:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real(*args, **kw)

        monkeypatch.setattr(files.os, name, failing)


@pytest.mark.parametrize("where", ["fsync", "replace", "fdopen"])
def test_atomic_write_on_a_full_disk_leaves_the_old_file_and_no_temporary(
    tmp_path, monkeypatch, where
):
    path = tmp_path / "f.json"
    files.atomic_write(path, b"old")
    Injected(monkeypatch, where, 1)
    with pytest.raises(OSError, match="No space"):
        files.atomic_write(path, b"new" * 1000)
    assert path.read_bytes() == b"old"
    assert not tmp_files(tmp_path)
    OUTCOMES[f"atomic_write ENOSPC at {where}: refused, old file kept"] += 1


@pytest.mark.parametrize("seed", default_and_slow([1], range(2, 8)))
def test_a_tournament_stopped_by_a_full_disk_resumes_to_the_same_rows(
    small_run, tmp_path, monkeypatch, seed
):
    """The log's appends fail at a random unit (in-process, the Python API); the log keeps
    whole units only, and the resume plays the rest, to the undisturbed rows."""
    from experiments.tournament import results_log
    from experiments.tournament.config import TournamentConfig
    from experiments.tournament.runner import load_context, run_tournament

    config = load_context(small_run).config
    assert isinstance(config, TournamentConfig)
    run_dir = tmp_path / "run"
    k = random.Random(seed).randrange(1, config.num_units + 1)
    calls = [0]
    real = results_log.write_all

    def write_all(fd, data):
        calls[0] += 1
        if calls[0] == k:
            files.os.write(fd, data[: len(data) // 2])  # half a unit, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device", str(run_dir / "log.jsonl"))
        real(fd, data)

    monkeypatch.setattr(results_log, "write_all", write_all)
    with pytest.raises(OSError, match="No space"):
        run_tournament(run_dir, config, workers=1)
    monkeypatch.setattr(results_log, "write_all", real)
    lines = (run_dir / "log.jsonl").read_bytes().splitlines(keepends=True)
    assert all(line.endswith(b"\n") for line in lines)  # the half unit was cut off again
    assert len({json.loads(x)["unit"] for x in lines}) == k - 1
    result = run_tournament(run_dir, resume=True, workers=1)
    assert without_timing(read_rows(run_dir)) == without_timing(read_rows(small_run))
    assert dict(result) == json.loads((small_run / "summary.json").read_text())
    assert not tmp_files(run_dir)
    OUTCOMES[f"tournament API: disk full at unit {k}: resumed identical"] += 1


@pytest.mark.torch
def test_a_checkpoint_on_a_full_disk_is_an_oserror_with_no_part_file(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    from agents.learned.checkpoint import save_checkpoint
    from agents.learned.networks import build_network, network_config
    from spades_env.rules import Rules

    rules = Rules()
    config = network_config("ppo", "16")
    net = build_network(config, rules)
    Injected(monkeypatch, "fsync", 1)
    with pytest.raises(OSError, match="No space"):
        save_checkpoint(tmp_path / "update_000001.pt", net, config, {}, rules, {"update": 1})
    assert list(tmp_path.iterdir()) == []
    del torch
    OUTCOMES["checkpoint ENOSPC: OSError, no part file"] += 1


def test_a_damaged_evaluation_header_is_said_and_recovered(tmp_path):
    """The issue's repro: a full disk left a 0-byte evaluation.json; a rerun said "already
    holds an evaluation; add --resume" and --resume said "Expecting value"."""
    from experiments.tournament import ladder_protocol

    root = tmp_path / "ev"
    root.mkdir()
    (root / ladder_protocol.HEADER_FILE).write_bytes(b"")
    notes: list[str] = []
    ladder_protocol._open_folder(root, ladder_protocol.header_of("random", 2), False, notes.append)
    assert json.loads(
        (root / ladder_protocol.HEADER_FILE).read_text()
    ) == ladder_protocol.header_of("random", 2)
    assert len(notes) == 1 and "damaged" in notes[0]
    (root / ladder_protocol.HEADER_FILE).write_bytes(b'{"proto')  # cut short, now on --resume
    (root / "1-random").mkdir()
    (root / "1-random" / "config.json").write_text("{}")
    with pytest.raises(ladder_protocol.TournamentError, match=r"damaged.*--resume"):
        ladder_protocol._open_folder(root, ladder_protocol.header_of("random", 2), False)
    ladder_protocol._open_folder(root, ladder_protocol.header_of("random", 2), True, notes.append)
    assert json.loads((root / ladder_protocol.HEADER_FILE).read_text())["candidate"] == "random"
    OUTCOMES["empty evaluation.json: recovered"] += 1


# ----------------------------------------------------------------------------- real disks
TOURNAMENT = ("--agents", "random,heuristic", "--deals", "4", "--chunk", "2", "--workers", "1")


@pytest.mark.parametrize("seed", default_and_slow([11], range(12, 24)))
def test_a_tournament_on_a_disk_that_fills_resumes_to_the_same_rows(small_run, tmp_path, seed):
    leave = random.Random(seed).randrange(0, 40_000)
    with small_disk(tmp_path / "disk", "2m") as disk:
        filler = fill(disk, leave)
        run_dir = disk / "run"
        out = spades("tournament", *TOURNAMENT, "--no-progress", "--out", str(run_dir))
        if out.returncode != 0:
            assert full(disk_line(out)), out.stderr
        assert not tmp_files(disk)
        filler.unlink()
        if not (run_dir / "config.json").exists():  # stopped before the run was set up
            assert not run_dir.exists() or not (run_dir / "log.jsonl").exists()
            again = spades("tournament", *TOURNAMENT, "--no-progress", "--out", str(run_dir))
        else:
            again = spades("tournament", "--resume", "--no-progress", "--out", str(run_dir))
        assert again.returncode == 0, again.stderr
        assert without_timing(read_rows(run_dir)) == without_timing(read_rows(small_run))
        assert (run_dir / "summary.json").read_bytes() == (small_run / "summary.json").read_bytes()
    OUTCOMES[f"tournament, {leave} bytes free: {'ran' if out.returncode == 0 else 'full'}"] += 1


def test_a_tournament_resumed_on_a_read_only_disk_says_so_in_one_line(small_run, tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        shutil.copytree(small_run, disk / "run")
        set_read_only(disk)
        out = spades("tournament", "--resume", "--no-progress", "--out", str(disk / "run"))
        line = disk_line(out)
        assert "read-only" in line.lower(), line
    OUTCOMES["tournament --resume read-only: one line"] += 1


@pytest.mark.parametrize("leave", default_and_slow([0], [2_000, 8_000, 30_000]))
def test_dd_table_on_a_full_disk_leaves_no_table_and_calls_the_cache_intact(tmp_path, leave):
    with small_disk(tmp_path / "disk", "1m") as disk:
        cache, out = disk / "dd.sqlite", disk / "F.npz"
        filler = fill(disk, leave)
        done = command("dd-table", "--deals", "2", "--no-progress", "--cache", str(cache),
                       "--out", str(out))  # fmt: skip
        if done.returncode != 0:
            line = disk_line(done)
            assert full(line) or "disk is full" in line or "intact" in line, line
            assert not out.exists()
        else:
            with np.load(out) as z:
                assert z["tables"].shape == (2, 4, 2)
        assert not tmp_files(disk)
        filler.unlink()
        again = command("dd-table", "--deals", "2", "--no-progress", "--cache", str(cache),
                        "--out", str(out))  # fmt: skip
        assert again.returncode == 0, again.stderr
    OUTCOMES[f"dd-table, {leave} bytes free: {'ran' if done.returncode == 0 else 'full'}"] += 1


def test_the_dd_cache_on_a_read_only_disk_is_not_called_damaged(tmp_path):
    from agents.dd.cache import DDCache, DDCacheError

    with small_disk(tmp_path / "disk", "1m") as disk:
        cache = DDCache(disk / "dd.sqlite")
        cache.put({"k": 3})
        cache.close()
        set_read_only(disk)
        try:
            reopened = DDCache(disk / "dd.sqlite")
        except DDCacheError as exc:
            assert "delete" not in str(exc) and "intact" in str(exc), exc
            outcome = "refused, intact"
        else:
            assert reopened.get(["k"]) == {"k": 3}
            try:
                reopened.put({"j": 4})
            except DDCacheError as exc:
                assert "delete" not in str(exc) and "intact" in str(exc), exc
            reopened.close()
            outcome = "read"
    OUTCOMES[f"dd cache read-only: {outcome}"] += 1


def test_a_save_on_a_full_disk_says_why_and_the_game_goes_on(tmp_path):
    with small_disk(tmp_path / "disk", "1m") as disk:
        fill(disk, 0)
        save = disk / "g.json"
        out = command("play", "--seed", "3", cwd=tmp_path, stdin=f"3\nsave {save}\nquit\n")
        assert out.returncode == 0, out.stderr
        assert "not saved to" in out.stdout and "the game goes on" in out.stdout
        assert not save.exists() and not tmp_files(disk)
        assert len(list(tmp_path.glob("spades-play-*.json"))) == 1  # saved on quit, here
    OUTCOMES["play save on a full disk: game went on"] += 1


PPO = ("--total-timesteps", "700", "--num-games", "8", "--hidden", "16", "--eval-every", "0")


@pytest.mark.torch
@pytest.mark.parametrize("leave", default_and_slow([], [0, 4_000, 60_000, 150_000]))
def test_training_on_a_full_disk_says_so_in_one_line(tmp_path, leave):
    """The issue's repro: torch's inline_container.cc traceback on a full disk."""
    pytest.importorskip("torch")
    with small_disk(tmp_path / "disk", "2m") as disk:
        runs = disk / "R"
        runs.mkdir()
        fill(disk, leave)
        out = spades("train", "ppo", *PPO, "--save-every", "1", "--runs-dir", str(runs),
                     "--no-progress")  # fmt: skip
        if out.returncode != 0:
            assert full(disk_line(out)), out.stderr
        assert "inline_container" not in out.stderr
        assert not tmp_files(disk)
    OUTCOMES[f"train ppo, {leave} bytes free: {'ran' if out.returncode == 0 else 'full'}"] += 1


@pytest.mark.torch
@pytest.mark.slow  # a PPO run, then its resume: the tournament cases cover the disk
def test_a_training_run_resumed_on_a_read_only_disk_says_so_in_one_line(tmp_path):
    """The issue's repro: a b'...' path, then a TensorBoard thread's traceback."""
    pytest.importorskip("torch")
    with small_disk(tmp_path / "disk", "8m") as disk:
        runs = disk / "R"
        first = spades("train", "ppo", *PPO, "--stop-after", "1", "--save-every", "1",
                       "--runs-dir", str(runs), "--no-progress")  # fmt: skip
        assert first.returncode == 0, first.stderr
        (run_dir,) = runs.iterdir()
        set_read_only(disk)
        out = spades("train", "ppo", "--resume", str(run_dir), "--no-progress")
        line = disk_line(out)
        assert "read-only" in line.lower(), line
    OUTCOMES["train ppo --resume read-only: one line"] += 1


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(31, 35))
def test_an_evaluation_on_a_disk_that_fills_resumes(tmp_path, seed):
    leave = random.Random(seed).randrange(0, 60_000)
    with small_disk(tmp_path / "disk", "2m") as disk:
        filler = fill(disk, leave)
        root = disk / "ev"
        args = ("evaluate", "random", "--test-deals", "2", "--workers", "1", "--no-progress")
        out = spades(*args, "--dir", str(root))
        if out.returncode != 0:
            assert full(disk_line(out)), out.stderr
        assert not tmp_files(disk)
        filler.unlink()
        resume = ("--resume",) if (root / "evaluation.json").exists() else ()
        again = spades(*args, *resume, "--dir", str(root))
        assert again.returncode == 0, again.stderr
        assert json.loads((root / "result.json").read_text())["rungs"]
    OUTCOMES[f"evaluate, {leave} bytes free: {'ran' if out.returncode == 0 else 'full'}"] += 1


@pytest.mark.slow
def test_leaderboard_out_on_a_full_disk_leaves_no_page(tmp_path):
    from cli_helpers import REPO

    results = sorted(str(p) for p in (REPO / "docs" / "results").glob("*.json"))
    with small_disk(tmp_path / "disk", "1m") as disk:
        fill(disk, 0)
        out = spades("leaderboard", *results, "--out", str(disk / "lb.md"))
        assert full(disk_line(out))
        assert not (disk / "lb.md").exists() and not tmp_files(disk)
    OUTCOMES["leaderboard --out full: one line, no page"] += 1


def test_temporary_names_are_unique_and_known_as_a_killed_starts_leftovers(tmp_path):
    """Two processes never share a temporary name, and a killed start's leftovers, in
    either form, are recognised as such (a new tournament may start beside them)."""
    names = set()
    for _ in range(20):
        path = files.atomic_write(tmp_path / "config.json", b"{}")
        names.add(path.name)
    assert names == {"config.json"} and not tmp_files(tmp_path)
    assert files.is_tmp_of("config.json.tmp", "config.json")
    assert files.is_tmp_of("config.json.k2j3_x.tmp", "config.json")
    assert not files.is_tmp_of("config.json", "config.json")
    assert not files.is_tmp_of("notes.tmp", "config.json")
