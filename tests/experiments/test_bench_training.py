"""`spades bench --only training`: the default PPO configuration against the engine alone."""

from __future__ import annotations

import pytest

from experiments.bench.runner import SECTIONS, format_rows
from experiments.bench.training import training_section

pytestmark = pytest.mark.torch


def test_training_rows_put_ppo_next_to_the_engine():
    assert SECTIONS["training"] is training_section
    rows = training_section(0.1, games=8)  # one warm-up update, then one measured update
    assert [r["name"] for r in rows] == [
        "train ppo: learner decisions (default config)",
        "train ppo: all decisions (default config)",
        "train ppo: learner decisions per CPU-s (default config)",
        "tournament: learned vs heuristic (hand records included)",
    ]
    learner, played, cpu, tournament = rows
    assert tournament["batch"] == 8 and tournament["rate"] > 0
    assert cpu["unit"] == "decisions/CPU-s" and "per CPU-second" in cpu["reference"]
    rows = rows[:3]
    assert 0 < learner["rate"] < played["rate"]  # opponents decide too
    for r in rows:
        assert r["reference_rate"] > 0 and r["batch"] == 512
        assert r["ratio"] == pytest.approx(r["rate"] / r["reference_rate"])
    assert "engine alone" in format_rows(rows)


def test_decision_latency_times_every_decision_of_the_agent_at_batch_one():
    from experiments.bench.training import decision_latency, latency_table

    times = decision_latency("learned:endgame=0", hands=1)
    tricks = sorted(t for t, _ in times)
    assert tricks == [0, 0, *sorted(list(range(1, 14)) * 2)]  # North and South: bids, cards
    assert all(s > 0 for _, s in times)
    table = latency_table(times)
    assert "| all | 28 |" in table and "| 13 | 2 |" in table
