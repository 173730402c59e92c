"""Double-dummy solving of Spades card play: exact tricks and exact hand scores.

- `Position`: a card-play position with every hand visible (`agents.dd.position`).
- `DDSolver`, `solve_tricks`, `solve_score`, `tricks_table` (`agents.dd.solver`).
- `endgame_kernel`: the exact solver of the last tricks over many sampled worlds, for the
  learned agent's endgame (`agents.learned.endgame`).
- `tricks_tables`: `tricks_table` for many deals on every core, with an on-disk cache
  (`agents.dd.cache`).
- `score_objective`: the hand score with nil and bags as a value table
  (`agents.dd.objective`).
"""

from agents.dd.cache import DDCache, tricks_tables
from agents.dd.objective import ScoreObjective, hand_values, score_objective
from agents.dd.position import Position, PositionError
from agents.dd.solver import (
    DDSolver,
    SearchLimitError,
    default_solver,
    equivalent_groups,
    solve_score,
    solve_tricks,
    tricks_table,
)

__all__ = [
    "DDCache",
    "DDSolver",
    "Position",
    "PositionError",
    "ScoreObjective",
    "SearchLimitError",
    "default_solver",
    "equivalent_groups",
    "hand_values",
    "score_objective",
    "solve_score",
    "solve_tricks",
    "tricks_table",
    "tricks_tables",
]
