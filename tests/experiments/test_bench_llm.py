"""`spades bench --only llm` (experiments/bench/llm.py): the prompt's tokens per decision
and the reader's time, on the decisions of hands played by the heuristic."""

from __future__ import annotations

from agents.llm import prompt as prompts
from experiments.bench import llm as bench_llm
from experiments.bench.runner import SECTIONS, format_rows
from spades_env.state import PLAY


def test_prompt_stats_count_every_decision_of_the_hands():
    items = bench_llm._decisions(hands=1)
    bids = sum(1 for v, r, _, _ in items if v.phase[r] != PLAY)
    stats = bench_llm.prompt_stats(hands=1)
    assert stats["tokens"]["bid"][2] == bids == 4 and stats["tokens"]["play"][2] == 52
    for mean, top, _ in stats["tokens"].values():
        assert 0 < mean <= top
    seen = items[0][2]
    first = sum(len(m["content"]) for m in prompts.messages(seen, True, None)) / 4
    assert stats["tokens"]["bid"][1] >= first  # characters / 4 of the messages sent
    assert stats["answers"] == 4 * len(items) and stats["reader_s"] > 0
    assert set(stats["hostile_s"]) == {"digits", "tags"}


def test_the_llm_section_is_a_bench_section_with_its_details():
    assert SECTIONS["llm"] is bench_llm.llm_section
    rows = [
        {"name": "llm: prompt tokens per bid", "batch": 1, "rate": 330.0, "unit": "tokens",
         "reference": None, "reference_rate": None, "ratio": None, "mean_tokens": 330.0,
         "max_tokens": 331.0, "decisions": 32},
    ]  # fmt: skip
    text = format_rows(rows)
    assert "mean_tokens=330.0, max_tokens=331.0, decisions=32" in text
