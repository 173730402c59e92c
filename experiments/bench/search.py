"""`spades bench` section `search`: the double-dummy solver.

Rows, in the format of `experiments.bench.runner`, plus `median_ms`, `p95_ms` and `solves`:

- `dd solve, fresh deal`: the tricks the side on lead takes, from a fresh 52-card deal,
  spades unbroken (RULES.md §3). Target of the issue: median <= 50 ms.
- `dd solve, 8 tricks left`: positions of random play after 5 tricks.

rate = solves per second. Reference (with the `dev` extra's `endplay`): Bo Haglund's DDS,
which solves bridge, on the same positions with spades trump and spades taken as broken
(bridge has no rule against leading trumps), so it is the same kind of search on the same
cards, not the very same game. The ratio is ours over DDS's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.dd import DDSolver, Position
from spades_env.engine import random_legal_actions, step
from spades_env.rules import Rules
from spades_env.state import PLAY, deal_hands, init

Row = dict[str, Any]
MIN_SOLVES = 5


def fresh_positions(n: int, seed: int = 0) -> list[Position]:
    rng = np.random.default_rng(seed)
    seeds = rng.integers(0, 2**63, size=n, dtype=np.uint64)
    deals = deal_hands(Rules(), seeds, np.zeros(n, dtype=np.int64))
    return [Position.from_deal(d, int(rng.integers(4))) for d in deals]


def midhand_positions(n: int, tricks_left: int = 8, seed: int = 0) -> list[Position]:
    """Positions of random legal play with `tricks_left` tricks to go, at a trick start."""
    rng = np.random.default_rng(seed)
    state = init(Rules(blind_nil="never"), n, rng)
    while not ((state.phase == PLAY) & (state.tricks_played == 13 - tricks_left)).all():
        step(state, random_legal_actions(state.legal, state.phase, rng))
    return [Position.from_state(state, g) for g in range(n)]


def _times(solve: Callable[[Position], object], positions: list[Position], seconds: float):
    """Solve times (s) of the positions in order, until `seconds` pass (>= MIN_SOLVES)."""
    out: list[float] = []
    start = time.perf_counter()
    for pos in positions:
        t = time.perf_counter()
        solve(pos)
        out.append(time.perf_counter() - t)
        if len(out) >= MIN_SOLVES and time.perf_counter() - start >= seconds:
            break
    return np.array(out)


def dds_solver() -> Callable[[Position], object] | None:
    """DDS (through `endplay`) on the same cards, spades trump and broken; or None."""
    try:
        from endplay.dds import solve_board
        from endplay.types import Deal, Denom, Player
    except ImportError:
        return None

    def solve(pos: Position) -> int:
        hands = []
        for h in pos.hands:
            suits = [
                "".join("23456789TJQKA"[r] for r in range(12, -1, -1) if h >> (13 * s + r) & 1)
                for s in range(4)
            ]
            hands.append(".".join(suits))
        deal = Deal("N:" + " ".join(hands), first=Player(pos.leader), trump=Denom.spades)
        return max(t for _, t in solve_board(deal))

    return solve


def dd_row(name: str, solver: DDSolver, positions: list[Position], seconds: float, reference):
    """One row: our solve rate, median and p95 times, and DDS's rate on the same positions."""
    times = _times(solver.tricks, positions, seconds)
    rate = len(times) / times.sum()
    ref_rate = None
    if reference is not None:
        ref_times = _times(reference, positions[: len(times)], 0.0)
        ref_rate = len(ref_times) / ref_times.sum()
    return {
        "name": name,
        "batch": 1,
        "rate": rate,
        "unit": "solves/s",
        "reference": "DDS via endplay, spades trump and broken" if ref_rate else None,
        "reference_rate": ref_rate,
        "ratio": rate / ref_rate if ref_rate else None,
        "median_ms": float(np.median(times) * 1e3),
        "p95_ms": float(np.percentile(times, 95) * 1e3),
        "solves": len(times),
    }


def dd_rows(seconds: float) -> list[Row]:
    solver = DDSolver()
    reference = dds_solver()
    midhand = midhand_positions(200)
    solver.tricks(midhand[0])  # compile / load the kernel before timing
    return [
        dd_row("dd solve, fresh deal", solver, fresh_positions(200), seconds, reference),
        dd_row("dd solve, 8 tricks left", solver, midhand, seconds, reference),
    ]


def search_section(seconds: float) -> list[Row]:
    from experiments.bench.mc import mc_rows  # PIMC and ISMCTS (experiments/bench/mc.py)

    return dd_rows(seconds) + mc_rows(seconds)


SECTIONS: dict[str, Callable[[float], list[Row]]] = {"search": search_section}
