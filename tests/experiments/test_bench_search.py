"""The `search` section of `spades bench` is registered and reports its rows (no timing
thresholds; the full section, with fresh deals, is slow and runs with `spades bench`)."""

from __future__ import annotations

from agents.dd import DDSolver
from experiments.bench.runner import SECTIONS, format_rows
from experiments.bench.search import dd_row, dds_solver, midhand_positions, search_section


def test_search_section_is_registered_in_spades_bench() -> None:
    assert SECTIONS["search"] is search_section


def test_dd_row_reports_rate_median_and_p95() -> None:
    positions = midhand_positions(6, tricks_left=4)
    row = dd_row("dd solve, 4 tricks left", DDSolver(tt_bits=14), positions, 0.0, dds_solver())
    assert row["unit"] == "solves/s" and row["rate"] > 0 and row["solves"] == 5
    assert 0 < row["median_ms"] <= row["p95_ms"]
    assert (row["reference_rate"] is None) == (row["ratio"] is None)
    assert "dd solve" in format_rows([row])


def test_mc_rows_report_pimc_latency_and_ismcts_rate() -> None:
    from experiments.bench.mc import ismcts_bid_rows, ismcts_rows, pimc_rows

    rows = pimc_rows(0.0, policies=("greedy",)) + ismcts_rows(0.0, iterations=50)
    rows += ismcts_bid_rows(0.0, iterations=50)
    assert {r["unit"] for r in rows} == {"decisions/s", "iterations/s"}
    assert all(r["rate"] > 0 and 0 < r["median_ms"] <= r["p95_ms"] for r in rows)
    assert "pimc 64 worlds, opening lead, greedy rollouts" in format_rows(rows)
    assert rows[-1]["name"] == "ismcts bid, 50 iterations, random rollouts"
    assert rows[-1]["ratio"] > 0


def test_dd_section_reports_latency_worst_seed_and_the_hard_class() -> None:
    from experiments.bench.dd import dd_deals_row, detail, hard_class, seeded_positions

    row = dd_deals_row(deals=2, seed=35, solver=DDSolver(tt_bits=16))
    assert SECTIONS["dd"] and row["solves"] == 2 and row["unit"] == "solves/s"
    assert 0 < row["median_ms"] <= row["p99_ms"] <= row["max_ms"]
    assert row["worst_seed"] in (35, 36)
    positions, _ = seeded_positions(200, 0)
    hard = sum(hard_class(p) for p in positions)
    assert 0 < hard < 40  # a seat void in spades: about 5% of deals
    assert f"{row['solves']} deals: median" in detail(row)
    assert "hard class" in format_rows([row])
