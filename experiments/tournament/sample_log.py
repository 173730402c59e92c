"""A small seeded tournament log, for notebooks and examples that need one to read.

`sample_log()` plays a duplicate hand-mode tournament (random against heuristic, 100
deals, seed 0 by default) into a fresh temporary run folder, or into `folder`, and
returns the path of its `log.jsonl`. The same arguments always give the same rows.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from experiments.tournament.config import TournamentConfig
from experiments.tournament.runner import LOG_FILE, run_tournament


def sample_log(
    agents: Sequence[str] = ("random", "heuristic"),
    deals: int = 100,
    seed: int = 0,
    folder: str | Path | None = None,
    workers: int = 1,
) -> Path:
    """Play the tournament and return its log file (`folder` must not hold a run)."""
    run_dir = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="spades-"))
    config = TournamentConfig(agents=tuple(agents), deals=deals, seed=seed, chunk=min(deals, 50))
    run_tournament(run_dir, config, workers=workers)
    return run_dir / LOG_FILE
