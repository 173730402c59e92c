"""Agents compared from a tournament log: ratings with uncertainty and the duplicate
margin of every pair, as tables and figures (the `agent_comparison` notebook's numbers).

Ratings are OpenSkill's (`experiments.tournament.ratings`) over one match per duplicate deal, shown
as mu with the interval mu ± 1.96 sigma of the rating's belief. Margins are the paired
duplicate margins of `experiments.tournament.summary.pair_results` (points per deal in hand mode,
per hand in game mode) with their 95% t-intervals; the matrix holds row minus column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from experiments.tournament.ratings import rate
from experiments.tournament.summary import duplicate_matches, pair_of, pair_results

Z975 = 1.959963984540054


def agents_of(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The agents of a log, in the order their pairs first appear (A before B)."""
    return list(dict.fromkeys(a for r in rows for a in pair_of(r)))


def ratings_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Per agent, best first: mu, sigma, the interval mu ± 1.96 sigma and mu - 3 sigma."""
    table = pd.DataFrame(rate(duplicate_matches(rows), agents_of(rows)))
    table["lo"] = table["mu"] - Z975 * table["sigma"]
    table["hi"] = table["mu"] + Z975 * table["sigma"]
    return table[["agent", "mu", "sigma", "lo", "hi", "ordinal"]]


def margin_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Every ordered pair (a, b): deals, mean margin of a over b and its 95% interval."""
    mode = rows[0]["mode"] if rows and "mode" in rows[0] else "hand"
    out = []
    for p in pair_results(rows, mode):
        m = p["margin"]
        lo, hi = m["ci"] if m["ci"] is not None else (None, None)
        for a, b, sign in ((p["a"], p["b"], 1), (p["b"], p["a"], -1)):
            row = {"a": a, "b": b, "deals": p["deals"], "metric": p["metric"]}
            if m["mean"] is None:
                row.update(mean=None, lo=None, hi=None)
            elif sign > 0:
                row.update(mean=m["mean"], lo=lo, hi=hi)
            else:
                row.update(mean=-m["mean"], lo=None if hi is None else -hi)
                row["hi"] = None if lo is None else -lo
            out.append(row)
    return pd.DataFrame(out, columns=["a", "b", "deals", "metric", "mean", "lo", "hi"])


def margin_matrix(margins: pd.DataFrame, agents: Sequence[str]) -> pd.DataFrame:
    """Agents x agents: mean margin of the row agent over the column agent (NaN: no
    games, or the diagonal)."""
    m = pd.DataFrame(np.nan, index=list(agents), columns=list(agents))
    for r in margins.itertuples():
        m.loc[r.a, r.b] = r.mean
    return m


def margin_text(margins: pd.DataFrame, agents: Sequence[str]) -> pd.DataFrame:
    """The matrix as text: `+12.3 [+8.1, +16.5]` per cell, `-` where there is none."""
    m = pd.DataFrame("-", index=list(agents), columns=list(agents))
    for r in margins.itertuples():
        if r.mean is None or pd.isna(r.mean):
            continue
        ci = "" if r.lo is None or pd.isna(r.lo) else f" [{r.lo:+.1f}, {r.hi:+.1f}]"
        m.loc[r.a, r.b] = f"{r.mean:+.1f}{ci}"
    return m


def ratings_plot(ratings: pd.DataFrame) -> Figure:
    """Each agent's rating mu with the interval mu ± 1.96 sigma."""
    fig = Figure(figsize=(6, 0.6 * len(ratings) + 1.6), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(len(ratings))[::-1]
    err = np.stack([ratings["mu"] - ratings["lo"], ratings["hi"] - ratings["mu"]])
    ax.errorbar(ratings["mu"], y, xerr=err, fmt="o", capsize=4)
    ax.set_yticks(y, ratings["agent"])
    ax.set(xlabel="OpenSkill mu (± 1.96 sigma)", title="Ratings")
    return fig


def margin_heatmap(margins: pd.DataFrame, agents: Sequence[str]) -> Figure:
    """The margin matrix as a heatmap, each cell labelled with its mean and interval."""
    m = margin_matrix(margins, agents)
    text = margin_text(margins, agents)
    k = len(agents)
    fig = Figure(figsize=(2.2 * k + 2, 1.6 * k + 1.4), layout="constrained")
    ax = fig.add_subplot()
    top = float(np.nanmax(np.abs(m.to_numpy()))) if m.notna().any().any() else 1.0
    image = ax.imshow(m.to_numpy(dtype=float), cmap="RdBu", vmin=-top, vmax=top)
    for i in range(k):
        for j in range(k):
            if i != j:
                dark = abs(m.iloc[i, j]) > 0.6 * top  # white text on the deep colours
                label = text.iloc[i, j].replace(" [", "\n[")
                color = "white" if dark else "black"
                ax.text(j, i, label, ha="center", va="center", color=color)
    ax.set_xticks(range(k), list(agents), rotation=20)
    ax.set_yticks(range(k), list(agents))
    metric = margins["metric"].iloc[0] if len(margins) else "points per deal"
    ax.set(title=f"Row minus column, {metric} (95% CI)")
    fig.colorbar(image, ax=ax, shrink=0.8)
    return fig
