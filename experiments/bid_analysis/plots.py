"""The bid-accuracy plots, as matplotlib figures (no pyplot state, so any backend works:
the CLI saves PNGs headless, a notebook displays the same figures inline).

Each function takes a table of `experiments.bid_analysis.tables` (or `double_dummy`) and
returns a `Figure`; error bars are the tables' 95% intervals.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure


def _interval_err(table: pd.DataFrame, col: str, lo: str, hi: str) -> np.ndarray:
    """(2, n) distances below and above the value, 0 where an interval is missing."""
    v = table[col].astype(float).to_numpy()
    below = (v - table[lo].astype(float).to_numpy()).clip(min=0)
    above = (table[hi].astype(float).to_numpy() - v).clip(min=0)
    return np.nan_to_num(np.stack([below, above]))


def calibration_plot(calibration: pd.DataFrame) -> Figure:
    """Mean tricks taken against the bid, per agent, with the line of perfect bids."""
    fig = Figure(figsize=(6, 5), layout="constrained")
    ax = fig.add_subplot()
    top = int(max(calibration["bid"].max(), calibration["tricks"].max(), 1)) + 1
    ax.plot([0, top], [0, top], color="grey", linestyle="--", linewidth=1, label="tricks = bid")
    for k, (agent, g) in enumerate(calibration.groupby("agent", sort=False)):
        shift = (k - 0.5) * 0.12  # side by side where agents bid the same
        ax.errorbar(
            g["bid"] + shift,
            g["tricks"],
            yerr=_interval_err(g, "tricks", "lo", "hi"),
            marker="o",
            capsize=3,
            label=agent,
        )
    ax.set(xlabel="bid (0 = nil)", ylabel="tricks taken (mean, 95% CI)", title="Calibration")
    ax.set_xlim(-0.5, top)
    ax.set_ylim(-0.5, top)
    ax.legend()
    return fig


def confusion_heatmap(matrices: Mapping[str, pd.DataFrame]) -> Figure:
    """Share of each number of tricks taken for each bid (rows sum to 1), per agent."""
    n = max(len(matrices), 1)
    fig = Figure(figsize=(5.2 * n, 4.6), layout="constrained")
    axes = fig.subplots(1, n, squeeze=False)[0]
    image = None
    for ax, (agent, m) in zip(axes, matrices.items(), strict=False):
        counts = m.to_numpy().astype(float)
        totals = counts.sum(axis=1, keepdims=True)
        share = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        image = ax.imshow(share, origin="lower", cmap="viridis", vmin=0, vmax=1)
        size = counts.shape[0]
        ax.plot([-0.5, size - 0.5], [-0.5, size - 0.5], color="white", linewidth=0.6)
        for bid, total in enumerate(totals[:, 0]):
            if total:
                ax.text(size - 0.4, bid, f"{int(total)}", va="center", fontsize=7)
        ax.set(xlabel="tricks taken", ylabel="bid (0 = nil)", title=f"{agent}: P(tricks | bid)")
        ax.set_xticks(range(0, size, 2))
        ax.set_yticks(range(0, size, 2))
    if image is not None:
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="share of the bid's hands")
    return fig


def bid_total_histogram(counts: pd.DataFrame, hand_size: int = 13) -> Figure:
    """How often the four bids summed to each total, per matchup."""
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    k = max(len(counts.columns), 1)
    width = 0.8 / k
    x = counts.index.to_numpy()
    for i, name in enumerate(counts.columns):
        share = counts[name] / max(counts[name].sum(), 1)
        ax.bar(x + (i - (k - 1) / 2) * width, share, width=width, label=name)
    ax.axvline(hand_size, color="grey", linestyle="--", linewidth=1, label=f"{hand_size} tricks")
    ax.set(xlabel="total of the four bids", ylabel="share of hands", title="Bid totals")
    ax.legend()
    return fig


def _group_labels(table: pd.DataFrame) -> list[str]:
    extra = [c for c in ("position", "situation", "bid") if c in table.columns]
    if not extra:
        return table["agent"].astype(str).tolist()
    c = extra[0]
    prefix = {"position": "pos ", "bid": "bid "}.get(c, "")
    return [f"{a}\n{prefix}{v}" for a, v in zip(table["agent"], table[c], strict=True)]


def set_rate_plot(accuracy: pd.DataFrame) -> Figure:
    """Set rate of team contracts per group of the accuracy table, with Wilson intervals."""
    table = accuracy[accuracy["contracts"] > 0]
    fig = Figure(figsize=(max(5, 1.1 * len(table) + 2), 4.5), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(table))
    ax.bar(x, table["set_rate"].astype(float), color="tab:red", alpha=0.8)
    ax.errorbar(
        x,
        table["set_rate"].astype(float),
        yerr=_interval_err(table, "set_rate", "set_rate_lo", "set_rate_hi"),
        fmt="none",
        ecolor="black",
        capsize=4,
    )
    tops = table["set_rate_hi"].astype(float).fillna(table["set_rate"].astype(float))
    for xi, n, rate, top in zip(x, table["contracts"], table["set_rate"], tops, strict=True):
        ax.text(xi, top + 0.02, f"{rate:.1%}\nn={n}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, _group_labels(table))
    ax.set(ylabel="set rate (95% Wilson CI)", title="Contracts set", ylim=(0, 1.15))
    return fig


def nil_outcomes_plot(nils: pd.DataFrame) -> Figure:
    """Nil and blind-nil bids per agent: made and failed counts, success rate on top."""
    fig = Figure(figsize=(max(5, 1.3 * len(nils) + 2), 4.5), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(nils))
    ax.bar(x, nils["made"], color="tab:green", label="made (no trick)")
    ax.bar(x, nils["failed"], bottom=nils["made"], color="tab:red", label="failed")
    for xi, (_, r) in zip(x, nils.iterrows(), strict=True):
        text = "none"
        if r["attempts"]:
            text = f"{r['success']:.0%}\n[{r['success_lo']:.0%}, {r['success_hi']:.0%}]"
        ax.text(xi, r["attempts"], text, ha="center", va="bottom", fontsize=8)
    labels = [f"{a}\n{k}" for a, k in zip(nils["agent"], nils["kind"], strict=True)]
    ax.set_xticks(x, labels)
    ax.set_ylim(0, max(1, nils["attempts"].max()) * 1.3)
    ax.set(ylabel="bids", title="Nil outcomes (success rate, 95% Wilson CI)")
    ax.legend()
    return fig


def dd_plot(table: pd.DataFrame) -> Figure:
    """Against double dummy: contract minus DD tricks, and why contracts failed."""
    fig = Figure(figsize=(11, 4.5), layout="constrained")
    left, right = fig.subplots(1, 2)
    agents = list(dict.fromkeys(table["agent"]))
    lo, hi = int(table["bid_vs_dd"].min()), int(table["bid_vs_dd"].max())
    bins = np.arange(lo - 0.5, hi + 1.5)
    for agent in agents:
        left.hist(
            table.loc[table["agent"] == agent, "bid_vs_dd"], bins=bins, alpha=0.6, label=agent
        )
    left.axvline(0, color="grey", linestyle="--", linewidth=1)
    left.set(xlabel="contract - double-dummy tricks", ylabel="team-hands", title="Bid vs DD")
    left.legend()
    verdicts = ["made", "set in play", "unmakeable bid"]
    colors = ["tab:green", "tab:orange", "tab:red"]
    x = np.arange(len(agents))
    bottom = np.zeros(len(agents))
    for verdict, color in zip(verdicts, colors, strict=True):
        share = np.array(
            [(table.loc[table["agent"] == a, "verdict"] == verdict).mean() for a in agents]
        )
        right.bar(x, share, bottom=bottom, color=color, label=verdict)
        bottom += share
    right.set_xticks(x, agents)
    right.set(ylabel="share of team-hands (no nil)", title="Outcome vs DD", ylim=(0, 1))
    right.legend()
    return fig
