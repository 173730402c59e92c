"""The bid-accuracy tables, every rate and mean with its 95% interval.

All take the frames of `experiments.bid_analysis.log_frames`. A statistic `x` comes as
three columns `x`, `x_lo`, `x_hi` (the interval; NaN where a group is too small), and its
sample size as a count column next to it (`bids`, `contracts`, `nil_attempts`, ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from experiments.bid_analysis.intervals import mean_interval, rate_interval
from experiments.tournament.bid_stats import GROUPINGS, SITUATIONS, bid_samples

#: (column, sample of `bid_samples`, kind): the statistics of `accuracy_table`, in order.
STATS: tuple[tuple[str, str, str], ...] = (
    ("mean_bid", "bid", "mean"),
    ("mean_tricks", "tricks", "mean"),
    ("signed_error", "signed_error", "mean"),
    ("mae", "abs_error", "mean"),
    ("exact_rate", "exact", "rate"),
    ("make_rate", "made", "rate"),
    ("set_rate", "set", "rate"),
    ("bags_per_hand", "bags", "mean"),
    ("nil_rate", "nil_bid", "rate"),
    ("nil_success", "nil", "rate"),
    ("blind_nil_success", "blind_nil", "rate"),
)
#: count columns: (column, sample whose length it is)
COUNTS = (
    ("seat_hands", "tricks"),
    ("bids", "bid"),
    ("contracts", "made"),
    ("team_hands", "bags"),
    ("nil_attempts", "nil"),
    ("blind_nil_attempts", "blind_nil"),
)


def _agents(seats: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(seats["agent"]))


def _levels(seats: pd.DataFrame, column: str) -> list[Any]:
    if column == "situation":
        return [s for s in SITUATIONS if (seats["situation"] == s).any()]
    return sorted(v for v in seats[column].dropna().unique())


def _team_rows(teams: pd.DataFrame, column: str, value: Any) -> pd.DataFrame:
    if column in ("position", "bid"):  # a team-hand belongs to both of its members' values
        return teams[teams[f"{column}s"].map(lambda vs: value in vs)]
    return teams[teams[column] == value]


#: means of counts, which cannot be negative: their t-intervals are clipped at 0
NON_NEGATIVE = frozenset({"mean_bid", "mean_tricks", "mae", "bags_per_hand"})


def stat_columns(samples: dict[str, list[float]]) -> dict[str, Any]:
    """The counts and the (value, lo, hi) of every statistic in `STATS`."""
    out: dict[str, Any] = {name: len(samples[key]) for name, key in COUNTS}
    for name, key, kind in STATS:
        interval = rate_interval if kind == "rate" else mean_interval
        _, value, lo, hi = interval(samples[key])
        if name in NON_NEGATIVE and lo is not None:
            lo = max(lo, 0.0)
        out[name], out[f"{name}_lo"], out[f"{name}_hi"] = value, lo, hi
    return out


def accuracy_table(seats: pd.DataFrame, teams: pd.DataFrame, by: str = "agent") -> pd.DataFrame:
    """One row per agent (and bidding position, score situation or bid, by `by`).

    Seat statistics (bids, errors, nil) come from the group's seat-hands; team ones
    (make, set, bags) from its team-hands. By position, a team-hand counts under the
    positions of both its members (1 and 3, or 2 and 4), so those rows share them; by
    bid, likewise under both members' bids (a team bidding 3 and 3 counts once under 3).
    """
    if by not in GROUPINGS:
        raise ValueError(f"--by {by!r}: choose one of {', '.join(GROUPINGS)}")
    column = GROUPINGS[by]
    out = []
    for agent in _agents(seats):
        s_all, t_all = seats[seats["agent"] == agent], teams[teams["agent"] == agent]
        groups: list[tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]] = []
        if column is None:
            groups.append(({}, s_all, t_all))
        else:
            for v in _levels(s_all, column):
                groups.append(
                    ({column: v}, s_all[s_all[column] == v], _team_rows(t_all, column, v))
                )
        for key, s, t in groups:
            samples = bid_samples(s.to_dict("records"), t.to_dict("records"))
            out.append({"agent": agent, **key, **stat_columns(samples)})
    return pd.DataFrame(out)


def calibration_table(seats: pd.DataFrame, hand_size: int = 13) -> pd.DataFrame:
    """Per agent and bid (nil = 0): hands, mean tricks taken with its interval (the
    t-interval, clipped to the possible 0..hand_size)."""
    out = []
    for agent in _agents(seats):
        mine = seats[seats["agent"] == agent]
        for bid in sorted(mine["bid"].unique()):
            n, mean, lo, hi = mean_interval(mine.loc[mine["bid"] == bid, "tricks"].tolist())
            if lo is not None:  # a mean of trick counts lies in [0, hand size]
                lo, hi = max(lo, 0.0), min(hi, float(hand_size))
            out.append(
                {"agent": agent, "bid": int(bid), "n": n, "tricks": mean, "lo": lo, "hi": hi}
            )
    return pd.DataFrame(out, columns=["agent", "bid", "n", "tricks", "lo", "hi"])


def confusion_matrix(seats: pd.DataFrame, agent: str, hand_size: int = 13) -> pd.DataFrame:
    """Counts of (bid, tricks taken) of one agent: bids as rows, tricks as columns."""
    s = seats[seats["agent"] == agent]
    m = np.zeros((hand_size + 1, hand_size + 1), dtype=np.int64)
    np.add.at(m, (s["bid"].to_numpy(), s["tricks"].to_numpy()), 1)
    frame = pd.DataFrame(m, index=range(hand_size + 1), columns=range(hand_size + 1))
    frame.index.name, frame.columns.name = "bid", "tricks"
    return frame


def confusion_matrices(seats: pd.DataFrame, hand_size: int = 13) -> dict[str, pd.DataFrame]:
    return {a: confusion_matrix(seats, a, hand_size) for a in _agents(seats)}


def bid_total_counts(hands: pd.DataFrame) -> pd.DataFrame:
    """How often the four bids added up to each total, per matchup (totals as rows)."""
    counts = pd.crosstab(hands["bid_total"], hands["matchup"])
    full = range(int(hands["bid_total"].min()), int(hands["bid_total"].max()) + 1)
    return counts.reindex(full, fill_value=0)


def bid_total_table(hands: pd.DataFrame) -> pd.DataFrame:
    """Per matchup: mean four-bid total and the shares above and below the hand size."""
    out = []
    for name, g in hands.groupby("matchup", sort=False):
        totals, size = g["bid_total"], g["hand_size"]
        n, mean, lo, hi = mean_interval(totals.tolist())
        row = {"matchup": name, "hands": n, "mean_total": mean, "mean_total_lo": lo}
        row["mean_total_hi"] = hi
        for label, hit in (("over", totals > size), ("under", totals < size)):
            _, rate, rlo, rhi = rate_interval(hit.astype(float).tolist())
            row.update({f"{label}_rate": rate, f"{label}_rate_lo": rlo, f"{label}_rate_hi": rhi})
        out.append(row)
    return pd.DataFrame(out)


def nil_table(seats: pd.DataFrame) -> pd.DataFrame:
    """Per agent and kind (nil, blind nil): attempts, made, failed, success rate."""
    out = []
    nils = seats[seats["bid"] == 0]
    for agent in _agents(seats):
        mine = nils[nils["agent"] == agent]
        for kind, g in (("nil", mine[~mine["blind"]]), ("blind nil", mine[mine["blind"]])):
            made = (g["tricks"] == 0).astype(float).tolist()
            n, rate, lo, hi = rate_interval(made)
            out.append(
                {
                    "agent": agent,
                    "kind": kind,
                    "attempts": n,
                    "made": int(sum(made)),
                    "failed": n - int(sum(made)),
                    "success": rate,
                    "success_lo": lo,
                    "success_hi": hi,
                }
            )
    return pd.DataFrame(out)
