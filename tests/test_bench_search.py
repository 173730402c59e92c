"""The `search` section of `spades bench` is registered and reports its rows (no timing
thresholds; the full section, with fresh deals, is slow and runs with `spades bench`)."""

from __future__ import annotations

from agents.dd import DDSolver
from experiments.bench import SECTIONS, format_rows
from experiments.bench_search import dd_row, dds_solver, midhand_positions, search_section


def test_search_section_is_registered_in_spades_bench() -> None:
    assert SECTIONS["search"] is search_section


def test_dd_row_reports_rate_median_and_p95() -> None:
    positions = midhand_positions(6, tricks_left=4)
    row = dd_row("dd solve, 4 tricks left", DDSolver(tt_bits=14), positions, 0.0, dds_solver())
    assert row["unit"] == "solves/s" and row["rate"] > 0 and row["solves"] == 5
    assert 0 < row["median_ms"] <= row["p95_ms"]
    assert (row["reference_rate"] is None) == (row["ratio"] is None)
    assert "dd solve" in format_rows([row])
