"""The tournament summary: pair margins with paired 95% CIs, win rates, ratings, bids.

Everything is computed from the log rows alone (`experiments.tournament.results_log`).

**Pair margin.** For a pair (A, B) the unit of pairing is the duplicate deal: both sides
of one deal give one value, so the luck of the cards cancels before the variance is
taken. In hand mode the value is A's partnership's hand score minus B's (bag penalty
included), averaged over the two sides: *points per deal*. In game mode it is the
points-per-hand difference over both games of the deal (sum of hand-score differences
over the hands of both games, divided by their number); the final-score margin and the
game win rate (a win counts 1, averaged over the two games) are paired the same way.
The 95% CI is mean ± t(0.975, n-1) · sd / sqrt(n) over the n per-deal values.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from experiments.tournament.bid_stats import bid_lines
from experiments.tournament.ratings import rate
from spades_env.duplicate import deal_margin
from spades_env.stats import mean_ci, t975

__all__ = ["duplicate_matches", "mean_ci", "pair_of", "pair_results", "summarize", "t975"]


def pair_of(row: dict[str, Any]) -> tuple[str, str]:
    """(A, B): A holds team 0 on side 0 (and team 1 on side 1)."""
    t0, t1 = row["teams"][0], row["teams"][1]
    return (t0, t1) if row["side"] == 0 else (t1, t0)


def _per_deal(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[int, dict]]:
    """{pair: {deal: {side: game totals}}}, game totals from A's point of view."""
    out: dict[tuple[str, str], dict[int, dict]] = defaultdict(lambda: defaultdict(dict))
    for row in rows:
        pair = pair_of(row)
        ta = row["side"]  # A's team: 0 on side 0, 1 on side 1
        g = out[pair][row["deal"]].setdefault(
            row["side"], {"diff": 0, "hands": 0, "final": 0, "win": 0.0, "over": False}
        )
        g["diff"] += row["hand_score"][ta] - row["hand_score"][1 - ta]
        g["hands"] += 1
        g["final"] = row["scores"][ta] - row["scores"][1 - ta]
        g["over"] = row["game_over"]
        g["win"] = 1.0 if row["winner_agent"] == pair[0] else 0.0
    return out


def pair_results(rows: Sequence[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """One entry per pair, with the paired margin (and win rate in game mode)."""
    results = []
    for (a, b), by_deal in _per_deal(rows).items():
        deals = sorted(d for d, sides in by_deal.items() if len(sides) == 2)
        margin, final, wins, hands = [], [], [], []
        for d in deals:
            s0, s1 = by_deal[d][0], by_deal[d][1]
            if mode == "hand":
                margin.append(deal_margin(s0["diff"], s1["diff"]))
            else:
                margin.append((s0["diff"] + s1["diff"]) / (s0["hands"] + s1["hands"]))
                final.append((s0["final"] + s1["final"]) / 2)
                wins.append((s0["win"] + s1["win"]) / 2)
                hands.append((s0["hands"] + s1["hands"]) / 2)
        entry: dict[str, Any] = {"a": a, "b": b, "deals": len(deals), "margin": mean_ci(margin)}
        entry["metric"] = "points per deal" if mode == "hand" else "points per hand"
        if mode == "game":
            entry["final_margin"] = mean_ci(final)
            entry["win_rate"] = mean_ci(wins)
            entry["hands_per_game"] = sum(hands) / len(hands) if hands else None
        results.append(entry)
    return results


def duplicate_matches(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, float]]:
    """(A, B, A's duplicate margin) per complete deal, ordered by deal then pair."""
    out = []
    for pair, by_deal in _per_deal(rows).items():
        for d, sides in by_deal.items():
            if len(sides) == 2:
                out.append((d, pair, sides[0]["diff"] + sides[1]["diff"]))
    out.sort(key=lambda m: (m[0], m[1]))
    return [(a, b, margin) for _, (a, b), margin in out]


def summarize(rows: Sequence[dict[str, Any]], agents: Sequence[str]) -> dict[str, Any]:
    """The whole summary (JSON-ready) of a tournament's rows."""
    mode = rows[0]["mode"] if rows else "hand"
    return {
        "mode": mode,
        "rows": len(rows),
        "pairs": pair_results(rows, mode),
        "ratings": rate(duplicate_matches(rows), agents),
        "bids": bid_lines(rows, agents),
    }
