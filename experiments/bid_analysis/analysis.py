"""One call from a tournament log to every bid-accuracy table and figure.

`analyze(LOG)` reads the log (file or run folder) and builds the tables of
`experiments.bid_analysis.tables` and the double-dummy comparison (answers cached by
`agents.dd.cache`). `figures(analysis)` draws them; `save_figures` writes PNGs;
`table_frames` gives every table as numbers and `save_tables` writes them as CSV or JSON.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from experiments.bid_analysis import plots, tables
from experiments.bid_analysis.double_dummy import AUTO_SOLVES, dd_summary, dd_table, dd_tricks
from experiments.bid_analysis.log_frames import (
    check_rows,
    hand_frame,
    load_log,
    seat_frame,
    team_frame,
)
from spades_env.tooling.files import atomic_write

#: PNG file names `save_figures` writes (the DD one only with a DD analysis).
FIGURE_FILES = {
    "calibration": "bid_calibration.png",
    "confusion": "bid_confusion.png",
    "bid_totals": "bid_totals.png",
    "set_rates": "set_rates.png",
    "nil_outcomes": "nil_outcomes.png",
    "double_dummy": "bid_vs_double_dummy.png",
}


@dataclass
class BidAnalysis:
    """The tables of one log. Frames: see `log_frames`; the rest: see `tables`."""

    by: str
    hands: pd.DataFrame  # one row per hand
    seats: pd.DataFrame  # one row per seat-hand
    teams: pd.DataFrame  # one row per team-hand
    accuracy: pd.DataFrame  # per agent (x position / situation / bid, by `by`)
    calibration: pd.DataFrame  # per agent and bid: mean tricks
    confusion: dict[str, pd.DataFrame]  # per agent: bid x tricks counts
    bid_totals: pd.DataFrame  # per matchup: mean total, over / under rates
    bid_total_counts: pd.DataFrame  # totals x matchup counts
    nils: pd.DataFrame  # per agent and kind: nil outcomes
    dd: pd.DataFrame | None = None  # per team-hand vs double dummy (None: not asked)
    dd_summary: pd.DataFrame | None = None  # per agent vs double dummy
    dd_unsolved: int = 0  # hands without a double-dummy answer (not solved yet)
    hand_size: int = 13


def analyze(
    log: str | Path | Sequence[dict[str, Any]],
    by: str = "agent",
    dd: bool | str = False,
    max_solves: int | None = None,
    on_solve: Callable[[int, int], None] | None = None,
    cache: Any = None,
    workers: int | None = None,
) -> BidAnalysis:
    """Every table of a tournament log (a path, or rows already read).

    `dd`: compare with the double-dummy solver. `"auto"` (what `spades analyze` does by
    default) uses every cached answer and solves at most `AUTO_SOLVES` new positions (or
    `max_solves`); `True` solves every missing one (at most `max_solves`); `False` (the
    default here) leaves the comparison out.
    Answers live in `cache` (an `agents.dd.cache.DDCache`, a path, or None for the
    default file); new ones are solved on `workers` processes (default: every core).
    Hands without an answer are left out of the DD tables and counted in `dd_unsolved`.
    """
    if by not in tables.GROUPINGS:
        raise ValueError(f"--by {by!r}: choose one of {', '.join(tables.GROUPINGS)}")
    if dd not in (True, False, "auto"):
        raise ValueError(f"dd={dd!r}: choose True, False or 'auto'")
    if max_solves is not None and (
        isinstance(max_solves, bool) or not isinstance(max_solves, int) or max_solves < 0
    ):
        raise ValueError(f"max_solves={max_solves!r}: give a whole number, 0 or more, or None")
    if isinstance(log, str | Path):
        rows = load_log(log)
    else:
        rows = list(log)
        check_rows(rows)
    seats, teams, hands = seat_frame(rows), team_frame(rows), hand_frame(rows)
    size = int(hands["hand_size"].max())
    out = BidAnalysis(
        by=by,
        hands=hands,
        seats=seats,
        teams=teams,
        accuracy=tables.accuracy_table(seats, teams, by),
        calibration=tables.calibration_table(seats, size),
        confusion=tables.confusion_matrices(seats, size),
        bid_totals=tables.bid_total_table(hands),
        bid_total_counts=tables.bid_total_counts(hands),
        nils=tables.nil_table(seats),
        hand_size=size,
    )
    if dd == "auto" and not _dd_supported(rows):
        dd = False  # RULES.md §6 presets the solver does not play: nothing to compare
    if dd is not False:
        from agents.dd.cache import DDCache

        store = cache if isinstance(cache, DDCache) else DDCache(cache)
        limit = max_solves if dd is True or max_solves is not None else AUTO_SOLVES
        answers = dd_tricks(rows, store, max_solves=limit, on_solve=on_solve, workers=workers)
        out.dd = dd_table(rows, answers)
        out.dd_summary = dd_summary(out.dd)
        out.dd_unsolved = sum(1 for a in answers if a is None)
    return out


def _dd_supported(rows: Sequence[dict[str, Any]]) -> bool:
    from experiments.bid_analysis.double_dummy import supported
    from spades_env.rules import Rules

    kinds = {json.dumps(r["rules"], sort_keys=True) for r in rows}
    return any(supported(Rules.from_dict(json.loads(k))) for k in kinds)


TABLE_FORMATS = ("csv", "json")


def table_frames(analysis: BidAnalysis) -> dict[str, pd.DataFrame]:
    """Every table of an analysis as numbers (each statistic `x` with `x_lo`, `x_hi`),
    keyed by the file name `save_tables` gives it. The bid x tricks matrices are one long
    table (agent, bid, tricks, hands); the DD ones are there with a DD analysis."""
    confusion = [
        m.stack().rename("hands").reset_index().assign(agent=agent)
        for agent, m in analysis.confusion.items()
    ]
    counts = analysis.bid_total_counts.copy()
    counts.columns.name = None
    frames = {
        f"accuracy_by_{analysis.by}": analysis.accuracy,
        "calibration": analysis.calibration,
        "confusion": pd.concat(confusion, ignore_index=True)[["agent", "bid", "tricks", "hands"]]
        if confusion
        else pd.DataFrame(columns=["agent", "bid", "tricks", "hands"]),
        "bid_totals": analysis.bid_totals,
        "bid_total_counts": counts.rename_axis("bid_total").reset_index(),
        "nil_outcomes": analysis.nils,
    }
    if analysis.dd_summary is not None:
        frames["double_dummy_summary"] = analysis.dd_summary
    if analysis.dd is not None:
        frames["double_dummy"] = analysis.dd
    return frames


def save_tables(analysis: BidAnalysis, folder: str | Path, fmt: str = "csv") -> list[Path]:
    """Write every table of `table_frames` into `folder` as `NAME.csv` or `NAME.json` (a
    list of records, NaN as null); return the paths."""
    if fmt not in TABLE_FORMATS:
        raise ValueError(f"--format {fmt!r}: choose one of {', '.join(TABLE_FORMATS)}")
    folder = Path(folder)
    paths = []
    for name, frame in table_frames(analysis).items():
        path = folder / f"{name}.{fmt}"
        if fmt == "csv":
            text = frame.to_csv(index=False)
        else:
            text = frame.to_json(orient="records", indent=1)
        paths.append(atomic_write(path, text))
    return paths


def figures(analysis: BidAnalysis) -> dict[str, Figure]:
    """Every figure of an analysis, keyed as `FIGURE_FILES`."""
    figs = {
        "calibration": plots.calibration_plot(analysis.calibration),
        "confusion": plots.confusion_heatmap(analysis.confusion),
        "bid_totals": plots.bid_total_histogram(analysis.bid_total_counts, analysis.hand_size),
        "set_rates": plots.set_rate_plot(analysis.accuracy),
        "nil_outcomes": plots.nil_outcomes_plot(analysis.nils),
    }
    if analysis.dd is not None and len(analysis.dd):
        figs["double_dummy"] = plots.dd_plot(analysis.dd)
    return figs


def save_figures(analysis: BidAnalysis, folder: str | Path) -> list[Path]:
    """Write every figure as a PNG into `folder`; return the paths."""
    folder = Path(folder)
    paths = []
    for name, fig in figures(analysis).items():
        buffer = io.BytesIO()
        fig.savefig(buffer, dpi=110, format="png")
        paths.append(atomic_write(folder / FIGURE_FILES[name], buffer.getbuffer()))
    return paths
