"""`spades bench --only dd`: the double-dummy solver on fresh seeded deals, worst case included.

Deal `i` of a run is the first hand of the game with seed `seed + i` (RULES.md §1: the
deal and the first dealer are drawn from the seed); the player left of the dealer leads
(RULES.md §3) and the solver answers the tricks that player's team takes, one solve a
deal with a fresh table, on one core. The row reports the median, p99 and max solve
times and the seed of the slowest deal, and how many deals are of the hard class: spades
unbroken (every fresh deal) and a seat void in spades, so the side without that void
cannot lead spades and the void seat can ruff.

Reference (the `dev` extra's `endplay`): Bo Haglund's DDS on the same cards with
spades trump and broken (bridge has no rule against leading trumps), timed in the same
run, so the ratio compares the same kind of search on the same cards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.dd import DDSolver, Position
from spades_env.rules import Rules
from spades_env.state import deal_hands, first_dealer

Row = dict[str, Any]
DEFAULT_DEALS = 1000


def seeded_positions(n: int, seed: int = 0) -> tuple[list[Position], np.ndarray]:
    """The first hands of the games with seeds `seed .. seed + n - 1`, left of the dealer
    on lead, and their seeds."""
    rules = Rules()
    seeds = np.arange(seed, seed + n, dtype=np.uint64)
    deals = deal_hands(rules, seeds, np.zeros(n, dtype=np.int64))
    dealers = first_dealer(rules, seeds)
    return [
        Position.from_deal(d, (int(dl) + 1) % 4) for d, dl in zip(deals, dealers, strict=True)
    ], seeds


def hard_class(pos: Position) -> bool:
    """Spades unbroken and a seat void in spades."""
    spades = 0x1FFF  # RULES.md §1: spades are cards 0..12
    return not pos.broken and any(h & spades == 0 for h in pos.hands)


def _solve_times(solve: Callable[[Position], object], positions: list[Position]) -> np.ndarray:
    out = np.empty(len(positions))
    for i, pos in enumerate(positions):
        t = time.perf_counter()
        solve(pos)
        out[i] = time.perf_counter() - t
    return out


def dd_deals_row(
    deals: int = DEFAULT_DEALS,
    seed: int = 0,
    solver: DDSolver | None = None,
    reference: Callable[[Position], object] | None = None,
    on_deal: Callable[[int], None] | None = None,
) -> Row:
    """One row over `deals` fresh seeded deals (see the module docstring)."""
    from experiments.bench.search import dds_solver

    solver = solver or DDSolver()
    positions, seeds = seeded_positions(deals, seed)
    solver.tricks(Position.from_deal(deal_hands(Rules(), [seed + deals], [0])[0], 0))  # compile
    times = np.empty(deals)
    nodes = np.empty(deals, dtype=np.int64)
    for i, pos in enumerate(positions):
        t = time.perf_counter()
        solver.tricks(pos)
        times[i] = time.perf_counter() - t
        nodes[i] = solver.nodes
        if on_deal is not None:
            on_deal(i + 1)
    hard = np.array([hard_class(p) for p in positions])
    worst = int(np.argmax(times))
    ref = reference if reference is not None else dds_solver()
    ref_times = _solve_times(ref, positions) if ref is not None else None
    rate = deals / times.sum()
    ref_rate = deals / ref_times.sum() if ref_times is not None else None
    row: Row = {
        "name": f"dd solve, {deals} seeded deals",
        "batch": 1,
        "rate": rate,
        "unit": "solves/s",
        "reference": "DDS via endplay, spades trump and broken" if ref_rate else None,
        "reference_rate": ref_rate,
        "ratio": rate / ref_rate if ref_rate else None,
        "solves": deals,
        "median_ms": float(np.median(times) * 1e3),
        "p99_ms": float(np.percentile(times, 99) * 1e3),
        "max_ms": float(times.max() * 1e3),
        "worst_seed": int(seeds[worst]),
        "worst_nodes": int(nodes[worst]),
        "median_nodes": float(np.median(nodes)),
        "hard_deals": int(hard.sum()),
        "hard_median_ms": float(np.median(times[hard]) * 1e3) if hard.any() else None,
        "hard_max_ms": float(times[hard].max() * 1e3) if hard.any() else None,
    }
    if ref_times is not None:
        row["reference_median_ms"] = float(np.median(ref_times) * 1e3)
        row["reference_p99_ms"] = float(np.percentile(ref_times, 99) * 1e3)
        row["reference_max_ms"] = float(ref_times.max() * 1e3)
    return row


def detail(row: Row) -> str:
    """The latency line printed under the row."""
    text = (
        f"  {row['solves']} deals: median {row['median_ms']:.1f} ms, p99 {row['p99_ms']:.0f} ms, "
        f"max {row['max_ms']:.0f} ms (seed {row['worst_seed']}, {row['worst_nodes']:,} nodes; "
        f"median {row['median_nodes']:,.0f} nodes); "
        f"hard class (spades unbroken, a seat void in spades): {row['hard_deals']} deals"
    )
    if row["hard_deals"]:
        text += f", median {row['hard_median_ms']:.1f} ms, max {row['hard_max_ms']:.0f} ms"
    if row.get("reference_median_ms") is not None:
        text += (
            f"\n  DDS: median {row['reference_median_ms']:.1f} ms, "
            f"p99 {row['reference_p99_ms']:.0f} ms, max {row['reference_max_ms']:.0f} ms"
        )
    return text


def dd_section(seconds: float, deals: int = DEFAULT_DEALS, seed: int = 0) -> list[Row]:
    """The `dd` section: `seconds` is not used, the number of deals sets the work."""
    return [dd_deals_row(deals, seed)]


SECTIONS: dict[str, Callable[..., list[Row]]] = {"dd": dd_section}
