"""The analysis tables as text: each statistic with its interval in one cell.

`report_tables(analysis)` gives the tables `spades analyze` prints and a notebook
shows, as data frames of strings (`0.42 [0.38, 0.46]`), keyed by title. The numbers
stay in the `BidAnalysis` frames; this module only formats them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from experiments.bid_analysis.analysis import BidAnalysis
from experiments.tournament.report import markdown_text

#: (column, header, kind): kind is `count`, `mean`, `signed` (a mean shown with its
#: sign) or `rate` (shown in percent)
View = Sequence[tuple[str, str, str]]

ERROR_VIEW: View = (
    ("bids", "bids", "count"),
    ("mean_bid", "mean bid", "mean"),
    ("mean_tricks", "mean tricks", "mean"),
    ("signed_error", "tricks - bid", "signed"),
    ("mae", "|tricks - bid|", "mean"),
    ("exact_rate", "exact", "rate"),
)
CONTRACT_VIEW: View = (
    ("contracts", "contracts", "count"),
    ("make_rate", "made", "rate"),
    ("set_rate", "set", "rate"),
    ("bags_per_hand", "bags/hand", "mean"),
    ("nil_attempts", "nil bids", "count"),
    ("nil_rate", "nil share", "rate"),
    ("nil_success", "nil made", "rate"),
    ("blind_nil_attempts", "blind nil", "count"),
    ("blind_nil_success", "blind made", "rate"),
)
TOTAL_VIEW: View = (
    ("hands", "hands", "count"),
    ("mean_total", "mean total", "mean"),
    ("over_rate", "over the hand size", "rate"),
    ("under_rate", "under", "rate"),
)
NIL_VIEW: View = (
    ("attempts", "bids", "count"),
    ("made", "made", "count"),
    ("failed", "failed", "count"),
    ("success", "success", "rate"),
)
DD_VIEW: View = (
    ("team_hands", "team-hands", "count"),
    ("bid_vs_dd", "contract - DD", "signed"),
    ("play_vs_dd", "tricks - DD", "signed"),
    ("makeable_rate", "makeable DD", "rate"),
    ("overbid_rate", "over DD", "rate"),
    ("underbid_rate", "under DD", "rate"),
    ("sets", "sets", "count"),
    ("sets_unmakeable", "sets unmakeable", "rate"),
)
KEYS = ("agent", "opponent", "position", "situation", "bid", "matchup", "kind")


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt(x: Any, kind: str) -> str:
    """One number in the style of its kind (`-` when undefined)."""
    if _missing(x):
        return "-"
    if kind == "count":
        return f"{int(x)}"
    if kind == "rate":
        return f"{100 * x:.1f}%"
    return f"{x:+.2f}" if kind == "signed" else f"{x:.2f}"


def cell(row: pd.Series, column: str, kind: str) -> str:
    """`value [lo, hi]`, or the value alone where there is no interval."""
    text = fmt(row[column], kind)
    lo, hi = row.get(f"{column}_lo"), row.get(f"{column}_hi")
    if kind == "count" or _missing(lo) or _missing(hi):
        return text
    if kind == "rate":  # one percent sign for the three numbers keeps the column narrow
        return f"{text} [{100 * lo:.1f}, {100 * hi:.1f}]"
    return f"{text} [{fmt(lo, kind)}, {fmt(hi, kind)}]"


def view(table: pd.DataFrame, spec: View) -> pd.DataFrame:
    """The key columns of `table`, then one formatted column per entry of `spec`."""
    keys = [k for k in KEYS if k in table.columns]
    out = {k: table[k].astype(str).tolist() for k in keys}
    for column, header, kind in spec:
        out[header] = [cell(r, column, kind) for _, r in table.iterrows()]
    return pd.DataFrame(out)


def calibration_view(calibration: pd.DataFrame) -> pd.DataFrame:
    """Bids as rows, one column per agent: mean tricks [CI] (hands)."""
    out: dict[str, dict[int, str]] = {}
    for _, r in calibration.iterrows():
        text = f"{cell(r.rename({'lo': 'tricks_lo', 'hi': 'tricks_hi'}), 'tricks', 'mean')}"
        out.setdefault(r["agent"], {})[int(r["bid"])] = f"{text} (n={int(r['n'])})"
    frame = pd.DataFrame(out).sort_index().fillna("-")
    frame.index.name = "bid"
    return frame.reset_index()


def report_tables(analysis: BidAnalysis) -> dict[str, pd.DataFrame]:
    """Every printed table of an analysis, by title."""
    tables = {
        "Bid error (non-nil bids; 95% CI)": view(analysis.accuracy, ERROR_VIEW),
        "Contracts, bags and nil (95% CI)": view(analysis.accuracy, CONTRACT_VIEW),
        "Total of the four bids (95% CI)": view(analysis.bid_totals, TOTAL_VIEW),
        "Calibration: tricks taken by bid (mean, 95% CI)": calibration_view(analysis.calibration),
        "Nil outcomes (95% CI)": view(analysis.nils, NIL_VIEW),
    }
    if analysis.dd_summary is not None:
        tables["Against double dummy (no-nil team-hands; 95% CI)"] = view(
            analysis.dd_summary, DD_VIEW
        )
    return tables


def confusion_view(matrix: pd.DataFrame) -> pd.DataFrame:
    """A confusion matrix without the bids nobody made (rows) or trick counts never
    taken (columns), so it prints narrow."""
    rows = matrix[matrix.sum(axis=1) > 0]
    cols = matrix.columns[matrix.sum(axis=0) > 0]
    return rows[cols]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _tendency(r: pd.Series) -> str:
    lo, hi = r["signed_error_lo"], r["signed_error_hi"]
    if _missing(lo) or _missing(hi):
        return "has too few bids to say whether it over- or underbids"
    if lo > 0:
        return f"underbids: it takes {cell(r, 'signed_error', 'signed')} tricks more than it bids"
    if hi < 0:
        return f"overbids: it takes {cell(r, 'signed_error', 'signed')} tricks against its bid"
    return f"bids about right on average ({cell(r, 'signed_error', 'signed')} tricks)"


def _agent_sentences(r: pd.Series) -> list[str]:
    out = [
        f"**{markdown_text(r['agent'])}** bids {fmt(r['mean_bid'], 'mean')} on average "
        f"(non-nil bids, "
        f"n={r['bids']}) and {_tendency(r)}; mean |tricks - bid| is "
        f"{fmt(r['mae'], 'mean')}, and {fmt(r['exact_rate'], 'rate')} of its bids are exact."
    ]
    if r["contracts"]:
        out.append(
            f"Its team contracts are set {cell(r, 'set_rate', 'rate')} of the time, and "
            f"its team gains {cell(r, 'bags_per_hand', 'mean')} bags a hand."
        )
    if r["nil_attempts"]:
        out.append(
            f"It bid nil {r['nil_attempts']} times ({fmt(r['nil_rate'], 'rate')} of its "
            f"bids) and made {cell(r, 'nil_success', 'rate')} of them"
            + (f"; blind nil {r['blind_nil_attempts']} times." if r["blind_nil_attempts"] else ".")
        )
    return out


def _position_sentence(by_seat: pd.DataFrame, agent: str) -> str | None:
    g = by_seat[(by_seat["agent"] == agent) & by_seat["signed_error"].notna()]
    if len(g) < 2:
        return None
    lo, hi = g.loc[g["signed_error"].idxmin()], g.loc[g["signed_error"].idxmax()]
    return (
        f"By bidding position its signed error runs from {fmt(lo['signed_error'], 'signed')} "
        f"(position {lo['position']}) to {fmt(hi['signed_error'], 'signed')} (position "
        f"{hi['position']}); mean bids {fmt(g['mean_bid'].min(), 'mean')} to "
        f"{fmt(g['mean_bid'].max(), 'mean')}."
    )


def reading(analysis: BidAnalysis) -> str:
    """A few sentences (Markdown) on what the numbers of an analysis say, numbers
    included, for the end of a notebook or report."""
    from experiments.bid_analysis.tables import accuracy_table  # the by-agent view

    by_agent = accuracy_table(analysis.seats, analysis.teams, "agent")
    by_seat = accuracy_table(analysis.seats, analysis.teams, "seat")
    parts = []
    for _, r in by_agent.iterrows():
        sentences = _agent_sentences(r)
        pos = _position_sentence(by_seat, r["agent"])
        parts.append(" ".join(sentences + ([pos] if pos else [])))
    for _, t in analysis.bid_totals.iterrows():
        parts.append(
            f"In {markdown_text(t['matchup'])} the four bids add up to "
            f"{cell(t, 'mean_total', 'mean')} on average; {cell(t, 'over_rate', 'rate')} of "
            f"the {t['hands']} hands bid more "
            f"tricks than there are."
        )
    if analysis.dd_summary is not None:
        for _, d in analysis.dd_summary.iterrows():
            text = (
                f"Against double dummy ({d['team_hands']} no-nil team-hands), "
                f"{markdown_text(d['agent'])}'s contract minus the makeable tricks is "
                f"{cell(d, 'bid_vs_dd', 'signed')}, and its teams take "
                f"{cell(d, 'play_vs_dd', 'signed')} tricks against the double-dummy result"
            )
            if d["sets"]:
                share = cell(d, "sets_unmakeable", "rate")
                text += f"; {share} of its {d['sets']} sets were unmakeable bids"
            parts.append(text + ".")
    return "\n\n".join(parts)
