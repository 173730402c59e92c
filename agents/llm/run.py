"""The `llm:` agent in a tournament's run folder: what `agents.llm.agent.LLMAgent`'s run
hooks (`agents.base.BaseAgent`) do.

- `run_dir_env`: while the units are played, `RUN_DIR_ENV` names the run folder (worker
  processes inherit it), so each agent writes its exchanges and its response cache there
  (`agents.llm.store`);
- `SECTION`, `run_stats`: the summary's ``llm`` section, per agent: requests, re-asks,
  illegal and unreadable answers, fallbacks, tokens and seconds (also what a rung of
  ``spades evaluate`` keeps of an ``llm:`` candidate);
- `stats_table`: the report's table of that section.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.base import ReportTable
from agents.llm.store import RUN_DIR_ENV, run_stats

__all__ = ["SECTION", "run_dir_env", "run_stats", "stats_table"]

#: the key of the llm agents' section in a run's summary.json
SECTION = "llm"


@contextmanager
def run_dir_env(run_dir: Path) -> Iterator[None]:
    """`RUN_DIR_ENV` names the run folder for the block (worker processes inherit it)."""
    old = os.environ.get(RUN_DIR_ENV)
    os.environ[RUN_DIR_ENV] = str(Path(run_dir).resolve())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(RUN_DIR_ENV, None)
        else:
            os.environ[RUN_DIR_ENV] = old


def stats_table(stats: dict[str, dict[str, Any]]) -> ReportTable:
    """Language-model agents (`llm:`): per decision, the re-asks, the illegal and the
    unreadable answers, the fallbacks, tokens in and out and seconds."""
    columns = ("agent", "model", "decisions", "re-asks", "illegal", "unreadable", "fallback",
               "tokens in", "tokens out", "seconds", "cached")  # fmt: skip
    rows = tuple(
        (
            agent,
            str(s.get("model")),
            str(s["decisions"]),
            f"{s['reasks_per_decision']:.3f}",
            f"{s['illegal_per_decision']:.3f}",
            f"{s['unreadable_per_decision']:.3f}",
            f"{s['fallbacks_per_decision']:.3f}",
            f"{s['tokens_in_per_decision']:.0f}",
            f"{s['tokens_out_per_decision']:.1f}",
            f"{s['seconds_per_decision']:.3f}",
            str(s["cached"]),
        )
        for agent, s in stats.items()
    )
    return ReportTable(
        title="Language-model agents (per decision)",
        columns=columns,
        rows=rows,
        caption="re-asks: answers refused and asked again; illegal / unreadable: refused "
        "answers; fallback: decisions the fallback agent played; cached: replayed from the "
        "run's response cache",
        left=("agent", "model"),
    )
