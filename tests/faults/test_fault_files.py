"""Fault injection for the project's other files (the way SQLite tests its file format):
a training run's checkpoints, a distillation dataset's shards and meta.json, and the
double-dummy cache, each damaged at random (truncated, overwritten, a byte flipped, a
value out of range, another kind of file). A command then either works as if nothing
had happened (a damaged last checkpoint: resumed from the one before, saying so), or
refuses in one line, leaves the file as it was and writes no run folder; never a
traceback, never a wrong value shown as right.

Every case is drawn from its own seed; the default run tries a handful, `-m slow` many.
Each case's outcome is counted and reported at the end of the module.
"""

from __future__ import annotations

import io
import random
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the train extra
from cli_helpers import default_and_slow, one_line_error, outcome_report, snapshot, spades

from agents.learned.checkpoint import CheckpointError, save_checkpoint
from agents.registry import parse_agent
from training.bc_data import DatasetError, DatasetSpec, generate, load_dataset, shard_path

pytestmark = pytest.mark.torch

OUTCOMES, report = outcome_report(__file__)


def flip(rng: random.Random, data: bytes, start: int = 0, stop: int | None = None) -> bytes:
    i = rng.randrange(start, min(len(data), stop or len(data)))
    return data[:i] + bytes([data[i] ^ rng.randrange(1, 256)]) + data[i + 1 :]


# ----------------------------------------------------------------------------- checkpoints
DMC = ["--total-timesteps", "1500", "--num-games", "8", "--hidden", "16", "--eval-every", "0"]


@pytest.fixture(scope="module")
def dmc_run(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("dmc")
    out = spades(
        "train", "dmc", *DMC, "--save-every", "1", "--runs-dir", str(runs), "--no-progress"
    )
    assert out.returncode == 0, out.stderr
    (run_dir,) = runs.iterdir()
    assert len(list((run_dir / "checkpoints").glob("update_*.pt"))) >= 2
    return run_dir


def damage_checkpoint(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    kind = rng.choice(["truncate", "empty", "garbage", "header"])
    if kind == "truncate":
        n = rng.randrange(len(data) // 2)
        return f"cut to {n} bytes", data[:n]
    if kind == "empty":
        return "emptied", b""
    if kind == "garbage":
        return "overwritten", rng.randbytes(len(data))
    return "a byte of the zip header flipped", flip(rng, data, 0, 4)


def checkpoint_case(dmc_run: Path, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    run_dir = tmp_path / dmc_run.name
    shutil.copytree(dmc_run, run_dir)
    last = sorted((run_dir / "checkpoints").glob("update_*.pt"))[-1]
    what, data = damage_checkpoint(rng, last.read_bytes())
    last.write_bytes(data)
    out = spades("train", "dmc", "--resume", str(run_dir), "--no-progress")
    assert out.returncode == 0, (f"seed {seed}: {what}", out.stderr)
    notes = [x for x in out.stderr.splitlines() if "is damaged" in x]
    assert len(notes) == 1 and last.name in notes[0] and "the checkpoint before it" in notes[0]
    torch.load(last, weights_only=True)  # trained again from the one before, and rewritten
    OUTCOMES["checkpoint: resumed from the one before"] += 1


@pytest.mark.parametrize("seed", default_and_slow(range(1), range(100, 106)))
@pytest.mark.cli
def test_a_damaged_last_checkpoint_resumes_from_the_one_before(dmc_run, tmp_path, seed):
    checkpoint_case(dmc_run, tmp_path, seed)


def test_a_checkpoint_with_nan_weights_is_never_saved(tmp_path):
    from agents.learned.networks import build_network, network_config
    from spades_env.rules import Rules

    net = build_network(network_config("dmc", [8]), Rules())
    with torch.no_grad():
        next(net.parameters()).view(-1)[0] = float("nan")
    with pytest.raises(CheckpointError, match="NaN or inf"):
        save_checkpoint(tmp_path / "c.pt", net, {"kind": "dmc"}, {}, Rules(), {"update": 1})
    assert not list(tmp_path.iterdir())


# ----------------------------------------------------------------------------- datasets
SPEC = DatasetSpec.from_fields(parse_agent("heuristic"), "", seed=3, shards=2, hands_per_shard=10)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return generate(tmp_path_factory.mktemp("data") / "d", SPEC)


def rewritten_shard(path: Path, change) -> bytes:
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    change(arrays)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def damage_dataset(rng: random.Random, folder: Path) -> str:
    shard = shard_path(folder, rng.randrange(SPEC.shards))
    kind = rng.choice(["action 200", "action -1", "flip", "truncate", "meta flip", "meta cut"])
    if kind.startswith("action"):
        value = int(kind.split()[1])

        def change(a):
            a["action"] = a["action"].astype(np.int64)
            a["action"][rng.randrange(len(a["action"]))] = value

        shard.write_bytes(rewritten_shard(shard, change))
    elif kind == "flip":
        data = shard.read_bytes()
        shard.write_bytes(flip(rng, data, 64, len(data) - 64))  # inside a member
    elif kind == "truncate":
        data = shard.read_bytes()
        shard.write_bytes(data[: rng.randrange(len(data))])
    else:
        meta = folder / "meta.json"
        data = meta.read_bytes()
        meta.write_bytes(
            flip(rng, data) if kind == "meta flip" else data[: rng.randrange(len(data))]
        )
    return kind


def dataset_case(dataset: Path, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    folder = tmp_path / "d"
    shutil.copytree(dataset, folder)
    kind = damage_dataset(rng, folder)
    before = snapshot(folder)
    want = load_dataset(dataset)
    try:
        got = load_dataset(folder)
    except (DatasetError, ValueError) as exc:
        assert len(str(exc).splitlines()) == 1, (seed, kind, exc)
        assert snapshot(folder) == before
        OUTCOMES["dataset: refused"] += 1
        return
    # read without an error: then it must be the very same data (a flip in a spare byte)
    assert set(got) == set(want) and all(np.array_equal(got[k], want[k]) for k in want), (
        seed,
        kind,
    )
    OUTCOMES["dataset: read unchanged"] += 1


@pytest.mark.parametrize("seed", default_and_slow(range(4), range(100, 160)))
@pytest.mark.cli
def test_a_damaged_dataset_is_refused_in_one_line_or_read_unchanged(dataset, tmp_path, seed):
    dataset_case(dataset, tmp_path, seed)


@pytest.mark.cli
@pytest.mark.slow  # generates BC data, then trains on it: 8 s
def test_bc_stopped_by_a_shard_with_action_200_leaves_no_run_folder(tmp_path):
    data, runs = tmp_path / "data", tmp_path / "runs"
    flags = ["--data", str(data), "--hands", "20", "--hands-per-shard", "10", "--epochs", "1"]
    flags += ["--hidden", "16", "--eval-deals", "0", "--no-progress"]  # 0 = no evaluation
    first = spades("train", "bc", *flags, "--runs-dir", str(tmp_path / "first"))
    assert first.returncode == 0, first.stderr
    shard = shard_path(data, 1)

    def change(a):
        a["action"] = a["action"].astype(np.int64)
        a["action"][0] = 200

    shard.write_bytes(rewritten_shard(shard, change))
    before = shard.read_bytes()
    line = one_line_error(spades("train", "bc", *flags, "--runs-dir", str(runs)))
    assert str(shard) in line and "actions outside" in line
    assert not runs.exists() and shard.read_bytes() == before
    OUTCOMES["dataset: bc refused"] += 1


# ----------------------------------------------------------------------------- dd cache
@pytest.fixture(scope="module")
def dd_cache(tmp_path_factory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("dd") / "dd.sqlite"
    out = spades(
        "dd-table", "--deals", "2", "--workers", "1", "--no-progress", "--cache", str(path)
    )
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path, out.stdout.split("\n", 1)[1]


def damage_cache(rng: random.Random, path: Path) -> str:
    kind = rng.choice(["value", "text", "foreign", "header", "truncate", "garbage"])
    if kind in ("value", "text", "foreign"):
        with sqlite3.connect(path) as db:
            if kind == "value":
                db.execute(
                    "UPDATE tricks SET team0 = ? WHERE rowid = 1", (rng.choice([14, 99, -1]),)
                )
            elif kind == "text":
                db.execute("UPDATE tricks SET team0 = 'seven' WHERE rowid = 1")
            else:
                db.execute("CREATE TABLE notes (text TEXT)")
            db.commit()
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the change into the file itself
    elif kind == "header":
        data = path.read_bytes()
        path.write_bytes(flip(rng, data, 0, 16))
    elif kind == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[: rng.randrange(1, len(data))])
    else:
        path.write_bytes(rng.randbytes(4096))
    return kind


def cache_case(dd_cache: tuple[Path, str], tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "dd.sqlite"
    shutil.copy(dd_cache[0], path)
    kind = damage_cache(rng, path)
    before = path.read_bytes()
    out = spades(
        "dd-table", "--deals", "2", "--workers", "1", "--no-progress", "--cache", str(path)
    )
    assert "Traceback" not in out.stderr, (seed, kind, out.stderr)
    if out.returncode == 0:  # e.g. a truncation SQLite reads as fewer rows: solved again
        assert out.stdout.split("\n", 1)[1] == dd_cache[1], (seed, kind)
        OUTCOMES["dd cache: same tables"] += 1
        return
    line = one_line_error(out)
    assert "dd cache" in line, (seed, kind, line)
    assert path.read_bytes() == before, (seed, kind)
    OUTCOMES["dd cache: refused"] += 1


@pytest.mark.parametrize("seed", default_and_slow(range(2), range(100, 140)))
@pytest.mark.cli
def test_a_damaged_dd_cache_is_refused_in_one_line_or_gives_the_same_tables(
    dd_cache, tmp_path, seed
):
    cache_case(dd_cache, tmp_path, seed)
