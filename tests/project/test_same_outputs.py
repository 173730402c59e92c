"""Same outputs: the files that the main paths write stay what they were before a refactor.

Each path (`spades tournament` twice, `spades evaluate`, `spades play --save` scripted, a
web table played in this process, `spades train dmc` and `ppo`, `spades train bc`) runs on
a tiny budget into a temporary folder; every file it wrote is normalized (paths, times,
durations and random tokens masked; checkpoints, dataset shards and TensorBoard files
read into their deterministic content: tests/project/make_same_outputs.py says exactly
what and why) and compared with the fingerprint stored in tests/data/same_outputs/, made
by that script from the code before the refactor. A failure names the first file, and the
first field in it, that differs.

To make the fingerprints again (only when a change of output is intended), from a
worktree of the commit whose outputs are the reference:

    git -C /work/main worktree add /tmp/same-outputs-base HEAD
    PYTHONPATH=/tmp/same-outputs-base .venv/bin/python tests/project/make_same_outputs.py \\
        --out tests/data/same_outputs
    git -C /work/main worktree remove --force /tmp/same-outputs-base

Float results of training depend on the torch version and the CPU: the fingerprints
record the environment they were made in, and a failure says when it differs.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[0] / "data" / "same_outputs"


def _load_generator():
    name = "make_same_outputs"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


gen = _load_generator()

#: the paths of the default run (about 60 s together on two cores) and the slow ones
DEFAULT = ("tournament", "tournament_named", "evaluate", "play", "web", "train_dmc", "train_bc")
SLOW = ("train_ppo",)
MARKS = {
    "tournament": [pytest.mark.cli],
    "tournament_named": [pytest.mark.cli],
    "evaluate": [pytest.mark.cli, pytest.mark.torch],
    "play": [pytest.mark.cli],
    "web": [],
    "train_dmc": [pytest.mark.cli, pytest.mark.torch],
    "train_ppo": [pytest.mark.cli, pytest.mark.torch],
    "train_bc": [pytest.mark.cli, pytest.mark.torch],
}
assert set(DEFAULT + SLOW) == set(gen.PATHS) == set(MARKS)


def _short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def first_difference(expected: Any, actual: Any, where: str = "") -> str | None:
    """Where two normalized values first differ (a path like `[3].record.bids[1]`) and
    how, or None when they are equal."""
    if type(expected) is not type(actual) and not (
        isinstance(expected, (int, float))
        and isinstance(actual, (int, float))
        and not isinstance(expected, bool)
        and not isinstance(actual, bool)
    ):
        return f"{where or '.'}: expected {_short(expected)}, got {_short(actual)}"
    if isinstance(expected, dict):
        missing = [k for k in expected if k not in actual]
        extra = [k for k in actual if k not in expected]
        if missing or extra:
            return f"{where or '.'}: fields missing {missing[:10]}, fields added {extra[:10]}"
        if list(expected) != list(actual):
            return f"{where or '.'}: field order {list(expected)} became {list(actual)}"
        for k in expected:
            found = first_difference(expected[k], actual[k], f"{where}.{k}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        for i, (a, b) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        if len(expected) != len(actual):
            return f"{where or '.'}: {len(expected)} items expected, got {len(actual)}"
        return None
    if expected != actual:
        return f"{where or '.'}: expected {_short(expected)}, got {_short(actual)}"
    return None


def compare(stored: dict[str, Any], now: dict[str, Any]) -> str | None:
    """The first differing file and field of two fingerprints, in words; None if equal."""
    want, got = stored["files"], now["files"]
    missing = sorted(set(want) - set(got))
    added = sorted(set(got) - set(want))
    if missing or added:
        return f"files missing: {missing}; files added: {added}"
    for name in want:  # in the stored (sorted) order
        found = first_difference(want[name], got[name])
        if found:
            return f"file {name!r} differs at {found}"
    return None


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=MARKS[n], id=n) for n in DEFAULT]
    + [pytest.param(n, marks=[pytest.mark.slow, *MARKS[n]], id=n) for n in SLOW],
)
def test_the_files_written_are_the_same_as_before(name):
    for module in gen.PATHS[name].needs:
        pytest.importorskip(module)
    stored_file = DATA / f"{name}.json"
    stored = json.loads(stored_file.read_text(encoding="utf-8"))
    now = gen.fingerprint(name)
    assert now["command"] == stored["command"], "the path's command changed: regenerate"
    difference = compare(stored, now)
    if difference is not None:
        note = ""
        if now["environment"] != stored["environment"]:
            note = (
                f"\n(the fingerprint was made with {stored['environment']}, this run has "
                f"{now['environment']}: float results may differ for that reason alone)"
            )
        pytest.fail(f"{name}: {difference}{note}", pytrace=False)


def test_the_comparison_names_the_first_differing_file_and_field():
    stored = {"files": {"a.json": {"x": [1, {"y": 2}]}, "b.json": 3}}
    assert compare(stored, stored) is None
    changed = {"files": {"a.json": {"x": [1, {"y": 5}]}, "b.json": 4}}
    assert compare(stored, changed) == "file 'a.json' differs at .x[1].y: expected 2, got 5"
    assert "files missing: ['b.json']" in compare(stored, {"files": {"a.json": {"x": []}}})


def test_the_normalization_masks_times_and_paths_and_keeps_the_rest(tmp_path):
    masks = gen.Masks.of(tmp_path / "out", Path("/repo/x"))
    row = {
        "logged_at": "2026-01-02T03:04:05.678+00:00",
        "run": f"{tmp_path}/out/1-random",
        "code": "/repo/x/agents/a.py:Bot",
        "folder": "ppo__1__20260102-030405",
        "wall_seconds": 3.1,
        "seconds_this_run": 40.2,
        "margin": 12.5,
        "seats": ["heuristic", "random"],
    }
    assert gen.tree(row, masks) == {
        "logged_at": "<masked>",
        "run": "<OUT>/1-random",
        "code": "<REPO>/agents/a.py:Bot",
        "folder": "ppo__1__<stamp>",
        "wall_seconds": "<masked>",
        "seconds_this_run": "<masked>",
        "margin": 12.5,
        "seats": ["heuristic", "random"],
    }
