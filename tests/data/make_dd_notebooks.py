"""Make `dd_notebooks.sqlite`: the double-dummy answers of the seeded tournaments that
`tests/test_notebooks.py` runs the notebooks on (bid_accuracy: random against heuristic,
30 deals; agent_comparison: its round robin of three agents, 20 deals; seed 0 both).

    python tests/data/make_dd_notebooks.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from agents.dd.tables import DDCache
from experiments.bid_analysis import analyze
from experiments.tournament.sample_log import sample_log

OUT = Path(__file__).resolve().parent / "dd_notebooks.sqlite"
TOURNAMENTS = [
    {"deals": 30},
    {"agents": ("random", "heuristic", "heuristic:aggression=1"), "deals": 20},
]

if __name__ == "__main__":
    OUT.unlink(missing_ok=True)
    cache = DDCache(OUT)
    for kwargs in TOURNAMENTS:
        log = sample_log(seed=0, folder=Path(tempfile.mkdtemp()) / "run", **kwargs)
        analysis = analyze(log, dd=True, cache=cache)
        assert analysis.dd_unsolved == 0
    print(f"{OUT}: {len(cache)} answers")
    cache._db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    cache.close()
