"""The tournament summary: pair margins with paired 95% CIs, win rates, ratings, bids.

Everything is computed from the log rows alone (`experiments.results_log`).

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

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from experiments.bid_stats import bid_lines
from experiments.ratings import rate

_Z975 = 1.959963984540054
_T975_SMALL = {
    1: 12.706204736,
    2: 4.302652730,
    3: 3.182446305,
    4: 2.776445105,
    5: 2.570581836,
    6: 2.446911851,
    7: 2.364624252,
    8: 2.306004135,
    9: 2.262157163,
}


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom.

    Tabulated for df < 10; above, the Cornish-Fisher expansion in 1/df (error < 1e-5).
    """
    if df < 1:
        raise ValueError("t975 needs df >= 1")
    if df in _T975_SMALL:
        return _T975_SMALL[df]
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def mean_ci(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample sd and the 95% t-interval of the mean (None where undefined)."""
    n = len(values)
    if n == 0:
        return {"n": 0, "mean": None, "sd": None, "ci": None}
    mean = sum(values) / n
    if n == 1:
        return {"n": 1, "mean": mean, "sd": None, "ci": None}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "sd": sd, "ci": [mean - half, mean + half]}


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
                margin.append((s0["diff"] + s1["diff"]) / 2)
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
