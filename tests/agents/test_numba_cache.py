"""agents/kernels/compile.py: cached kernels are dropped exactly when a source changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.kernels import compile as numba_cache


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    src = tmp_path / "spades_env"
    cache = tmp_path / "agents" / "__pycache__"
    src.mkdir()
    cache.mkdir(parents=True)
    (src / "cards.py").write_text("STRENGTH = 1\n")
    monkeypatch.setattr(numba_cache, "_SOURCES", (src,))
    monkeypatch.setattr(numba_cache, "_CACHES", (cache,))
    monkeypatch.setattr(numba_cache, "_STAMP", cache / "numba-sources.sha256")
    monkeypatch.setattr(numba_cache, "_checked", numba_cache._checked)  # restored after
    return tmp_path


def _cached(tree: Path) -> list[str]:
    return sorted(p.name for p in (tree / "agents" / "__pycache__").glob("*.nb*"))


def _fresh() -> bool:
    numba_cache._checked = False
    return numba_cache.ensure_fresh()


def test_kernels_are_dropped_only_when_a_source_changes(tree: Path) -> None:
    cache = tree / "agents" / "__pycache__"
    for name in ("kernel.search-1.py311.nbi", "kernel.search-1.py311.1.nbc", "x.cpython-311.pyc"):
        (cache / name).write_bytes(b"old")
    assert _fresh()  # no stamp yet: whatever is cached may be stale
    assert _cached(tree) == []
    assert (cache / "x.cpython-311.pyc").exists()  # Python's own cache is left alone

    (cache / "kernel.search-1.py311.nbi").write_bytes(b"new")
    assert not _fresh()  # same sources: the compiled kernels stay
    assert _cached(tree) == ["kernel.search-1.py311.nbi"]

    (tree / "spades_env" / "cards.py").write_text("STRENGTH = 2\n")  # a captured table changes
    assert _fresh()
    assert _cached(tree) == []


def test_the_check_runs_once_per_process(tree: Path) -> None:
    assert _fresh()
    (tree / "spades_env" / "cards.py").write_text("STRENGTH = 3\n")
    assert not numba_cache.ensure_fresh()  # already checked in this process
