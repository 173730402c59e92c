"""The tournament log as pandas tables: seat-hands, team-hands and hands.

The rows are `experiments.tournament.bid_stats.seat_table` / `team_table` (one definition of bid
error, position, situation for the summary and the analysis), made into data frames.
Every table keeps `deal` and `side`, so any figure can be traced back to
`spades show LOG --deal N`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.tournament.bid_stats import seat_table, team_table
from experiments.tournament.results_log import LogError, read_rows
from experiments.tournament.summary import pair_of

#: Fields every tournament log row has and the analysis reads.
REQUIRED = ("deal", "side", "hand", "seats", "teams", "bids", "blind", "tricks", "contract")
REQUIRED += ("made", "bags_gained", "hand_score")


def log_path(path: str | Path) -> Path:
    """The log file itself: `path`, or `path/log.jsonl` for a run folder."""
    path = Path(path)
    return path / "log.jsonl" if path.is_dir() else path


def load_log(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a tournament log (file or run folder), checked to be one."""
    file = log_path(path)
    if not file.exists():
        raise LogError(f"log {str(file)!r} does not exist; give a log.jsonl or its run folder")
    rows = read_rows(file)
    check_rows(rows, str(file))
    return rows


def check_rows(rows: Sequence[dict[str, Any]], where: str = "the log") -> None:
    """Raise `LogError` unless `rows` look like a `spades tournament` log."""
    hint = "give the log.jsonl of a `spades tournament` run"
    if not rows:
        raise LogError(f"{where} holds no tournament rows; {hint}")
    for i, row in enumerate(rows):
        missing = [k for k in REQUIRED if not isinstance(row, dict) or k not in row]
        if missing:
            raise LogError(
                f"{where} is not a tournament log (row {i + 1} lacks {', '.join(missing)}); {hint}"
            )


def seat_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per seat-hand (see `bid_stats.seat_table`)."""
    return pd.DataFrame(seat_table(rows))


def team_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per team-hand (see `bid_stats.team_table`)."""
    return pd.DataFrame(team_table(rows))


def matchup(row: dict[str, Any]) -> str:
    """`A vs B` for the pair of agents at the table (A: North-South on side 0)."""
    a, b = pair_of(row)
    return f"{a} vs {b}"


def hand_frame(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per hand: the matchup and the total of the four bids (nil counts 0)."""
    return pd.DataFrame(
        [
            {
                "deal": r["deal"],
                "side": r["side"],
                "hand": r["hand"],
                "matchup": matchup(r),
                "bid_total": sum(r["bids"]),
                "hand_size": r.get("rules", {}).get("hand_size", 13),
            }
            for r in rows
        ]
    )
