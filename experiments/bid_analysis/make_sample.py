"""Make `data/dd_sample.sqlite` (`double_dummy.SAMPLE`): the double-dummy answers of the
first `SAMPLE_DEALS` deals of seed 0, the deals of the notebooks' default tournaments.

    python -m experiments.bid_analysis.make_sample
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from agents.dd.cache import DDCache
from experiments.bid_analysis import analyze
from experiments.bid_analysis.double_dummy import SAMPLE, SAMPLE_DEALS
from experiments.tournament.sample_log import sample_log

if __name__ == "__main__":
    SAMPLE.parent.mkdir(parents=True, exist_ok=True)
    SAMPLE.unlink(missing_ok=True)
    cache = DDCache(SAMPLE)
    log = sample_log(deals=SAMPLE_DEALS, seed=0, folder=Path(tempfile.mkdtemp()) / "run")
    analysis = analyze(log, dd=True, cache=cache)
    assert analysis.dd_unsolved == 0
    print(f"{SAMPLE}: {len(cache)} answers")
    cache._db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
    cache.close()
