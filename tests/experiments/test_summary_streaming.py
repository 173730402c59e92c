"""Tournament summaries stream: rows are aggregated one at a time, so what a summary
holds does not grow with the log, and reading a log (`iter_rows`) yields rows as it goes.
The streamed figures are those of the per-deal values (mean, sd, CI of `mean_ci`), and
the ratings see the matches in deal order."""

from __future__ import annotations

import itertools
import json

import pytest

from experiments.tournament.ratings import rate
from experiments.tournament.results_log import LogError, iter_rows
from experiments.tournament.summary import Summary, duplicate_matches, mean_ci, summarize

AGENTS = ["A", "B", "C"]
PAIRS = list(itertools.combinations(AGENTS, 2))


def row(unit: int, pair: tuple[str, str], deal: int, side: int) -> dict:
    """A minimal hand-mode row: the scores a function of (pair, deal, side)."""
    a, b = pair
    teams = [a, b] if side == 0 else [b, a]
    x = (deal * 37 + side * 11 + len(a + b) * 5 + PAIRS.index(pair) * 13) % 97 - 40
    score = [x, -x // 2]
    return {
        "unit": unit, "mode": "hand", "deal": deal, "side": side, "hand": 0, "teams": teams,
        "seats": teams * 2, "hand_score": score, "scores": score, "game_over": True,
        "winner_agent": teams[int(score[1] > score[0])], "bids": [3, 4, 3, 4],
        "blind": [False] * 4, "tricks": [3, 4, 3, 3], "contract": [6, 8], "made": [True, False],
        "bags_gained": [0, 0], "dealer": 0,
    }  # fmt: skip


def log_rows(deals: int, chunk: int):
    """Rows in the order a tournament logs them: unit u = chunk u // P of pair u % P."""
    units = -(-deals // chunk) * len(PAIRS)
    for unit in range(units):
        pair, start = PAIRS[unit % len(PAIRS)], unit // len(PAIRS) * chunk
        for deal in range(start, min(start + chunk, deals)):
            for side in (0, 1):
                yield row(unit, pair, deal, side)


def test_a_summary_holds_one_chunk_of_every_pair_whatever_the_log_length():
    chunk, most = 5, 0
    summary = Summary(AGENTS)
    for r in log_rows(3000, chunk):
        summary.add(r)
        most = max(most, summary.held())
    assert most <= chunk * len(PAIRS)
    assert summary.result()["pairs"][0]["deals"] == 3000


def test_the_streamed_summary_is_the_per_deal_figures():
    rows = list(log_rows(40, 7))
    got = summarize(iter(rows), AGENTS)
    for entry in got["pairs"]:
        values = []
        for deal in range(40):
            sides = [r for r in rows if (r["deal"], *sorted(r["teams"])) == (deal, *sorted(
                [entry["a"], entry["b"]]))]  # fmt: skip
            values.append(
                sum(r["hand_score"][r["side"]] - r["hand_score"][1 - r["side"]] for r in sides) / 2
            )
        want = mean_ci(values)
        assert entry["margin"]["n"] == want["n"] and entry["margin"]["mean"] == want["mean"]
        assert entry["margin"]["sd"] == pytest.approx(want["sd"], rel=1e-12)
    assert got["ratings"] == rate(duplicate_matches(rows), AGENTS)  # deal order kept


def test_iter_rows_yields_rows_before_it_reads_the_rest(tmp_path):
    log = tmp_path / "log.jsonl"
    rows = list(log_rows(4, 2))
    lines = [json.dumps(r) for r in rows]
    lines.insert(5, "not json")  # damage in the middle, found only when reached
    log.write_text("\n".join(lines) + "\n")
    got = iter_rows(log)
    assert [next(got) for _ in range(5)] == rows[:5]
    with pytest.raises(LogError, match="line 6 is not valid JSON"):
        next(got)
