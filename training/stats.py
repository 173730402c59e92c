"""Moved to `spades_env.stats` (below both training and the tournament, which share it);
this name stays importable."""

from spades_env.stats import mean_ci, t975

__all__ = ["mean_ci", "t975"]
