"""Links at every file a command reads or writes in a run folder: a symbolic link to a
file outside, a dangling one, and a hard link (a file with a second name outside).

Every case is one command (a tournament's or an evaluation's resume, a training run's
resume, `dd-table --out`, `leaderboard --out`, `play --load`) × one file of its folder ×
one kind of link, generated below. It ends either in success identical to an undisturbed
run, or in one clear line with the run folder as it was; in both the file outside is
unchanged (a dangling link's target is never created) and no temporary file is left.
The default run tries a few cases of each command, `-m slow` all of them; the count of
each outcome is reported at the end of the module.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_helpers import REPO, outcome_report, snapshot, spades, without_timing
from fault_cases import LINK_KINDS, Planted, command, error_line, plant, tmp_files

from experiments.tournament.results_log import read_rows

#: (commands run as a subprocess; a case that trains also needs torch)
pytestmark = pytest.mark.cli

OUTCOMES, report = outcome_report(__file__)


def cases(files: list[str], default: set[tuple[str, str]]) -> list:
    """Every (file, link kind) pair; those in `default` run by default, the rest with `-m
    slow`."""
    out = []
    for name in files:
        for kind in LINK_KINDS:
            marks = () if (name, kind) in default else (pytest.mark.slow,)
            out.append(pytest.param(name, kind, marks=marks, id=f"{name}-{kind}"))
    return out


def judge(
    out: subprocess.CompletedProcess[str],
    planted: list[Planted],
    folder: Path,
    before: dict[str, bytes],
    outside: Path,
) -> str:
    """The checks every case ends with; returns "ok" or "refused"."""
    for p in planted:
        assert p.intact(), f"{p.outside} ({p.kind} at {p.at.name}) was changed or created"
    assert not tmp_files(folder, outside), tmp_files(folder, outside)
    if out.returncode == 0:
        return "ok"
    error_line(out)
    after = snapshot(folder)
    assert {k: v for k, v in after.items() if not k.endswith(".lock")} == {
        k: v for k, v in before.items() if not k.endswith(".lock")
    }, "a refused command changed the run folder"
    return "refused"


# ----------------------------------------------------------------------------- tournaments
TOURNAMENT_FILES = [".lock", "log.jsonl", "config.json", "deals.json", "summary.json"]


def cut_to_first_unit(run_dir: Path) -> None:
    """Leave the log with its first unit only, and no summary: a run to finish."""
    log = run_dir / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])["unit"]
    log.write_bytes(b"".join(x for x in lines if json.loads(x)["unit"] == first))
    (run_dir / "summary.json").unlink()


@pytest.mark.parametrize(
    "name, kind",
    cases(
        TOURNAMENT_FILES,
        {(".lock", "symlink"), (".lock", "dangling"), ("log.jsonl", "hardlink")},
    ),
)
def test_a_link_in_a_tournament_folder_never_writes_outside(small_run, tmp_path, name, kind):
    run_dir = tmp_path / "run"
    shutil.copytree(small_run, run_dir, symlinks=True)
    cut_to_first_unit(run_dir)
    if name == "summary.json":
        (run_dir / name).write_text("{}\n")  # a stale one, to be replaced
    planted = [plant(run_dir / name, kind, tmp_path / "outside")]
    before = snapshot(run_dir)
    out = spades("tournament", "--resume", "--workers", "1", "--no-progress", "--out", str(run_dir))
    outcome = judge(out, planted, run_dir, before, tmp_path / "outside")
    if outcome == "ok":
        assert without_timing(read_rows(run_dir)) == without_timing(read_rows(small_run))
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary == json.loads((small_run / "summary.json").read_text())
        assert not (run_dir / name).is_symlink() or name in ("config.json", "deals.json")
    if name in (".lock", "log.jsonl") and kind != "hardlink":
        assert outcome == "refused", "a tournament wrote through a link"
        assert "link" in out.stderr
    OUTCOMES[f"tournament {name} {kind}: {outcome}"] += 1


@pytest.mark.parametrize("how", ["cp -rs", pytest.param("cp -al", marks=pytest.mark.slow)])
def test_resuming_a_linked_copy_of_a_run_leaves_the_original_as_it_was(small_run, tmp_path, how):
    """The issue's repro: a `cp -rs` copy (every file a symbolic link to the original) was
    resumed into the original's log; a `cp -al` copy (hard links) likewise."""
    original = tmp_path / "original"
    shutil.copytree(small_run, original)
    cut_to_first_unit(original)
    before = snapshot(original)
    copy = tmp_path / "copy"
    subprocess.run(["cp", *how.split()[1:], str(original), str(copy)], check=True)
    out = spades("tournament", "--resume", "--workers", "1", "--no-progress", "--out", str(copy))
    after = snapshot(original)
    assert {k: v for k, v in after.items() if k != ".lock"} == {
        k: v for k, v in before.items() if k != ".lock"
    }
    if out.returncode != 0:
        assert "link" in error_line(out)
    OUTCOMES[f"tournament {how} copy: {'ok' if out.returncode == 0 else 'refused'}"] += 1


# ----------------------------------------------------------------------------- evaluate
EVALUATE_FILES = ["evaluation.json", "result.json", ".lock", "1-random/log.jsonl"]
TINY_EVAL = ["--test-deals", "2", "--workers", "1", "--no-progress"]


@pytest.fixture(scope="module")
def evaluation(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("eval") / "ev"
    out = spades("evaluate", "random", *TINY_EVAL, "--dir", str(folder))
    assert out.returncode == 0, out.stderr
    return folder


@pytest.mark.parametrize("name, kind", cases(EVALUATE_FILES, set()))  # all slow: a ladder each
def test_a_link_in_an_evaluation_folder_never_writes_outside(evaluation, tmp_path, name, kind):
    folder = tmp_path / "ev"
    shutil.copytree(evaluation, folder, symlinks=True)
    (folder / "result.json").unlink()  # a run to finish (its rungs are complete)
    if name == "result.json":
        (folder / name).write_text("{}\n")
    planted = [plant(folder / name, kind, tmp_path / "outside")]
    before = snapshot(folder)
    out = spades("evaluate", "random", *TINY_EVAL, "--resume", "--dir", str(folder))
    outcome = judge(out, planted, folder, before, tmp_path / "outside")
    if outcome == "ok":
        got, want = (json.loads((f / "result.json").read_text()) for f in (folder, evaluation))
        strip = ("seconds_this_run", "run")
        assert [{k: v for k, v in r.items() if k not in strip} for r in got["rungs"]] == [
            {k: v for k, v in r.items() if k not in strip} for r in want["rungs"]
        ]
    if name == ".lock" or (name.endswith("log.jsonl") and kind != "hardlink"):
        assert outcome == "refused"
        assert "link" in out.stderr
    OUTCOMES[f"evaluate {name} {kind}: {outcome}"] += 1


# ----------------------------------------------------------------------------- training
PPO = ["--total-timesteps", "700", "--num-games", "8", "--hidden", "16", "--eval-every", "0"]
TRAIN_FILES = [".lock", "checkpoints/update_000001.pt", "checkpoints/update_000002.pt"]


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    runs = tmp_path_factory.mktemp("ppo")
    out = spades(
        "train", "ppo", *PPO, "--save-every", "1", "--stop-after", "1", "--runs-dir", str(runs),
        "--no-progress",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    (run_dir,) = runs.iterdir()
    return run_dir


@pytest.mark.parametrize(
    "name, kind",
    cases(TRAIN_FILES, {("checkpoints/update_000002.pt", "dangling")}),
)
@pytest.mark.torch
def test_a_link_in_a_training_run_never_writes_outside(ppo_run, tmp_path, name, kind):
    run_dir = tmp_path / ppo_run.name
    shutil.copytree(ppo_run, run_dir, symlinks=True)
    planted = [plant(run_dir / name, kind, tmp_path / "outside")]
    before = snapshot(run_dir)
    out = spades("train", "ppo", "--resume", str(run_dir), "--stop-after", "1", "--no-progress")
    outcome = judge(out, planted, run_dir, before, tmp_path / "outside")
    if outcome == "ok":
        from agents.learned.checkpoint import read_checkpoint

        assert (
            read_checkpoint(run_dir / "checkpoints" / "update_000002.pt")["counters"]["update"] == 2
        )
    if name == ".lock":
        assert outcome == "refused"
        assert "link" in out.stderr
    OUTCOMES[f"train ppo {name} {kind}: {outcome}"] += 1


# ----------------------------------------------------------------------------- single files
SINGLE_KINDS = [
    pytest.param(k, marks=() if k == "symlink" else (pytest.mark.slow,), id=k) for k in LINK_KINDS
]


@pytest.mark.parametrize("kind", SINGLE_KINDS)
def test_dd_table_out_through_a_link_replaces_the_link(tmp_path, kind):
    out = tmp_path / "F.npz"
    planted = plant(out, kind, tmp_path / "outside")
    done = command("dd-table", "--deals", "2", "--no-progress", "--cache",
                   str(tmp_path / "dd.sqlite"), "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.is_file() and not out.is_symlink() and out.stat().st_nlink == 1
    assert planted.intact() and not tmp_files(tmp_path)
    OUTCOMES[f"dd-table --out {kind}: ok"] += 1


@pytest.mark.parametrize("kind", SINGLE_KINDS)
def test_leaderboard_out_through_a_link_replaces_the_link(tmp_path, kind):
    results = sorted(str(p) for p in (REPO / "docs" / "results").glob("*.json"))
    out = tmp_path / "page.md"
    planted = plant(out, kind, tmp_path / "outside")
    done = command("leaderboard", *results, "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert planted.intact() and not out.is_symlink() and out.stat().st_nlink == 1
    assert out.read_text().startswith("# Leaderboard")
    assert not tmp_files(tmp_path)
    OUTCOMES[f"leaderboard --out {kind}: ok"] += 1


@pytest.mark.parametrize("kind", ["symlink", pytest.param("hardlink", marks=pytest.mark.slow)])
def test_play_saves_over_a_link_not_through_it(tmp_path, kind):
    save = tmp_path / "game.json"
    first = command("play", "--seed", "3", "--save", str(save), stdin="quit\n")
    assert first.returncode == 0, first.stderr
    planted = plant(save, kind, tmp_path / "outside")
    done = command("play", "--load", str(save), stdin="3\nsave\nquit\n")  # bid 3, save
    assert done.returncode == 0, done.stderr
    assert planted.intact()
    assert not save.is_symlink() and save.stat().st_nlink == 1
    assert (
        json.loads(save.read_text())["actions"]
        != json.loads(planted.outside.read_text())["actions"]
    )
    assert not tmp_files(tmp_path)
    OUTCOMES[f"play --load {kind}: ok"] += 1
