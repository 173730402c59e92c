"""`spades bench --only agents`: whole agents' decision latency and self-play throughput."""

from __future__ import annotations

import pytest

from experiments.bench import agents as bench_agents
from spades_env.state import BID, PLAY


def test_the_decisions_are_the_heuristics_hands_bids_and_cards_with_a_choice():
    items = bench_agents.decisions(hands=2, seed=3)
    assert len(items["bids"]) == 8  # four bids a hand
    for kind, phase in (("bids", BID), ("cards", PLAY)):
        for view, obs, mask in items[kind]:
            assert view.batch_size == 1 and int(view.phase[0]) == phase
            assert obs.shape[0] == 1 and (kind == "bids" or mask.sum() > 1)


@pytest.mark.torch
def test_every_agent_gets_a_bid_card_and_self_play_row_against_the_reference(monkeypatch):
    monkeypatch.setattr(bench_agents, "HANDS", 1)
    monkeypatch.setattr(bench_agents, "SELF_PLAY", 2)
    rows = bench_agents.agents_section(0.01, specs=("pimc:worlds=64", "learned:endgame=0"))
    names = [r["name"] for r in rows]
    assert names == [
        f"{s}, {k}" for s in ("pimc:worlds=64", "learned:endgame=0")
        for k in ("bid", "card", "self-play")
    ]  # fmt: skip
    for r in rows:
        assert r["rate"] > 0
        reference = r["name"].startswith("pimc:worlds=64")
        assert (r["ratio"] is None) == reference
        if not r["name"].endswith("self-play"):
            assert 0 < r["median_ms"] <= r["p95_ms"]
