"""The environment sections of `spades bench` run and report ratios (no timing thresholds)."""

from __future__ import annotations

import pytest

from experiments.bench.envs import VECTOR_ROWS, aec_section, vector_section
from experiments.bench.runner import SECTIONS, format_rows

KEYS = {"name", "batch", "rate", "unit", "reference", "reference_rate", "ratio"}


def test_sections_are_registered_in_spades_bench():
    assert SECTIONS["aec"] is aec_section and SECTIONS["vector"] is vector_section


def test_aec_section_measures_the_env_against_the_classic_card_games():
    pytest.importorskip("rlcard")  # the classic extra
    rows = aec_section(0.05)
    assert all(set(r) == KEYS and r["rate"] > 0 for r in rows)
    names = [r["name"] for r in rows]
    assert any("leduc_holdem_v4" in n for n in names) and any("texas" in n for n in names)
    assert all(r["ratio"] is not None for r in rows)
    assert max(r["ratio"] for r in rows if r["name"].startswith("  PettingZoo")) == 1.0
    assert "x" in format_rows(rows)


def test_vector_section_measures_4096_envs_against_openspiel():
    pytest.importorskip("pyspiel")  # the bench extra
    rows = vector_section(0.05)
    assert [r["name"] for r in rows] == list(VECTOR_ROWS)  # int16, packed; 1 and 2 threads
    for row in rows:
        assert set(row) == KEYS and row["batch"] == 4096 and row["rate"] > 0
        assert row["ratio"] == row["rate"] / row["reference_rate"]
