"""Bid accuracy of a tournament: tables with 95% intervals, plots, and the comparison
with the double-dummy solver, all read from the tournament log alone.

    from experiments.bid_analysis import analyze, figures
    a = analyze("runs/tournament-.../log.jsonl", by="seat")
    a.accuracy          # per agent and bidding position: errors, exact / make / set rates
    figures(a)          # calibration, confusion heatmap, bid totals, set rates, nils

Modules: `log_frames` (the log as tables), `intervals` (Wilson and t intervals),
`tables`, `double_dummy`, `plots`, `analysis` (`analyze`, `figures`, `save_figures`).
"""

from experiments.bid_analysis.analysis import (
    FIGURE_FILES,
    BidAnalysis,
    analyze,
    figures,
    save_figures,
    save_tables,
    table_frames,
)
from experiments.bid_analysis.log_frames import load_log

__all__ = [
    "FIGURE_FILES",
    "BidAnalysis",
    "analyze",
    "figures",
    "load_log",
    "save_figures",
    "save_tables",
    "table_frames",
]
